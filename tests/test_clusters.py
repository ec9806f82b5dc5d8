"""The dense part of a profile on far clocks (model/clusters.py) against a slow, plain reference on random
profiles: ordinary traces, traces with clusters planted far before or after the rest, equal gaps."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from neuron_widgets.model import clusters
from neuron_widgets.model.clusters import GAP_RATIO, OUTLIER_SHARE, Split


def reference(start: list[int], end: list[int]) -> Split:
    """The rule written out: the widest gaps (the earlier first on equal widths), as many as each is GAP_RATIO times
    wider than the trace without them; the largest piece is dense; the others must be small."""
    n = len(start)
    if n < 2:
        return Split((0, n), [], [])
    reach, now = [], None
    for s, e in zip(start, end, strict=True):
        now = max(s, e) if now is None else max(now, s, e)
        reach.append(now)
    gaps = [(start[i + 1] - reach[i], i) for i in range(n - 1)]
    widest = [i for _, i in sorted(gaps, key=lambda g: (-g[0], g[1]))[:4]]
    total = reach[-1] - start[0]
    cuts: list[int] = []
    for k in range(len(widest), 0, -1):
        top = widest[:k]
        narrowest = min(gaps[i][0] for i in top)
        rest = max(total - sum(gaps[i][0] for i in top), 1)
        if narrowest > 0 and narrowest >= GAP_RATIO * rest:
            cuts = sorted(i + 1 for i in top)
            break
    if not cuts:
        return Split((0, n), [], [])
    pieces = list(itertools.pairwise([0, *cuts, n]))
    dense = max(pieces, key=lambda p: p[1] - p[0])
    others = [p for p in pieces if p != dense]
    if any(b - a > OUTLIER_SHARE * n for a, b in others):
        return Split((0, n), [], [])
    lo, hi = dense
    return Split(dense, others, [start[lo] - reach[b - 1] if b <= lo else start[a] - reach[hi - 1] for a, b in others])


def random_trace(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = int(rng.integers(0, 300))
    start = np.sort(rng.integers(0, int(rng.choice([10, 1_000, 10**6])), n))
    end = start + rng.integers(-3, int(rng.choice([2, 50, 10**4])), n)  # some ends before their starts
    for _ in range(int(rng.integers(0, 4))):  # clusters on a far clock, before or after, of a few events
        k = int(rng.integers(1, 6))
        far = rng.integers(0, 100, k) + int(rng.choice([-1, 1])) * int(rng.choice([10**9, 10**12]))
        start = np.concatenate([start, far])
        end = np.concatenate([end, far + rng.integers(0, 10, k)])
    if n and rng.random() < 0.2:  # equal gaps: two clusters the same distance away on each side
        start = np.concatenate([start, [int(start.min()) - 10**9, int(start.max()) + 10**9]])
        end = np.concatenate([end, start[-2:]])
    o = np.argsort(start, kind="stable")
    return start[o].astype(np.int64), end[o].astype(np.int64)


@pytest.mark.parametrize("seed", range(400))
def test_split_against_a_plain_reference(seed: int) -> None:
    start, end = random_trace(np.random.default_rng(seed))
    assert clusters.split(start, end) == reference(start.tolist(), end.tolist())


def test_random_traces_do_cut_far_clusters() -> None:
    """The random traces above exercise the cuts, not only the whole-trace answer."""
    cut = sum(bool(reference(*(a.tolist() for a in random_trace(np.random.default_rng(s)))).outliers)
              for s in range(400))
    assert cut > 50
