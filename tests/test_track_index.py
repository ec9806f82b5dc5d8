"""A grouping's index built in one pass (lanes in time order, lanes' order by counts) against the sorted way."""

from __future__ import annotations

import numpy as np
import pytest

from neuron_widgets.model import lanes as lanes_mod
from neuron_widgets.model import viewport
from neuron_widgets.model.lanes import assign_lanes, lanes_in_time_order, track_order
from neuron_widgets.model.order import time_order
from neuron_widgets.model.track_index import build_track_index
from neuron_widgets.model.track_lod import build_lod


def random_events(seed: int, n: int, combos: int, tracks: int) -> tuple[np.ndarray, ...]:
    """Events in time order (start, longest first) with a combo each, and a combo -> track map."""
    rng = np.random.default_rng(seed)
    start = rng.integers(0, 50_000, n).astype(np.int64)
    # Nested, overlapping, instants and ties on start.
    end = start + np.where(rng.random(n) < 0.1, 0, rng.integers(1, 3_000, n))
    order = time_order(start, end)
    if order is not None:
        start, end = start[order], end[order]
    combo = rng.integers(0, combos, n).astype(np.int32)
    combo_track = rng.integers(0, tracks, combos).astype(np.int32)
    return start, end, combo, combo_track


def reference_lanes(track: np.ndarray, start: np.ndarray, end: np.ndarray, n_tracks: int) -> tuple[np.ndarray, list[int]]:
    """First free lane at each event's start, track by track in time order, in plain Python."""
    lanes = np.zeros(track.size, np.int64)
    per_track = []
    for t in range(n_tracks):
        free: list[int] = []
        for i in np.flatnonzero(track == t):
            s, e = int(start[i]), max(int(end[i]), int(start[i]) + 1)
            k = next((j for j, f in enumerate(free) if f <= s), len(free))
            if k == len(free):
                free.append(e)
            else:
                free[k] = e
            lanes[i] = k
        per_track.append(len(free))
    return lanes, per_track


@pytest.fixture(params=["one thread", "two threads"])
def threads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of the lanes' pass: one thread, or two each over half the tracks (as on large profiles)."""
    if request.param == "two threads":
        monkeypatch.setattr(lanes_mod, "SPLIT_EVENTS", 10)
        monkeypatch.setattr(lanes_mod.os, "cpu_count", lambda: 2)
    return str(request.param)


@pytest.mark.parametrize("seed", range(6))
def test_lanes_in_time_order_equal_the_reference(seed: int, threads: str) -> None:
    start, end, combo, combo_track = random_events(seed, 4000, 17, 6)
    lanes, per_track, lane_events = lanes_in_time_order(combo, combo_track, start, end, 6)
    track = combo_track[combo]
    want, want_per_track = reference_lanes(track, start, end, 6)
    assert lanes.tolist() == want.tolist()
    assert per_track.tolist() == want_per_track
    segs = np.concatenate([[0], np.cumsum(want_per_track)])
    assert lane_events.tolist() == np.bincount(segs[track] + want, minlength=int(segs[-1])).tolist()
    # ... and the sorted way agrees.
    sorted_lanes, sorted_per_track = assign_lanes(track, start, end, track_order(track, 6), 6)
    assert sorted_lanes.tolist() == lanes.tolist() and sorted_per_track.tolist() == per_track.tolist()


def test_many_lanes_grow_the_state(threads: str) -> None:
    n = 300  # all nested: 300 lanes on one track, past the kernel's first capacity
    start = np.arange(n, dtype=np.int64)
    end = 10_000 - start
    combo = np.zeros(n, np.int32)
    lanes, per_track, lane_events = lanes_in_time_order(combo, np.zeros(1, np.int32), start, end, 1)
    assert lanes.tolist() == list(range(n)) and per_track.tolist() == [n] and lane_events.tolist() == [1] * n


def test_many_tracks_take_the_sorted_way(monkeypatch: pytest.MonkeyPatch, threads: str) -> None:
    start, end, combo, combo_track = random_events(7, 3000, 40, 30)
    fast = lanes_in_time_order(combo, combo_track, start, end, 30)
    monkeypatch.setattr(lanes_mod, "ONE_PASS_TRACKS", 4)
    slow = lanes_in_time_order(combo, combo_track, start, end, 30)
    for a, b in zip(fast, slow, strict=True):
        assert a.tolist() == b.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_lod_equals_the_sorted_build(seed: int, threads: str) -> None:
    import pandas as pd

    start, end, combo, combo_track = random_events(seed, 20_000, 9, 5)
    tracks = pd.DataFrame({"label": [f"t{i}" for i in range(5)]})
    idx = build_track_index("default", tracks, combo_track, combo, start, end)
    assert idx.tracks["events"].tolist() == np.bincount(combo_track[combo], minlength=5).tolist()
    got = build_lod(idx, start, end)
    want = viewport.build(idx.track, idx.lane, idx.tracks["lanes"].to_numpy(), start, end)
    for name in ("lane_order", "seg_off", "track_segs", "lvl_key", "lvl_lo", "lvl_best", "lvl_max", "lvl_fs",
                 "lvl_bs", "lvl_be", "lvl_off"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert (got.origin, got.shift0) == (want.origin, want.shift0)
    # The by-track order, made on first use, is the tracks' events in time order.
    for t in range(5):
        rows = idx.order[idx.offsets[t]:idx.offsets[t + 1]]
        assert (idx.track[rows] == t).all() and (np.diff(rows) > 0).all()


def test_two_groups_balance_the_weights() -> None:
    groups = lanes_mod.two_groups(np.array([5, 1, 4, 2, 3, 3]))
    assert len(groups) == 2 and not (groups[0] & groups[1]).any() and (groups[0] | groups[1]).all()
    w = np.array([5, 1, 4, 2, 3, 3])
    assert abs(int(w[groups[0]].sum()) - int(w[groups[1]].sum())) <= 1


def test_lanes_past_int16() -> None:
    n = 33_000  # one track nested that deep: lanes no longer fit int16
    start = np.arange(n, dtype=np.int64)
    lanes, per_track, _ = lanes_in_time_order(np.zeros(n, np.int32), np.zeros(1, np.int32), start, 10 * n - start, 1)
    assert lanes.dtype == np.int32 and int(lanes[-1]) == n - 1 and per_track.tolist() == [n]


def test_lod_whose_finest_level_is_halved_equals_the_sorted_build(threads: str) -> None:
    """Lanes whose buckets just overflow one entry per EVENTS_PER_FINEST_BUCKET events (every lane spans one bucket
    more than the density gives): the finest level is halved before it is kept, as viewport.build does."""
    import pandas as pd

    tracks_n, per_lane, span = 101, 64, 1 << 20
    one = np.linspace(0, span, per_lane).astype(np.int64)  # instants, the last at the span's very end
    start = np.tile(one, tracks_n)
    combo = np.repeat(np.arange(tracks_n, dtype=np.int32), per_lane)
    order = time_order(start, start)
    assert order is not None
    start, combo = start[order], combo[order]
    end = start.copy()
    tracks = pd.DataFrame({"label": [f"t{i}" for i in range(tracks_n)]})
    idx = build_track_index("default", tracks, np.arange(tracks_n, dtype=np.int32), combo, start, end)
    got = build_lod(idx, start, end)
    want = viewport.build(idx.track, idx.lane, idx.tracks["lanes"].to_numpy(), start, end)
    assert want.shift0 > int(span * 8 * tracks_n // start.size - 1).bit_length()  # the case this test is for
    for name in ("lane_order", "seg_off", "lvl_key", "lvl_lo", "lvl_best", "lvl_max", "lvl_fs", "lvl_bs", "lvl_be",
                 "lvl_off"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert (got.origin, got.shift0) == (want.origin, want.shift0)


def test_lod_of_nothing() -> None:
    import pandas as pd

    empty = np.zeros(0, np.int64)
    idx = build_track_index("default", pd.DataFrame({"label": []}), np.zeros(0, np.int32), np.zeros(0, np.int32),
                            empty, empty)
    got = build_lod(idx, empty, empty)
    want = viewport.build(idx.track, idx.lane, idx.tracks["lanes"].to_numpy(), empty, empty)
    assert got.levels == want.levels and got.lvl_key.size == want.lvl_key.size == 0
