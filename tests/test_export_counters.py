"""Counter series thinned for an exported page: the vectorised pick against a per-bucket loop."""

from __future__ import annotations

import numpy as np
import pytest

from neuron_widgets.export.dataset import COUNTER_POINTS, _counter_points


def reference(t: np.ndarray, v: np.ndarray, lo: int, hi: int, t0: float, t1: float) -> np.ndarray:
    """Per bucket (COUNTER_POINTS // 2 over [t0, t1)) its first sample and its np.argmax, one bucket at a time."""
    keep = np.arange(lo, hi)
    if keep.size <= COUNTER_POINTS:
        return keep
    width = (t1 - t0) / (COUNTER_POINTS // 2)
    picked: list[int] = []
    i = lo
    while i < hi:
        b = np.floor((t[i] - t0) / width)
        j = i
        while j < hi and np.floor((t[j] - t0) / width) == b:
            j += 1
        picked += [i, i + int(np.argmax(v[i:j]))]
        i = j
    return np.unique(np.array(picked, np.int64))


@pytest.mark.parametrize("seed", range(8))
def test_counter_points_match_the_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(COUNTER_POINTS // 2, 4 * COUNTER_POINTS))
    t = np.sort(rng.uniform(0, 1e6, n))
    v = rng.integers(0, 4, n).astype(np.float64)  # ties: the first maximum wins
    if seed % 2:
        v[rng.integers(0, n, 40)] = np.nan
    if seed % 3 == 0:
        v[rng.integers(0, n, 40)] = -np.inf
    lo, hi = int(rng.integers(0, n // 4)), int(rng.integers(3 * n // 4, n + 1))
    t0, t1 = float(t[lo]) + 0.5, float(t[hi - 1]) + 1.0
    got = _counter_points(t, v, lo, hi, t0, t1)
    assert np.array_equal(got, reference(t, v, lo, hi, t0, t1))
    if hi - lo > COUNTER_POINTS:
        assert got.size < hi - lo


def test_short_series_kept_whole() -> None:
    t = np.arange(100.0)
    assert np.array_equal(_counter_points(t, t, 10, 90, 0.0, 100.0), np.arange(10, 90))
