"""Interval sets per group (a NeuronCore, a rank, a stream): union, intersection, difference, length.

An `Intervals` holds disjoint [start, end) intervals sorted by (group, start); every operation
is one sequential pass in numba, so the analyses cost a few passes over the events they read
whatever the number of groups.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np

from ..model import interval_union


@dataclass(frozen=True)
class Intervals:
    group: np.ndarray  # int64
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns

    def __len__(self) -> int:
        return int(self.group.size)

    def length(self, n_groups: int) -> np.ndarray:
        """Total covered time per group (int64 ns, exact)."""
        return _sum_by_group(self.group, self.end - self.start, n_groups)

    def __and__(self, other: Intervals) -> Intervals:
        return _pack(_intersect, self, other)

    def __sub__(self, other: Intervals) -> Intervals:
        return _pack(_subtract, self, other)

    @staticmethod
    def empty() -> Intervals:
        z = np.zeros(0, np.int64)
        return Intervals(z, z, z)


def union(group: np.ndarray, start: np.ndarray, end: np.ndarray) -> Intervals:
    """The union of possibly overlapping intervals, per group (model/interval_union.py's rule)."""
    return Intervals(*interval_union.union(group, start, end))


def _pack(kernel: Callable[..., int], a: Intervals, b: Intervals) -> Intervals:
    cap = 2 * (len(a) + len(b)) + 1
    g, s, e = (np.empty(cap, np.int64) for _ in range(3))
    n = kernel(a.group, a.start, a.end, b.group, b.start, b.end, g, s, e)
    return Intervals(g[:n].copy(), s[:n].copy(), e[:n].copy())


@numba.njit(cache=True, nogil=True)
def _intersect(ag: np.ndarray, as_: np.ndarray, ae: np.ndarray, bg: np.ndarray, bs: np.ndarray, be: np.ndarray,
               og: np.ndarray, os_: np.ndarray, oe: np.ndarray) -> int:  # pragma: no cover - numba
    i = j = n = 0
    while i < ag.size and j < bg.size:
        if ag[i] < bg[j]:
            i += 1
            continue
        if ag[i] > bg[j]:
            j += 1
            continue
        lo = max(as_[i], bs[j])
        hi = min(ae[i], be[j])
        if lo < hi:
            og[n], os_[n], oe[n] = ag[i], lo, hi
            n += 1
        if ae[i] < be[j]:
            i += 1
        else:
            j += 1
    return n


@numba.njit(cache=True, nogil=True)
def _subtract(ag: np.ndarray, as_: np.ndarray, ae: np.ndarray, bg: np.ndarray, bs: np.ndarray, be: np.ndarray,
              og: np.ndarray, os_: np.ndarray, oe: np.ndarray) -> int:  # pragma: no cover - numba
    j = n = 0
    for i in range(ag.size):
        g, cur, stop = ag[i], as_[i], ae[i]
        # B's intervals that end before this one starts can serve no later A interval either.
        while j < bg.size and (bg[j] < g or (bg[j] == g and be[j] <= cur)):
            j += 1
        k = j
        while k < bg.size and bg[k] == g and bs[k] < stop:
            if bs[k] > cur:
                og[n], os_[n], oe[n] = g, cur, bs[k]
                n += 1
            if be[k] > cur:
                cur = be[k]
            k += 1
        if cur < stop:
            og[n], os_[n], oe[n] = g, cur, stop
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _sum_by_group(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:  # pragma: no cover - numba
    out = np.zeros(n_groups, np.int64)
    for i in range(group.size):
        out[group[i]] += values[i]
    return out


def first_last(group: np.ndarray, start: np.ndarray, end: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the earliest start and the latest end (int64 ns; 0 for an empty group)."""
    lo = np.full(n_groups, np.iinfo(np.int64).max, np.int64)
    hi = np.full(n_groups, np.iinfo(np.int64).min, np.int64)
    np.minimum.at(lo, group, start)
    np.maximum.at(hi, group, end)
    empty = lo > hi
    lo[empty] = 0
    hi[empty] = 0
    return lo, hi


def covered_twice(group: np.ndarray, start: np.ndarray, end: np.ndarray) -> Intervals:
    """Where at least two of the intervals run at once, per group."""
    group = np.asarray(group, np.int64)
    start = np.asarray(start, np.int64)
    end = np.maximum(np.asarray(end, np.int64), start)
    g = np.concatenate([group, group])
    t = np.concatenate([start, end])
    d = np.concatenate([np.ones(start.size, np.int64), -np.ones(end.size, np.int64)])
    order = np.lexsort((d, t, g))  # at one instant, ends before starts: touching is not overlapping
    og, os_, oe = (np.empty(start.size + 1, np.int64) for _ in range(3))
    n = _depth2(g[order], t[order], d[order], og, os_, oe)
    return Intervals(og[:n].copy(), os_[:n].copy(), oe[:n].copy())


@numba.njit(cache=True, nogil=True)
def _depth2(g: np.ndarray, t: np.ndarray, d: np.ndarray, og: np.ndarray, os_: np.ndarray,
            oe: np.ndarray) -> int:  # pragma: no cover - numba
    n = 0
    depth = 0
    since = 0
    for i in range(g.size):
        if i > 0 and g[i] != g[i - 1]:
            depth = 0
        before = depth
        depth += d[i]
        if before < 2 <= depth:
            since = t[i]
        elif before >= 2 > depth and t[i] > since:
            if n > 0 and og[n - 1] == g[i] and oe[n - 1] == since:
                oe[n - 1] = t[i]
            else:
                og[n], os_[n], oe[n] = g[i], since, t[i]
                n += 1
    return n


def warm() -> None:
    """Load the compiled kernels (numba's cache) before the first analysis needs them."""
    g = np.zeros(2, np.int64)
    a = union(g, np.array([0, 1]), np.array([2, 3]))
    _ = (a & a) - a
    _ = a.length(1)
    covered_twice(g, np.array([0, 1]), np.array([2, 3]))
