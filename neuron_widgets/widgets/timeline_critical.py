"""The Timeline's critical path as drawn: the path's events (the highlight set) and its jumps between tracks."""

from __future__ import annotations

import numpy as np

from ..model.profile import Profile

MAX_JUMPS = 20_000  # drawn jumps: past this the first ones, and the text says so


class CriticalShown:
    """The critical path as the timeline shows it: its event rows, its jumps, a line of text."""

    def __init__(self, rows: np.ndarray, jump_rows: np.ndarray, jumps: list[float], text: str) -> None:
        self.rows = rows  # the path's events (the highlight set)
        self.jump_rows = jump_rows  # per jump: row from, t from, row to, t to (absolute ns)
        self.jumps = jumps  # flat [t_from, track, lane, t_to, track, lane] (ns from the origin)
        self.text = text


def critical_shown(profile: Profile, grouping: str) -> CriticalShown:
    """The path's events and the jumps between tracks where the path moves to another core or thread.

    Gap segments (no event) are not drawn: a jump across one starts where the event before it
    ends and lands where the next one starts, so the gap is the arrow's horizontal run.
    """
    from ..analysis import critical_path  # the analyses (their numba kernels) load when a path is first shown

    path = critical_path(profile)
    ev = path[path["event_id"] >= 0]
    if ev.empty:
        why = "; ".join(str(n) for n in path.attrs.get("notes", [])) or "no executions, collectives or host calls"
        return CriticalShown(np.zeros(0, np.int64), np.zeros((0, 4), np.int64), [],
                             f"no critical path to draw: {why}")
    ids = ev["event_id"].to_numpy(np.int64)
    rows = rows_of_ids(profile, ids)
    if rows.size != ids.size:  # every path event is one of the profile's: keep segments and rows aligned
        keep = np.isin(ids, profile.array("id")[rows])
        ev, ids = ev[keep], ids[keep]
        rows = rows_of_ids(profile, ids)
    idx = profile.track_index(grouping)
    track = idx.combo_track[idx.combo[rows]].astype(np.int64)
    lane = idx.lane[rows].astype(np.int64)
    moved = np.flatnonzero((track[1:] != track[:-1]) | (lane[1:] != lane[:-1]))
    start, end = ev["start_ts"].to_numpy(np.int64), ev["end_ts"].to_numpy(np.int64)
    a, b = moved, moved + 1
    jump_rows = np.stack([rows[a], end[a], rows[b], start[b]], axis=1) if moved.size else np.zeros((0, 4), np.int64)
    origin = profile.origin_ts
    shown_n = min(moved.size, MAX_JUMPS)
    a, b = a[:shown_n], b[:shown_n]
    flat = np.stack([end[a] - origin, track[a], lane[a], start[b] - origin, track[b], lane[b]], axis=1)
    text = (f"critical path: {len(path):,} segments, {np.unique(rows).size:,} events outlined, "
            f"{moved.size:,} jumps between tracks")
    if moved.size > shown_n:
        text += f" (the first {shown_n:,} drawn)"
    return CriticalShown(np.unique(rows), jump_rows, flat.astype(np.float64).ravel().tolist(), text)


def rows_of_ids(profile: Profile, ids: np.ndarray) -> np.ndarray:
    all_ids = profile.array("id")
    order = np.argsort(all_ids, kind="stable")
    pos = np.searchsorted(all_ids, ids, sorter=order)
    pos = np.clip(pos, 0, max(all_ids.size - 1, 0))
    found = all_ids[order[pos]] == ids if all_ids.size else np.zeros(ids.size, bool)
    return order[pos[found]]
