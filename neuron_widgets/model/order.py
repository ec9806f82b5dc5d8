"""Time order of an event table: by start, longest first among events that start together."""

from __future__ import annotations

import numba
import numpy as np

# Tie groups up to this size are put in order by insertion (engines starting on the same
# nanosecond come in small groups); larger ones by a merge sort.
INSERTION_MAX = 64


@numba.njit(cache=True, nogil=True)
def _longest_first(order: np.ndarray, start: np.ndarray, end: np.ndarray) -> None:
    """Within each run of equal starts of `order` (already by start), put longer events first, stably."""
    n = order.size
    a = 0
    while a < n:
        b = a + 1
        s = start[order[a]]
        while b < n and start[order[b]] == s:
            b += 1
        if b - a > 1:
            if b - a <= INSERTION_MAX:
                for i in range(a + 1, b):
                    item = order[i]
                    e = end[item]
                    j = i - 1
                    while j >= a and end[order[j]] < e:
                        order[j + 1] = order[j]
                        j -= 1
                    order[j + 1] = item
            else:
                group = order[a:b].copy()
                ends = np.empty(b - a, np.int64)
                for k in range(b - a):
                    ends[k] = -end[group[k]]
                sub = np.argsort(ends, kind="mergesort")
                for k in range(b - a):
                    order[a + k] = group[sub[k]]
        a = b


def time_order(start: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """Order by start, longest first among equal starts; None if already in that order."""
    if start.size < 2:
        return None
    later, same = start[1:] > start[:-1], start[1:] == start[:-1]
    if (later | same).all() and not (same & (end[1:] > end[:-1])).any():
        return None
    # A stable sort merges already-ordered runs (tables or files appended together) in near
    # linear time; a lexsort on (start, -end) would be two full sorts.
    order = np.argsort(start, kind="stable")
    s = start[order]
    if (s[1:] == s[:-1]).any():
        _longest_first(order, np.ascontiguousarray(start, np.int64), np.ascontiguousarray(end, np.int64))
    return order


def warm() -> None:
    """Load numba and the compiled tie kernel now (a few hundred ms the first time in a process), not on a click."""
    time_order(np.array([2, 1, 1], np.int64), np.array([3, 1, 2], np.int64))
