"""The dense part of a profile whose events sit on clocks far apart.

A trace can mix clocks: a few hundred events on one, the rest on another a million seconds
later. Drawn as recorded, the view is hundreds of hours wide and empty. Here the events (in
start order) are cut at gaps much wider than everything else, and the side holding most events
is the dense part; the others are outliers, kept and findable, reported in the warnings.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

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
    reach = np.maximum.accumulate(np.maximum(end, start))
    gap = start[1:] - reach[:-1]  # from the end of everything before to the next start
    total = int(reach[-1] - start[0])
    # The few widest gaps in linear time (a full sort of 10M gaps took a second at every load).
    k = min(_MAX_CUTS, gap.size)
    top = np.argpartition(gap, gap.size - k)[gap.size - k:]
    widest = top[np.argsort(-gap[top], kind="stable")]
    cuts: list[int] = []
    for k in range(len(widest), 0, -1):  # as many cuts as hold
        top = widest[:k]
        narrowest = int(gap[top].min())
        rest = max(total - int(gap[top].sum()), 1)
        if narrowest > 0 and narrowest >= GAP_RATIO * rest:
            cuts = sorted(int(i) + 1 for i in top)
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
    gaps = [int(start[lo] - reach[b - 1]) if b <= lo else int(start[a] - reach[hi - 1]) for a, b in others]
    return Split(dense, others, gaps)
