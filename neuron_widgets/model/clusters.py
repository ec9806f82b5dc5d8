"""The dense part of a profile whose events sit on clocks far apart.

A trace can mix clocks: a few hundred events on one, the rest on another a million seconds
later. Drawn as recorded, the view is hundreds of hours wide and empty. Here the events (in
start order) are cut at gaps much wider than everything else, and the side holding most events
is the dense part; the others are outliers, kept and findable, reported in the warnings.
"""

from __future__ import annotations

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
    """Cut outlier clusters off the dense part; `start` ascending (a Profile's order)."""
    n = start.size
    lo, hi = 0, n
    outliers: list[tuple[int, int]] = []
    gaps: list[int] = []
    if n < 2:
        return Split((0, n), outliers, gaps)
    reach = np.maximum.accumulate(np.maximum(end, start))
    for _ in range(_MAX_CUTS):
        if hi - lo < 2:
            break
        s, r = start[lo:hi], reach[lo:hi]
        gap = s[1:] - r[:-1]  # from the end of everything before to the next start
        k = int(np.argmax(gap))
        g = int(gap[k])
        total = int(r[-1] - s[0])
        rest = max(total - g, 1)
        if g <= 0 or g < GAP_RATIO * rest:
            break
        left, right = k + 1, (hi - lo) - (k + 1)
        if left <= right and left <= OUTLIER_SHARE * (hi - lo):
            outliers.append((lo, lo + left))
            gaps.append(g)
            lo += left
        elif right < left and right <= OUTLIER_SHARE * (hi - lo):
            outliers.append((lo + left, hi))
            gaps.append(g)
            hi = lo + left
        else:
            break  # two large clusters: neither is an outlier
    return Split((lo, hi), sorted(outliers), gaps)
