"""numba kernels of the level-of-detail index: building the mipmap and answering a window.

Events of one (track, lane) segment never overlap and are sorted by start, so the events
starting in a time bucket are a contiguous run, and at most one of them can be wider than
the bucket. Level k has buckets of `1 << (shift0 + k)` ns; each non-empty bucket keeps the
first event of its run, its longest event and the latest end in the run.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _empty_level(n):
    """Room for n buckets: key, first, longest, latest end, first start, longest start, longest end."""
    return (np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32),
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.int64))


@numba.njit(cache=True, nogil=True)
def _trimmed(key, lo, best, maxend, fstart, bstart, bend, m, off):
    return (key[:m].copy(), lo[:m].copy(), best[:m].copy(), maxend[:m].copy(), fstart[:m].copy(),
            bstart[:m].copy(), bend[:m].copy(), off)


@numba.njit(cache=True, nogil=True)
def build_level0(lane_order, seg_off, start, end, origin, shift):
    """Finest level. Per bucket: key, first position, longest position, latest end, and (so a
    query reads them in sequence) the first event's start and the longest event's start and end."""
    key, lo, best, maxend, fstart, bstart, bend = _empty_level(lane_order.size)
    off = np.zeros(seg_off.size, dtype=np.int64)
    m = 0
    for s in range(seg_off.size - 1):
        off[s] = m
        prev = -1
        for k in range(seg_off[s], seg_off[s + 1]):
            i = lane_order[k]
            b = (start[i] - origin) >> shift
            if b != prev:
                key[m] = b
                lo[m] = k
                best[m] = k
                maxend[m] = end[i]
                fstart[m] = start[i]
                bstart[m] = start[i]
                bend[m] = end[i]
                m += 1
                prev = b
            else:
                if end[i] - start[i] > bend[m - 1] - bstart[m - 1]:
                    best[m - 1] = k
                    bstart[m - 1] = start[i]
                    bend[m - 1] = end[i]
                if end[i] > maxend[m - 1]:
                    maxend[m - 1] = end[i]
    off[seg_off.size - 1] = m
    return _trimmed(key, lo, best, maxend, fstart, bstart, bend, m, off)


# track_lod._levels calls merge_runs too, and numba's disk cache of a caller does not notice a change here:
# after changing it, delete model/__pycache__/track_lod*.nbi so the caller compiles it again.
@numba.njit(cache=True, nogil=True)
def merge_runs(key, lo, best, maxend, fstart, bstart, bend, a, z, d, out, m):
    """Buckets a..z of one segment merged by `key >> d` into the level `out` from position `m` on (the first
    bucket's start, the first longest event, the latest end); returns where it stopped. `d` = 1 is the next
    level (`coarsen`); a larger `d` skips levels in one pass (track_lod's finest level kept)."""
    nkey, nlo, nbest, nmax, nfs, nbs, nbe = out
    prev = -1
    for e in range(a, z):
        b = key[e] >> d
        if b != prev:
            prev = b
            nkey[m] = b
            nlo[m] = lo[e]
            nbest[m] = best[e]
            nmax[m] = maxend[e]
            nfs[m] = fstart[e]
            nbs[m] = bstart[e]
            nbe[m] = bend[e]
            m += 1
        else:
            if bend[e] - bstart[e] > nbe[m - 1] - nbs[m - 1]:
                nbest[m - 1] = best[e]
                nbs[m - 1] = bstart[e]
                nbe[m - 1] = bend[e]
            if maxend[e] > nmax[m - 1]:
                nmax[m - 1] = maxend[e]
    return m


@numba.njit(cache=True, nogil=True)
def coarsen(key, lo, best, maxend, fstart, bstart, bend, off):
    """The next level: pairs of buckets merged (keys halved)."""
    out = _empty_level(key.size)
    noff = np.zeros(off.size, dtype=np.int64)
    m = 0
    for s in range(off.size - 1):
        noff[s] = m
        m = merge_runs(key, lo, best, maxend, fstart, bstart, bend, off[s], off[s + 1], 1, out, m)
    noff[off.size - 1] = m
    nkey, nlo, nbest, nmax, nfs, nbs, nbe = out
    return _trimmed(nkey, nlo, nbest, nmax, nfs, nbs, nbe, m, noff)


@numba.njit(cache=True, nogil=True)
def _emit(out_row, out_start, out_end, out_count, n, row, s, e, count):
    out_row[n] = row
    out_start[n] = s
    out_end[n] = e
    out_count[n] = count
    return n + 1


@numba.njit(cache=True, nogil=True)
def _segment(s, seg_off, lane_order, start, end, t0, t1, px, level_shift, lvl_key, lvl_lo, lvl_best, lvl_max,
             lvl_fs, lvl_bs, lvl_be, lvl_off, lvl_base, use_level, out_row, out_start, out_end, out_count, at, cap):
    """Items of one (track, lane) segment written from position `at` up to `cap`; returns the end."""
    n = at
    a, z = seg_off[s], seg_off[s + 1]
    if a == z:
        return n
    # First event starting at or after t0 (binary search over the lane, in lane order).
    lo_i, hi_i = a, z
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if start[lane_order[mid]] < t0:
            lo_i = mid + 1
        else:
            hi_i = mid
    first = lo_i
    # ... and the first starting at or after t1: runs stop there.
    lo_i, hi_i = first, z
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if start[lane_order[mid]] < t1:
            lo_i = mid + 1
        else:
            hi_i = mid
    stop = lo_i
    # At most one event of a lane starts before t0 and reaches into the window.
    if first > a:
        i = lane_order[first - 1]
        if end[i] > t0:
            if n >= cap:
                return n
            n = _emit(out_row, out_start, out_end, out_count, n, i, start[i], end[i], 1)
    if use_level < 0:
        # Zoomed in below the finest level: walk the events, merging those under a pixel.
        k = first
        while k < z and n < cap:
            i = lane_order[k]
            if start[i] >= t1:
                break
            if end[i] - start[i] >= px:
                n = _emit(out_row, out_start, out_end, out_count, n, i, start[i], end[i], 1)
                k += 1
                continue
            # A run of narrow events within one pixel becomes one item.
            pix_end = start[i] + px
            best, count, last_end = i, 0, end[i]
            while k < z:
                j = lane_order[k]
                if start[j] >= pix_end or start[j] >= t1 or end[j] - start[j] >= px:
                    break
                if end[j] - start[j] > end[best] - start[best]:
                    best = j
                if end[j] > last_end:
                    last_end = end[j]
                count += 1
                k += 1
            if count == 1:
                n = _emit(out_row, out_start, out_end, out_count, n, best, start[best], end[best], 1)
            else:
                n = _emit(out_row, out_start, out_end, out_count, n, best, start[i], last_end, count)
        return n
    shift = level_shift + use_level
    b0 = (t0 - lvl_base) >> shift
    b1 = (t1 - lvl_base) >> shift
    ea, ez = lvl_off[use_level, s], lvl_off[use_level, s + 1]
    lo_e, hi_e = ea, ez
    while lo_e < hi_e:
        mid = (lo_e + hi_e) // 2
        if lvl_key[mid] < b0:
            lo_e = mid + 1
        else:
            hi_e = mid
    e = lo_e
    while e < ez and lvl_key[e] <= b1 and n < cap:
        run_lo = lvl_lo[e]
        full_hi = lvl_lo[e + 1] if e + 1 < ez else z
        run_hi = min(full_hi, stop)
        bpos = lvl_best[e]
        if run_lo >= first and run_hi == full_hi and bpos < run_hi:
            # The usual case: everything needed is in the level's own arrays, read in sequence.
            count = run_hi - run_lo
            bs, be = lvl_bs[e], lvl_be[e]
            if be - bs >= px:
                # A wide event reaches past its bucket, so only narrow ones precede it in the run.
                if bpos - run_lo == 1:
                    f = lane_order[run_lo]
                    n = _emit(out_row, out_start, out_end, out_count, n, f, start[f], end[f], 1)
                elif bpos - run_lo > 1:
                    n = _emit(out_row, out_start, out_end, out_count, n, lane_order[run_lo], lvl_fs[e], bs,
                              bpos - run_lo)
                n = _emit(out_row, out_start, out_end, out_count, n, lane_order[bpos], bs, be, 1)
            elif count == 1:
                n = _emit(out_row, out_start, out_end, out_count, n, lane_order[bpos], bs, be, 1)
            else:
                n = _emit(out_row, out_start, out_end, out_count, n, lane_order[bpos], lvl_fs[e], lvl_max[e], count)
            e += 1
            continue
        # The bucket straddles t0 or t1: events outside the window (or drawn already) are left
        # out, so its longest event and latest end are taken again over the rest.
        run_lo = max(run_lo, first)
        if run_hi - run_lo <= 0:
            e += 1
            continue
        bpos = run_lo
        last_end = end[lane_order[run_lo]]
        for q in range(run_lo, run_hi):
            j = lane_order[q]
            b = lane_order[bpos]
            if end[j] - start[j] > end[b] - start[b]:
                bpos = q
            if end[j] > last_end:
                last_end = end[j]
        bi = lane_order[bpos]
        f = lane_order[run_lo]
        if end[bi] - start[bi] >= px:
            if bpos - run_lo == 1:
                n = _emit(out_row, out_start, out_end, out_count, n, f, start[f], end[f], 1)
            elif bpos - run_lo > 1:
                n = _emit(out_row, out_start, out_end, out_count, n, f, start[f], start[bi], bpos - run_lo)
            n = _emit(out_row, out_start, out_end, out_count, n, bi, start[bi], end[bi], 1)
        elif run_hi - run_lo == 1:
            n = _emit(out_row, out_start, out_end, out_count, n, bi, start[bi], end[bi], 1)
        else:
            n = _emit(out_row, out_start, out_end, out_count, n, bi, start[f], last_end, run_hi - run_lo)
        e += 1
    return n


@numba.njit(cache=True, nogil=True, parallel=True)
def query(segs, seg_off, lane_order, start, end, t0, t1, px,
          level_shift, lvl_key, lvl_lo, lvl_best, lvl_max, lvl_fs, lvl_bs, lvl_be, lvl_off, lvl_base, use_level):
    """Items to draw for the given segments: exact events >= 1 px, the rest merged per bucket.

    Returns (row, start, end, segment, count) arrays; count 1 with an exact event, more for a
    merged run. `use_level` < 0 walks the events in the window. Segments are independent: each
    fills its own slice of the output, on all cores, and the slices are then packed.
    """
    per = 2 * ((t1 - t0) // max(px, 1)) + 8  # a lane never yields more than ~2 items per pixel
    # ... nor more items than it has events: sparse lanes get small slices.
    room = np.empty(segs.size + 1, dtype=np.int64)
    room[0] = 0
    for si in range(segs.size):
        room[si + 1] = room[si] + min(per, seg_off[segs[si] + 1] - seg_off[segs[si]] + 1)
    out_row = np.empty(room[-1], dtype=np.int64)
    out_start = np.empty(room[-1], dtype=np.int64)
    out_end = np.empty(room[-1], dtype=np.int64)
    out_count = np.empty(room[-1], dtype=np.int32)
    used = np.zeros(segs.size, dtype=np.int64)
    for si in numba.prange(segs.size):
        at = room[si]
        used[si] = _segment(segs[si], seg_off, lane_order, start, end, t0, t1, px, level_shift, lvl_key, lvl_lo,
                            lvl_best, lvl_max, lvl_fs, lvl_bs, lvl_be, lvl_off, lvl_base, use_level, out_row,
                            out_start, out_end, out_count, at, room[si + 1]) - at
    total = int(used.sum())
    row = np.empty(total, dtype=np.int64)
    st = np.empty(total, dtype=np.int64)
    en = np.empty(total, dtype=np.int64)
    seg = np.empty(total, dtype=np.int32)
    cnt = np.empty(total, dtype=np.int32)
    pos = 0
    for si in range(segs.size):
        at = room[si]
        for q in range(used[si]):
            row[pos] = out_row[at + q]
            st[pos] = out_start[at + q]
            en[pos] = out_end[at + q]
            seg[pos] = segs[si]
            cnt[pos] = out_count[at + q]
            pos += 1
    return row, st, en, seg, cnt
