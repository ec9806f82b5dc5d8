"""A multi-node job as a cluster leaves it: one Neuron Explorer Parquet profile per node.

Every node's cores meet at the same all-reduce each step, on one wall clock. One core of the
last node arrives late in most steps (the remote straggler: every other node's cores wait for
it, so inside any other node the core that looks last is innocent); node 0's core 0 hangs in
the last step; the last node's last core returns a numerical error half-way. Written in row
groups, so a job of tens of millions of events never sits in memory at once.

`steps=` writes the many-steps shape instead: each step is only the backward execution and its
all-reduce on every core (nrt_execute, nc_exec_running, the barrier, cc_running; a few framework
events), so a node holds about four events per core per step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..progress import progress
from . import _side_tables, plan, system
from . import template as tp

ROW_GROUP = 1 << 20


def node_name(i: int, nodes: int) -> str:
    return f"node-{i:0{max(len(str(nodes - 1)), 2)}d}"


# The lean step's events: kept from the full template (the collectives move these), and dropped
# once a chunk is made (they only carry the all-reduce's release to the execution's end).
_LEAN_KEEP = ("nrt_execute", "kbl_exec_wait", "nc_exec_running", "kbl_exec_post", "dmem_buf_copyout",
              "cc_exec_barrier", "cc_running")
_LEAN_DROP = ("kbl_exec_wait", "kbl_exec_post", "dmem_buf_copyout")


def _lean(tmpl: dict) -> dict:
    """The template cut to the backward execution and its all-reduce per core, and the step's framework span."""
    name = tmpl["name"]
    keep = ((tmpl["execution"] == 1) & np.isin(name, _LEAN_KEEP)) | np.isin(name, ("train_step", "backward"))
    return {k: (v[keep] if isinstance(v, np.ndarray) and v.shape == name.shape else v) for k, v in tmpl.items()}


def write_job(directory: str | Path, nodes: int = 4, events: int = 200_000, seed: int = 0, *,
              processes: int = 2, cores: int = 4, steps: int | None = None) -> Path:
    """Write a job of `nodes` node profiles (about `events` system events in all) into
    `directory/node-NN/`; return `directory`. With `steps`, `steps` lean steps instead (`events` unused)."""
    if nodes < 2:
        raise ValueError(f"a multi-node job needs at least 2 nodes, not {nodes}")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    if steps is None:
        rng, layout, tmpl, per_step, steps, special = plan(seed, nodes, processes, cores, events)
        drop = None
    else:
        full = plan(seed, nodes, processes, cores, 1)[3]  # events per full step
        rng, layout, tmpl, _, steps, special = plan(seed, nodes, processes, cores, max(steps, 3) * full)
        tmpl = _lean(tmpl)
        per_step = len(tmpl["name"]) * layout.groups
        drop = pa.array(_LEAN_DROP)
    # Chunks of about four row groups over the whole job: each node still gets sizeable row groups.
    steps_per_chunk = max(4 * ROW_GROUP // per_step, 1)
    dirs = [out / node_name(i, nodes) for i in range(nodes)]
    writers: list[pq.ParquetWriter | None] = [None] * nodes
    written = [0] * nodes
    with progress(f"writing a {nodes}-node job to {out.name}", steps * per_step) as bar:
        for first in range(0, steps, steps_per_chunk):
            chunk_steps = np.arange(first, min(first + steps_per_chunk, steps))
            table = system.chunk(layout, tmpl, chunk_steps, rng, special, 0)
            if drop is not None:
                table = table.filter(pc.invert(pc.is_in(table.column("name").cast(pa.string()), value_set=drop)))
            node = pc.index_in(table.column("instance_id"), pa.array(layout.instances)).to_numpy(zero_copy_only=False)
            for i in range(nodes):
                part = table.filter(pa.array(node == i))
                # Each node numbers its own events from 0, as each node's profiler does.
                part = part.set_column(0, "id", pa.array(np.arange(written[i], written[i] + part.num_rows, dtype=np.int64)))
                if writers[i] is None:
                    dirs[i].mkdir(exist_ok=True)
                    writers[i] = system.writer(dirs[i] / "SystemProfileEvents.parquet", part.schema)
                writers[i].write_table(part, row_group_size=ROW_GROUP)
                written[i] += part.num_rows
            bar.update(table.num_rows)
    t0, t1 = system.BASE_NS, system.BASE_NS + steps * tp.STEP_NS
    for i, w in enumerate(writers):
        assert w is not None
        w.close()
        one = system.Layout((layout.instances[i],), processes, cores, (layout.pids[i],))
        _side_tables(dirs[i], rng, one, t0, t1, written[i])
    return out
