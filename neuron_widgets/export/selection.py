"""What an export keeps exact and what it merges: the longest events in full, the rest in blocks.

Past the size budget the page cannot hold every event, so events are ranked (the selection and
its dependency chain, then marked events, then the longest) and the first `keep` stay exact.
The others become blocks: per track key and per time bucket (a few buckets per pixel of the
exported view), a run with its count, total duration, the longest member's name, and the
flags of all members.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np


@dataclass
class Blocks:
    start: np.ndarray  # int64 absolute ns
    end: np.ndarray
    count: np.ndarray  # events merged
    total: np.ndarray  # their summed duration, ns
    rep: np.ndarray  # the longest member's row (its name, colour and keys stand for the block)
    flags: np.ndarray

    @classmethod
    def empty(cls) -> Blocks:
        z = np.zeros(0, np.int64)
        return cls(z, z, z, z, z, np.zeros(0, np.uint8))

    def __len__(self) -> int:
        return int(self.start.size)


def rows_in(start: np.ndarray, end: np.ndarray, a: int, b: int) -> np.ndarray:
    """Rows of events overlapping [a, b) (the table is in start order)."""
    hi = int(np.searchsorted(start, b, side="left"))
    return np.flatnonzero(end[:hi] >= a)


def priority(rows: np.ndarray, start: np.ndarray, end: np.ndarray, must: np.ndarray) -> np.ndarray:
    """`rows` reordered: those in `must` first, then longest first (ties keep time order)."""
    mark = np.zeros(start.size, bool)
    must = np.asarray(must, np.int64)
    mark[must[(must >= 0) & (must < start.size)]] = True
    is_must = mark[rows]
    del mark
    dur = end[rows] - start[rows]
    bits = max(int(rows.size).bit_length(), 1)
    spread = int(dur.max()) - int(dur.min()) + 1 if rows.size else 0
    if spread < 2 ** (62 - bits):
        # One int64 key per row, (rank by length) then (place in time), sorted by value: a plain sort is
        # several times faster than a stable argsort of 10M lengths, and gives the same order.
        key = np.where(is_must, 0, int(dur.max(initial=0)) + 1 - dur)
        del dur
        key <<= bits
        key |= np.arange(rows.size, dtype=np.int64)
        key.sort()
        key &= (1 << bits) - 1
        return rows[key]
    order = np.argsort(-dur, kind="stable")
    return np.concatenate([rows[is_must], rows[order[~is_must[order]]]])


def blocks(rows: np.ndarray, start: np.ndarray, end: np.ndarray, keys: list[np.ndarray], flags: np.ndarray,
           a: int, bucket_ns: int, n_buckets: int) -> Blocks:
    """Merge `rows` (in start order) per key tuple and per bucket of `bucket_ns` from `a`.

    `flags` holds each row's marker bits. A block ends where its last member ends, but not past
    its bucket, so neighbouring blocks of one key do not overlap and stay on one lane. Blocks come
    in time order, the longer first among those that start together, then by key.
    """
    if rows.size == 0:
        return Blocks.empty()
    rows = np.ascontiguousarray(rows)
    if rows.dtype not in (np.int32, np.int64):
        rows = rows.astype(np.int64)
    key = np.zeros(rows.size, np.int64)
    for k in keys:
        key *= int(k.max(initial=0)) + 1
        key += k[rows].astype(np.int64, copy=False)
    if key.size and int(key.max()) >= max(4 * rows.size, 1 << 16):  # a sparse key space: number the keys used
        _, key = np.unique(key, return_inverse=True)  # sorted, so key order is kept
        key = key.ravel().astype(np.int64, copy=False)
    n_keys = int(key.max(initial=0)) + 1
    # One pass over the rows (two: counting, then filling), no per-row temporaries but the key.
    n = _count_blocks(rows, key, start, a, bucket_ns, n_buckets, n_keys)
    if n < 0:  # starts out of order: the general merge
        return _blocks_sorted(rows, key, start, end, flags, a, bucket_ns, n_buckets)
    out = [np.empty(n, np.int64) for _ in range(6)]
    b_flags = np.empty(n, np.uint8)
    _fill_blocks(rows, key, start, end, flags, a, bucket_ns, n_buckets, n_keys, *out, b_flags)
    b_start, b_end, count, total, rep, comp = out
    del key
    by_time = np.lexsort((comp, -(b_end - b_start), b_start))
    return Blocks(b_start[by_time], b_end[by_time], count[by_time], total[by_time], rep[by_time], b_flags[by_time])


@numba.njit(cache=True, nogil=True)
def _bucket(s: int, a: int, bucket_ns: int, n_buckets: int) -> int:
    b = (s - a) // bucket_ns
    return 0 if b < 0 else n_buckets - 1 if b > n_buckets - 1 else b


@numba.njit(cache=True, nogil=True)
def _count_blocks(rows: np.ndarray, key: np.ndarray, start: np.ndarray, a: int, bucket_ns: int, n_buckets: int,
                  n_keys: int) -> int:
    """How many blocks; -1 if a key's buckets go back in time (rows not in start order)."""
    last = np.full(n_keys, -1, np.int64)
    n = 0
    for i in range(rows.size):
        k = key[i]
        b = _bucket(start[rows[i]], a, bucket_ns, n_buckets)
        if b != last[k]:
            if b < last[k]:
                return -1
            last[k] = b
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _fill_blocks(rows: np.ndarray, key: np.ndarray, start: np.ndarray, end: np.ndarray, flags: np.ndarray,
                 a: int, bucket_ns: int, n_buckets: int, n_keys: int, b_start: np.ndarray, b_end: np.ndarray,
                 count: np.ndarray, total: np.ndarray, rep: np.ndarray, comp: np.ndarray,
                 b_flags: np.ndarray) -> None:
    last = np.full(n_keys, -1, np.int64)
    cur = np.full(n_keys, -1, np.int64)
    longest = np.zeros(b_start.size, np.int64)
    n = 0
    for i in range(rows.size):
        r = rows[i]
        k = key[i]
        s, e = start[r], end[r]
        b = _bucket(s, a, bucket_ns, n_buckets)
        d = e - s
        if b != last[k]:
            last[k] = b
            j = cur[k] = n
            n += 1
            b_start[j], b_end[j], count[j], total[j] = s, e, 1, d
            rep[j], longest[j], b_flags[j] = r, d, flags[r]
            comp[j] = k * n_buckets + b
        else:
            j = cur[k]
            b_end[j] = max(b_end[j], e)
            count[j] += 1
            total[j] += d
            if d > longest[j]:  # the first of the longest stands for the block
                rep[j], longest[j] = r, d
            b_flags[j] |= flags[r]
    for j in range(n):
        cap = a + (comp[j] % n_buckets + 1) * bucket_ns
        b_end[j] = max(min(b_end[j], cap), b_start[j])


def _blocks_sorted(rows: np.ndarray, key: np.ndarray, start: np.ndarray, end: np.ndarray, flags: np.ndarray,
                   a: int, bucket_ns: int, n_buckets: int) -> Blocks:
    """The merge by sorting on (key, bucket), for rows whose starts are not in order."""
    bucket = np.clip((start[rows] - a) // bucket_ns, 0, n_buckets - 1)
    order = np.lexsort((bucket, key))
    comp = key[order] * n_buckets + bucket[order]
    first = np.flatnonzero(np.concatenate([[True], comp[1:] != comp[:-1]]))
    ro = rows[order]
    s_o, e_o = start[ro], end[ro]
    count = np.diff(np.append(first, rows.size))
    block_end = np.minimum(np.maximum.reduceat(e_o, first), a + (comp[first] % n_buckets + 1) * bucket_ns)
    dur_o = e_o - s_o
    longest = np.maximum.reduceat(dur_o, first)
    pos = np.flatnonzero(dur_o == np.repeat(longest, count))
    _, first_max = np.unique(np.searchsorted(first, pos, side="right") - 1, return_index=True)
    b_start = s_o[first]
    b_end = np.maximum(block_end, b_start)
    by_time = np.lexsort((comp[first], -(b_end - b_start), b_start))
    return Blocks(b_start[by_time], b_end[by_time], count.astype(np.int64)[by_time],
                  np.add.reduceat(dur_o, first)[by_time], ro[pos[first_max]][by_time],
                  np.bitwise_or.reduceat(flags[ro], first)[by_time])
