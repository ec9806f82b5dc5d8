"""A grouping's level-of-detail index built from its TrackIndex in one pass over the table in time order."""

from __future__ import annotations

import numba
import numpy as np

from . import lod_kernels as k
from .track_index import TrackIndex
from .viewport import EVENTS_PER_FINEST_BUCKET, LodIndex


@numba.njit(cache=True, nogil=True)
def _level0_in_time(combo: np.ndarray, combo_track: np.ndarray, lane: np.ndarray, track_segs: np.ndarray,
                    start: np.ndarray, end: np.ndarray, origin: int, shift: int,
                    lane_order: np.ndarray, level: tuple[np.ndarray, ...], at: np.ndarray, wrote: np.ndarray,
                    prev: np.ndarray) -> None:
    """`lod_kernels.build_level0` in one pass over the events in time order, filling `lane_order` as it goes.

    A lane's events come in start order either way, so each (track, lane) segment keeps its place in
    `lane_order` (`at`), its buckets' end (`wrote`) and its last bucket (`prev`) as state; its buckets
    are written in its own events' slots of `level` (a segment has at most as many buckets as events),
    packed afterwards. The table's columns are read in sequence, not through `lane_order`: at 10M
    events those scattered reads were most of the index's build.
    """
    key, lo, best, maxend, fstart, bstart, bend = level
    for i in range(combo.size):
        s = track_segs[combo_track[combo[i]]] + lane[i]
        pos = at[s]
        at[s] = pos + 1
        lane_order[pos] = i
        st = start[i]
        en = end[i]
        b = (st - origin) >> shift
        if b != prev[s]:
            prev[s] = b
            m = wrote[s]
            wrote[s] = m + 1
            key[m] = b
            lo[m] = pos
            best[m] = pos
            maxend[m] = en
            fstart[m] = st
            bstart[m] = st
            bend[m] = en
        else:
            m = wrote[s] - 1
            if en - st > bend[m] - bstart[m]:
                best[m] = pos
                bstart[m] = st
                bend[m] = en
            if en > maxend[m]:
                maxend[m] = en


@numba.njit(cache=True, nogil=True)
def _levels(seg_off: np.ndarray, wrote: np.ndarray, level: tuple[np.ndarray, ...], shift0: int, top: int,
            cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                            np.ndarray, int]:
    """Every level of the mipmap from the finest buckets (each segment's, in its events' slots), written once
    where they end up: what coarsening level by level and concatenating the levels gives, without the copies.

    The finest level kept is the first with at most `cap` buckets (or with buckets as long as the span,
    shift `top`), as `viewport.build` decides; returns the levels' arrays, their offsets per segment and
    how many times the finest buckets were halved before that.
    """
    key, lo, best, maxend, fstart, bstart, bend = level
    n_segs = seg_off.size - 1
    depth = max(top - shift0, 0) + 1
    counts = np.zeros((depth, n_segs), dtype=np.int64)
    for s in range(n_segs):
        for e in range(seg_off[s], wrote[s]):
            for j in range(depth):
                if e > seg_off[s] and (key[e] >> j) == (key[e - 1] >> j):
                    break  # one bucket at this level, so at every coarser one
                counts[j, s] += 1
    totals = counts.sum(axis=1)
    j0 = 0
    while j0 < depth - 1 and totals[j0] > cap:
        j0 += 1
    n_levels = depth - j0
    lvl_off = np.zeros((n_levels, n_segs + 1), dtype=np.int64)
    base = 0
    for lv in range(n_levels):
        lvl_off[lv, 0] = base
        for s in range(n_segs):
            lvl_off[lv, s + 1] = lvl_off[lv, s] + counts[j0 + lv, s]
        base = lvl_off[lv, n_segs]
    out = k._empty_level(base)
    okey, olo, obest, omax, ofs, obs, obe = out
    for s in range(n_segs):
        k.merge_runs(key, lo, best, maxend, fstart, bstart, bend, seg_off[s], wrote[s], j0, out, lvl_off[0, s])
    for lv in range(1, n_levels):
        for s in range(n_segs):
            k.merge_runs(okey, olo, obest, omax, ofs, obs, obe, lvl_off[lv - 1, s], lvl_off[lv - 1, s + 1], 1, out,
                         lvl_off[lv, s])
    return okey, olo, obest, omax, ofs, obs, obe, lvl_off, j0


def build_lod(idx: TrackIndex, start: np.ndarray, end: np.ndarray) -> LodIndex:
    """The index `viewport.build` makes from the same tracks and lanes, its lanes' order and finest level made
    in one pass over the table (the TrackIndex counted each lane's events) instead of a sort and a gather."""
    n = idx.combo.size
    lanes_per_track = idx.tracks["lanes"].to_numpy()
    track_segs = np.zeros(lanes_per_track.size + 1, dtype=np.int64)
    np.cumsum(lanes_per_track, out=track_segs[1:])
    n_segs = int(track_segs[-1])
    seg_off = np.zeros(n_segs + 1, dtype=np.int64)
    np.cumsum(idx.lane_events, out=seg_off[1:])
    lane_order = np.empty(n, dtype=np.int32 if n < 2**31 else np.int64)
    origin = int(start.min()) if start.size else 0
    span = max(int(end.max()) - origin, 1) if end.size else 1
    # As viewport.build: the finest bucket sized by a lane's density; levels past one entry per
    # EVENTS_PER_FINEST_BUCKET events are not kept.
    base = max(span * EVENTS_PER_FINEST_BUCKET * max(n_segs, 1) // max(n, 1), 1)
    shift0 = int(base - 1).bit_length()
    level = k._empty_level(n)
    at, wrote, prev = seg_off[:-1].copy(), seg_off[:-1].copy(), np.full(n_segs, -1, dtype=np.int64)
    combo_track = idx.combo_track.astype(np.int32, copy=False)
    # One thread: two, each over half the segments, both read every event and wrote neighbouring entries of
    # `at`, `wrote` and `prev` (one cache line bouncing between the cores): slower than one (10M events:
    # 0.39 s and 0.65 s of CPU against 0.27 s), and three times the CPU at a drill-down's 1.3M.
    _level0_in_time(idx.combo, combo_track, idx.lane, track_segs, start, end, origin, shift0, lane_order, level, at,
                    wrote, prev)
    cap = max(n // EVENTS_PER_FINEST_BUCKET, 1)
    key, lo, best, maxend, fs, bs, be, lvl_off, halved = _levels(seg_off, wrote, level, shift0, int(span).bit_length(), cap)
    shift0 += halved
    return LodIndex(lane_order, seg_off, track_segs, origin, shift0, key, lo, best, maxend, fs, bs, be, lvl_off)
