"""The overview strip's counts (model/overview.density) against a count written out in Python."""

from __future__ import annotations

import numpy as np
import pytest

from neuron_widgets.model.overview import density


def reference(start: list[int], t0: int, t1: int, bins: int) -> list[int]:
    if t1 <= t0 or not start:
        return []
    width = max(-(-(t1 - t0) // bins), 1)
    counts = [0] * bins
    for s in start:
        k = (s - t0) // width  # floor: a start before t0 falls below bin 0
        if 0 <= k < bins:
            counts[k] += 1
    return counts


@pytest.mark.parametrize("seed", range(200))
def test_density_against_a_plain_count(seed: int) -> None:
    rng = np.random.default_rng(seed)
    start = np.sort(rng.integers(-50, 1000, int(rng.integers(0, 300)))).astype(np.int64)
    t0 = int(rng.integers(-100, 500))
    t1 = t0 + int(rng.integers(-5, 2000))
    bins = int(rng.integers(1, 40))
    assert density(start, t0, t1, bins) == reference(start.tolist(), t0, t1, bins)
