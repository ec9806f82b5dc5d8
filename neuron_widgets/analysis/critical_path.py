"""The critical path of a profile: the chain of work and waits that bounds the run end to end.

The profile's events become a dependency graph (`critical_path_neuron`, `critical_path_graph`);
the path is walked back from the latest moment along the dependency that was satisfied last,
so every segment on it is the reason the next one could not start earlier. Segments are work
(compute, a collective's transfer, a host call), a launch, a collective's release, or a gap
the model cannot explain; they cover the run from its first to its last moment.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.timefmt import duration as _duration
from ..model.track_names import TrackNames
from .critical_path_build import frame_for_path, graph_of, is_job
from .critical_path_graph import COLLECTIVE, COMPUTE, DEPENDENCY, KINDS, Graph
from .critical_path_workers import column_at, nullable_ints, objects, track_label, track_labels, worker_key
from .frame import Frame, notes_of
from .what_if import refuse_device, what_if

COLUMNS = ["start_ts", "end_ts", "duration_ns", "kind", "instance_id", "process_id", "thread_id", "nc_idx", "event_id",
           "name", "step", "part"]
WORKER = ["instance_id", "process_id", "nc_idx", "thread_id"]
# A Job's path, filled in by critical_path_job (which imports this module, not the other way round).
JOB_PATH: dict[str, Callable[..., pd.DataFrame]] = {}


def critical_path(profile: Profile, client: Any = None, **job_kw: Any) -> pd.DataFrame:
    """The critical path, one row per segment in time order; `duration_ns` sums to the run's span.

    Columns: `start_ts`, `end_ts`, `duration_ns`, `kind` (`compute`: an execution's time outside its
    collectives; `collective`: a `cc_running`, or a collective's release after its last participant
    arrived; `host`: an `nrt_execute` call's time after its execution ended, or a call that launched
    nothing; `launch`: from a call's start to its execution's start; `gap`: time no event on the path
    explains), the worker (`instance_id`, `process_id`, `nc_idx` for work on a NeuronCore,
    `thread_id` for work on a host thread), `event_id` and `name` of the event the segment is
    part of (-1 and None for a gap), `step` (the execution's `exec_id`, else its ordinal among its
    core's runs of its NEFF; Kineto: the N of its rank's `ProfilerStep#N` whose span holds the
    segment's start; -1 unknown) and `part` (None for a Profile). `attrs["tracks"]`: each worker's
    track as the Timeline labels it (`critical_path_workers.track_label`), by `worker_key`.

    A Job (`nw.load_job`) is computed part by part on Dask as `across` runs it (`client`, and
    `scheduler=`, `num_workers=`, `cache=` as there): the same frame as its parts loaded as one
    profile, with `part` filled and `event_id` the part's own. The run is the span of
    the events the model reads: executions, collectives and `nrt_execute` calls. A path jumps
    between workers where a segment's worker differs from the one before: a launch (host to core),
    a return (core to host), a collective (to the core that arrived last).
    """
    if is_job(profile) and "critical_path" in JOB_PATH:
        return JOB_PATH["critical_path"](profile, client, **job_kw)
    refuse_device(profile, "critical_path")
    fr = frame_for_path(profile)
    g, notes = graph_of(fr)
    df = fr._cached("critical-path", lambda: _path(fr, g)) if g is not None else _empty()
    df = df.copy()
    df.attrs["tracks"] = track_labels(df, TrackNames.of(profile.metadata))
    return notes_of(df, notes)


def _path(fr: Frame, g: Graph) -> pd.DataFrame:
    return segments_frame(fr, g, *path_arrays(g))


def path_arrays(g: Graph) -> tuple[np.ndarray, ...]:
    """The path's segments, in time order: start, end, kind, row, whether inside its event, whether on a core."""
    is_edge, idx = g.walk()  # latest first: an instant's gap, the work on its binding edge, the next instant...
    v = np.where(is_edge, 0, idx)
    e = np.where(is_edge, idx, 0)
    if g.src.size == 0:
        e = np.zeros(0, np.int64) if idx.size == 0 else e
    src = g.src[e] if g.src.size else np.zeros(idx.size, np.int64)
    w = g.w[e] if g.src.size else np.zeros(idx.size, np.int64)
    wkind = g.wkind[e] if g.src.size else np.zeros(idx.size, np.int8)
    start = np.where(is_edge, g.t[src], g.t[v] - g.bound()[1][v])
    end = np.where(is_edge, g.t[src] + w, g.t[v])
    kind = np.where(is_edge, wkind, g.gkind[v]).astype(np.int64)
    row = np.where(is_edge, g.wrow[e] if g.src.size else -1, g.grow[v])
    event = np.where(is_edge, True, g.gevent[v])
    on_core = np.where(is_edge, np.isin(wkind, (COMPUTE, COLLECTIVE)) & g.device_lanes, g.lane_core[v] >= 0)
    keep = (end > start) & ~(is_edge & (wkind == DEPENDENCY))
    keep = np.flatnonzero(keep)[::-1]
    return tuple(a[keep] for a in (start, end, kind, row, event, on_core))


def segments_frame(fr: Frame, g: Graph, start: np.ndarray, end: np.ndarray, kind: np.ndarray, row: np.ndarray,
                   event: np.ndarray, on_core: np.ndarray) -> pd.DataFrame:
    """Segments as the path's frame: their worker and event read at their rows."""
    cols = worker_columns(fr, row, on_core)
    ids = fr.profile.array("id")
    names = np.array([*fr.names, None], dtype=object)
    return pd.DataFrame({
        "start_ts": start.astype(np.int64), "end_ts": end.astype(np.int64), "duration_ns": (end - start).astype(np.int64),
        "kind": pd.Categorical.from_codes(kind, KINDS),
        **cols,
        "event_id": np.where(event, ids[row], -1).astype(np.int64),
        "name": np.where(event, names[fr.name[row]], None),
        "step": g.step_at(row, start) if row.size else np.zeros(0, np.int64),
        "part": pd.Series([None] * row.size, dtype=object),
    })


def worker_columns(fr: Frame, row: np.ndarray, on_core: np.ndarray) -> dict[str, pd.api.extensions.ExtensionArray]:
    """instance_id, process_id, thread_id (None on a core) and nc_idx of the events at rows."""
    out: dict[str, pd.api.extensions.ExtensionArray] = {}
    for c in ("instance_id", "process_id", "thread_id", "nc_idx"):
        codes, uniq = column_at(fr, c, row)  # read at the path's rows: no per-event combos, no Python tuples
        if c == "instance_id":
            out[c] = objects(codes, uniq)
        else:
            out[c] = nullable_ints(codes, uniq, on_core if c == "thread_id" else None)
    return out


def _empty() -> pd.DataFrame:
    df = pd.DataFrame({c: pd.Series(dtype=np.int64) for c in COLUMNS})
    for c in ("instance_id", "name", "part"):
        df[c] = df[c].astype(object)
    for c in ("process_id", "thread_id", "nc_idx"):
        df[c] = df[c].astype("Int64")
    df["kind"] = pd.Categorical([], categories=KINDS)
    return df


def critical_path_breakdown(profile: Profile, client: Any = None, **job_kw: Any) -> pd.DataFrame:
    """The path's time per worker and kind: `duration_ns`, `share_pct` (of the path), and per worker its
    total (`worker_ns`, `worker_share_pct`), `steps_on_path` (the steps in which it has a segment on the
    path) and `steps` (the steps on the path). Workers with most time first; a NeuronCore is
    (instance_id, process_id, nc_idx), a host thread (instance_id, process_id, thread_id).
    `attrs["tracks"]`: each worker's track as the Timeline labels it, by (instance_id, process_id, nc_idx,
    thread_id) (a job's: its part first, as its path's segments say)."""
    return breakdown_of(critical_path(profile, client, **job_kw))


def breakdown_of(path: pd.DataFrame) -> pd.DataFrame:
    """`critical_path_breakdown` of a path already computed."""
    cols = [*WORKER, "kind", "duration_ns", "share_pct", "worker_ns", "worker_share_pct", "steps_on_path", "steps"]
    if path.empty:
        return notes_of(pd.DataFrame(columns=cols), path.attrs.get("notes", []))
    p = path.copy()
    p["nc_idx"] = p["nc_idx"].where(p["thread_id"].isna())  # a host thread's calls are that thread's
    p["worker"] = _tuple_codes(p, WORKER)
    total = int(p["duration_ns"].sum())
    by = p.groupby(["worker", "kind"], observed=True)["duration_ns"].sum().reset_index()
    by = by[by["duration_ns"] > 0]
    per_worker = p.groupby("worker")["duration_ns"].sum()
    known = p[p["step"] >= 0]
    steps_on = known.groupby("worker")["step"].nunique()
    first = p.drop_duplicates("worker").set_index("worker")[[*WORKER, "part"]]
    out = pd.concat([first.loc[by["worker"], WORKER].reset_index(drop=True),
                     by[["kind", "duration_ns"]].reset_index(drop=True)], axis=1)
    out["share_pct"] = 100.0 * out["duration_ns"] / total if total else 0.0
    out["worker_ns"] = per_worker.loc[by["worker"]].to_numpy()
    out["worker_share_pct"] = 100.0 * out["worker_ns"] / total if total else 0.0
    out["steps_on_path"] = steps_on.reindex(by["worker"]).fillna(0).astype(np.int64).to_numpy()
    out["steps"] = int(known["step"].nunique())
    out = out.sort_values(["worker_ns", "duration_ns"], ascending=False, kind="stable", ignore_index=True)
    out = notes_of(out[cols], path.attrs.get("notes", []))
    tracks = path.attrs.get("tracks", {})
    out.attrs["tracks"] = {worker_key(None, *r[1:]): tracks.get(worker_key(*r), "")
                           for r in first.astype(object).where(first.notna(), None)[["part", *WORKER]].itertuples(
                               index=False)}
    return out


def _tuple_codes(df: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """A code per distinct tuple of columns, in order of first appearance (nulls a value): each column coded,
    the codes packed and coded again, rather than factorizing tuples of Python objects."""
    packed = np.zeros(len(df), np.int64)
    for c in cols:
        code, uniq = pd.factorize(df[c], use_na_sentinel=False)
        packed = pd.factorize(packed * max(len(uniq), 1) + code)[0].astype(np.int64)
    return packed


def _percent(pct: float) -> str:
    """A share to two significant digits below 10% (a real 0.09% saving is not "0%")."""
    return f"{pct:.0f}%" if pct >= 10 or pct == 0 else f"{pct:.2g}%"


def critical_path_headline(profile: Profile, scale: float = 0.5, client: Any = None, **job_kw: Any) -> dict[str, Any]:
    """The worker whose work is longest on the path, how often it is on it, and what scaling that work does.

    Returns `sentence` (e.g. "i-0a88.../PID:2624383/neuron_rt/NC:1 is on the critical path in 117 of 132
    steps; halving its compute would save 4.29 ms (3.3%)": the worker as the Timeline labels its track;
    a change that makes the run longer says it lengthens it), the worker's columns (`instance_id`,
    `process_id`, `nc_idx`, `thread_id`; and `part` for a Job), `track` (its label), `kind` (its longest
    kind of work on the path), `steps_on_path`, `steps`, `saved_ns` and `saved_pct` (from `what_if`,
    negative when the run gets longer); an empty dict when the path has no work. A Job's as its path's
    and what-if (`client`, `scheduler=`, ... as there).
    """
    path = critical_path(profile, client, **job_kw)
    b = breakdown_of(path)
    work = b[~b["kind"].astype(str).isin(["gap", "launch"])] if len(b) else b
    if work.empty:
        return {}
    top = work.sort_values("duration_ns", ascending=False, kind="stable").iloc[0]
    worker = {c: (None if pd.isna(top[c]) else (str(top[c]) if c == "instance_id" else int(top[c]))) for c in WORKER}
    kind = str(top["kind"])
    key = worker_key(None, *(worker[c] for c in WORKER))
    part = _part_of(path, worker) if is_job(profile) else None
    where: dict[str, Any] = {c: v for c, v in worker.items() if c != "nc_idx" or worker["thread_id"] is None}
    where = {**({"part": part} if part is not None else {}), **where, "kind": kind}
    with warnings.catch_warnings():  # the headline says itself when the change saves nothing
        warnings.simplefilter("ignore", UserWarning)
        w = what_if(profile, where, scale, client, **job_kw)
    who = b.attrs.get("tracks", {}).get(key) or track_label(TrackNames(), worker["instance_id"], worker["process_id"],
                                                            worker["nc_idx"], worker["thread_id"], part=part)
    change = {0.5: "halving", 0.0: "removing", 2.0: "doubling"}.get(scale, f"scaling by {scale:g}")
    steps = f" in {int(top['steps_on_path']):,} of {int(top['steps']):,} steps" if int(top["steps"]) else ""
    if w.saved_ns > 0:
        gain = f"{change} its {kind} would save {_duration(w.saved_ns)} ({_percent(w.saved_pct)})"
    elif w.saved_ns < 0:  # a slower worker on the path: the run gets longer
        gain = f"{change} its {kind} would lengthen the run by {_duration(-w.saved_ns)} ({_percent(-w.saved_pct)})"
    else:  # its work on the path waits on others' (or the change is off the path): no change to offer
        gain = f"{change} its {kind} would not {'lengthen' if scale > 1 else 'shorten'} the run"
        if w.unended:  # an unended event's length is the capture's cut: not scaled, no saving offered from it
            gain += f" (its {kind} that never ended runs to where the recording stopped: not scaled)"
    sentence = f"{who} is on the critical path{steps}; {gain}"
    return {"sentence": sentence, **worker, **({"part": part} if is_job(profile) else {}), "track": who,
            "kind": kind, "steps_on_path": int(top["steps_on_path"]), "steps": int(top["steps"]),
            "saved_ns": int(w.saved_ns), "saved_pct": float(w.saved_pct)}


def _part_of(path: pd.DataFrame, worker: dict[str, Any]) -> str | None:
    """The part a job's worker's segments are in (its first)."""
    hit = path["instance_id"].astype(object) == worker["instance_id"]
    for c in ("process_id", "thread_id") if worker["thread_id"] is not None else ("process_id", "nc_idx"):
        col = path[c]
        hit &= (col == worker[c]).fillna(False).to_numpy(bool) if worker[c] is not None else col.isna().to_numpy()
    parts = path.loc[hit, "part"]
    return str(parts.iloc[0]) if len(parts) else None
