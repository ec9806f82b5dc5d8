"""Busy time per thread and self time per name against slow references, on random nested Chrome traces."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import neuron_widgets as nw
from neuron_widgets.analysis.threads import event_breakdown, longest_events, thread_breakdown


def random_trace(seed: int, path: Path) -> list[dict]:
    """Well-nested X slices on a few threads (children inside parents), some zero-length, some instants."""
    rng = np.random.default_rng(seed)
    events: list[dict] = []

    def nest(pid: int, tid: int, start: int, end: int, depth: int) -> None:
        t = start
        while t < end and depth < 4:
            s = t + int(rng.integers(0, 30))
            e = min(end, s + int(rng.integers(0, 200)))
            if s >= end:
                break
            events.append({"ph": "X", "name": f"f{int(rng.integers(0, 6))}", "pid": pid, "tid": tid, "ts": s, "dur": e - s})
            if e - s > 4 and rng.random() < .6:
                nest(pid, tid, s, e, depth + 1)
            t = e
    for pid in range(1, int(rng.integers(2, 4))):
        for tid in range(int(rng.integers(1, 4))):
            nest(pid, tid, 0, int(rng.integers(100, 2000)), 0)
    events.append({"ph": "i", "name": "mark", "pid": 1, "tid": 0, "ts": 5, "s": "t"})
    path.write_text(json.dumps({"traceEvents": events}))
    return events


@pytest.mark.parametrize("seed", range(30))
def test_threads_and_self_time_match_the_reference(seed: int, tmp_path: Path) -> None:
    events = random_trace(seed, tmp_path / "t.json")
    p = nw.load_profile(tmp_path / "t.json", cache=False)
    slices = [e for e in events if e["ph"] == "X"]
    # Busy: time points covered by any slice of the thread (microseconds -> ns).
    busy: dict = defaultdict(set)
    for e in slices:
        busy[(e["pid"], e["tid"])].update(range(e["ts"], e["ts"] + e["dur"]))
    got = thread_breakdown(p)
    have = {(int(r["process_id"]), int(r["thread_id"])): r["busy_time_ns"] for r in got.to_dict("records")}
    for key, points in busy.items():
        assert have[key] == 1000 * len(points), key
    # Self time: a slice's duration less its direct children's (the slices it encloses with none between).
    own: dict = defaultdict(int)
    total: dict = defaultdict(int)
    # Two slices of the same span: the first in the file is the parent.
    for k, e in enumerate(slices):
        e["order"] = (e["ts"], -e["dur"], k)

    def within(c: dict, m: dict) -> bool:
        return (c["pid"], c["tid"]) == (m["pid"], m["tid"]) and m["ts"] <= c["ts"] and \
            c["ts"] + c["dur"] <= m["ts"] + m["dur"] and c["order"] > m["order"]

    for e in slices:
        inside = [c for c in slices if within(c, e)]
        direct = [c for c in inside if not any(within(c, m) for m in inside)]
        own[e["name"]] += 1000 * (e["dur"] - sum(c["dur"] for c in direct))
        total[e["name"]] += 1000 * e["dur"]
    b = event_breakdown(p).set_index("name")
    for name in total:
        assert (b.loc[name, "total_ns"], b.loc[name, "self_ns"]) == (total[name], own[name]), name
    longest = longest_events(p, 5)
    assert longest["duration_ns"].tolist() == sorted((1000 * e["dur"] for e in slices), reverse=True)[:5]
