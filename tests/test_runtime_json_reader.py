"""The runtime's nrt_sys_trace_fetch_events JSON reader against a slow, obviously right reference.

The reader decodes events a batch at a time and pairs starts with stops in one numba pass over
integer keys; the reference reads every event as a dict and pairs them with a stack per
(event type, tracking id), in time order.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import neuron_widgets as nw
from neuron_widgets.errors import LoadWarnings
from neuron_widgets.model.schema import HARDWARE_EVENTS, INCOMPLETE, ROW
from neuron_widgets.readers.columns import _as_int, document, json_text
from neuron_widgets.readers.neuron import runtime_json_rows as rows

MISSING = object()


def reference(events: list[Any], doc: dict, instance: str) -> tuple[list[dict], dict[str, int]]:
    """Each row in the order the reader makes them, and the counts of what was left out."""
    objs = [e for e in events if isinstance(e, dict)]
    ts = [_as_int(e.get("timestamp_ns")) for e in objs]
    order = sorted((i for i in range(len(objs)) if ts[i] is not None), key=lambda i: ts[i])

    def key(e: dict) -> Any:
        t = e.get("tracking_id")
        return str(e.get("event_type")), t if isinstance(t, int | str) else repr(t)

    stacks: dict[Any, list[int]] = {}
    pairs: list[tuple[int, int | None]] = []
    unmatched = 0
    for i in order:
        phase = objs[i].get("phase")
        if phase == "start":
            stacks.setdefault(key(objs[i]), []).append(i)
        elif phase == "stop":
            if stacks.get(key(objs[i])):
                pairs.append((stacks[key(objs[i])].pop(), i))
            else:
                unmatched += 1
        else:
            pairs.append((i, i))
    hanging = [(i, None) for stack in stacks.values() for i in stack]
    out = []
    for a, b in pairs + hanging:
        e = objs[a]
        data = e.get("data") if isinstance(e.get("data"), dict) else {}
        args = {"tracking_id": e.get("tracking_id"), **data}
        if b is not None and b != a:
            more = objs[b].get("data")
            args.update(more if isinstance(more, dict) else {})
        if not isinstance(e.get("data"), dict | None):
            args["data"] = e.get("data")
        name = e.get("event_type")
        name = name if type(name) is str else ("" if name is None else str(name))
        inst = data.get("instance_id") or instance
        out.append({"name": name, "start": ts[a], "end": ts[b] if b is not None else None, "open": b is None,
                    "source": "neuron_hw" if name in HARDWARE_EVENTS else "neuron_rt",
                    "instance": inst if isinstance(inst, str) else str(inst),
                    "pid": _as_int(data.get("pid", doc.get("pid", 0))) or 0, "tid": _as_int(data.get("tid", 0)) or 0,
                    "nc": _as_int(e.get("nc_idx")), "pcore": _as_int(data.get("device_core_idx")),
                    "args": json_text(args)})
    return out, {"not_objects": len(events) - len(objs), "no_time": len(objs) - len(order),
                 "unmatched": unmatched, "hanging": len(hanging)}


NAMES = ["nc_exec_running", "nrt_execute", "kbl_exec", None, 7, "é<b>"]


def random_doc(rng: random.Random) -> dict:
    events: list[Any] = []
    t = 1_000
    for _ in range(rng.randint(0, 50)):
        if rng.random() < 0.04:
            events.append(rng.choice([1, "x", [], None]))
            continue
        name = rng.choice(NAMES)
        tid = rng.choice([rng.randrange(6), "a", None, 1.5, [1], True, 2**70, "1.5", "None", -(2**63)])
        data = rng.choice([MISSING, None, "text", [1], {"exec_id": rng.randrange(9)},
                           {"pid": rng.choice([4, "5", None]), "tid": rng.choice([0, 3, "x"]),
                            "instance_id": rng.choice(["i-a", "", None, 3]), "device_core_idx": rng.choice([1, None])}])
        t += rng.randint(-30, 100)  # not in time order in the file
        ts = rng.choice([t, t, t, str(t), None, "x", True, float(t)])
        phase = rng.choice(["start", "start", "stop", "stop", "mark", None])
        e = {"event_type": name, "phase": phase, "tracking_id": tid, "timestamp_ns": ts,
             "nc_idx": rng.choice([0, 3, None, "2"])}
        if data is not MISSING:
            e["data"] = data
        events.append({k: v for k, v in e.items() if rng.random() > 0.05})
        if phase == "start" and rng.random() < 0.6:  # its stop, later, with data of its own
            events.append({"event_type": name, "phase": "stop", "tracking_id": tid,
                           "timestamp_ns": t + rng.randint(0, 50), "data": {"status": rng.choice([0, 1])}})
    rng.shuffle(events) if rng.random() < 0.2 else None
    doc: dict[str, Any] = {"data_version": 2, "events": events}
    if rng.random() < 0.5:
        doc["instance_id"] = rng.choice(["i-top", 5])
    if rng.random() < 0.5:
        doc["pid"] = rng.choice([77, "78"])
    return doc


@pytest.mark.parametrize("seed", range(60))
def test_reader_matches_the_reference_on_random_documents(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    doc = random_doc(rng)
    path = tmp_path / f"run{seed}" / "rt.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc, indent=rng.choice([None, 2]), ensure_ascii=rng.random() < 0.5), encoding="utf-8")
    instance = doc["instance_id"] if isinstance(doc.get("instance_id"), str) else f"run{seed}"
    want, left_out = reference(doc["events"], doc, instance)

    parsed, raws = document(path, ("events",), "nrt_sys_trace_fetch_events output")
    assert parsed == {k: v for k, v in doc.items() if k != "events"}
    kept, c, names, instances = rows.decode(raws, doc.get("pid", 0), batch=rng.choice([1, 3, 1000]))
    assert len(raws) - len(kept) == left_out["not_objects"]
    said = LoadWarnings()
    start, stop = rows.pair(c, said, "f")
    t = rows.table(c, start, stop, names, instances, instance).to_pydict()
    assert t["name"] == [x["name"] for x in want]
    assert t["start_ts"] == [x["start"] for x in want]
    assert t["end_ts"] == [x["end"] for x in want]
    assert t[INCOMPLETE] == [x["open"] for x in want]
    assert t["trace_event_source"] == [x["source"] for x in want]
    assert t["instance_id"] == [x["instance"] for x in want]
    assert t["process_id"] == [x["pid"] for x in want]
    assert t["thread_id"] == [x["tid"] for x in want]
    assert t["nc_idx"] == [x["nc"] for x in want]
    assert t["pcore_idx"] == [x["pcore"] for x in want]
    assert said["f: events without a usable timestamp_ns, dropped"] == left_out["no_time"]
    assert said["f: 'stop' events with no open 'start' of the same tracking_id, ignored"] == left_out["unmatched"]
    assert said["f: 'start' events that never stopped (shown open to the trace end, marked incomplete)"] \
        == left_out["hanging"]

    # Through load_profile: every row's arguments, whole and at some rows.
    p = nw.load_profile(path, cache=False, prepare=False)
    assert len(p) == len(want)
    source = p._table.column(ROW).to_pylist()
    assert p.column("extra_attributes_json").to_pylist() == [want[r]["args"] for r in source]
    some = np.arange(len(p))[::-3]
    assert p.values_at("extra_attributes_json", some).to_pylist() == [want[source[i]]["args"] for i in some]


def test_a_start_stopped_twice_pairs_with_the_latest_open_start(tmp_path: Path) -> None:
    ev = [{"event_type": "a", "phase": p, "tracking_id": 1, "timestamp_ns": t} for p, t in
          (("start", 10), ("start", 20), ("stop", 30), ("stop", 40), ("stop", 50), ("start", 60))]
    path = tmp_path / "rt.json"
    path.write_text(json.dumps({"data_version": 2, "events": ev}))
    p = nw.load_profile(path, cache=False, prepare=False)
    got = sorted(zip(p.events["start_ts"].tolist(), p.events["end_ts"].tolist(), p.events[INCOMPLETE].tolist(),
                     strict=True))
    assert got == [(10, 40, False), (20, 30, False), (60, 60, True)]  # the open one drawn to the trace's end
    assert p.warnings["rt.json: 'stop' events with no open 'start' of the same tracking_id, ignored"] == 1
