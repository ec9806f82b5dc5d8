"""Lane assignment inside tracks.

One greedy pass in (track, start, longest-first) order: each event takes the first lane
that is free at its start. For properly nested events that is exactly the nesting depth
(the open ancestors hold lanes 0..d-1); events that overlap without nesting get the first
free lane. A sequential pass is the only exact way to do the latter, hence numba.

`lanes_in_time_order` makes the same lanes in one pass over the events in time order, with each
track's free lanes kept apart (a grouping's first view: no by-track sort, columns read in sequence),
in two threads on large profiles, each over the tracks that hold half the events.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numba
import numpy as np

T = TypeVar("T")
G = TypeVar("G")


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


# Tracks up to this many are laned in one pass over the table (their lanes' state side by side:
# tracks x lanes x 16 bytes); a trace with more (a million threads) sorts its events by track first.
ONE_PASS_TRACKS = 4096
# From this many events on, the pass runs in two threads, each over the tracks that hold about half of them.
SPLIT_EVENTS = 500_000


def two_groups(weights: np.ndarray) -> list[np.ndarray]:
    """Items (tracks, lanes) in two groups of about equal weight, heaviest first: a mask per group.

    One group when there are fewer than two items or one core: a second thread would cost, not save.
    """
    if weights.size < 2 or (os.cpu_count() or 1) < 2:
        return [np.ones(weights.size, dtype=np.bool_)]
    first = np.zeros(weights.size, dtype=np.bool_)
    load = [0, 0]
    for i in np.argsort(-weights, kind="stable").tolist():
        side = 0 if load[0] <= load[1] else 1
        first[i] = side == 0
        load[side] += int(weights[i])
    return [first, ~first]


def in_groups(work: Callable[[G], T], groups: list[G]) -> list[T]:
    """work(group) for each group, the groups in threads of their own (numba kernels that release the GIL)."""
    if len(groups) == 1:
        return [work(groups[0])]
    with ThreadPoolExecutor(max_workers=len(groups), thread_name_prefix="neuron-widgets-lanes") as pool:
        return [f.result() for f in [pool.submit(work, g) for g in groups]]


@numba.njit(cache=True, nogil=True)
def _greedy_in_time(combo: np.ndarray, combo_track: np.ndarray, start: np.ndarray, end: np.ndarray,
                    mine: np.ndarray, lanes_out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_greedy` over events in table (time) order, each track's free lanes kept apart: the same lanes, read
    in sequence instead of through a by-track order. Only the tracks `mine` marks are laned (another
    thread may lane the others). Returns lanes per track and events per (track, lane)."""
    n_tracks = mine.size
    cap = 8
    free_at = np.empty((n_tracks, cap), dtype=np.int64)
    per_lane = np.zeros((n_tracks, cap), dtype=np.int64)
    used = np.zeros(n_tracks, dtype=np.int32)
    for i in range(combo.size):
        t = combo_track[combo[i]]
        if not mine[t]:
            continue
        s = start[i]
        e = end[i] if end[i] > s else s + 1
        u = used[t]
        lane = 0
        while lane < u and free_at[t, lane] > s:
            lane += 1
        if lane == u:
            if u == cap:
                grown_free = np.empty((n_tracks, cap * 2), dtype=np.int64)
                grown_count = np.zeros((n_tracks, cap * 2), dtype=np.int64)
                grown_free[:, :cap] = free_at
                grown_count[:, :cap] = per_lane
                free_at, per_lane, cap = grown_free, grown_count, cap * 2
            used[t] = u + 1
        free_at[t, lane] = e
        per_lane[t, lane] += 1
        lanes_out[i] = lane
    return used, per_lane


def lanes_in_time_order(combo: np.ndarray, combo_track: np.ndarray, start: np.ndarray, end: np.ndarray,
                        n_tracks: int, combo_events: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                                         np.ndarray]:
    """Lanes of events in time order whose track is `combo_track[combo]`: as `assign_lanes` gives them.

    Returns the lane per event (int16 when lanes fit), lanes per track, and events per (track, lane),
    track by track (the level-of-detail index's segments). One pass, no by-track order; on many events
    two threads, each over half the events' tracks (`combo_events`, the events per combo, weighs them).
    """
    if not combo.size or not n_tracks:
        return np.zeros(combo.size, np.int16), np.zeros(n_tracks, np.int32), np.zeros(0, np.int64)
    if n_tracks > ONE_PASS_TRACKS:
        track = combo_track[combo]
        small, per_track = assign_lanes(track, start, end, track_order(track, n_tracks), n_tracks)
        segs = np.zeros(n_tracks + 1, dtype=np.int64)
        np.cumsum(per_track, out=segs[1:])
        return small, per_track, np.bincount(segs[:-1][track] + small, minlength=int(segs[-1]))
    combo_track = combo_track.astype(np.int32, copy=False)
    if combo.size >= SPLIT_EVENTS:
        per_combo = combo_events if combo_events is not None else np.bincount(combo, minlength=combo_track.size)
        groups = two_groups(np.bincount(combo_track, weights=per_combo, minlength=n_tracks))
    else:
        groups = [np.ones(n_tracks, dtype=np.bool_)]
    for dtype in (np.int16, np.int32):  # int16 unless a track has 32767 lanes or more
        # Each thread writes lanes of its own array (0 where the event is the other's), joined after by an OR:
        # written into one array, neighbouring events of the two threads shared cache lines, which bounced
        # between the cores at nearly every event.
        outs = [np.zeros(combo.size, dtype=dtype) for _ in groups]

        def lane(k: int, outs: list[np.ndarray] = outs) -> tuple[np.ndarray, np.ndarray]:
            return _greedy_in_time(combo, combo_track, start, end, groups[k], outs[k])

        parts = in_groups(lane, list(range(len(groups))))
        lanes = outs[0]
        for other in outs[1:]:
            np.bitwise_or(lanes, other, out=lanes)
        used = np.zeros(n_tracks, dtype=np.int32)
        width = max(p[1].shape[1] for p in parts)
        per_lane = np.zeros((n_tracks, width), dtype=np.int64)
        for mine, (u, counts) in zip(groups, parts, strict=True):
            used[mine] = u[mine]
            per_lane[mine, :counts.shape[1]] = counts[mine]
        if int(used.max(initial=0)) < 32767:
            break
    lane_events = per_lane[np.arange(width)[None, :] < used[:, None]]  # row-major: track, then lane
    return lanes, used, lane_events

