"""One interval union (model/interval_union.py) behind the device engines' busy time, the device
hierarchy's per-node engine times and analysis/intervals.py, checked against counting covered
nanoseconds one by one on random intervals (overlapping, touching, nested, ends before starts)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from neuron_widgets.analysis.intervals import union as analysis_union
from neuron_widgets.model.device.engines import busy_ns as engine_busy_ns
from neuron_widgets.model.interval_union import busy_ns, grouped_busy, union


def covered(start: np.ndarray, end: np.ndarray) -> set[int]:
    """The nanoseconds [s, e) covers, counted one by one (an end before its start covers nothing)."""
    return {t for s, e in zip(start.tolist(), end.tolist(), strict=True) for t in range(s, e)}


def random_intervals(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    start = rng.integers(0, 300, n)
    end = start + rng.integers(-5, 40, n)  # some end before they start
    return rng.integers(0, 4, n), start, end


@pytest.mark.parametrize("seed", range(60))
def test_every_form_of_the_union_counts_each_covered_nanosecond_once(seed: int) -> None:
    rng = np.random.default_rng(seed)
    group, start, end = random_intervals(rng, int(rng.integers(0, 60)))
    want = [len(covered(start[group == g], end[group == g])) for g in range(4)]
    assert grouped_busy(group, start, end, 4).tolist() == want
    assert busy_ns(start, end) == engine_busy_ns(start, end) == len(covered(start, end))
    g, s, e = union(group, start, end)
    for k in range(4):
        runs = list(zip(s[g == k].tolist(), e[g == k].tolist(), strict=True))
        # Disjoint, apart (touching runs are one), in order, and exactly the covered nanoseconds.
        assert all(a[1] < b[0] for a, b in itertools.pairwise(runs)), runs
        assert sum(b - a for a, b in runs) == want[k]
        assert covered(np.array([a for a, _ in runs], np.int64), np.array([b for _, b in runs], np.int64)) \
            == covered(start[group == k], end[group == k])
    assert analysis_union(group, start, end).length(4).tolist() == want


def test_an_end_before_its_start_is_no_negative_time() -> None:
    # The former numpy busy_ns added such an interval's negative length.
    assert busy_ns(np.array([100, 0]), np.array([50, 10])) == 10


def test_negative_groups_are_left_out() -> None:
    assert grouped_busy(np.array([-1, 0]), np.array([0, 0]), np.array([100, 5]), 1).tolist() == [5]
