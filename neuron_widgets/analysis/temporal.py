"""Where a device's time goes: compute, collectives, barriers, idle (HTA's temporal breakdown)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.profile import Profile
from .devices import BARRIER, COLLECTIVE, COMPUTATION, EXECUTION, kind_of, kineto_kernels
from .frame import Frame, frame_of, notes_of
from .intervals import Intervals, first_last, union

NEURON_PARTS = ("compute", "collective", "barrier", "idle")


def temporal_breakdown(profile: Profile, kind: str = "auto", include_last_step: bool = False,
                       round_us: bool = True) -> pd.DataFrame:
    """One row per device: how its span splits into compute, communication and idle time.

    Neuron profiles: a row per NeuronCore (`instance_id`, `process_id`, `nc_idx`, `worker_gid`),
    over the span from its first to its last `nc_exec_running`. busy = union of executions;
    `barrier_time_ns` = union of `cc_exec_barrier` within busy; `collective_time_ns` = union of
    `cc_running` within busy, less barrier; `compute_time_ns` = busy less both;
    `idle_time_ns` = span less busy; `non_compute_time_ns` = collective + barrier. Each also as
    `*_pctg` (compute + collective + barrier + idle = 100).

    Kineto traces: a row per rank with HTA's definitions: over the span from the first to the
    last kernel, `idle_time_ns` = span less the union of kernels, `compute_time_ns` = union of
    computation kernels, `non_compute_time_ns` = the rest. As HTA does, kernels launched in the
    last of several ProfilerSteps are left out (`include_last_step=True` keeps them) and times
    are read as whole microseconds, starts rounded up and ends down (`round_us=False` keeps ns).
    """
    fr = frame_of(profile)
    if kind_of(fr, kind) == "neuron":
        return _neuron(fr)
    return _kineto(fr, include_last_step, round_us)


def _neuron(fr: Frame) -> pd.DataFrame:
    notes: list[str] = []
    ex, g = fr.on_cores(EXECUTION)
    off_core = fr.rows_named(EXECUTION).size - ex.size
    if off_core:
        notes.append(f"{off_core} nc_exec_running events have no nc_idx and are not counted")
    _, cores = fr.core_codes()
    n = len(cores)
    open_ex = fr.incomplete[ex]
    if open_ex.any():
        notes.append(f"{int(open_ex.sum())} executions never completed: counted as running to the profile's end")
    busy = union(g, fr.start[ex], fr.end[ex])
    lo, hi = first_last(g, fr.start[ex], fr.end[ex], n)
    barrier, collective = _within(fr, BARRIER, busy, notes), _within(fr, COLLECTIVE, busy, notes)
    collective = collective - barrier
    span = hi - lo
    busy_t, bar_t, coll_t = busy.length(n), barrier.length(n), collective.length(n)
    df = cores.copy()
    df["executions"] = np.bincount(g, minlength=n)
    df["span_ns"] = span
    df["busy_time_ns"] = busy_t
    df["compute_time_ns"] = busy_t - bar_t - coll_t
    df["collective_time_ns"] = coll_t
    df["barrier_time_ns"] = bar_t
    df["non_compute_time_ns"] = coll_t + bar_t
    df["idle_time_ns"] = span - busy_t
    for part in (*NEURON_PARTS, "non_compute"):
        df[f"{part}_time_pctg"] = _pctg(df[f"{part}_time_ns"].to_numpy(), span)
    df = df[df["executions"] > 0].reset_index(drop=True)
    if df.empty:
        notes.append("no nc_exec_running events: no NeuronCore was seen executing")
    return notes_of(df, notes)


def _within(fr: Frame, name: str, busy: Intervals, notes: list[str]) -> Intervals:
    rows = fr.rows_named(name)
    if rows.size == 0:
        notes.append(f"no {name} events in this profile: its time counts as compute")
        return Intervals.empty()
    rows, g = fr.on_cores(name)
    whole = union(g, fr.start[rows], fr.end[rows])
    inside = whole & busy
    outside = int((whole.end - whole.start).sum() - (inside.end - inside.start).sum())
    if outside > 0:
        notes.append(f"{name} time outside any nc_exec_running ({outside / 1e6:,.3f} ms) is not part of the breakdown")
    return inside


def _pctg(part: np.ndarray, span: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(span > 0, 100.0 * part / np.maximum(span, 1), 0.0)


def _kineto(fr: Frame, include_last_step: bool, round_us: bool) -> pd.DataFrame:
    k = kineto_kernels(fr, include_last_step, round_us)
    n = len(k.ranks)
    start, end = k.start, k.end
    lo, hi = first_last(k.rank, start, end, n)
    every = union(k.rank, start, end)
    comp = k.types(fr) == COMPUTATION
    compute = union(k.rank[comp], start[comp], end[comp])
    span = hi - lo
    idle = span - every.length(n)
    comp_t = compute.length(n)
    df = pd.DataFrame({"rank": k.ranks, "kernels": np.bincount(k.rank, minlength=n), "span_ns": span,
                       "idle_time_ns": idle, "compute_time_ns": comp_t, "non_compute_time_ns": span - comp_t - idle})
    for part in ("idle", "compute", "non_compute"):
        df[f"{part}_time_pctg"] = _pctg(df[f"{part}_time_ns"].to_numpy(), span)
    df = df[df["kernels"] > 0].sort_values("rank").reset_index(drop=True)
    return notes_of(df, k.notes)
