"""What a fix would buy: replay a profile's dependency graph with some work or gaps scaled.

What the model cannot see: it knows only the dependencies the profile records (a core's
executions in order, a thread's `nrt_execute` calls in order, a call's execution, collectives
across cores). Work that shares a resource without a recorded dependency (two processes on one
host CPU, DMA queues, the network) is taken to be independent, so speeding one side does not
slow or speed the other. Inside an execution only the collectives are seen: compute is scaled as
a whole, whatever engine bounds it. A gap (latency, host work between calls the runtime did not
record) is kept as recorded unless selected: a host that would also get faster is not predicted.
A core that recorded no barrier for a collective is taken to have arrived at its `cc_running`'s
start, so a wait it did not record counts as its compute. The framework's own threads are not in
the Neuron model: the host side is the `nrt_execute` calls.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from .critical_path_build import frame_for_path, graph_of
from .critical_path_graph import COLLECTIVE, COMPUTE, DEPENDENCY, END, KINDS, LAST_ARRIVAL, Graph
from .critical_path_workers import GraphWorkers, graph_workers
from .device_breakdown import device_trace_of
from .frame import Frame

# A Job's what-if, filled in by critical_path_job (which imports this module, not the other way round).
JOB_WHAT_IF: dict[str, Callable[..., WhatIf]] = {}
FILTER_COLUMNS = ("kind", "instance_id", "process_id", "thread_id", "nc_idx", "event_id", "name", "step", "part")


@dataclass
class WhatIf:
    """The run's span as recorded and as replayed with the changes; `steps`: one row per step (NEFF and
    execution ordinal; from its first execution's start to its last one's end over the cores) with its
    recorded and predicted start, end and duration, `saved_ns` (duration less predicted duration) and
    `ends_earlier_ns` (how much earlier the step ends: the gain accumulated by then)."""

    span_ns: int
    predicted_span_ns: int
    saved_ns: int
    steps: pd.DataFrame
    selected: int = 0  # how many segments (work or gaps, of non-zero time) the changes touched
    notes: list[str] = field(default_factory=list)
    unended: int = 0  # segments selected but left unscaled: of events that never ended (their time is the capture's cut)

    @property
    def saved_pct(self) -> float:
        return 100.0 * self.saved_ns / self.span_ns if self.span_ns else 0.0

    def __repr__(self) -> str:
        return (f"WhatIf(span_ns={self.span_ns:,}, predicted_span_ns={self.predicted_span_ns:,}, "
                f"saved_ns={self.saved_ns:,} ({self.saved_pct:.1f}%), {len(self.steps)} steps, "
                f"{self.selected} segments changed)")


def what_if(profile: Profile, where: Any = None, scale: float | None = None, client: Any = None,
            **job_kw: Any) -> WhatIf:
    """Predict the run's span if the selected work or gaps took `scale` times as long.

    `where` selects segments of the graph (those `critical_path` shows, on the path or not): a dict
    of column filters over `critical_path`'s columns (`kind`, `instance_id`, `process_id`,
    `thread_id`, `nc_idx`, `event_id`, `name`, `step`; a value, or a list of values), e.g.
    `{"instance_id": "i-0abc", "process_id": 1234, "nc_idx": 1, "kind": "compute"}`; or a boolean
    mask over the profile's events (the work and the launch, release and return times of the
    events it selects). Several changes at once: `what_if(p, [(where, scale), ...])`. A
    collective's wait is never scaled: it follows from the arrivals. Work of an event that never ended
    (a hang, null end) is never scaled either: its time runs to where the recording stopped, not work;
    `notes` (and `unended`) say how many such segments a change selected and left as recorded.

    The graph is replayed with every dependency and every gap kept (gaps selected are scaled):
    each moment happens when its last dependency is met, plus its own recorded gap.

    What the model cannot see: dependencies the profile does not record. Work sharing a resource
    without one (host CPUs, DMA, the network) is independent here; compute inside an execution is
    scaled as a whole; a faster host is not predicted unless its gaps are selected; a core that
    recorded no barrier is taken to arrive at its `cc_running`'s start; the framework's threads
    are not in the Neuron model. Kineto and plain Chrome traces: see `critical_path_chrome`; a Kineto
    step is a `ProfilerStep#N` (`step` filters on the one a segment starts in, `steps` has a row per
    ProfilerStep over the top-level events that start in it).

    A Job is replayed on its parts' graphs joined at the collectives (see `critical_path`); `where`
    may filter on `part` too, a mask over events is refused.
    """
    if type(profile).__name__ == "Job" and "what_if" in JOB_WHAT_IF:
        return JOB_WHAT_IF["what_if"](profile, where, scale, client, **job_kw)
    refuse_device(profile, "what_if")
    fr = frame_for_path(profile)
    changes = _changes(where, scale)
    g, notes = graph_of(fr)
    if g is None:
        return WhatIf(0, 0, 0, _steps_empty(), 0, list(notes))
    span, predicted, t, selected, empty, cut = _replayed(fr, g, changes)
    out_notes = list(notes)
    if cut:
        out_notes.append(unended_note(cut))
    if not selected:
        out_notes.append("the changes select no work or gap: nothing changes")
    warn_empty(empty, only_unended=[changes[k][0] for k in cut])
    return WhatIf(span, predicted, span - predicted, _steps(g, t), selected, out_notes, sum(cut.values()))


def unended_note(cut: Mapping[int, int]) -> str:
    """What `notes` says of the selected segments left unscaled because their event never ended."""
    n = sum(cut.values())
    return (f"{n:,} selected segment{'s' if n != 1 else ''} of events that never ended (null end, drawn to the profile's "
            "end) left unscaled: their time runs to where the recording stopped, not work, so scaling it predicts "
            "nothing")


def warn_empty(empty: list[Any], stacklevel: int = 3, only_unended: Sequence[Any] = ()) -> None:
    """A UserWarning per change whose filter selects nothing (a misspelt name or a worker not in the profile
    would otherwise predict no gain in silence); `where=None` (everything) is not named. A change in
    `only_unended` selected only work of events that never ended: the warning says so."""
    for sel in empty:
        cut_only = any(sel is x for x in only_unended)
        if sel is None and not cut_only:
            continue
        if isinstance(sel, Mapping):
            what = f"where={dict(sel)!r}"
        else:
            mask = np.asarray(sel)
            what = f"a mask selecting {int(mask.sum()) if mask.dtype == bool else mask.size:,} events"
        if sel is None:
            what = "where=None"
        why = (" but the work of events that never ended (their time is where the recording stopped, not work: "
               "left unscaled)" if cut_only else "")
        warnings.warn(f"what_if: {what} selects no work or gap of non-zero time{why}: that change changes nothing",
                      UserWarning, stacklevel=stacklevel)


def refuse_device(x: Any, call: str) -> None:
    """A DeviceTrace (or a viewer of one) has no dependencies between workers: say what to call instead."""
    if isinstance(x, Profile) or type(x).__name__ == "Job":
        return
    try:
        device_trace_of(x)
    except TypeError:
        return  # not a device trace: frame_of says what it takes
    raise TypeError(
        f"{call} reads a system profile's dependencies (NeuronCore executions, collectives, nrt_execute calls; a "
        f"Kineto trace's launches and kernels), and a {type(x).__name__} is one execution's instructions, DMA and "
        "semaphores: call findings(trace) (neuron_widgets.analysis) for its device findings, or the device "
        "analyses of neuron_widgets.analysis.device_breakdown (engine_time, top_operators, dma_traffic, semaphore_waits, "
        "device_bound), or Summary(viewer); for the critical path, pass the system profile the trace was "
        f"captured with: {call}(nw.load_profile(...))")


def saved_ns(profile: Profile, where: Any = None, scale: float | None = None) -> int:
    """`what_if(profile, where, scale).saved_ns` without the per-step table (what a finding's gain needs)."""
    g, _ = graph_of(frame_for_path(profile))
    if g is None:
        return 0
    span, predicted, _, _, _, _ = _replayed(frame_for_path(profile), g, _changes(where, scale))
    return span - predicted


def without_unended(g: Graph, unended: np.ndarray, on_edges: np.ndarray, on_gaps: np.ndarray) -> tuple[
        np.ndarray, np.ndarray, int]:
    """The selection less the work and in-event gaps of events that never ended (`unended`: per row), and how
    many such segments of non-zero time it held: their length is the capture's cut, not work."""
    cut_e = on_edges & (g.wrow >= 0) & unended[np.maximum(g.wrow, 0)]
    cut_g = on_gaps & g.gevent & (g.grow >= 0) & unended[np.maximum(g.grow, 0)]
    n = int((cut_e & (g.w > 0)).sum() + (cut_g & (g.bound()[1] > 0)).sum())
    return on_edges & ~cut_e, on_gaps & ~cut_g, n


def _replayed(fr: Frame, g: Graph, changes: list[tuple[Any, float]]) -> tuple[
        int, int, np.ndarray, int, list[Any], dict[int, int]]:
    """The span as recorded and as replayed, the instants' replayed times, how many segments changed, the
    changes' filters that selected none, and per change (its position) the unended segments left unscaled."""
    w_scale = np.ones(g.src.size)
    g_scale = np.ones(len(g))
    selected = 0
    empty = []
    cut: dict[int, int] = {}
    unended = fr.incomplete
    for k, (sel, factor) in enumerate(changes):
        on_edges, on_gaps = _selected(fr, g, sel)
        on_edges, on_gaps, n_cut = without_unended(g, unended, on_edges, on_gaps)
        if n_cut:
            cut[k] = n_cut
        w_scale[on_edges] *= factor
        g_scale[on_gaps] *= factor
        n = int((on_edges & (g.w > 0)).sum() + (on_gaps & (g.bound()[1] > 0)).sum())
        selected += n
        if not n:
            empty.append(sel)
    order = fr._cached("critical-order", g.order)
    t = g.replay(w_scale, g_scale, order)
    span, predicted = pinned_span(g, t, unended)
    return span, predicted, t, selected, empty, cut


def pinned_span(g: Graph, t: np.ndarray, unended: np.ndarray) -> tuple[int, int]:
    """The span as recorded and as replayed (`t`, pinned in place). The end of an event that never ended is where
    the recording stopped: it stays at its recorded time whatever runs before it, and the gain is measured at
    the last moment that did end (a hang's end moving with its start would be a saving of the capture's cut)."""
    real = g.role != LAST_ARRIVAL
    if not real.any():
        return 0, 0
    span = int(g.t[real].max() - g.run_start)
    cut = real & (g.role == END) & (g.row >= 0) & unended[np.maximum(g.row, 0)]
    if not cut.any():
        return span, round(float(t[real].max()))
    t[cut] = (g.t[cut] - g.run_start).astype(np.float64)
    ended = real & ~cut
    if not ended.any():
        return span, span
    return span, span - (int(g.t[ended].max() - g.run_start) - round(float(t[ended].max())))


def _changes(where: Any, scale: float | None) -> list[tuple[Any, float]]:
    if scale is None:
        if isinstance(where, Sequence) and not isinstance(where, (str, bytes, np.ndarray, pd.Series)) and \
                all(isinstance(c, tuple) and len(c) == 2 for c in where):
            changes = list(where)
        else:
            raise ValueError("what_if needs a scale: what_if(p, where, scale), or a list of (where, scale) changes")
    else:
        changes = [(where, scale)]
    out = []
    for sel, factor in changes:
        f = float(factor)
        if not np.isfinite(f) or f < 0:
            raise ValueError(f"a scale must be a finite number >= 0, not {factor!r}")
        out.append((sel, f))
    return out


def _selected(fr: Frame, g: Graph, where: Any, workers: GraphWorkers | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Which work edges and which instants' gaps a selection covers (`workers`: of `g`, when it is not the
    frame's own graph, as a job's part's graph bound as in the job's is not)."""
    work = g.wkind != DEPENDENCY
    if where is None:
        return work.copy(), np.ones(len(g), bool)
    if isinstance(where, (np.ndarray, pd.Series, list)) and not isinstance(where, Mapping):
        mask = np.asarray(where)
        if mask.dtype != bool or mask.shape != (len(fr),):
            raise ValueError(f"a mask must be booleans, one per event of the profile ({len(fr)}), "
                             f"not {mask.dtype} of shape {mask.shape}")
        edges = work & mask[np.maximum(g.wrow, 0)] & (g.wrow >= 0)
        gaps = g.gevent & (g.grow >= 0) & mask[np.maximum(g.grow, 0)]
        return edges, gaps
    if not isinstance(where, Mapping):
        raise TypeError(f"where must be a dict of column filters, a boolean mask over events or None, not "
                        f"{type(where).__name__}")
    def matches(col: str, want: Any, side: str, row: np.ndarray, kind: np.ndarray, event: np.ndarray,
                on_core: np.ndarray) -> np.ndarray:
        return _matches(fr, g, col, want, side, row, kind, event, on_core, workers)

    return filtered(g, where, matches)


def filtered(g: Graph, where: Mapping[str, Any], matches: Callable[..., np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The work edges and instants' gaps a dict of column filters covers, one filter after another.

    `matches(col, want, side, row, kind, event, core)` tells, per edge (`side` "edges") or instant
    ("instants"), whether its event's column `col` holds `want` (a profile reads its columns, a job its
    parts' pieces).
    """
    unknown = [k for k in where if k not in FILTER_COLUMNS]
    if unknown:
        raise ValueError(f"where filters on {unknown}: the columns are {list(FILTER_COLUMNS)}")
    edges, gaps = g.wkind != DEPENDENCY, np.ones(len(g), bool)
    e_row, v_row = np.maximum(g.wrow, 0), np.maximum(g.grow, 0)
    e_core = np.isin(g.wkind, (COMPUTE, COLLECTIVE)) & g.device_lanes
    v_core = g.lane_core >= 0
    e_event = np.ones(g.src.size, bool)
    for col, want in where.items():
        edges &= matches(col, want, "edges", e_row, g.wkind, e_event, e_core)
        gaps &= matches(col, want, "instants", v_row, g.gkind, g.gevent, v_core)
    return edges & (g.wrow >= 0), gaps & (g.grow >= 0)


def _values(want: Any) -> list[Any]:
    if isinstance(want, (list, tuple, set, frozenset, np.ndarray, pd.Series, pd.Index)):
        return list(want)
    return [want]


def kind_matches(kind: np.ndarray, vals: list[Any]) -> np.ndarray:
    """Which kind codes are among the kind names `vals` (an unknown name is an error, not no match)."""
    bad = [v for v in vals if v not in KINDS]
    if bad:
        raise ValueError(f"unknown kind {bad}: the kinds are {list(KINDS)}")
    return np.isin(kind, [KINDS.index(v) for v in vals])


def _matches(fr: Frame, g: Graph, col: str, want: Any, side: str, row: np.ndarray, kind: np.ndarray,
             event: np.ndarray, on_core: np.ndarray, workers: GraphWorkers | None = None) -> np.ndarray:
    vals = _values(want)
    if col == "kind":
        return kind_matches(kind, vals)
    if col == "part":
        return np.full(row.size, any(v is None for v in vals))
    if col == "event_id":
        ids = np.where(event, fr.profile.array("id")[row], -1)
        return np.isin(ids, np.asarray([int(v) for v in vals], np.int64))
    if col == "step":  # Kineto: the ProfilerStep the segment's start falls in, as the path shows it
        at = None if g.time_steps is None else (g.t[g.src] if side == "edges" else g.t - g.g)
        return np.isin(g.step_at(row, at), np.asarray([int(v) for v in vals], np.int64))
    if col == "name":
        codes = fr.codes_of([v for v in vals if isinstance(v, str)])
        hit = np.isin(fr.name[row], codes) & event
        return hit | (~event if any(v is None for v in vals) else False)
    # A worker column: decided once per distinct value among the graph's rows, then per edge or instant.
    wanted = set(vals)
    any_null = any(_null(x) for x in vals)
    hit = (workers or graph_workers(fr, g)).hits(col, side, lambda v: (v in wanted) if not _null(v) else any_null)
    if col == "thread_id":  # work on a core is on no thread
        hit = np.where(on_core, any(_null(x) for x in vals), hit)
    return hit


def _null(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v) or v is pd.NA


def _steps(g: Graph, t: np.ndarray) -> pd.DataFrame:
    if g.ex_start is None or g.ex_end is None or g.ex_start.size == 0 or g.row_neff is None or g.row_step is None:
        return _steps_empty()
    rows = g.row[g.ex_start]
    df = pd.DataFrame({"neff": g.row_neff[rows], "step": g.row_step[rows],
                       "start_ts": g.t[g.ex_start], "end_ts": g.t[g.ex_end],
                       "p_start": t[g.ex_start], "p_end": t[g.ex_end]})
    by = df.groupby(["neff", "step"], sort=False).agg(start_ts=("start_ts", "min"), end_ts=("end_ts", "max"),
                                                      p_start=("p_start", "min"), p_end=("p_end", "max")).reset_index()
    names = np.array([*g.neffs, None], dtype=object)
    out = pd.DataFrame({"model_name": names[by["neff"].to_numpy()], "step": by["step"].to_numpy(np.int64),
                        "start_ts": by["start_ts"].to_numpy(np.int64), "end_ts": by["end_ts"].to_numpy(np.int64)})
    out["duration_ns"] = out["end_ts"] - out["start_ts"]
    out["predicted_start_ts"] = np.round(by["p_start"].to_numpy()).astype(np.int64) + g.run_start
    out["predicted_end_ts"] = np.round(by["p_end"].to_numpy()).astype(np.int64) + g.run_start
    if g.time_steps is not None:  # a ProfilerStep is its markers' span, moved as its first and last events move
        n, first, last = g.time_steps.bounds()
        pos = np.searchsorted(n, out["step"].to_numpy(np.int64))
        moved_s, moved_e = out["predicted_start_ts"] - out["start_ts"], out["predicted_end_ts"] - out["end_ts"]
        out["start_ts"], out["end_ts"] = first[pos], last[pos]
        out["duration_ns"] = out["end_ts"] - out["start_ts"]
        out["predicted_start_ts"], out["predicted_end_ts"] = out["start_ts"] + moved_s, out["end_ts"] + moved_e
    out["predicted_duration_ns"] = out["predicted_end_ts"] - out["predicted_start_ts"]
    out["saved_ns"] = out["duration_ns"] - out["predicted_duration_ns"]
    out["ends_earlier_ns"] = out["end_ts"] - out["predicted_end_ts"]  # the gain accumulated by the step's end
    return out.sort_values(["start_ts", "step"], kind="stable", ignore_index=True)


def _steps_empty() -> pd.DataFrame:
    return pd.DataFrame(columns=["model_name", "step", "start_ts", "end_ts", "duration_ns", "predicted_start_ts",
                                 "predicted_end_ts", "predicted_duration_ns", "saved_ns", "ends_earlier_ns"])
