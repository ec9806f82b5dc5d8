"""Who launched each device execution: the runtime call behind a kernel or a NEFF execution.

Kineto: the CPU runtime call with the kernel's correlation id (cudaLaunchKernel and kin).
Neuron: the `nrt_execute` that shares a flow id with the `nc_exec_running` on the same core, else
the latest `nrt_execute` on that core that started before the execution.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..model.profile import Profile
from .devices import (
    EXECUTION,
    RUNTIME_EXECUTE,
    Kernels,
    correlation,
    kind_of,
    kineto_kernels,
    launch_rows,
    pair_key,
    rank_codes,
    rounded_us,
)
from .frame import Frame, frame_of, notes_of, sorted_union

LAUNCH_NAMES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "hipLaunchKernel",
                "hipExtLaunchKernel", "hipModuleLaunchKernel", "runFunction - job_prep_and_submit_for_execution")
MEMORY_LAUNCH_NAMES = ("cudaMemcpyAsync", "cudaMemsetAsync", "hipMemcpyAsync", "hipMemsetAsync")


def kineto_launchers(fr: Frame, k: Kernels, names: tuple[str, ...] | None = None,
                     round_us: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per kernel, the row of the runtime call with its correlation id in its rank (-1: none), its start and end."""
    launches = launch_rows(fr)
    if names is not None:
        launches = launches[np.isin(fr.name[launches], fr.codes_of(names))]
    rank_all = rank_codes(fr)[0]
    corr_l, corr_k = correlation(fr, launches), correlation(fr, k.rows)
    ok = corr_l >= 0
    lkey, lrow = pair_key(rank_all[launches][ok], corr_l[ok]), launches[ok]
    order = np.argsort(lkey, kind="stable")
    lkey, lrow = lkey[order], lrow[order]
    kkey = pair_key(k.rank, corr_k)
    at = np.searchsorted(lkey, kkey, side="right") - 1  # the last launch with that id, as a later one wins
    if lkey.size == 0:  # kernels but no runtime call with a correlation id (a trace cut at the host side)
        found = np.full(kkey.size, -1, np.int64)
    else:
        hit = (at >= 0) & (lkey[np.maximum(at, 0)] == kkey) & (corr_k >= 0)
        found = np.where(hit, lrow[np.maximum(at, 0)], -1)
    at = np.maximum(found, 0)
    start, end = fr.start[at], fr.end[at]
    if round_us and found.size:
        start, end = rounded_us(fr, start, end, k.rank, k.ranks)
    return found, start, end


def neuron_launchers(fr: Frame, ex: np.ndarray, core: np.ndarray, notes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per execution, the row of its nrt_execute (-1: none) and how it was found (True: by flow id)."""
    found, by_flow, said = fr._cached(("launchers", ex.size, int(ex[:64].sum()), int(ex[-64:].sum())),
                                      lambda: _neuron_launchers(fr, ex, core))
    notes += said
    return found, by_flow


def _neuron_launchers(fr: Frame, ex: np.ndarray, core: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    notes: list[str] = []
    rt, rt_core = fr.on_cores(RUNTIME_EXECUTE)
    codes, _ = fr.core_codes()
    found = np.full(ex.size, -1, np.int64)
    by_flow = np.zeros(ex.size, bool)
    if rt.size == 0:
        notes.append("no nrt_execute events: host waits cannot be told from other idle time")
        return found, by_flow, notes
    if "flow_id" in fr.profile.column_names:
        ex_ids, ex_of = _exploded(fr.flow_ids(ex))
        rt_ids, rt_of = _exploded(fr.flow_ids(rt))
        if ex_ids.size and rt_ids.size:
            # One key per (flow id, core); the nrt_execute of an execution is the latest with its key
            # that started no later than the execution.
            n_cores = int(codes.max()) + 1
            rk, ek = _flow_keys(rt_ids, ex_ids, n_cores)
            rk, ek = rk + rt_core[rt_of], ek + core[ex_of]
            rs = fr.start[rt][rt_of]
            order = _by_key_then_time(rk, rs)
            rk, rs, rrow = rk[order], rs[order], rt[rt_of][order]
            at = np.searchsorted(rk, ek, side="right") - 1
            ok = (at >= 0) & (rk[np.maximum(at, 0)] == ek) & (rs[np.maximum(at, 0)] <= fr.start[ex][ex_of])
            hit_ex, hit_rt = ex_of[ok], rrow[at[ok]]
            # An execution with several flow ids keeps the latest launch among them.
            o = _by_key_then_time(hit_ex, fr.start[hit_rt])
            hit_ex, hit_rt = hit_ex[o], hit_rt[o]
            found[hit_ex] = hit_rt
            by_flow[hit_ex] = True
    missing = np.flatnonzero(found < 0)
    if missing.size:
        # The latest nrt_execute on the same core that started before the execution.
        order = np.lexsort((fr.start[rt], rt_core))
        rt_sorted, core_sorted, start_sorted = rt[order], rt_core[order], fr.start[rt][order]
        for c in sorted_union(core[missing]):
            lo, hi = np.searchsorted(core_sorted, c, "left"), np.searchsorted(core_sorted, c, "right")
            if lo == hi:
                continue
            want = missing[core[missing] == c]
            k = np.searchsorted(start_sorted[lo:hi], fr.start[ex[want]], side="right") - 1
            ok = k >= 0
            found[want[ok]] = rt_sorted[lo:hi][k[ok]]
        if not by_flow.any():
            notes.append("no flow ids link nrt_execute to nc_exec_running: each execution is matched to the latest "
                         "nrt_execute on its core before it")
    return found, by_flow, notes


def _by_key_then_time(key: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The order by key, then start: one stable sort when the starts already ascend (a profile's rows
    are in time order), else a two-key sort."""
    if start.size < 2 or bool((start[1:] >= start[:-1]).all()):
        return np.argsort(key, kind="stable")
    return np.lexsort((start, key))


def _flow_keys(rt_ids: np.ndarray, ex_ids: np.ndarray, n_cores: int) -> tuple[np.ndarray, np.ndarray]:
    """Flow ids as int64 keys with room for a core code below them: the ids themselves when small
    non-negative integers (the usual case, no hashing), else their codes."""
    if rt_ids.dtype.kind == "i" and ex_ids.dtype.kind == "i":
        lo = min(int(rt_ids.min()), int(ex_ids.min()))
        hi = max(int(rt_ids.max()), int(ex_ids.max()))
        if lo >= 0 and hi < (2**62) // max(n_cores, 1):
            return rt_ids * n_cores, ex_ids * n_cores
    ids, _ = pd.factorize(np.concatenate([rt_ids, ex_ids]))
    ids = ids.astype(np.int64) * n_cores
    return ids[:rt_ids.size], ids[rt_ids.size:]


def _exploded(lists: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Flow id strings and the position of the event each came from."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    if len(lists) == 0 or lists.null_count == len(lists):
        return np.zeros(0, object), np.zeros(0, np.int64)
    parent = pc.list_parent_indices(lists).to_numpy()
    flat = pc.list_flatten(lists)
    try:  # numeric ids (the usual case) join far faster as integers than as strings
        return pc.cast(flat, pa.int64()).to_numpy(zero_copy_only=False), parent
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return flat.to_numpy(zero_copy_only=False), parent


def launch_stats(profile: Profile, kind: str = "auto", include_memory_events: bool = True,
                 include_last_step: bool = False, round_us: bool = True) -> pd.DataFrame:
    """Per launch: the runtime call's duration, the device work's duration and the launch delay (ns).

    Kineto (HTA's `get_cuda_kernel_launch_stats`, every rank): kernels joined to their
    cudaLaunchKernel-like call by correlation id; `launch_delay_ns` = kernel start - call end,
    0 when the kernel starts before the call returns (the last ProfilerStep and microsecond rounding as in `temporal_breakdown`).
    Neuron: `nc_exec_running` joined to its `nrt_execute` (flow id, else the latest on the core);
    the runtime call encloses the execution, so `launch_delay_ns` = execution start - call start.
    """
    fr = frame_of(profile)
    notes: list[str] = []
    if kind_of(fr, kind) == "neuron":
        _, cores = fr.core_codes()
        ex, core = fr.on_cores(EXECUTION)
        rt, by_flow = neuron_launchers(fr, ex, core, notes)
        ok = rt >= 0
        ex, core, rt, by_flow = ex[ok], core[ok], rt[ok], by_flow[ok]
        # Repeated text (instance, NEFF) as categoricals: one string per distinct value, not per launch.
        df = pd.DataFrame({c: pd.Categorical(cores[c].astype(str))[core] if c == "instance_id" else cores[c].array[core]
                           for c in cores.columns})
        df["exec_id"] = fr.arg(ex, "exec_id")
        models, words = fr.arg_codes(ex, "model_name")
        df["model_name"] = pd.Categorical.from_codes(models, words)
        df["start_ts"] = fr.start[ex]
        df["cpu_duration_ns"] = fr.end[rt] - fr.start[rt]
        df["device_duration_ns"] = fr.end[ex] - fr.start[ex]
        df["launch_delay_ns"] = fr.start[ex] - fr.start[rt]
        df["launch_name"] = pd.Categorical.from_codes(np.zeros(ex.size, np.int8), [RUNTIME_EXECUTE])
        df["linked_by"] = pd.Categorical.from_codes(by_flow.astype(np.int8), ["time", "flow"])
        df["id"] = fr.profile.array("id")[ex]
        df["runtime_id"] = fr.profile.array("id")[rt]
        return notes_of(df, notes)
    k = kineto_kernels(fr, include_last_step, round_us)
    names = LAUNCH_NAMES + (MEMORY_LAUNCH_NAMES if include_memory_events else ())
    rt, rt_start, rt_end = kineto_launchers(fr, k, names, round_us)
    ok = rt >= 0
    df = pd.DataFrame({
        "rank": np.asarray(k.ranks, dtype=object)[k.rank[ok]] if ok.any() else [],
        "correlation": correlation(fr, k.rows)[ok],
        "name": [fr.names[c] for c in fr.name[k.rows[ok]]],
        "launch_name": [fr.names[c] for c in fr.name[rt[ok]]],
        "stream": k.stream[ok],
        "start_ts": k.start[ok],
        "cpu_duration_ns": (rt_end - rt_start)[ok],
        "device_duration_ns": (k.end - k.start)[ok],
        # A kernel that starts before its launch call returns waited for nothing (HTA clips too).
        "launch_delay_ns": np.maximum(k.start - rt_end, 0)[ok],
        "id": fr.profile.array("id")[k.rows[ok]],
    })
    if not ok.any():
        notes.append("no kernel could be joined to a launch call by correlation id")
    return notes_of(df, k.notes + notes)
