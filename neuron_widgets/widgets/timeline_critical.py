"""The Timeline's critical path as drawn: the path's events (the highlight set), its jumps between tracks, and a
headline naming the worker whose work is longest on it and in how many steps it is on it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.timefmt import duration
from ..model.track_names import TrackNames, thread_label
from ..model.worker_labels import core_label, part_instance

MAX_JUMPS = 20_000  # drawn jumps (and a job's spans on folded parts): past this the first ones, and the text says so
NOT_WORK = ("gap", "launch")  # what the headline does not count as a worker's work (as critical_path_headline)


class CriticalShown:
    """The critical path as the timeline shows it: its event rows, its jumps, a line of text and a headline.

    A job's timeline (widgets/job/critical.py) adds spans: where the path runs through a part whose events are
    not loaded, drawn over that part's track. Such a part is named in `labels` (its track's label in every
    grouping); a jump row below 0 is the track of label `-row - 1`.
    """

    def __init__(self, rows: np.ndarray, jump_rows: np.ndarray, jumps: list[float], text: str, headline: str = "",
                 spans: list[float] | None = None, span_rows: np.ndarray | None = None,
                 labels: list[str] | None = None) -> None:
        self.rows = rows  # the path's events (the highlight set)
        self.jump_rows = jump_rows  # per jump: row from, t from, row to, t to (absolute ns)
        self.jumps = jumps  # flat [t_from, track, lane, t_to, track, lane] (ns from the origin)
        self.text = text
        self.headline = headline
        self.spans = spans or []  # flat [t0, t1, track] (ns from the origin)
        self.span_rows = span_rows if span_rows is not None else np.zeros((0, 3), np.int64)  # label, t0, t1 (abs ns)
        self.labels = labels or []

    def info(self) -> dict[str, Any]:
        """The widget's `critical_info` once shown."""
        return {"state": "shown", "text": self.text, "headline": self.headline, "jumps": self.jumps,
                "spans": self.spans}

    def exported(self) -> dict[str, Any]:
        """What an HTML export carries (export/dataset.py places the rows among the page's events)."""
        return {"text": self.text, "headline": self.headline, "jump_rows": self.jump_rows,
                "span_rows": self.span_rows, "labels": list(self.labels)}


def nothing(text: str) -> CriticalShown:
    return CriticalShown(np.zeros(0, np.int64), np.zeros((0, 4), np.int64), [], text)


def no_path_text(path: pd.DataFrame) -> str:
    why = "; ".join(str(n) for n in path.attrs.get("notes", [])) or "no executions, collectives or host calls"
    return f"no critical path to draw: {why}"


def critical_shown(profile: Profile, grouping: str) -> CriticalShown:
    """The path's events and the jumps between tracks where the path moves to another core or thread.

    Gap segments (no event) are not drawn: a jump across one starts where the event before it
    ends and lands where the next one starts, so the gap is the arrow's horizontal run.
    """
    from ..analysis import critical_path  # the analyses (their numba kernels) load when a path is first shown

    path = critical_path(profile)
    ev = path[path["event_id"] >= 0]
    if ev.empty:
        return nothing(no_path_text(path))
    ids = ev["event_id"].to_numpy(np.int64)
    rows = rows_of_ids(profile, ids)
    if rows.size != ids.size:  # every path event is one of the profile's: keep segments and rows aligned
        keep = np.isin(ids, profile.array("id")[rows])
        ev, ids = ev[keep], ids[keep]
        rows = rows_of_ids(profile, ids)
    idx = profile.track_index(grouping)
    track = idx.combo_track[idx.combo[rows]].astype(np.int64)
    lane = idx.lane[rows].astype(np.int64)
    start, end = ev["start_ts"].to_numpy(np.int64), ev["end_ts"].to_numpy(np.int64)
    jump_rows, flat, moved = jumps_between(rows, track, lane, start, end, profile.origin_ts)
    text = (f"critical path: {len(path):,} segments, {np.unique(rows).size:,} events outlined, "
            f"{moved:,} jumps between tracks")
    if moved > MAX_JUMPS:
        text += f" (the first {MAX_JUMPS:,} drawn)"
    return CriticalShown(np.unique(rows), jump_rows, flat, text, path_headline(path, profile.track_names))


def jumps_between(rows: np.ndarray, track: np.ndarray, lane: np.ndarray, start: np.ndarray, end: np.ndarray,
                  origin: int) -> tuple[np.ndarray, list[float], int]:
    """Where consecutive placed segments sit on another track or lane: the jumps as rows and times (all of them),
    as the view draws them (the first MAX_JUMPS, ns from the origin), and how many there are."""
    moved = np.flatnonzero((track[1:] != track[:-1]) | (lane[1:] != lane[:-1]))
    a, b = moved, moved + 1
    jump_rows = np.stack([rows[a], end[a], rows[b], start[b]], axis=1) if moved.size else np.zeros((0, 4), np.int64)
    a, b = a[:MAX_JUMPS], b[:MAX_JUMPS]
    flat = np.stack([end[a] - origin, track[a], lane[a], start[b] - origin, track[b], lane[b]], axis=1)
    return jump_rows, flat.astype(np.float64).ravel().tolist(), int(moved.size)


def path_headline(path: pd.DataFrame, names: TrackNames | None = None) -> str:
    """'<worker> is on the critical path in 117 of 132 steps; its compute there is 62% of the run': the worker and
    kind of work longest on the path, as `critical_path_headline` picks them (its what-if gain apart: a replay).

    The worker is named as the Timeline labels its track (a job's with its part first); its steps are those in
    which it has a segment on the path, out of the steps on the path (step ids known only).
    """
    if path.empty or int(path["duration_ns"].sum()) <= 0:
        return ""
    thread = path["thread_id"]
    part = path["part"] if "part" in path.columns else pd.Series(None, index=path.index, dtype=object)
    key = pd.DataFrame({"part": part.astype(object), "instance_id": path["instance_id"].astype(object),
                        "process_id": path["process_id"], "nc_idx": path["nc_idx"].where(thread.isna()),
                        "thread_id": thread})
    worker = key.groupby(list(key.columns), dropna=False, sort=False).ngroup().to_numpy()
    kind = path["kind"].astype(str).to_numpy()
    dur = path["duration_ns"].to_numpy(np.int64)
    work = ~np.isin(kind, NOT_WORK)
    if not work.any():
        return ""
    by = pd.DataFrame({"w": worker[work], "k": kind[work], "d": dur[work]}).groupby(["w", "k"], sort=False)["d"].sum()
    (w, k), d = by.idxmax(), int(by.max())
    step = path["step"].to_numpy(np.int64)
    known = step >= 0
    steps, on = np.unique(step[known]).size, np.unique(step[known & (worker == w)]).size
    first = key.iloc[int(np.flatnonzero(worker == w)[0])]
    who = worker_name(first, names or TrackNames())
    share = 100.0 * d / int(dur.sum())
    pct = f"{share:.0f}%" if share >= 10 else f"{share:.2g}%"
    where = f" in {on:,} of {steps:,} step{'' if steps == 1 else 's'}" if steps else ""
    return f"{who} is on the critical path{where}; its {k} there is {pct} of the run ({duration(d)})"


def worker_name(w: pd.Series, names: TrackNames) -> str:
    """A core as the Default grouping labels its runtime track; a thread by its instance, process and name."""
    part = None if pd.isna(w["part"]) else str(w["part"])
    inst, pid, tid = w["instance_id"], w["process_id"], w["thread_id"]
    if pd.isna(tid) and not pd.isna(w["nc_idx"]):
        return core_label(inst, pid, w["nc_idx"], names, part=part)
    where = part_instance(part, "" if pd.isna(inst) else inst)
    process = names.process_label(inst, pid) or ("" if pd.isna(pid) else f"pid {int(pid)}")
    thread = thread_label(names.thread_label(inst, pid, tid) or "", int(tid)) if not pd.isna(tid) else ""
    return " ".join(x for x in (where, process, thread) if x) or "(no worker)"


def rows_of_ids(profile: Profile, ids: np.ndarray) -> np.ndarray:
    all_ids = profile.array("id")
    order = np.argsort(all_ids, kind="stable")
    pos = np.searchsorted(all_ids, ids, sorter=order)
    pos = np.clip(pos, 0, max(all_ids.size - 1, 0))
    found = all_ids[order[pos]] == ids if all_ids.size else np.zeros(ids.size, bool)
    return order[pos[found]]
