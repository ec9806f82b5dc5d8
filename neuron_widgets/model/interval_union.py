"""The union of intervals, the one rule: [s, e) joins the run before it when s <= that run's end
(touching intervals make one run), an end before its start counts as the start (no negative time).

Two forms of the same step: `step`/`close` keep one run open per group while intervals come in
start order and add each run's length when it closes (the device hierarchy's per node and engine
times, `grouped_busy`); `merge` writes the runs out as intervals (analysis/intervals.py's sets).
"""

from __future__ import annotations

import numba
import numpy as np

# numba's disk cache of a caller (device/hierarchy.py's _tree_stats) does not notice a change here:
# after changing the rule, delete the callers' __pycache__/*.nbi so they compile it again.
NONE = np.iinfo(np.int64).min  # a group's run end before its first interval


@numba.njit(cache=True, nogil=True)
def joins(run_end: int, s: int) -> bool:  # pragma: no cover - numba
    """Whether an interval starting at `s` (in start order) belongs to the run ending at `run_end`."""
    return s <= run_end


@numba.njit(cache=True, nogil=True)
def step(run_start: int, run_end: int, s: int, e: int) -> tuple[int, int, int]:  # pragma: no cover - numba
    """[s, e), the next interval of a group in start order, against the group's open run:
    (the run's start, its end, the length of a run this closes, else 0).

    Scalars in and out, so callers keep their runs in their own arrays: a numba function taking the
    arrays themselves costs a reference count per call (the device hierarchy's pass ran 4x slower)."""
    e = max(e, s)
    if joins(run_end, s):
        return run_start, max(run_end, e), 0
    return s, e, (run_end - run_start if run_end != NONE else 0)


@numba.njit(cache=True, nogil=True)
def close(run_start: np.ndarray, run_end: np.ndarray, total: np.ndarray) -> None:  # pragma: no cover - numba
    """Add every group's still open run to its total."""
    for g in range(total.size):
        if run_end[g] != NONE:
            total[g] += run_end[g] - run_start[g]


@numba.njit(cache=True, nogil=True)
def _lengths(group: np.ndarray, start: np.ndarray, end: np.ndarray, n: int) -> np.ndarray:  # pragma: no cover - numba
    total = np.zeros(n, np.int64)
    run_start = np.zeros(n, np.int64)
    run_end = np.full(n, NONE)
    for i in range(start.size):
        g = group[i]
        run_start[g], run_end[g], closed = step(run_start[g], run_end[g], start[i], end[i])
        total[g] += closed
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
    total: np.ndarray = _lengths(g, s, e, n_groups)  # numba's functions are untyped to mypy
    return total


def busy_ns(start: np.ndarray, end: np.ndarray) -> int:
    """Length of the union of intervals (an engine running two overlapping instructions is busy once)."""
    start = np.asarray(start)
    if start.size == 0:
        return 0
    return int(grouped_busy(np.zeros(start.size, np.int64), start, end, 1)[0])


@numba.njit(cache=True, nogil=True)
def merge(group: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray,
          og: np.ndarray, os_: np.ndarray, oe: np.ndarray) -> int:  # pragma: no cover - numba
    """The runs themselves: intervals visited in `order` (by group, then start) written to og/os_/oe;
    returns how many."""
    n = 0
    for k in range(order.size):
        i = order[k]
        g, s, e = group[i], start[i], max(end[i], start[i])
        if n > 0 and og[n - 1] == g and joins(oe[n - 1], s):
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
