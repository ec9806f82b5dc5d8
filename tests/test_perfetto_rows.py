"""The Perfetto reader's row kernels (readers/perfetto/rows.py) against slow, obviously right references."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuron_widgets.model.order import time_order
from neuron_widgets.readers.perfetto import rows


@pytest.mark.parametrize("seed", range(30))
def test_first_seen_codes_as_pandas_factorize(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 5000))
    distinct = int(rng.integers(1, 3000))  # past the first tables' room: they grow while coding
    pool = rng.integers(0, 2**64, distinct, dtype=np.uint64)
    if seed % 3 == 0:
        pool[: distinct // 2] = rng.integers(0, 50, distinct // 2)  # small keys, colliding hashes' neighbours
    keys = pool[rng.integers(0, distinct, n)]
    if seed % 2:
        keys = np.repeat(keys, rng.integers(1, 4, n))  # runs of one key
    codes, uniques = rows.first_seen(keys)
    want_codes, want_uniques = pd.factorize(keys)
    assert codes.dtype == np.int32 and uniques.dtype == np.uint64
    assert codes.tolist() == want_codes.tolist()
    assert uniques.tolist() == want_uniques.tolist()
    signed = keys.view(np.int64)  # int64 keys give their bit patterns back
    codes, uniques = rows.first_seen(signed)
    assert codes.tolist() == want_codes.tolist() and uniques.view(np.int64).tolist() == pd.factorize(signed)[1].tolist()


def _paired_reference(codes: np.ndarray, ts: np.ndarray, typ: np.ndarray) -> tuple[list[tuple[int, int]], int]:
    """Events by (track, time, file order) in one lexsort; an end closes the innermost open slice of its
    track; what is open when a track ends is unended, innermost first."""
    order = np.lexsort((ts, codes))
    out, unmatched, stack, current = [], 0, [], None
    for i in [*order.tolist(), None]:
        if i is None or codes[i] != current:
            out += [(b, -1) for b in reversed(stack)]
            stack = []
            if i is None:
                break
            current = codes[i]
        if typ[i] == 1:
            stack.append(i)
        elif typ[i] == 2:
            if stack:
                out.append((stack.pop(), i))
            else:
                unmatched += 1
        elif typ[i] == 3:
            out.append((i, i))
    return out, unmatched


@pytest.mark.parametrize("seed", range(40))
def test_paired_as_a_lexsort_and_a_stack(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(0, 4000)), int(rng.integers(1, 60))
    codes = rng.integers(0, k, n).astype(np.int32)
    ts = np.sort(rng.integers(0, 500, n)).astype(np.int64)  # many ties
    back = rng.random(n) < rng.choice([0.0, 0.01, 0.3])
    ts[back] = rng.integers(0, 500, int(back.sum()))
    if seed % 5 == 0:
        ts = ts[::-1].copy()  # every track backwards: past the insertion budget, the merge sort
    typ = rng.choice(np.array([0, 1, 2, 3], np.int8), n, p=[0.1, 0.4, 0.35, 0.15])
    want, want_unmatched = _paired_reference(codes, ts, typ)
    for index in (np.int32, np.int64):
        begin, end = np.empty(n, index), np.empty(n, index)
        got, unmatched = rows.paired(codes, ts, typ, k, begin, end)
        assert list(zip(begin[:got].tolist(), end[:got].tolist(), strict=True)) == want
        assert unmatched == want_unmatched


def _reference_order(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """By start, longer first, then as given: one sort on the three keys."""
    return np.lexsort((np.arange(start.size), -stop, start))


@pytest.mark.parametrize("seed", range(40))
def test_file_order_is_the_time_order_when_it_says_so(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300))
    n_events = 2 * n + int(rng.integers(0, 5))
    begin = rng.choice(n_events, n, replace=False).astype(np.int32)
    start = rng.integers(0, 20, n).astype(np.int64)
    stop = start + rng.integers(0, 5, n)
    if seed % 2:  # slices written as they start: begins in file order follow their starts (ties as they fall)
        by = _reference_order(start, stop)
        begin = np.sort(begin)[np.argsort(by)]
    order, ordered = rows.file_order(begin, start, stop, n_events)
    assert order.tolist() == np.argsort(begin, kind="stable").tolist()  # the slices by their begin's place
    want = time_order(start, stop)
    want = np.arange(n) if want is None else want
    assert want.tolist() == _reference_order(start, stop).tolist()
    if ordered:
        assert order.tolist() == want.tolist()
    if seed % 2:
        assert ordered


@pytest.mark.parametrize("seed", range(20))
def test_slice_times_and_rows_as_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_events = int(rng.integers(1, 400))
    n = int(rng.integers(0, n_events + 1))
    begin = rng.choice(n_events, n, replace=False).astype(np.int32)
    kind = rng.integers(0, 3, n)  # closed, instant, unended
    end = np.where(kind == 0, rng.integers(0, n_events, n), np.where(kind == 1, begin, -1)).astype(np.int32)
    ts = rng.integers(-50, 50, n_events).astype(np.int64)
    last = int(rng.integers(0, 100))
    start, stop, n_open, n_neg = rows.slice_times(begin, end, ts, last)
    want_stop = np.where(end < 0, last, ts[np.where(end < 0, begin, end)])
    assert start.tolist() == ts[begin].tolist()
    assert n_open == int((end < 0).sum()) and n_neg == int((want_stop < ts[begin]).sum())
    assert stop.tolist() == np.maximum(want_stop, ts[begin]).tolist()

    order = rng.permutation(n)
    name = rng.integers(-1, 5, n_events).astype(np.int32)
    cat = rng.integers(-1, 3, n_events).astype(np.int32)
    track = rng.integers(0, 4, n_events).astype(np.int32)
    gen = rng.integers(0, 3, n_events).astype(np.int32)
    got = rows.slice_rows(order, begin, end, start, stop, name, cat, track, gen, 99, n_events)
    b = begin[order]
    want = [b, np.where((end[order] == b) | (end[order] < 0), n_events, end[order]), start[order], stop[order],
            stop[order] - start[order], end[order] < 0, np.where(name[b] < 0, 99, name[b]), cat[b], track[b], gen[b]]
    for g, w in zip(got, want, strict=True):
        assert g.tolist() == w.tolist()


@pytest.mark.parametrize("seed", range(20))
def test_flow_rows_as_a_row_per_event_map(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_events = int(rng.integers(1, 300))
    n = int(rng.integers(0, n_events // 2 + 1))
    events = rng.permutation(n_events)
    begin = events[:n].astype(np.int32)
    end_blob = np.where(rng.random(n) < 0.3, n_events, events[n: 2 * n] if 2 * n <= n_events else n_events)
    end_blob = end_blob.astype(np.int32)
    flow_event = rng.integers(-1, n_events, int(rng.integers(0, 200)))
    row_of = {}
    for r in range(n):
        row_of[int(begin[r])] = r
        if end_blob[r] != n_events:
            row_of[int(end_blob[r])] = r
    want = [row_of.get(int(f), -1) if f >= 0 else -1 for f in flow_event]
    assert rows.flow_rows(flow_event, begin, end_blob, n_events).tolist() == want


def test_drawn_types_and_last_times() -> None:
    typ = np.array([1, 2, 3, 4, 0, 9, -1, 1, 4], np.int8)
    gone = np.array([0, 0, 0, 0, 0, 0, 0, 1, 0], bool)
    ts = np.array([5, 9, 7, 30, 12, 11, 3, 50, 40], np.int64)
    out, unknown = rows.drawn_types(typ, gone, True)
    assert out.tolist() == [1, 2, 3, 0, 0, 0, 0, 0, 0] and unknown == 3
    out, _ = rows.drawn_types(typ, np.zeros(0, bool), False)
    assert out.tolist() == [1, 2, 3, 0, 0, 0, 0, 1, 0]
    # Counter samples (4) do not extend the trace; dropped times are not times.
    assert rows.last_times(ts, typ, gone, True) == (12, True, 40, True)
    assert rows.last_times(ts[3:4], typ[3:4], gone[3:4], True) == (np.iinfo(np.int64).min, False, 30, True)
    assert rows.last_times(ts[:0], typ[:0], gone[:0], False)[1::2] == (False, False)


def test_source_keys_and_per_row() -> None:
    name = np.array([0, 2, 1], np.int32)
    cat = np.array([-1, 0, 1], np.int32)
    track = np.array([1, 0, 2], np.int32)
    assert rows.source_keys(name, cat, track, 3, 0).tolist() == [0, 7, 5]
    assert rows.source_keys(name, cat, track, 3, 4).tolist() == [1, 28, 22]
    assert rows.per_row(np.array([10, 20, 30], np.int64), track).tolist() == [20, 10, 30]
