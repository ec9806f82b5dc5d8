"""Times past int64 nanoseconds: each dropped (or its duration zeroed) and counted, never wrapped.

A Profile holds times within +-(2^62 - 1) ns (146 years from the clock's zero), so the difference
of any two fits in int64; every reader checks before it multiplies, adds or casts.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from perfetto_traces import BEGIN, COUNTER, END, INSTANT, Builder

import neuron_widgets as nw

LIMIT = 2**62 - 1


def _load(path: Path) -> nw.Profile:
    return nw.load_profile(path, cache=False, prepare=False)


def _count(p: nw.Profile, words: str) -> int:
    return sum(n for kind, n in p.warnings.counts.items() if words in kind)


def _sane(p: nw.Profile) -> None:
    e = p.events
    assert (e["end_ts"] >= e["start_ts"]).all()
    assert (e["duration_ns"] == e["end_ts"] - e["start_ts"]).all()
    assert e["start_ts"].abs().max() <= LIMIT and e["end_ts"].abs().max() <= LIMIT


def test_legacy_seconds_past_2_63_ns_and_durations_of_1e16_ms(tmp_path: Path) -> None:
    events = [{"id": 1, "name": "ok", "timestamp": 1, "duration": 2, "timestamp_unit": "s"},
              {"id": 2, "name": "far", "timestamp": 10**10, "duration": 2, "timestamp_unit": "s"},
              {"id": 3, "name": "far_negative", "timestamp": -(10**10), "duration": 2, "timestamp_unit": "s"},
              {"id": 4, "name": "long", "timestamp": 5, "duration": 10**16, "timestamp_unit": "ms"},
              {"id": 5, "name": "ends_far", "timestamp": 4 * 10**9, "duration": 10**9, "timestamp_unit": "s"},
              {"id": 6, "name": "min", "timestamp": -(2**63), "duration": 1}]
    (tmp_path / "system_profile.json").write_text(json.dumps({"trace_event": events}))
    p = _load(tmp_path / "system_profile.json")
    _sane(p)
    e = p.events.set_index("name")
    assert sorted(e.index) == ["ends_far", "long", "ok"]
    assert e.loc["ok", "duration_ns"] == 2 * 10**9
    assert e.loc["long", "start_ts"] == 5 * 10**6 and e.loc["long", "duration_ns"] == 0
    assert e.loc["ends_far", "start_ts"] == 4 * 10**18 and e.loc["ends_far", "duration_ns"] == 0
    assert _count(p, "timestamp is past 146 years") == 3
    assert _count(p, "duration ends past 146 years") == 2


def test_runtime_start_at_minus_2_63(tmp_path: Path) -> None:
    def ev(t: str, phase: str, tid: int, ts: int) -> dict:
        return {"event_type": t, "phase": phase, "tracking_id": tid, "nc_idx": 0, "timestamp_ns": ts}

    doc = {"data_version": 2, "events": [ev("a", "start", 1, -(2**63)), ev("a", "stop", 1, 5),
                                         ev("b", "start", 2, 7), ev("b", "stop", 2, 9),
                                         ev("c", "start", 3, 11), ev("c", "stop", 3, 2**63 - 1)]}
    (tmp_path / "rt.json").write_text(json.dumps(doc))
    p = _load(tmp_path / "rt.json")
    _sane(p)
    e = p.events.set_index("name")
    assert sorted(e.index) == ["b", "c"]
    assert e.loc["b", "duration_ns"] == 2
    assert bool(e.loc["c", "incomplete"])  # its stop was dropped: an unended start, marked so
    assert _count(p, "timestamp_ns is past 146 years") == 2
    assert _count(p, "no open 'start'") == 1


def test_chrome_times_past_the_range_with_a_base(tmp_path: Path) -> None:
    events = [{"ph": "X", "name": "ok", "ts": 1, "dur": 2, "pid": 1, "tid": 1},
              {"ph": "X", "name": "far", "ts": 9.1e15, "dur": 2, "pid": 1, "tid": 1},
              {"ph": "X", "name": "far_with_base", "ts": 3e15, "dur": 2, "pid": 1, "tid": 1},
              {"ph": "X", "name": "ends_far", "ts": 1e15, "dur": 2e15, "pid": 1, "tid": 1},
              {"ph": "C", "name": "ctr", "ts": 3e15, "pid": 1, "args": {"v": 1}}]
    (tmp_path / "t.json").write_text(json.dumps({"traceEvents": events, "baseTimeNanoseconds": 2**61}))
    p = _load(tmp_path / "t.json")
    _sane(p)
    e = p.events.set_index("name")
    assert sorted(e.index) == ["ends_far", "ok"]
    assert e.loc["ok", "start_ts"] == 2**61 + 1000 and e.loc["ends_far", "duration_ns"] == 0
    assert _count(p, "events whose ts is past 146 years") == 1 and _count(p, "ts is missing, not a number or out of range") == 1
    assert _count(p, "duration ends past 146 years") == 1 and _count(p, "counter values whose ts is past") == 1


def test_perfetto_timestamps_at_or_past_2_63(tmp_path: Path) -> None:
    b = Builder()
    b.named(10, "t")
    b.named(11, "c", counter=True)
    b.event(1, 100, BEGIN, 10, name="a")
    b.event(1, 200, END, 10)
    b.event(1, 2**63, BEGIN, 10, name="far")
    b.event(1, 2**63 + 5, END, 10)
    b.event(1, 300, BEGIN, 10, name="end_far")
    b.event(1, 2**64 - 1, END, 10)
    b.event(1, 2**62 + 5, INSTANT, 10, name="past_limit")
    b.event(1, 150, COUNTER, 11, value=3.0)
    b.event(1, 2**63 + 1, COUNTER, 11, value=4.0)
    p = _load(b.write(tmp_path / "t.pftrace"))
    _sane(p)
    e = p.events.set_index("name")
    assert sorted(e.index) == ["a", "end_far"]
    assert bool(e.loc["end_far", "incomplete"])
    assert _count(p, "time, in int64 nanoseconds, is past 146 years") == 5
    assert p.counter(p.counters.names()[0])["value"].tolist() == [3.0]


def test_perfetto_scoped_clock_running_past_2_63(tmp_path: Path) -> None:
    b = Builder()
    b.named(10, "t")
    b.scoped_clock(1, 10, 1000, 0)
    b.event(1, 5, BEGIN, name="a")
    b.event(1, 5, END)
    b.event(1, 2**63, BEGIN, name="x")  # a delta that takes the running clock past 2^63
    b.event(1, 5, END)
    p = _load(b.write(tmp_path / "t.pftrace"))
    _sane(p)
    assert p.events[["name", "start_ts", "end_ts"]].values.tolist() == [["a", 1005, 1010]]
    assert _count(p, "past 146 years") == 2


def test_perfetto_snapshot_values_past_int64(tmp_path: Path) -> None:
    b = Builder()
    b.named(10, "t")
    b.scoped_clock(1, 10, 2**64 - 10, 0)  # BOOTTIME near 2^64: every event on the scoped clock lands past the range
    b.event(1, 5, BEGIN, name="a")
    b.event(1, 5, END)
    b.event(2, 50, BEGIN, 10, name="plain")
    b.event(2, 60, END, 10)
    p = _load(b.write(tmp_path / "t.pftrace"))
    _sane(p)
    assert list(p.events["name"]) == ["plain"] and _count(p, "past 146 years") == 2


@pytest.mark.parametrize("seed", range(40))
def test_scoped_clock_arithmetic_against_python_integers(seed: int) -> None:
    from neuron_widgets.readers.perfetto.clocks import FAR, _scoped

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 50))
    big = bool(rng.integers(0, 2))
    hi = 2**64 - 1 if big else 2**40
    raw = np.array([int(rng.integers(0, 2**62)) * int(rng.integers(0, 4)) % hi for _ in range(n)], np.uint64)
    incremental = bool(rng.integers(0, 2))
    last = int(rng.integers(0, 2**40))
    value = int(rng.integers(0, 2**40)) if not big else int(rng.integers(0, 2**63)) * 2
    unit = int(rng.choice([1, 1, 1000]))
    base = int(rng.integers(-(2**40), 2**40)) if not big else int(rng.integers(0, 2**63)) * 2
    got, end = _scoped(raw, incremental, last, value, unit, base)
    # The slow, obviously right reference: Python integers, one at a time.
    run, want = last, []
    for v in raw.tolist():
        run = run + int(v) if incremental else int(v)
        t = base + (run - value) * unit
        want.append(t if -LIMIT <= t <= LIMIT else FAR)
    assert got.tolist() == want
    assert end == (run if incremental else last)


def test_legacy_series_timestamps_past_the_range(tmp_path: Path) -> None:
    doc = {"trace_event": [{"name": "a", "timestamp": 1, "duration": 2}],
           "mem_usage": [{"timestamp": 1e300, "usage": 5}, {"timestamp": 7, "usage": 6}, {"timestamp": 2**63 - 1, "usage": 1}]}
    (tmp_path / "system_profile.json").write_text(json.dumps(doc))
    p = _load(tmp_path / "system_profile.json")
    assert p.counter("host_memory")["timestamp"].tolist() == [7]
    assert _count(p, "mem_usage entries without a usable timestamp, skipped") == 2
