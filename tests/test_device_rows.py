"""A device trace's rows in time order, every column gathered in one pass (model/device/rows.py), against a sort
written out in Python; and the event table DeviceEvents makes from them."""

from __future__ import annotations

import numpy as np
import pytest
from random_device import random_device_trace

from neuron_widgets.model.device.events import DeviceEvents, _parts
from neuron_widgets.model.device.rows import rows_in_time_order


def reference(sizes: list[int], start: np.ndarray, end: np.ndarray) -> list[int]:
    """By start, the longest first among equal starts, then the tables' order and each table's own."""
    return sorted(range(len(start)), key=lambda i: (int(start[i]), -int(end[i]), i))


def random_parts(rng: np.random.Generator) -> tuple[list[int], np.ndarray, np.ndarray]:
    # Now and then tables of hundreds of rows on a few starts: ties past the kernel's insertion sort.
    most = int(rng.choice([40, 40, 400]))
    sizes = [int(rng.integers(0, most)) for _ in range(int(rng.integers(1, 5)))]
    starts, ends = [], []
    for n in sizes:
        s = rng.integers(0, int(rng.choice([3, 20, 1000])), n)  # few distinct starts: many ties
        e = s + rng.choice([0, 1, 5, 50], n)
        if rng.random() < 0.7:  # most tables come in time order
            o = np.lexsort((-e, s))
            s, e = s[o], e[o]
        starts.append(s)
        ends.append(e)
    return sizes, np.concatenate(starts).astype(np.int64), np.concatenate(ends).astype(np.int64)


@pytest.mark.parametrize("seed", range(300))
def test_rows_in_time_order_against_a_plain_sort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes, start, end = random_parts(rng)
    name = rng.integers(0, 7, start.size).astype(np.int32)
    label = rng.integers(0, 3, start.size).astype(np.int32)
    if rng.random() < 0.3:  # columns straight from a frame come read-only
        for a in (start, end, name):
            a.flags.writeable = False
    got = rows_in_time_order(sizes, start, end, name, label)
    want = np.array(reference(sizes, start, end), dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    table = np.searchsorted(bounds, want, side="right") - 1
    np.testing.assert_array_equal(got.order, want)
    np.testing.assert_array_equal(got.start, start[want])
    np.testing.assert_array_equal(got.end, end[want])
    np.testing.assert_array_equal(got.name, name[want])
    np.testing.assert_array_equal(got.label, label[want])
    np.testing.assert_array_equal(got.table, table)
    np.testing.assert_array_equal(got.source_row, want - bounds[table])
    assert got.order.dtype == np.int64 and got.name.dtype == np.int32 and got.table.dtype == np.int32


@pytest.mark.parametrize("seed", range(40))
def test_device_events_rows_against_a_plain_sort(seed: int) -> None:
    trace = random_device_trace(seed)
    events = DeviceEvents(trace)
    parts = _parts(trace)
    start = np.concatenate([p.start for p in parts]) if parts else np.zeros(0, np.int64)
    end = np.concatenate([p.end for p in parts]) if parts else np.zeros(0, np.int64)
    want = reference([p.start.size for p in parts], start, end)
    assert events.array("id").tolist() == want
    assert events.array("start_ts").tolist() == start[want].tolist()
    assert events.array("end_ts").tolist() == end[want].tolist()
    names = [n for p in parts for n in (p.names[c] for c in p.name)]
    labels = [n for p in parts for n in (p.labels[c] for c in p.label)]
    tables = [p.table for p in parts for _ in range(p.start.size)]
    rows = [r for p in parts for r in range(p.start.size)]
    assert events.column("name").to_pylist() == [names[i] for i in want]
    assert events.column("track_label").to_pylist() == [labels[i] for i in want]
    assert events.column("table").to_pylist() == [tables[i] for i in want]
    assert events.array("source_row").tolist() == [rows[i] for i in want]
