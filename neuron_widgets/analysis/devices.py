"""Which events are a device's work: Neuron executions per NeuronCore, or Kineto kernels per rank.

Kineto kernels are classified as HTA classifies them (communication by NCCL-like names, memory
by Memcpy/Memset/DMA names, a few runtime-side names as other, the rest computation), and a trace
with several ProfilerStep markers drops the kernels launched from the last step on, as HTA does
(the profiler usually stops mid-step).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .frame import KERNEL_CATEGORIES, Frame

EXECUTION = "nc_exec_running"
BARRIER = "cc_exec_barrier"
COLLECTIVE = "cc_running"
RUNTIME_EXECUTE = "nrt_execute"

COMMUNICATION, MEMORY, COMPUTATION, OTHER = "COMMUNICATION", "MEMORY", "COMPUTATION", "OTHER"
_COMM = re.compile(r"^(nccl|hccl|rccl)|ncclKernel|ncclDevKernel")
_MEMORY = re.compile(r"^(hip)?(Memcpy|Memset)|^dma")
_NOT_COMPUTE = re.compile(r"Memcpy|Memset|dma|^.*Sync|^Stream Wait Event|cuda.*LaunchKernel|^runFunction|^job_exe|"
                          r"^packet|^pe_exe|^cpum_exe_subgraph|^collective_subgraph_execution")
_STEP = re.compile(r"^ProfilerStep\s*#\s*(\d+)")
_RUNTIME_CATEGORY = re.compile(r"_runtime$|^cuda_driver$")


def kernel_type(name: str) -> str:
    if _COMM.search(name):
        return COMMUNICATION
    if _MEMORY.search(name):
        return MEMORY
    if _NOT_COMPUTE.search(name):
        return OTHER
    return COMPUTATION


def kind_of(fr: Frame, kind: str = "auto") -> str:
    """'neuron' when the profile has NeuronCore executions, else 'kineto' (device kernels), checked."""
    if kind not in ("auto", "neuron", "kineto"):
        raise ValueError(f"kind must be 'auto', 'neuron' or 'kineto', not {kind!r}")
    if kind != "auto":
        return kind
    if fr.codes_of([EXECUTION]).size and fr.rows_named(EXECUTION).size:
        return "neuron"
    return "kineto"


def trace_kind(fr: Frame) -> str:
    """What a trace holds, for what to show of it: 'neuron' (NeuronCore executions), 'kineto' (device kernels),
    or 'chrome' (neither: a plain Chrome, Fuchsia or browser trace)."""
    if kind_of(fr) == "neuron":
        return "neuron"
    return "kineto" if kineto_kernels(fr).rows.size else "chrome"


@dataclass
class Kernels:
    """Kineto device kernels: rows (time order), their rank and stream, names, correlation ids."""

    rows: np.ndarray
    rank: np.ndarray  # code into `ranks`
    ranks: list[int]
    stream: np.ndarray
    notes: list[str]
    start: np.ndarray  # as HTA reads them when rounded: start up, end down to whole microseconds
    end: np.ndarray
    _types: list[np.ndarray] = field(default_factory=list)  # computed once, shared by copies

    def types(self, fr: Frame) -> np.ndarray:
        """Kernel type per kernel, decided once per distinct name."""
        if not self._types:
            per = np.array([kernel_type(n) if n else OTHER for n in fr.names] or [OTHER], dtype=object)
            self._types.append(per[fr.name[self.rows]] if self.rows.size else np.zeros(0, object))
        return self._types[0]


def rank_codes(fr: Frame) -> tuple[np.ndarray, list[int]]:
    """A rank per event: distributedInfo's rank per input (several files), else per trace, else 0."""
    p = fr.profile
    if "input" in p.column_names:
        codes, inputs = fr.column_codes("input")
        per_input = p.metadata.get("per_input", {})
        labels = []
        for k, name in enumerate(inputs):
            r = (per_input.get(name, {}).get("distributedInfo") or {}).get("rank")
            labels.append(r if isinstance(r, int) else k)
        if len(set(labels)) < len(labels):  # ranks repeated across inputs: number the inputs instead
            labels = list(range(len(inputs)))
        return codes, labels
    r = (p.metadata.get("distributedInfo") or {}).get("rank")
    return np.zeros(len(fr), np.int64), [r if isinstance(r, int) else 0]


def kineto_kernels(fr: Frame, include_last_step: bool = False, round_us: bool = True) -> Kernels:
    """The profile's device kernels (built once per profile and options)."""
    k = fr._cached(("kernels", include_last_step, round_us), lambda: _kineto_kernels(fr, include_last_step, round_us))
    return Kernels(k.rows, k.rank, k.ranks, k.stream, list(k.notes), k.start, k.end, k._types)


def _kineto_kernels(fr: Frame, include_last_step: bool, round_us: bool) -> Kernels:
    p = fr.profile
    notes: list[str] = []
    device = fr.rows_of_source("device")
    if "category" in p.column_names and device.size:
        cat, cats = fr.column_codes("category")
        ok = np.array([c in KERNEL_CATEGORIES or str(c).startswith("gpu_mem") for c in cats] + [False])
        device = device[ok[cat[device]]]
    rank, ranks = rank_codes(fr)
    if device.size and not include_last_step:
        device = _drop_last_step(fr, device, rank, notes)
    stream = np.asarray(fr.combo_values("thread_id", device), dtype=np.int64) if device.size else np.zeros(0, np.int64)
    if device.size == 0:
        notes.append("no device kernels in this profile (no Kineto kernel, memcpy or memset events)")
    start, end = fr.start[device], fr.end[device]
    if round_us:
        start, end = rounded_us(fr, start, end, rank[device], ranks)
    return Kernels(device, rank[device], ranks, stream, notes, start, end)


def rounded_us(fr: Frame, start: np.ndarray, end: np.ndarray, rank: np.ndarray,
               ranks: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """HTA's reading of fractional microseconds: starts rounded up, ends down, against each trace's own zero."""
    base = np.array([_base_ns(fr, k) for k in range(len(ranks))], np.int64)[rank] if len(ranks) else rank
    s = base + -((base - start) // 1000) * 1000
    e = base + ((end - base) // 1000) * 1000
    return s, np.maximum(e, s)


def _base_ns(fr: Frame, k: int) -> int:
    meta = fr.profile.metadata
    if "input" in fr.profile.column_names:
        _, inputs = fr.column_codes("input")
        meta = meta.get("per_input", {}).get(inputs[k], {}) if k < len(inputs) else {}
    base = meta.get("baseTimeNanoseconds", 0)
    return base if type(base) is int else 0


def launch_rows(fr: Frame) -> np.ndarray:
    """CPU-side events that launch device work (CUDA/HIP runtime calls carrying a correlation id)."""
    p = fr.profile
    if "category" not in p.column_names:
        return np.zeros(0, np.int64)
    cat, cats = fr.column_codes("category")
    ok = np.array([bool(c and _RUNTIME_CATEGORY.search(str(c))) for c in cats] + [False])
    rows = np.flatnonzero(ok[cat])
    return rows[fr.source[rows] != (fr.sources.index("device") if "device" in fr.sources else -2)]


def pair_key(rank: np.ndarray, value: np.ndarray) -> np.ndarray:
    """(rank, id) packed in one int64 (ranks < 2^20, ids < 2^43: what correlation ids are)."""
    return np.asarray(rank, np.int64) << 43 | (np.asarray(value, np.int64) & ((1 << 43) - 1))


def correlation(fr: Frame, rows: np.ndarray) -> np.ndarray:
    return fr.arg(rows, "correlation")


def _drop_last_step(fr: Frame, kernels: np.ndarray, rank: np.ndarray, notes: list[str]) -> np.ndarray:
    step_codes = [i for i, n in enumerate(fr.names) if n and _STEP.match(n)]
    if len(step_codes) < 2:
        if not step_codes:
            notes.append("no ProfilerStep markers: every kernel is counted (HTA does the same)")
        return kernels
    steps = np.flatnonzero(np.isin(fr.name, step_codes))
    last_start = pd.Series(fr.start[steps]).groupby(rank[steps]).max()
    launches = launch_rows(fr)
    if launches.size == 0:
        return kernels
    corr_l = correlation(fr, launches)
    corr_k = correlation(fr, kernels)
    cutoff = last_start.reindex(rank[launches]).to_numpy(dtype=np.float64, na_value=np.inf)
    early = (fr.start[launches] < cutoff) & (corr_l >= 0)
    keep = np.isin(pair_key(rank[kernels], corr_k), pair_key(rank[launches][early], corr_l[early])) & (corr_k >= 0)
    dropped = int((~keep).sum())
    if dropped:
        notes.append(f"{dropped} kernels launched in the last ProfilerStep (usually cut short by the profiler) "
                     "are left out, as HTA does; include_last_step=True counts them")
    return kernels[keep]
