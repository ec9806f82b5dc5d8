"""The Perfetto reader's row kernels: from the paired slices to the Profile's columns in few passes.

Each step the reader took with a NumPy or pandas call per column (a fresh array, and on a first
read fresh pages, each time) is done here by one numba pass that writes the final arrays: codes of
the tracks and of the (name, category, track) sources in the order first seen, the slices' times and
row order, and each row's per-track values.
"""

from __future__ import annotations

import numba
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True, nogil=True)
def _insert(keys: np.ndarray, start: int, slots: np.ndarray, uniques: np.ndarray, count: int,
            codes: np.ndarray) -> tuple[int, int]:
    """Code keys[start:] by `slots` (open addressing: code + 1, 0 empty) and `uniques`, new keys
    numbered in the order met; stops before a key that would fill the table past half or `uniques`.
    Returns (where it stopped, the number of codes)."""
    mask = slots.size - 1
    shift = np.uint64(64 - int(np.log2(slots.size)))
    last_key, last_code = np.uint64(0), -1
    for i in range(start, keys.size):
        k = np.uint64(keys[i])
        if last_code >= 0 and k == last_key:  # runs of one key (events of one track) cost no look-up
            codes[i] = last_code
            continue
        h = int((k * _GOLDEN) >> shift) & mask
        while True:
            s = slots[h]
            if s == 0:
                if 2 * (count + 1) > slots.size or count == uniques.size:
                    return i, count
                uniques[count] = k
                count += 1
                slots[h] = count
                code = count - 1
                break
            if uniques[s - 1] == k:
                code = s - 1
                break
            h = (h + 1) & mask
        codes[i] = code
        last_key, last_code = k, code
    return keys.size, count


def first_seen(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int32 code of each key, the distinct keys as uint64 in the order first met): `pd.factorize`'s
    result for integer keys (int64 keys come back as their uint64 bit patterns)."""
    codes = np.empty(keys.size, np.int32)
    slots = np.zeros(64, np.int32)
    uniques = np.empty(16, np.uint64)
    at, count = 0, 0
    while True:
        at, count = _insert(keys, at, slots, uniques, count, codes)
        if at == keys.size:
            return codes, uniques[:count].copy()
        # Full: twice the room, the codes given so far kept in their slots.
        if count == uniques.size:
            grown = np.empty(uniques.size * 2, np.uint64)
            grown[:count] = uniques[:count]
            uniques = grown
        if 2 * (count + 1) > slots.size:
            slots = np.zeros(slots.size * 2, np.int32)
            _rehash(slots, uniques, count)


@numba.njit(cache=True, nogil=True)
def _rehash(slots: np.ndarray, uniques: np.ndarray, count: int) -> None:
    mask = slots.size - 1
    shift = np.uint64(64 - int(np.log2(slots.size)))
    for c in range(count):
        h = int((uniques[c] * _GOLDEN) >> shift) & mask
        while slots[h] != 0:
            h = (h + 1) & mask
        slots[h] = c + 1


@numba.njit(cache=True, nogil=True)
def drawn_types(typ: np.ndarray, gone: np.ndarray, far_any: bool) -> tuple[np.ndarray, int]:
    """Each event's type as the pairing sees it (begin 1, end 2, instant 3; 0 for counters, types
    unknown or unspecified, and times dropped: `gone`, read only when `far_any`), and how many types
    were unknown or unspecified."""
    out = np.empty(typ.size, np.int8)
    unknown = 0
    for i in range(typ.size):
        t = typ[i]
        bad = not (t == 1 or t == 2 or t == 3 or t == 4)
        if bad:
            unknown += 1
        out[i] = 0 if (bad or t == 4 or (far_any and gone[i])) else t
    return out, unknown


@numba.njit(cache=True, nogil=True)
def _sort_run(order: np.ndarray, a: int, b: int, ts: np.ndarray) -> None:
    """order[a:b] by ts, stably. By insertion, which costs a step per place an event moves: a writer
    that puts each slice's end right after its begin moves each end past its slice's children only;
    a segment that moves more than a few places per event is sorted by a merge sort instead."""
    size = b - a
    keys = np.empty(size, np.int64)
    for k in range(size):
        keys[k] = ts[order[a + k]]
    budget = 8 * size + 256
    moved = 0
    for k in range(1, size):
        key = keys[k]
        item = order[a + k]
        j = k - 1
        while j >= 0 and keys[j] > key:
            keys[j + 1] = keys[j]
            order[a + j + 1] = order[a + j]
            j -= 1
        keys[j + 1] = key
        order[a + j + 1] = item
        moved += k - 1 - j
        if moved > budget:  # equal keys keep their order so far: a stable sort of this state is the stable sort
            by = np.argsort(keys, kind="mergesort")
            seg = order[a:b].copy()
            for q in range(size):
                order[a + q] = seg[by[q]]
            return


@numba.njit(cache=True, nogil=True)
def paired(codes: np.ndarray, ts: np.ndarray, typ: np.ndarray, n_tracks: int, begin: np.ndarray,
           end: np.ndarray) -> tuple[int, int]:
    """Slices per track, tracks in code order: (begin, end) event indexes into `begin` and `end`; end -1
    never ended (those of a track follow its last slice, innermost first), end == begin an instant.
    Returns (slices, ends with no begin).

    Within a track, events are taken by time, then file order, as Perfetto sorts a trace before it
    matches an end to the innermost open slice of its track: a counting sort groups the tracks, and
    only tracks whose times go back in file order are sorted.
    """
    last = np.full(n_tracks, np.iinfo(np.int64).min, np.int64)
    back = np.zeros(n_tracks, np.bool_)
    bounds = np.zeros(n_tracks + 1, np.int64)
    for i in range(codes.size):
        c = codes[i]
        if ts[i] < last[c]:
            back[c] = True
        last[c] = ts[i]
        bounds[c + 1] += 1
    for c in range(n_tracks):
        bounds[c + 1] += bounds[c]
    fill = bounds[:-1].copy()
    order = np.empty(codes.size, begin.dtype)
    for i in range(codes.size):
        c = codes[i]
        order[fill[c]] = i
        fill[c] += 1
    stack = np.empty(64, np.int64)
    n = 0
    unmatched = 0
    for c in range(n_tracks):
        a, b = bounds[c], bounds[c + 1]
        if back[c]:
            _sort_run(order, a, b, ts)
        depth = 0
        for k in range(a, b):
            i = order[k]
            t = typ[i]
            if t == 1:
                if depth == stack.size:
                    grown = np.empty(stack.size * 2, np.int64)
                    grown[:depth] = stack[:depth]
                    stack = grown
                stack[depth] = i
                depth += 1
            elif t == 2:
                if depth == 0:
                    unmatched += 1
                else:
                    depth -= 1
                    begin[n] = stack[depth]
                    end[n] = i
                    n += 1
            elif t == 3:
                begin[n] = i
                end[n] = i
                n += 1
        while depth > 0:
            depth -= 1
            begin[n] = stack[depth]
            end[n] = -1
            n += 1
    return n, unmatched


@numba.njit(cache=True, nogil=True)
def last_times(ts: np.ndarray, typ: np.ndarray, gone: np.ndarray, far_any: bool) -> tuple[int, bool, int, bool]:
    """(the last time of an event that is not a counter and not dropped, whether there is one, the last
    time not dropped, whether there is one)."""
    drawn, kept = np.iinfo(np.int64).min, np.iinfo(np.int64).min
    any_drawn, any_kept = False, False
    for i in range(ts.size):
        if far_any and gone[i]:
            continue
        t = ts[i]
        if t > kept or not any_kept:
            kept = t
            any_kept = True
        if typ[i] != 4 and (t > drawn or not any_drawn):
            drawn = t
            any_drawn = True
    return drawn, any_drawn, kept, any_kept


@numba.njit(cache=True, nogil=True)
def slice_times(begin: np.ndarray, end: np.ndarray, ts: np.ndarray, last: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Each slice's start and stop (an unended one stops at `last`, one that ends before it begins at
    its start); the unended and the backwards ones counted."""
    n = begin.size
    start = np.empty(n, np.int64)
    stop = np.empty(n, np.int64)
    open_, neg = 0, 0
    for k in range(n):
        s = ts[begin[k]]
        if end[k] < 0:
            e = last
            open_ += 1
        else:
            e = ts[end[k]]
        if e < s:
            neg += 1
            e = s
        start[k] = s
        stop[k] = e
    return start, stop, open_, neg


@numba.njit(cache=True, nogil=True)
def file_order(begin: np.ndarray, start: np.ndarray, stop: np.ndarray, n_events: int) -> tuple[np.ndarray, bool]:
    """The slices by their begin event's place in the file, and whether that is the Profile's row order:
    by start, longer first among equal starts, then as paired (which `model.order.time_order` gives,
    being stable). A writer that writes slices as they start (ours, most) needs no sort then."""
    slot = np.full(n_events, -1, np.int32)
    for k in range(begin.size):
        slot[begin[k]] = k
    order = np.empty(begin.size, np.int32)
    m = 0
    for i in range(n_events):
        k = slot[i]
        if k >= 0:
            order[m] = k
            m += 1
    for j in range(1, m):
        a, b = order[j - 1], order[j]
        if start[b] < start[a]:
            return order, False
        if start[b] == start[a] and (stop[b] > stop[a] or (stop[b] == stop[a] and b < a)):
            return order, False
    return order, True


@numba.njit(cache=True, nogil=True)
def slice_rows(order: np.ndarray, begin: np.ndarray, end: np.ndarray, start: np.ndarray, stop: np.ndarray,
               name: np.ndarray, cat: np.ndarray, track: np.ndarray, gen: np.ndarray, blank: int, empty: int,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                          np.ndarray, np.ndarray, np.ndarray]:
    """The rows in `order` (None of a reorder: -1 entries are not used): begin event, the end's
    annotation entry (`empty` for an instant or an unended slice: its annotations are the begin's),
    start, stop, duration, unended, name code (`blank` where none), category code, track code and
    generation."""
    n = order.size
    b_out = np.empty(n, begin.dtype)
    e_out = np.empty(n, begin.dtype)
    s_out = np.empty(n, np.int64)
    t_out = np.empty(n, np.int64)
    d_out = np.empty(n, np.int64)
    o_out = np.empty(n, np.bool_)
    n_out = np.empty(n, np.int32)
    c_out = np.empty(n, np.int32)
    k_out = np.empty(n, np.int32)
    g_out = np.empty(n, np.int32)
    for r in range(n):
        k = order[r]
        b, e = begin[k], end[k]
        b_out[r] = b
        e_out[r] = empty if (e == b or e < 0) else e
        s, t = start[k], stop[k]
        s_out[r] = s
        t_out[r] = t
        d_out[r] = t - s
        o_out[r] = e < 0
        nm = name[b]
        n_out[r] = blank if nm < 0 else nm
        c_out[r] = cat[b]
        k_out[r] = track[b]
        g_out[r] = gen[b]
    return b_out, e_out, s_out, t_out, d_out, o_out, n_out, c_out, k_out, g_out


@numba.njit(cache=True, nogil=True)
def per_row(values: np.ndarray, track: np.ndarray) -> np.ndarray:
    """values[track[r]] for each row (a gather by the rows' int32 track codes)."""
    out = np.empty(track.size, values.dtype)
    for r in range(track.size):
        out[r] = values[track[r]]
    return out


@numba.njit(cache=True, nogil=True)
def source_keys(name: np.ndarray, cat: np.ndarray, track: np.ndarray, width: int, tracks: int) -> np.ndarray:
    """Each row's (name, category[, track]) as one integer (`tracks` 0: without the track)."""
    out = np.empty(name.size, np.int64)
    for r in range(name.size):
        key = np.int64(name[r]) * width + (cat[r] + 1)
        out[r] = key * tracks + track[r] if tracks else key
    return out


@numba.njit(cache=True, nogil=True)
def flow_rows(flow_event: np.ndarray, begin: np.ndarray, end_blob: np.ndarray, n_events: int) -> np.ndarray:
    """The row of each flow id's event (its slice's begin or end), -1 where the event is not drawn or
    the id is on no kept event; `end_blob` is `n_events` where a row has no end event of its own."""
    row_of = np.full(n_events, -1, np.int32)
    for r in range(begin.size):
        row_of[begin[r]] = r
        e = end_blob[r]
        if e != n_events:
            row_of[e] = r
    out = np.empty(flow_event.size, np.int64)
    for j in range(flow_event.size):
        f = flow_event[j]
        out[j] = row_of[f] if f >= 0 else -1
    return out
