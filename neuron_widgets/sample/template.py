"""One training step of one process, as a table of events relative to the step start.

The sample profile repeats this template over steps, processes and instances with NumPy,
so writing 100M events costs no Python work per event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

STEP_NS = 2_000_000  # a 2 ms training step
BARRIER_AT = 1_480_000  # where a core's backward compute ends and it arrives at the all-reduce
LAYERS = 6
FWD_MODEL, BWD_MODEL = 1, 2
MODEL_NAMES = {FWD_MODEL: "neff_fwd_5c1f9a77", BWD_MODEL: "neff_bwd_9e02d4b1"}

# thread kinds: 0 main framework thread, 1 data loader thread, 2 runtime thread of a core,
# 3 hardware events of a core, 4 framework stream events
MAIN, LOADER, RUNTIME, HARDWARE, STREAM = range(5)

# attribute kinds written into extra_attributes_json
NONE, EXEC, HW_EXEC, SYNC, CC, TENSOR, COPY = range(7)


@dataclass
class Template:
    name: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    kind: list[int] = field(default_factory=list)
    core: list[int] = field(default_factory=list)  # local NeuronCore, -1 for none
    start: list[int] = field(default_factory=list)
    dur: list[int] = field(default_factory=list)
    attrs: list[int] = field(default_factory=list)
    model: list[int] = field(default_factory=list)
    flow: list[int] = field(default_factory=list)  # flow slot within the step, -1 for none
    execution: list[int] = field(default_factory=list)  # execution slot (0 fwd, 1 bwd), -1

    def add(self, name: str, source: str, kind: int, start: int, dur: int, core: int = -1,
            attrs: int = NONE, model: int = 0, flow: int = -1, execution: int = -1) -> None:
        self.name.append(name)
        self.source.append(source)
        self.kind.append(kind)
        self.core.append(core)
        self.start.append(start)
        self.dur.append(dur)
        self.attrs.append(attrs)
        self.model.append(model)
        self.flow.append(flow)
        self.execution.append(execution)

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v) for k, v in self.__dict__.items()}

    def __len__(self) -> int:
        return len(self.name)


def _layers(t: Template, begin: int, end: int, ops: tuple[str, str]) -> None:
    span = (end - begin) // LAYERS
    for i in range(LAYERS):
        s = begin + i * span
        t.add(ops[0], "framework", MAIN, s + 2_000, span - 6_000)
        t.add(ops[1], "framework", MAIN, s + 4_000, span - 12_000)


def _execution(t: Template, core: int, begin: int, length: int, model: int, slot: int) -> None:
    """nrt_execute on the core's runtime thread and nc_exec_running on the core itself."""
    t.add("nrt_execute", "neuron_rt", RUNTIME, begin, length, core, EXEC, model, flow=slot, execution=slot)
    t.add("nrt_model_submit", "neuron_rt", RUNTIME, begin + 1_000, 4_000, core, EXEC, model, execution=slot)
    t.add("kbl_exec_pre", "neuron_rt", RUNTIME, begin + 6_000, 12_000, core, EXEC, model, execution=slot)
    t.add("dmem_buf_copyin", "neuron_rt", RUNTIME, begin + 8_000, 8_000, core, COPY, model, execution=slot)
    wait = length - 40_000
    t.add("kbl_exec_wait", "neuron_rt", RUNTIME, begin + 20_000, wait, core, EXEC, model, execution=slot)
    t.add("kbl_exec_post", "neuron_rt", RUNTIME, begin + 22_000 + wait, 14_000, core, EXEC, model, execution=slot)
    t.add("dmem_buf_copyout", "neuron_rt", RUNTIME, begin + 24_000 + wait, 9_000, core, COPY, model, execution=slot)
    hw_begin = begin + 21_000
    t.add("timestamp_sync_point", "neuron_hw", HARDWARE, hw_begin, 0, core, SYNC, model, execution=slot)
    t.add("nc_exec_running", "neuron_hw", HARDWARE, hw_begin + 500, wait - 3_000, core, HW_EXEC, model,
          flow=slot, execution=slot)


def build(cores: int) -> Template:
    t = Template()
    t.add("train_step", "framework", MAIN, 10_000, STEP_NS - 60_000)
    fwd = (30_000, 760_000)
    bwd = (800_000, 1_700_000)
    t.add("forward", "framework", MAIN, fwd[0], fwd[1] - fwd[0], flow=0)
    _layers(t, fwd[0] + 10_000, fwd[1] - 400_000, ("aten::linear", "aten::matmul"))
    t.add("xla::mark_step", "framework", MAIN, fwd[1] - 380_000, 360_000)
    t.add("backward", "framework", MAIN, bwd[0], bwd[1] - bwd[0], flow=1)
    _layers(t, bwd[0] + 10_000, bwd[1] - 500_000, ("aten::linear_backward", "aten::mm"))
    t.add("xla::mark_step", "framework", MAIN, bwd[1] - 480_000, 470_000)
    t.add("optimizer.step", "framework", MAIN, 1_720_000, 200_000)
    t.add("aten::_foreach_add_", "framework", MAIN, 1_730_000, 150_000)
    t.add("dataloader.__next__", "framework", LOADER, 1_760_000, 180_000)
    t.add("xla_graph_execution", "framework", STREAM, fwd[1] - 370_000, 340_000)
    t.add("xla_graph_execution", "framework", STREAM, bwd[1] - 470_000, 450_000)
    for c in range(cores):
        stagger = c * 3_000
        _execution(t, c, fwd[1] - 360_000 + stagger, 320_000, FWD_MODEL, 0)
        _execution(t, c, bwd[1] - 460_000 + stagger, 420_000, BWD_MODEL, 1)
        # The gradient all-reduce inside the backward NEFF: each core arrives at the barrier when
        # its compute is done; the barrier's end and everything after it are set per step by
        # system.collectives (the last core to arrive releases them all).
        t.add("cc_exec_barrier", "neuron_hw", HARDWARE, BARRIER_AT + stagger, 0, c, CC, BWD_MODEL, execution=1)
        t.add("cc_running", "neuron_hw", HARDWARE, BARRIER_AT + 22_000 + stagger, 60_000, c, CC, BWD_MODEL, execution=1)
        t.add("nrt_tensor_read", "neuron_rt", RUNTIME, 1_950_000 + stagger, 15_000, c, TENSOR)
    return t
