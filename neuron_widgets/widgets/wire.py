"""What goes over the widget comm: binary column replies for the browser, no JSON per event.

Times travel as float64 nanoseconds from the profile's first timestamp: exact to the
nanosecond for 104 days, where int64 nanoseconds since the epoch would not survive a float.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.markers import FLAG_ERROR, FLAG_HIGHLIGHT, FLAG_INCOMPLETE, FLAG_MARKER, flags_of  # noqa: F401 - re-exported for the wire
from ..model.profile import Profile

# Markers (errors, hangs, highlighted events) are drawn even where their pixel is merged into
# a run; past this many in one window the view shows the first ones and says how many.
MAX_MARKERS = 4000


ITEM_COLUMNS = ("start", "end", "track", "lane", "name", "row", "count", "flags")


def encode(columns: dict[str, np.ndarray]) -> tuple[list[str], list[bytes]]:
    """Column names and their bytes, in the dtype the browser reads them as."""
    dtypes = {"start": np.float64, "end": np.float64, "track": np.int32, "lane": np.int32, "name": np.int32,
              "row": np.int32, "count": np.uint32, "flags": np.uint8, "color": np.int32, "node": np.int32}
    names, buffers = [], []
    for key, arr in columns.items():
        names.append(key)
        buffers.append(np.ascontiguousarray(arr, dtype=dtypes[key]).tobytes())
    return names, buffers



def viewport_reply(profile: Profile, grouping: str, t0: float, t1: float, width: int, tracks: list[int] | None,
                   marked: dict[str, np.ndarray], color: np.ndarray | None = None,
                   rows_of: np.ndarray | None = None, node: np.ndarray | None = None) -> tuple[dict[str, Any], list[bytes]]:
    """The level-of-detail items for a window, plus marker events, as (metadata, buffers).

    `rows_of`, for a profile that samples another (a preview): its rows' places in that one.
    `marked` and `color` are then given in, and the reply's rows go out as, the other's rows.
    `node`: per row a device hierarchy node (the viewer dims the instructions outside a picked one).
    """
    if rows_of is not None:
        marked = {k: _rows_in(rows_of, v) for k, v in marked.items() if v is not None}
    origin = profile.origin_ts
    a = origin + int(np.floor(t0))
    b = max(origin + int(np.ceil(t1)), a + 1)
    width = int(min(max(width, 1), 16384))
    track_arr = None if tracks is None else np.asarray(tracks, dtype=np.int64)
    got = profile.viewport(grouping, a, b, width, track_arr)
    rows = got["row"].astype(np.int64)
    shift = float(a - origin)
    idx = profile.track_index(grouping)

    # Markers: every flagged event overlapping the window on a requested track, even if merged.
    marker_rows = _markers(profile, marked, a, b)
    if marker_rows.size and track_arr is not None:
        marker_rows = marker_rows[np.isin(idx.combo_track[idx.combo[marker_rows]], track_arr)]
    dropped = max(int(marker_rows.size) - MAX_MARKERS, 0)
    marker_rows = marker_rows[:MAX_MARKERS]
    start_all, end_all = profile.array("start_ts"), profile.array("end_ts")
    name_codes = profile.name_codes()

    items = {
        "start": np.concatenate([got["offset_start"] + shift, (start_all[marker_rows] - origin).astype(np.float64)]),
        "end": np.concatenate([got["offset_end"] + shift, (end_all[marker_rows] - origin).astype(np.float64)]),
        "track": np.concatenate([got["track"], idx.combo_track[idx.combo[marker_rows]]]),
        "lane": np.concatenate([got["lane"], idx.lane[marker_rows]]),
        "name": np.concatenate([got["name"], name_codes[marker_rows]]),
        "row": np.concatenate([rows, marker_rows]),
        "count": np.concatenate([got["count"], np.ones(marker_rows.size, dtype=np.int64)]),
    }
    flags = flags_of(items["row"], marked)
    flags[rows.size:] |= FLAG_MARKER
    items["flags"] = flags
    if rows_of is not None:
        items["row"] = rows_of[items["row"]]
    if color is not None:
        items["color"] = color[items["row"]]
    if node is not None and (not items["row"].size or int(items["row"].max()) < node.size):
        items["node"] = node[items["row"]]  # (codes of another trace, mid-retarget, are left out)
    names, buffers = encode(items)
    meta = {"type": "viewport", "grouping": grouping, "t0": float(a - origin), "t1": float(b - origin),
            "width": width, "px_ns": int(got["px_ns"]), "n": int(items["row"].size), "columns": names,
            "markers": int(marker_rows.size), "markers_dropped": dropped}
    return meta, buffers


def _rows_in(rows_of: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Of `rows` (of the sampled profile), the places of those the sample holds."""
    at = np.searchsorted(rows_of, rows)
    ok = at < rows_of.size
    ok[ok] = rows_of[at[ok]] == rows[ok]
    return at[ok]


def _markers(profile: Profile, marked: dict[str, np.ndarray], a: int, b: int) -> np.ndarray:
    parts = [v for v in marked.values() if v is not None and v.size]
    if not parts:
        return np.zeros(0, dtype=np.int64)
    rows = np.unique(np.concatenate(parts))
    start, end = profile.array("start_ts")[rows], profile.array("end_ts")[rows]
    return rows[(start < b) & (end >= a)]


def counters_reply(series: list[dict[str, Any]], data: dict[str, tuple[np.ndarray, np.ndarray]], t0: float, t1: float,
                   width: int) -> tuple[dict[str, Any], list[bytes]]:
    """Each counter series cut to the window, at most about two points per pixel (the max of each bucket)."""
    out_meta, buffers = [], []
    width = int(min(max(width, 1), 16384))
    for s in series:
        t, v = data[s["key"]]
        lo = max(int(np.searchsorted(t, t0, side="right")) - 1, 0)
        hi = min(int(np.searchsorted(t, t1, side="left")) + 1, t.size)
        tw, vw = t[lo:hi], v[lo:hi]
        if tw.size > 2 * width:
            px = (t1 - t0) / width
            bucket = np.floor((tw - t0) / px).astype(np.int64)
            edges = np.flatnonzero(np.diff(bucket)) + 1
            starts = np.concatenate([[0], edges])
            vmax = np.maximum.reduceat(vw, starts)
            tw, vw = tw[starts], vmax
        out_meta.append({"key": s["key"], "n": int(tw.size)})
        buffers.append(np.ascontiguousarray(tw, dtype=np.float64).tobytes())
        buffers.append(np.ascontiguousarray(vw, dtype=np.float64).tobytes())
    return {"type": "counters", "series": out_meta, "t0": t0, "t1": t1}, buffers
