"""The critical path's row readers against the obvious ways: values per row, tuples, a dense array, np.unique."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import neuron_widgets as nw
from neuron_widgets.analysis.critical_path_graph import RowValues
from neuron_widgets.analysis.critical_path_workers import codes_at, column_at, nullable_ints, objects, used_rows
from neuron_widgets.analysis.frame import frame_of


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> nw.Profile:
    path: Path = tmp_path_factory.mktemp("workers") / "sample"
    nw.write_sample(path, events=20_000)
    return nw.load_profile(path, prepare=False)


def test_column_at_gives_each_rows_value(profile: nw.Profile) -> None:
    fr = frame_of(profile)
    rng = np.random.default_rng(1)
    rows = rng.integers(0, len(profile), 3_000)
    for c in ("instance_id", "process_id", "thread_id", "nc_idx"):
        want = profile.values_at(c, rows).to_pylist()
        codes, uniq = column_at(fr, c, rows)
        assert list(objects(codes, uniq)) == want, c
        assert len(set(uniq)) == len(uniq)
    assert any(v is None for v in profile.values_at("nc_idx", rows).to_pylist())  # nulls are exercised
    codes, uniq = column_at(fr, "no_such_column", rows)
    assert (codes == -1).all() and uniq == []


def test_codes_at_equal_codes_for_equal_tuples(profile: nw.Profile) -> None:
    fr = frame_of(profile)
    rows = np.random.default_rng(2).integers(0, len(profile), 3_000)
    cols = ("instance_id", "process_id", "thread_id")
    tuples = list(zip(*(profile.values_at(c, rows).to_pylist() for c in cols), strict=True))
    codes = codes_at(fr, cols, rows)
    first: dict[tuple, int] = {}
    for t, k in zip(tuples, codes.tolist(), strict=True):
        assert first.setdefault(t, k) == k
    assert len(set(codes.tolist())) == len(first)


def test_nullable_ints_masks_nulls_and_where_asked() -> None:
    codes = np.array([0, 1, -1, 0])
    got = nullable_ints(codes, [7, 9], np.array([False, True, False, False]))
    assert str(got.dtype) == "Int64"
    assert got.isna().tolist() == [False, True, True, False]
    assert [int(got[0]), int(got[3])] == [7, 7]


def test_row_values_read_as_a_dense_array() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 300))
        rows = rng.integers(0, n, int(rng.integers(0, 2 * n)))
        vals = rng.integers(-1, 50, rows.size)
        dense = np.full(n, -1, np.int64)
        dense[rows] = vals  # a row set twice keeps its last value
        rv = RowValues(rows, vals, n)
        ask = rng.integers(-1, n, 100)
        assert (rv[ask] == dense[ask]).all()


def test_used_rows_is_the_sorted_union() -> None:
    rng = np.random.default_rng(4)
    n = 1_000
    a, b = rng.integers(-1, n, 500), rng.integers(-1, n, 700)
    rows, dense = used_rows(n, a, b)
    want = np.unique(np.r_[a[a >= 0], b[b >= 0]])
    assert (rows == want).all()
    assert (dense[want] == np.arange(want.size)).all()
