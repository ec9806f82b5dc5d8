"""What an export keeps exact and what it merges: the longest events in full, the rest in blocks.

Past the size budget the page cannot hold every event, so events are ranked (the selection and
its dependency chain, then marked events, then the longest) and the first `keep` stay exact.
The others become blocks: per track key and per time bucket (a few buckets per pixel of the
exported view), a run with its count, total duration, the longest member's name, and the
flags of all members.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    is_must = np.isin(rows, must)
    dur = end[rows] - start[rows]
    order = np.argsort(-dur, kind="stable")
    return np.concatenate([rows[is_must], rows[order[~is_must[order]]]])


def blocks(rows: np.ndarray, start: np.ndarray, end: np.ndarray, keys: list[np.ndarray], flags: np.ndarray,
           a: int, bucket_ns: int, n_buckets: int) -> Blocks:
    """Merge `rows` (in start order) per key tuple and per bucket of `bucket_ns` from `a`.

    `flags` holds each row's marker bits. A block ends where its last member ends, but not past
    its bucket, so neighbouring blocks of one key do not overlap and stay on one lane.
    """
    if rows.size == 0:
        return Blocks.empty()
    # Each per-row array is made when needed and let go once used: at 10M rows each is 80 MB.
    bucket = np.clip((start[rows] - a) // bucket_ns, 0, n_buckets - 1)
    key = np.zeros(rows.size, np.int64)
    for k in keys:
        key *= int(k.max(initial=0)) + 1
        key += k[rows].astype(np.int64, copy=False)
    # Rows are in time order, so a stable sort by key alone leaves each key's buckets in order
    # (and a radix sort when the keys fit 16 bits).
    small = key.astype(np.uint16) if key.size and int(key.max()) < 65536 else key
    order = np.argsort(small, kind="stable")
    del small
    comp = key[order]
    del key
    comp *= n_buckets
    bucket_o = bucket[order]
    del bucket
    comp += bucket_o
    first = np.flatnonzero(np.concatenate([[True], comp[1:] != comp[:-1]]))
    del comp
    bucket_first = bucket_o[first]
    del bucket_o
    ro = rows[order]
    del order
    s_o, e_o = start[ro], end[ro]
    count = np.diff(np.append(first, rows.size))
    block_end = np.minimum(np.maximum.reduceat(e_o, first), a + (bucket_first + 1) * bucket_ns)
    dur_o = e_o
    dur_o -= s_o  # e_o is not needed past block_end
    del e_o
    longest = np.maximum.reduceat(dur_o, first)
    # The longest member: the first position in each block whose duration equals the block's max.
    is_max = dur_o == np.repeat(longest, count)
    pos = np.flatnonzero(is_max)
    del is_max
    block_of = np.searchsorted(first, pos, side="right") - 1
    _, first_max = np.unique(block_of, return_index=True)
    rep = ro[pos[first_max]]
    out = Blocks(s_o[first], np.maximum(block_end, s_o[first]), count.astype(np.int64),
                 np.add.reduceat(dur_o, first), rep, np.bitwise_or.reduceat(flags[ro], first))
    by_time = np.lexsort((-(out.end - out.start), out.start))
    return Blocks(*(getattr(out, f)[by_time] for f in ("start", "end", "count", "total", "rep", "flags")))
