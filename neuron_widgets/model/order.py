"""Time order of an event table: by start, longest first among events that start together."""

from __future__ import annotations

import numba
import numpy as np

# Tie groups up to this size are put in order by insertion (engines starting on the same
# nanosecond come in small groups); larger ones by a merge sort.
INSERTION_MAX = 64


@numba.njit(cache=True, nogil=True)
def longest_first(order: np.ndarray, start_o: np.ndarray, end_o: np.ndarray) -> None:
    """Within each run of equal starts, put longer events first, stably: `order` is by start already, `start_o` and
    `end_o` its starts and ends gathered in that order (moved along with it). Read side by side, not through
    `order`: reaching into the table at random for each comparison took most of the time."""
    n = order.size
    a = 0
    while a < n:
        b = a + 1
        s = start_o[a]
        while b < n and start_o[b] == s:
            b += 1
        if b - a > INSERTION_MAX:
            sub = np.argsort(-end_o[a:b], kind="mergesort")
            group, ends = order[a:b].copy(), end_o[a:b].copy()
            for k in range(b - a):
                order[a + k] = group[sub[k]]
                end_o[a + k] = ends[sub[k]]
        elif b - a > 1:
            for i in range(a + 1, b):
                item, e = order[i], end_o[i]
                j = i - 1
                while j >= a and end_o[j] < e:
                    order[j + 1] = order[j]
                    end_o[j + 1] = end_o[j]
                    j -= 1
                order[j + 1] = item
                end_o[j + 1] = e
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
    s = np.ascontiguousarray(start[order], np.int64)
    if (s[1:] == s[:-1]).any():
        longest_first(order, s, np.ascontiguousarray(end[order], np.int64))
    return order


def warm() -> None:
    """Load numba and the compiled tie kernel now (a few hundred ms the first time in a process), not on a click."""
    time_order(np.array([2, 1, 1], np.int64), np.array([3, 1, 2], np.int64))
