"""The level-of-detail viewport query against a brute-force reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import trace

import neuron_widgets as nw


def reference(p: nw.Profile, grouping: str, t0: int, t1: int) -> dict[tuple[int, int], set[int]]:
    """Rows overlapping [t0, t1), per (track, lane)."""
    idx = p.track_index(grouping)
    start, end = p.array("start_ts"), p.array("end_ts")
    hit = np.flatnonzero((start < t1) & ((end > t0) | (start >= t0)))
    out: dict[tuple[int, int], set[int]] = {}
    for r in hit:
        out.setdefault((int(idx.track[r]), int(idx.lane[r])), set()).add(int(r))
    return out


def check(p: nw.Profile, grouping: str, t0: int, t1: int, width: int) -> dict:
    v = p.viewport(grouping, t0, t1, width)
    ref = reference(p, grouping, t0, t1)
    px = max((t1 - t0) // width, 1)
    start, end = p.array("start_ts"), p.array("end_ts")
    assert len(set(v["row"].tolist())) == len(v["row"])  # nothing drawn twice
    got: dict[tuple[int, int], list[int]] = {}
    for i in range(len(v["row"])):
        got.setdefault((int(v["track"][i]), int(v["lane"][i])), []).append(i)
    assert set(got) == set(ref)
    for key, rows in ref.items():
        items = got[key]
        # Every overlapping event is accounted for: exactly, or inside one merged run.
        assert sum(int(v["count"][i]) for i in items) == len(rows)
        # Every event at least a pixel wide is drawn exactly.
        wide = {r for r in rows if end[r] - start[r] >= px}
        exact = {int(v["row"][i]) for i in items if v["count"][i] == 1}
        assert wide <= exact
        # A merged run stands for one of its (narrow) events and spans it.
        for i in items:
            assert int(v["row"][i]) in rows
            if v["count"][i] > 1:
                assert end[v["row"][i]] - start[v["row"][i]] < px
                assert v["start_ts"][i] <= start[v["row"][i]] and v["end_ts"][i] >= end[v["row"][i]]
        # Runs of one lane are disjoint, in time order.
        order = sorted(items, key=lambda i: v["start_ts"][i])
        assert all(v["end_ts"][a] <= v["start_ts"][b] or (v["count"][a] == 1 and end[v["row"][a]] - start[v["row"][a]] == 0)
                   for a, b in itertools.pairwise(order))
        assert len(items) <= 2 * width + 2  # at most about two items per pixel per lane
    assert (v["offset_start"] == (v["start_ts"] - t0)).all()
    return v


@pytest.mark.parametrize("grouping", ["default", "thread", "instance"])
def test_windows_on_the_sample(sample: nw.Profile, grouping: str) -> None:
    rng = np.random.default_rng(0)
    s0, s1 = sample.start_ts, sample.end_ts + 1
    check(sample, grouping, s0, s1, 1920)  # whole profile
    check(sample, grouping, s0, s1, 37)  # very few pixels: heavy merging
    for _ in range(25):
        width = int(rng.integers(50, 2000))
        span = int(10 ** rng.uniform(3, np.log10(s1 - s0)))
        t0 = int(rng.integers(s0 - span // 2, s1))
        check(sample, grouping, t0, t0 + span, width)


def test_nanosecond_zoom_is_exact(sample: nw.Profile) -> None:
    row = int(np.flatnonzero(sample.core.column("name").to_numpy(zero_copy_only=False) == "nc_exec_running")[0])
    t = int(sample.array("start_ts")[row])
    v = check(sample, "default", t - 3, t + 7, 1000)
    i = list(v["row"]).index(row)
    assert v["offset_start"][i] == 3.0 and v["count"][i] == 1


def test_visible_tracks_only(sample: nw.Profile) -> None:
    v = sample.viewport("default", sample.start_ts, sample.end_ts + 1, 800, tracks=[2, 5])
    assert set(v["track"].tolist()) == {2, 5}
    with pytest.raises(IndexError):
        sample.viewport("default", sample.start_ts, sample.end_ts, 800, tracks=[10_000])
    with pytest.raises(ValueError, match="must end after it starts"):
        sample.viewport("default", 10, 10, 800)


def test_reply_is_bounded_whatever_the_window_holds(sample: nw.Profile) -> None:
    width = 300
    v = sample.viewport("instance", sample.start_ts, sample.end_ts + 1, width)
    lanes = sample.tracks("instance")["lanes"].sum()
    assert len(v["row"]) <= (2 * width + 2) * lanes
    assert v["count"].sum() == len(sample)


@pytest.mark.parametrize("rel", ["hta/nccl_data.json.gz", "catapult/flow.json", "catapult/async_begin_end.json"])
def test_real_traces(rel: str) -> None:
    p = nw.load_profile(trace(rel))
    rng = np.random.default_rng(1)
    for _ in range(10):
        span = int(10 ** rng.uniform(2, np.log10(p.end_ts - p.start_ts + 2)))
        t0 = int(rng.integers(p.start_ts - span // 3, p.end_ts + 1))
        check(p, "default", t0, t0 + span, int(rng.integers(100, 1920)))
