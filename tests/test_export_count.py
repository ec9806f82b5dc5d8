"""Issue 35 item 13: a Kineto export said "Exported 75,549 events" for 75,550: the whole-profile range
was half-open at the last end, so an instant at the very end (Kineto's "Record Window End") was
left out. An export of the whole profile carries every event, on real traces and on random ones
whose last events are instants."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import trace, traces_listed

import neuron_widgets as nw
from neuron_widgets.export import export_profile


def exported(p: nw.Profile, out: Path) -> int:
    got = export_profile(out, p, time_range="all", max_mb=25)
    (timeline,) = got["timelines"]
    return int(timeline["events"])


@pytest.mark.parametrize("rel", traces_listed("*/*.json*"))
def test_every_event_of_a_real_trace_is_exported(rel: str, tmp_path: Path) -> None:
    p = nw.load_profile(trace(rel))
    assert exported(p, tmp_path / "out.html") == len(p)


def random_chrome(seed: int) -> dict:
    """Complete events, instants and zero-length slices on a few threads; the latest timestamp is
    carried by an instant, a zero-length slice or a complete event, at random."""
    rng = random.Random(seed)
    events: list[dict] = []
    for _ in range(rng.randrange(1, 60)):
        ts = rng.randrange(0, 10_000)
        tid = rng.randrange(1, 4)
        kind = rng.random()
        if kind < 0.6:
            events.append({"ph": "X", "name": f"op{rng.randrange(5)}", "pid": 1, "tid": tid, "ts": ts,
                           "dur": rng.randrange(0, 300)})
        else:
            events.append({"ph": "i", "s": "t", "name": "mark", "pid": 1, "tid": tid, "ts": ts})
    last = max(e["ts"] + e.get("dur", 0) for e in events)
    end = rng.choice([{"ph": "i", "s": "t", "name": "Record Window End", "pid": 1, "tid": 1, "ts": last + rng.randrange(0, 5)},
                      {"ph": "X", "name": "zero", "pid": 1, "tid": 2, "ts": last, "dur": 0},
                      {"ph": "X", "name": "tail", "pid": 1, "tid": 3, "ts": last, "dur": 7}])
    events.append(end)
    return {"traceEvents": events}


@pytest.mark.parametrize("seed", range(25))
def test_every_event_of_a_random_trace_is_exported(seed: int, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    doc = random_chrome(seed)
    path.write_text(json.dumps(doc))
    p = nw.load_profile(path)
    assert len(p) == len(doc["traceEvents"])  # the reference: every event written is one in the profile
    assert exported(p, tmp_path / "out.html") == len(p)
