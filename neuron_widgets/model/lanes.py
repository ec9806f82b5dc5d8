"""Lane assignment inside tracks.

One greedy pass in (track, start, longest-first) order: each event takes the first lane
that is free at its start. For properly nested events that is exactly the nesting depth
(the open ancestors hold lanes 0..d-1); events that overlap without nesting get the first
free lane. A sequential pass is the only exact way to do the latter, hence numba.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _greedy(track: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray,
            lanes_out: np.ndarray, max_lanes: np.ndarray) -> None:
    free_at = np.empty(64, dtype=np.int64)
    used = 0
    current = -1
    for k in range(order.size):
        i = order[k]
        t = track[i]
        if t != current:
            current = t
            used = 0
        s = start[i]
        # An instant occupies one nanosecond, so it nests inside a slice that starts with it.
        e = end[i] if end[i] > s else s + 1
        lane = 0
        while lane < used and free_at[lane] > s:
            lane += 1
        if lane == used:
            if used == free_at.size:
                grown = np.empty(free_at.size * 2, dtype=np.int64)
                grown[:used] = free_at[:used]
                free_at = grown
            used += 1
        free_at[lane] = e
        lanes_out[i] = lane
        if lane + 1 > max_lanes[t]:
            max_lanes[t] = lane + 1


def track_order(track: np.ndarray, n_tracks: int) -> np.ndarray:
    """Stable order of events by track; the table is already in time order."""
    # NumPy's stable sort is a radix sort for 16-bit keys: linear time for up to 65536 tracks.
    key = track.astype(np.uint16) if n_tracks <= 65536 else track
    order = np.argsort(key, kind="stable")
    return order.astype(np.int32) if order.size < 2**31 else order


def assign_lanes(track: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray,
                 n_tracks: int) -> tuple[np.ndarray, np.ndarray]:
    """Lanes per event (in table order) and the number of lanes per track.

    `order` lists events by track and, within a track, by start then longest first.
    """
    lanes = np.zeros(track.size, dtype=np.int32)
    max_lanes = np.zeros(max(n_tracks, 1), dtype=np.int32)
    if track.size:
        _greedy(track, start, end, order, lanes, max_lanes)
    small = lanes.astype(np.int16) if max_lanes.max(initial=0) < 32767 else lanes
    return small, max_lanes[:n_tracks]
