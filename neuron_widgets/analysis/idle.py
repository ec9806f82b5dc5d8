"""Why a device sat idle: each gap between consecutive kernels / executions, by cause (HTA's idle time)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.profile import Profile
from .devices import EXECUTION, kind_of, kineto_kernels
from .frame import frame_of, notes_of
from .launches import kineto_launchers, neuron_launchers

CATEGORIES = ("host_wait", "kernel_wait", "other")
# HTA's default threshold is 30 in the trace's unit, microseconds for Kineto JSON.
KERNEL_WAIT_NS = 30_000


def idle_time_breakdown(profile: Profile, kind: str = "auto", kernel_wait_ns: int = KERNEL_WAIT_NS,
                        include_last_step: bool = False, round_us: bool = True) -> pd.DataFrame:
    """Idle time per device and stream (Kineto) or NeuronCore (Neuron), split by cause.

    Each gap between consecutive kernels / executions on one stream or core is one of:
    `host_wait` when the runtime call that launched the next one (Kineto: by correlation id;
    Neuron: the `nrt_execute` linked by flow id, else the latest `nrt_execute` on that core before
    it) started after the previous one ended: the host was late; `kernel_wait` when the gap is
    shorter than `kernel_wait_ns` (launch overhead); `other` otherwise. Columns: the device keys,
    `idle_category`, `idle_time_ns`, `idle_time_ratio` (the category's share of that device's idle
    time), `gaps`.
    """
    fr = frame_of(profile)
    notes: list[str] = []
    if kind_of(fr, kind) == "neuron":
        _, cores = fr.core_codes()
        ex, group = fr.on_cores(EXECUTION)
        rt, _ = neuron_launchers(fr, ex, group, notes)
        launch = fr.start[np.maximum(rt, 0)]
        start, end = fr.start[ex], fr.end[ex]
        keys = cores
    else:
        k = kineto_kernels(fr, include_last_step, round_us)
        notes += k.notes
        rt, rt_start, _ = kineto_launchers(fr, k, None, round_us)
        launch = np.asarray(rt_start, np.int64)
        pairs = pd.MultiIndex.from_arrays([k.rank, k.stream])
        group, uniq = pairs.factorize()
        group = np.asarray(group, np.int64)
        start, end = k.start, k.end
        keys = pd.DataFrame({"rank": [k.ranks[r] for r, _ in uniq], "stream": [s for _, s in uniq]})
    return notes_of(_classify(group, start, end, launch, rt >= 0, keys, kernel_wait_ns), notes)


def _classify(group: np.ndarray, start: np.ndarray, end: np.ndarray, launch: np.ndarray, launched: np.ndarray,
              keys: pd.DataFrame, kernel_wait_ns: int) -> pd.DataFrame:
    # Times stay int64: as float64, epoch nanoseconds resolve only 256 ns and a late launch compares as early.
    order = np.lexsort((start, group))
    g, s, e, ls, known = group[order], start[order], end[order], launch[order], launched[order]
    same = np.zeros(g.size, bool)
    same[1:] = g[1:] == g[:-1]
    prev_end = np.r_[0, e[:-1]][: g.size]
    gap = (s - prev_end).astype(np.float64)
    host = same & known & (ls > prev_end)
    kernel = same & ~host & (gap < kernel_wait_ns)
    n, m = len(keys), len(CATEGORIES)
    cat = np.where(host, 0, np.where(kernel, 1, 2))  # the rest: other
    slot = g[same] * m + cat[same]  # (device, category) of each gap
    t = np.rint(np.bincount(slot, weights=gap[same], minlength=n * m)).astype(np.int64).reshape(n, m)
    c = np.bincount(slot, minlength=n * m).reshape(n, m)
    total = t.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(total > 0, t / np.where(total > 0, total, 1), 0.0)
    # Devices with any kernel or execution, in the order of their keys; three rows each.
    present = np.flatnonzero(np.bincount(g, minlength=n) > 0) if n else np.zeros(0, np.int64)
    ranked = keys.iloc[present].sort_values(list(keys.columns), kind="stable").index.to_numpy()
    return keys.iloc[np.repeat(ranked, m)].reset_index(drop=True).assign(
        idle_category=np.tile(np.array(CATEGORIES, dtype=object), ranked.size),
        idle_time_ns=t[ranked].ravel(), gaps=c[ranked].ravel(), idle_time_ratio=ratio[ranked].ravel())
