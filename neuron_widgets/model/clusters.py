"""The dense part of a profile whose events sit on clocks far apart.

A trace can mix clocks: a few hundred events on one, the rest on another a million seconds
later. Drawn as recorded, the view is hundreds of hours wide and empty. Here the events (in
start order) are cut at gaps much wider than everything else, and the side holding most events
is the dense part; the others are outliers, kept and findable, reported in the warnings.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numba
import numpy as np

from .kernel_args import read_only

# A gap is a clock split when it is this many times wider than the rest of the trace together...
GAP_RATIO = 50.0
# ...and the side cut away holds at most this share of the events.
OUTLIER_SHARE = 0.1
_MAX_CUTS = 4


@dataclass(frozen=True)
class Split:
    dense: tuple[int, int]  # rows [a, b) in start order: the dense part
    outliers: list[tuple[int, int]]  # row ranges cut away, in start order
    gaps: list[int]  # ns between each outlier range and the dense part

    @property
    def outlier_rows(self) -> int:
        return sum(b - a for a, b in self.outliers)


def split(start: np.ndarray, end: np.ndarray) -> Split:
    """Cut outlier clusters off the dense part; `start` ascending (a Profile's order).

    The cuts are the widest gaps (at most _MAX_CUTS), each at least GAP_RATIO times wider than
    the trace without them; so clusters on far clocks both before and after the rest are found.
    The largest piece is the dense part; every other piece must be small (OUTLIER_SHARE).
    """
    n = start.size
    if n < 2:
        return Split((0, n), [], [])
    widest, widths, total = _widest_gaps(read_only(start, np.int64), read_only(end, np.int64), _MAX_CUTS)
    gap = dict(zip(widest.tolist(), widths.tolist(), strict=True))
    cuts: list[int] = []
    for k in range(len(widest), 0, -1):  # as many cuts as hold
        top = widest[:k].tolist()
        narrowest = min(gap[i] for i in top)
        rest = max(total - sum(gap[i] for i in top), 1)
        if narrowest > 0 and narrowest >= GAP_RATIO * rest:
            cuts = sorted(i + 1 for i in top)
            break
    if not cuts:
        return Split((0, n), [], [])
    bounds = [0, *cuts, n]
    pieces = list(itertools.pairwise(bounds))
    dense = max(pieces, key=lambda piece: piece[1] - piece[0])
    others = [piece for piece in pieces if piece != dense]
    if any(b - a > OUTLIER_SHARE * n for a, b in others):
        return Split((0, n), [], [])  # two large clusters: neither is an outlier
    lo, hi = dense

    def reach(i: int) -> int:  # the end of everything up to row i
        return int(max(np.max(start[:i + 1]), np.max(end[:i + 1])))

    gaps = [int(start[lo]) - reach(b - 1) if b <= lo else int(start[a]) - reach(hi - 1) for a, b in others]
    return Split(dense, others, gaps)


@numba.njit(cache=True, nogil=True)
def _widest_gaps(start: np.ndarray, end: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The `k` widest gaps between the end of everything before a row and its start (row i: the gap before row
    i + 1), widest first (the earlier on equal widths), their widths, and the span from the first start to the
    last end; one pass, where a running maximum, a gap array and a partition took three over 10M rows."""
    n = start.size
    idx = np.full(k, -1, np.int64)
    width = np.zeros(k, np.int64)
    held = 0
    reach = max(start[0], end[0])
    for i in range(n - 1):
        g = start[i + 1] - reach
        if held < k or g > width[held - 1]:
            j = held if held < k else k - 1
            while j > 0 and width[j - 1] < g:
                width[j], idx[j] = width[j - 1], idx[j - 1]
                j -= 1
            width[j], idx[j] = g, i
            held = min(held + 1, k)
        reach = max(reach, start[i + 1], end[i + 1])
    return idx[:held], width[:held], reach - start[0]


def warm() -> None:
    """Load the compiled gap kernel now (from numba's cache), not on a user's first load or drill-down."""
    split(np.arange(3, dtype=np.int64), np.arange(3, dtype=np.int64))
