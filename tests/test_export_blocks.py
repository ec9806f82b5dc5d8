"""The export's block merge (selection.blocks, one numba pass) and priority order against plain-Python references, on random
events: starts in order (the profile's) and out of order (the sorting path)."""

from __future__ import annotations

import numpy as np
import pytest

from neuron_widgets.export.selection import blocks, priority


def reference(rows: np.ndarray, start: np.ndarray, end: np.ndarray, keys: list[np.ndarray], flags: np.ndarray,
              a: int, bucket_ns: int, n_buckets: int) -> list[tuple[int, ...]]:
    """Per (key tuple, bucket), members in row order: first member's start, the last end capped at the bucket's end
    (never before the start), count, summed duration, the first longest member, OR of flags; sorted by start, longer
    first, then key and bucket."""
    groups: dict[tuple[tuple[int, ...], int], list[int]] = {}
    for r in rows.tolist():
        b = min(max((int(start[r]) - a) // bucket_ns, 0), n_buckets - 1)
        groups.setdefault((tuple(int(k[r]) for k in keys), b), []).append(r)
    out = []
    for (key, b), members in groups.items():
        s = int(start[members[0]])
        e = max(min(max(int(end[m]) for m in members), a + (b + 1) * bucket_ns), s)
        durs = [int(end[m] - start[m]) for m in members]
        rep = members[durs.index(max(durs))]
        f = 0
        for m in members:
            f |= int(flags[m])
        out.append((s, e, len(members), sum(durs), rep, f, key, b))
    out.sort(key=lambda x: (x[0], -(x[1] - x[0]), x[6], x[7]))
    return [x[:6] for x in out]


def got(rows: np.ndarray, *args: object) -> list[tuple[int, ...]]:
    bl = blocks(rows, *args)  # type: ignore[arg-type]
    return [tuple(int(x) for x in t) for t in zip(bl.start, bl.end, bl.count, bl.total, bl.rep, bl.flags, strict=True)]


@pytest.mark.parametrize("seed", range(40))
def test_blocks_match_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    start = np.cumsum(rng.integers(0, 50, n)).astype(np.int64) + int(rng.integers(0, 1000))
    if seed % 5 == 4:  # out of start order: the sorting path
        rng.shuffle(start)
    end = start + rng.choice([0, 1, 5, 40, 900, 20000], n)
    keys = [rng.integers(0, int(rng.integers(1, 9)), n) for _ in range(int(rng.integers(1, 4)))]
    if seed % 7 == 3:  # a key space far larger than the rows: keys are numbered first
        keys.append(rng.integers(0, 1 << 40, n))
    flags = rng.choice(np.array([0, 0, 0, 1, 2, 4], np.uint8), n)
    rows = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)).astype(np.int32 if seed % 2 else np.int64)
    a = int(start.min()) - int(rng.integers(-200, 200))
    bucket_ns = int(rng.integers(1, 500))
    n_buckets = int(rng.integers(1, 400))
    args = (start, end, keys, flags, a, bucket_ns, n_buckets)
    assert got(rows, *args) == reference(rows, *args)


def test_no_rows_no_blocks() -> None:
    z = np.zeros(0, np.int64)
    assert len(blocks(z, z, z, [z], np.zeros(0, np.uint8), 0, 10, 5)) == 0


def priority_reference(rows: np.ndarray, start: np.ndarray, end: np.ndarray, must: np.ndarray) -> list[int]:
    """The rows in `must` in time order, then the rest longest first, ties in time order."""
    wanted = set(must.tolist())
    first = [r for r in rows.tolist() if r in wanted]
    rest = sorted((r for r in rows.tolist() if r not in wanted), key=lambda r: (-(int(end[r]) - int(start[r])), r))
    return first + rest


@pytest.mark.parametrize("seed", range(30))
def test_priority_matches_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 2000))
    start = np.sort(rng.integers(0, 10_000, n)).astype(np.int64)
    # Many equal lengths (ties), and now and then lengths too far apart for the packed key (the stable argsort).
    end = start + rng.choice([0, 3, 3, 50, 700, 2**61 if seed % 6 == 5 else 9], n)
    rows = np.sort(rng.choice(n, int(rng.integers(0, n + 1)), replace=False)).astype(np.int32 if seed % 2 else np.int64)
    must = rng.choice(n, int(rng.integers(0, 20)), replace=True) if n else np.zeros(0, np.int64)
    assert priority(rows, start, end, must).tolist() == priority_reference(rows, start, end, must)
