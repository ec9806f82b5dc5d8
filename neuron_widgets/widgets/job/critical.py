"""A job's critical path placed on its Timeline: the path's events outlined on the opened parts' tracks, a span on
each folded part's track where the path runs through it, and the jumps between tracks (between parts at the
collectives, where the path moves to the node that arrived last).

The path is `analysis.critical_path(job)` (computed part by part on Dask, `event_id` the part's own); this module
only places its segments on what the JobTimeline shows (job/view.py: the parts' summary tracks, labelled with the
part's name in every grouping, and the opened parts' events under `<part>/`). A span also says what it stands for
(`span_detail`: its segments by kind and worker, the worker named as its track is once the part is opened), which
the page shows when the pointer is over it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...analysis.critical_path_workers import track_label, worker_key
from ...model.profile import Profile
from ...model.track_names import TrackNames
from ..timeline_critical import MAX_JUMPS, CriticalShown, jumps_between, no_path_text, nothing, path_headline

NO_ROW = np.iinfo(np.int64).min  # a segment placed nowhere (its part has no track, its event is not shown)
SPAN_GROUPS = 8  # a span's hover lists its segments' kinds and workers, the longest first; the rest in one line
WORKER_COLS = ["instance_id", "process_id", "nc_idx", "thread_id"]


class JobCriticalShown(CriticalShown):
    """The job's path as shown, with what each drawn span stands for (`span_detail`, aligned with `spans`).

    `span_detail`: {"kinds": [...], "workers": [...], "runs": one list per drawn span, flat
    [kind, worker, duration_ns, count, ...] by duration, longest first, at most SPAN_GROUPS of them and then, where
    there are more, one [-1, -1, duration_ns, count] for the rest}; kinds and workers index the two lists.
    """

    def __init__(self, *args: Any, span_detail: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.span_detail = span_detail or {"kinds": [], "workers": [], "runs": []}

    def info(self) -> dict[str, Any]:
        return {**super().info(), "span_detail": self.span_detail}

    def exported(self) -> dict[str, Any]:
        return {**super().exported(), "span_detail": self.span_detail}


def job_critical_shown(view: Profile, grouping: str, path: pd.DataFrame, opened: Collection[str],
                       parts: int) -> CriticalShown:
    """The job's path as `view` (the JobTimeline's profile, with `opened` parts loaded) shows it in `grouping`.

    An opened part's path events are its highlight rows; a folded part gets one span per run of consecutive
    segments in it (its gaps included: they are its workers' waits), from the run's first start to its last end.
    Jumps join consecutive segments with an event (gaps are crossed, as on one profile's Timeline) placed on
    another track or lane; segments of one folded part share its track, so only moves between parts show there.
    """
    if path.empty or not (path["event_id"] >= 0).any():
        return nothing(no_path_text(path))
    part = path["part"].astype(object).where(path["part"].notna(), "").astype(str).to_numpy()
    event = path["event_id"].to_numpy(np.int64)
    start, end = path["start_ts"].to_numpy(np.int64), path["end_ts"].to_numpy(np.int64)
    idx = view.track_index(grouping)
    label_track = {str(label): k for k, label in enumerate(idx.tracks["label"].tolist())}
    opened = set(opened) & set(part.tolist())
    folded = sorted({p for p in part.tolist() if p and p not in opened and p in label_track})
    label_of = {p: k for k, p in enumerate(folded)}
    # Per segment: its row in the view (an opened part's event), or -1 - its folded part's label, or NO_ROW.
    where = np.full(len(path), NO_ROW, np.int64)
    for p in opened:
        mine = np.flatnonzero((part == p) & (event >= 0))
        found, rows = _rows_in_part(view, p, event[mine])
        where[mine[found]] = rows
    for p, k in label_of.items():
        where[part == p] = -1 - k
    # Spans: runs of consecutive segments in one folded part.
    in_folded = where < 0
    in_folded &= where != NO_ROW
    new_run = in_folded.copy()
    new_run[1:] &= where[1:] != where[:-1]
    firsts = np.flatnonzero(new_run)
    lasts = _run_ends(in_folded, where, firsts)
    span_label = -1 - where[firsts]
    span_rows = np.stack([span_label, start[firsts], end[lasts]], axis=1) if firsts.size else np.zeros((0, 3), np.int64)
    folded_track = np.array([label_track[p] for p in folded], np.int64)
    origin = view.origin_ts
    shown_spans = span_rows[:MAX_JUMPS]
    spans = (np.stack([shown_spans[:, 1] - origin, shown_spans[:, 2] - origin, folded_track[shown_spans[:, 0]]], axis=1)
             .astype(np.float64).ravel().tolist()) if len(shown_spans) else []
    # Jumps between the placed segments with an event.
    placed = np.flatnonzero((event >= 0) & (where != NO_ROW))
    rows = where[placed]
    row_ok = np.maximum(rows, 0)
    track = np.where(rows >= 0, idx.combo_track[idx.combo[row_ok]] if len(view) else 0,
                     folded_track[np.maximum(-1 - rows, 0)] if folded else 0).astype(np.int64)
    lane = np.where(rows >= 0, idx.lane[row_ok] if len(view) else 0, 0).astype(np.int64)
    jump_rows, jumps, moved = jumps_between(rows, track, lane, start[placed], end[placed], origin)
    outlined = np.unique(rows[rows >= 0])
    between = int(np.count_nonzero(part[placed][1:] != part[placed][:-1]))
    on = sorted({p for p in part.tolist() if p})
    # Short: it sits in the toolbar, which a longer line wraps (the outlines and spans show for themselves; the
    # headline has a line of its own).
    text = f"critical path: {len(path):,} segments in {len(on)} of {_n(parts, 'part')}, {_n(between, 'jump')} between parts"
    if moved > MAX_JUMPS or len(span_rows) > MAX_JUMPS:
        text += f" (the first {MAX_JUMPS:,} drawn)"
    run_of = np.where(in_folded, np.cumsum(new_run) - 1, -1)
    detail = span_detail(path, part, run_of, len(shown_spans))
    return JobCriticalShown(outlined, jump_rows, jumps, text, path_headline(path), spans, span_rows, folded,
                            span_detail=detail)


def span_detail(path: pd.DataFrame, part: np.ndarray, run_of: np.ndarray, runs: int) -> dict[str, Any]:
    """What each of the first `runs` spans stands for: its segments (`run_of`: each segment's span, -1 none) summed
    by kind and worker; the worker named as the Timeline labels its track (`attrs["tracks"]`, else made here)."""
    mine = np.flatnonzero((run_of >= 0) & (run_of < runs))
    out: dict[str, Any] = {"kinds": [], "workers": [], "runs": [[] for _ in range(runs)]}
    if not mine.size:
        return out
    seg = path.iloc[mine][WORKER_COLS].astype(object)
    seg = seg.where(seg.notna(), None)
    seg = seg.assign(run=run_of[mine], part=part[mine], kind=path["kind"].astype(str).to_numpy()[mine],
                     ns=path["duration_ns"].to_numpy(np.int64)[mine], n=1)
    keys = ["run", "kind", "part", *WORKER_COLS]
    groups = seg.groupby(keys, dropna=False, sort=False).agg(ns=("ns", "sum"), n=("n", "sum")).reset_index()
    groups = groups.sort_values(["run", "ns"], ascending=[True, False], kind="stable")
    tracks = path.attrs.get("tracks") or {}
    kinds: dict[str, int] = {}
    workers: dict[str, int] = {}
    labels: dict[Any, str] = {}
    for r in groups.itertuples(index=False):
        key = worker_key(r.part, r.instance_id, r.process_id, r.nc_idx, r.thread_id)
        if key not in labels:
            labels[key] = tracks.get(key) or track_label(TrackNames(), r.instance_id, r.process_id, r.nc_idx,
                                                         r.thread_id, part=r.part)
        flat = out["runs"][int(r.run)]
        if len(flat) < 4 * SPAN_GROUPS:
            flat += [kinds.setdefault(str(r.kind), len(kinds)), workers.setdefault(labels[key], len(workers)),
                     int(r.ns), int(r.n)]
        elif len(flat) == 4 * SPAN_GROUPS:
            flat += [-1, -1, int(r.ns), int(r.n)]
        else:
            flat[-2] += int(r.ns)
            flat[-1] += int(r.n)
    out["kinds"], out["workers"] = list(kinds), list(workers)
    return out


def _rows_in_part(view: Profile, part: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of an opened part's event ids the view holds, and their rows (the view merges the parts: its
    `input` names each row's part, `source_id` keeps the part's own id where the merge renumbered them)."""
    if "input" not in view.core.column_names or not ids.size:
        return np.zeros(ids.size, bool), np.zeros(0, np.int64)
    mine = np.flatnonzero(pc.equal(view.column("input").cast(pa.string()), part).to_numpy(zero_copy_only=False))
    id_col = "source_id" if "source_id" in view.core.column_names else "id"
    own = view.array(id_col)[mine].astype(np.int64)
    order = np.argsort(own, kind="stable")
    pos = np.clip(np.searchsorted(own, ids, sorter=order), 0, max(own.size - 1, 0))
    found = own[order[pos]] == ids if own.size else np.zeros(ids.size, bool)
    return found, mine[order[pos[found]]]


def _run_ends(member: np.ndarray, key: np.ndarray, firsts: np.ndarray) -> np.ndarray:
    """The last segment of each run that starts at `firsts` (runs of equal `key` among `member` segments)."""
    if not firsts.size:
        return firsts
    stop = np.ones(key.size, bool)
    stop[:-1] = ~member[1:] | (key[1:] != key[:-1])
    ends = np.flatnonzero(stop & member)
    return ends[np.searchsorted(ends, firsts)]


def _n(k: int, what: str) -> str:
    return f"{k:,} {what}{'' if k == 1 else 's'}"
