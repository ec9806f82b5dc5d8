"""The union of intervals, the one rule: [s, e) joins the run before it when s <= that run's end
(touching intervals make one run), an end before its start counts as the start (no negative time).

Two forms of the same step: `extend`/`close` keep one run open per group while intervals come in
start order and add each run's length when it closes (the device hierarchy's per node and engine
times, `grouped_busy`); `merge` writes the runs out as intervals (analysis/intervals.py's sets).
"""

from __future__ import annotations

import numba
import numpy as np

NONE = np.iinfo(np.int64).min  # a group's run end before its first interval


@numba.njit(cache=True, nogil=True)
def extend(run_start, run_end, total, g, s, e):  # pragma: no cover - numba
    """Add [s, e), the next interval of group `g` in start order, to its open run; a run it cannot
    join is closed and its length added to `total[g]`."""
    e = max(e, s)
    if s > run_end[g]:
        if run_end[g] != NONE:
            total[g] += run_end[g] - run_start[g]
        run_start[g] = s
        run_end[g] = e
    elif e > run_end[g]:
        run_end[g] = e


@numba.njit(cache=True, nogil=True)
def close(run_start, run_end, total):  # pragma: no cover - numba
    """Add every group's still open run to its total."""
    for g in range(total.size):
        if run_end[g] != NONE:
            total[g] += run_end[g] - run_start[g]


@numba.njit(cache=True, nogil=True)
def _lengths(group, start, end, n):  # pragma: no cover - numba
    total = np.zeros(n, np.int64)
    run_start = np.zeros(n, np.int64)
    run_end = np.full(n, NONE)
    for i in range(start.size):
        extend(run_start, run_end, total, group[i], start[i], end[i])
    close(run_start, run_end, total)
    return total


def grouped_busy(group: np.ndarray, start: np.ndarray, end: np.ndarray, n_groups: int) -> np.ndarray:
    """The length of the union of each group's intervals (group codes 0..n_groups-1; negative codes are left out)."""
    keep = np.asarray(group) >= 0
    g = np.asarray(group)[keep].astype(np.int64)
    s, e = np.asarray(start)[keep].astype(np.int64), np.asarray(end)[keep].astype(np.int64)
    if s.size > 1 and np.any(s[1:] < s[:-1]):  # device tables usually come in time order: no sort then
        order = np.argsort(s, kind="stable")
        g, s, e = g[order], s[order], e[order]
    return _lengths(g, s, e, n_groups)


def busy_ns(start: np.ndarray, end: np.ndarray) -> int:
    """Length of the union of intervals (an engine running two overlapping instructions is busy once)."""
    start = np.asarray(start)
    if start.size == 0:
        return 0
    return int(grouped_busy(np.zeros(start.size, np.int64), start, end, 1)[0])


@numba.njit(cache=True, nogil=True)
def merge(group, start, end, order, og, os_, oe):  # pragma: no cover - numba
    """The runs themselves: intervals visited in `order` (by group, then start) written to og/os_/oe;
    returns how many."""
    n = 0
    for k in range(order.size):
        i = order[k]
        g, s, e = group[i], start[i], max(end[i], start[i])
        if n > 0 and og[n - 1] == g and s <= oe[n - 1]:
            if e > oe[n - 1]:
                oe[n - 1] = e
        else:
            og[n], os_[n], oe[n] = g, s, e
            n += 1
    return n


def union(group: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of possibly overlapping intervals per group, as disjoint runs sorted by (group, start)."""
    group = np.asarray(group, np.int64)
    start = np.asarray(start, np.int64)
    end = np.asarray(end, np.int64)
    order = np.lexsort((start, group))
    g, s, e = (np.empty(order.size, np.int64) for _ in range(3))
    n = merge(group, start, end, order, g, s, e)
    return g[:n], s[:n], e[:n]
