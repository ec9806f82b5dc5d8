"""The legacy system_profile.json reader against a slow, obviously right reference on random documents.

The reader decodes each event straight into the few fields it needs (no dict per event) and
works each row's arguments out of the file's bytes only when asked; the reference below reads
every event as a dict and says, field by field, what the row holds.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import neuron_widgets as nw
from neuron_widgets.errors import LoadWarnings, ProfileError
from neuron_widgets.model.filters import Filters
from neuron_widgets.model.schema import HARDWARE_EVENTS, ROW
from neuron_widgets.readers.columns import _as_int, document, json_text, optional_ints
from neuron_widgets.readers.neuron import legacy_json as neuron_json
from neuron_widgets.readers.neuron import legacy_json_rows as json_rows

MAPPED = json_rows.MAPPED
UNIT = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
MISSING = object()


def group_number(prefix: str, group: Any) -> int | None:
    if not isinstance(group, str) or not group.startswith(prefix):
        return None
    digits = group[len(prefix):]
    return int(digits) if digits.isascii() and digits.isdigit() else None


def reference_rows(events: list[Any], instance: str) -> tuple[list[dict], int]:
    """Each event object with a usable timestamp as the row it should become; and how many entries were not objects."""
    objs = [e for e in events if isinstance(e, dict)]
    rows = []
    for r, e in enumerate(objs):
        unit = e.get("timestamp_unit")
        scale = UNIT.get(unit, 1) if isinstance(unit, str) else 1
        group = e.get("group") if isinstance(e.get("group"), str) else ""
        name = e.get("name")
        name = name if type(name) is str else ("" if name is None else str(name))
        if e.get("type") == json_rows.FRAMEWORK_TYPE or group.startswith("framework-"):
            source = "framework"
        else:
            source = "neuron_hw" if name in HARDWARE_EVENTS else "neuron_rt"
        nc = next((v for v in (e.get("nc_idx"), e.get("lnc_idx"), group_number("nrt-nc-", group)) if v is not None), None)
        tid = next(v for v in (e.get("thread_id"), group_number("framework-", group), 0) if v is not None)
        dur = _as_int(e.get("duration", 0))
        rows.append({"row": r, "ts": _as_int(e.get("timestamp")), "scale": scale, "dur": dur, "name": name,
                     "source": source, "nc": nc, "tid": tid, "id": _as_int(e.get("id")),
                     "parent": _as_int(e.get("parent_id")), "pid": _as_int(e.get("process_id", 0)) or 0,
                     "instance": e.get("instance_id") or instance,
                     "pcore": e.get("device_core_idx") if source == "neuron_hw" else None,
                     "args": json_text({k: v for k, v in e.items() if k not in MAPPED} or None)})
    # A nested event without its own thread or core sits where its parent sits (rows in file order;
    # the last row of an id is the parent).
    row_of = {x["id"]: i for i, x in enumerate(rows) if x["id"] is not None}
    for x in rows:
        q = row_of.get(x["parent"]) if x["parent"] is not None else None
        if q is None:
            continue
        if x["tid"] in (None, 0) and rows[q]["tid"]:
            x["tid"] = rows[q]["tid"]
        if x["nc"] is None:
            x["nc"] = rows[q]["nc"]
    return [x for x in rows if x["ts"] is not None], len(events) - len(objs)


POOLS: dict[str, list[Any]] = {
    "id": [MISSING, None, "12", 3.0, True, *range(40)],
    "name": [MISSING, None, 5, "nc_exec_running", "cc_exec_barrier", "nrt_execute", "<b>x</b>", "é名", "model_load"],
    "timestamp": [MISSING, None, True, "1234", " 77 ", 1.5e3, 2.5, float("1e30"), "x", *range(1000, 1040)],
    "duration": [MISSING, None, "x", 10, 2.0, "30", 0, -5],
    "timestamp_unit": [MISSING, "ns", "us", "ms", "s", "weird", None, 3],
    "type": [MISSING, 99999, 99999.0, "99999", 1, None],
    "group": [MISSING, "nrt-nc-003", "nrt-nc-12", "framework-8037", "framework-x", "other", 5, None],
    "instance_id": [MISSING, "i-1", "i-2", "", None, 7],
    "process_id": [MISSING, None, "4", 4, 123456],
    "thread_id": [MISSING, None, 0, 7, "8"],
    "nc_idx": [MISSING, None, 0, 3, "2", True],
    "lnc_idx": [MISSING, None, 1],
    "device_core_idx": [MISSING, 0, 5, None],
    "exec_id": [MISSING, 1, 2**40],
    "nested": [MISSING, {"a": [1, {"b": "<x>"}], "c": None}, []],
    "f": [MISSING, 0.1, -2.5e-8, 1e300],
    "u": [MISSING, "é\u2028\"q\"\\", ""],
}


def random_doc(rng: random.Random) -> tuple[dict, list[Any]]:
    events: list[Any] = []
    for i in range(rng.randint(0, 60)):
        if rng.random() < 0.05:
            events.append(rng.choice([3, "x", [1, 2], None, 2.5]))
            continue
        e = {k: v for k, pool in POOLS.items() if (v := rng.choice(pool)) is not MISSING}
        if rng.random() < 0.3 and i:
            e["parent_id"] = rng.choice([rng.randrange(40), 99999, None, "3"])
        events.append(dict(rng.sample(list(e.items()), len(e))))  # keys in any order
    doc: dict[str, Any] = {"trace_event": events}
    if rng.random() < 0.5:
        doc["instance_id"] = rng.choice(["i-top", "", 5])
    if rng.random() < 0.5:
        doc["mem_usage"] = [{"timestamp": 1000 + k, "usage": 10 * k, "percent_usage": k / 10} for k in range(5)]
    if rng.random() < 0.3:
        doc["version"] = {"tool": "neuron-explorer", "n": 2}
    return doc, events


def write(path: Path, doc: dict, rng: random.Random) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5), encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", range(60))
def test_reader_matches_the_reference_on_random_documents(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    doc, events = random_doc(rng)
    path = write(tmp_path / f"run{seed}" / "system_profile.json", doc, rng)
    instance = doc["instance_id"] if isinstance(doc.get("instance_id"), str) and doc["instance_id"] else f"run{seed}"
    want, not_objects = reference_rows(events, instance)

    parsed, raws = document(path, neuron_json.KEYS, neuron_json.WHAT)
    # Batches of a few events: rows, codes and parents cross batch boundaries.
    kept, parts, names, sources, instances = json_rows.decode(raws, batch=rng.choice([1, 2, 7, 1000]))
    assert len(raws) - len(kept) == not_objects and len(kept) == len(events) - not_objects
    said = LoadWarnings()
    table = json_rows.table(parts, names, sources, instances, instance, said, "f").to_pydict()
    objs = [e for e in events if isinstance(e, dict)]
    timed = [e for e in objs if _as_int(e.get("timestamp")) is not None]
    assert said["f: events without a usable timestamp, dropped"] == len(objs) - len(timed)
    assert said["f: events without a usable duration, shown with zero duration"] == sum(
        _as_int(e.get("duration", 0)) is None for e in timed)
    assert table[ROW] == [x["row"] for x in want]
    assert table["start_ts"] == [x["ts"] * x["scale"] for x in want]
    assert table["duration_ns"] == [(x["dur"] if x["dur"] is not None else 0) * x["scale"] for x in want]
    assert table["name"] == [x["name"] for x in want]
    assert table["trace_event_source"] == [x["source"] for x in want]
    assert table["id"] == [x["id"] for x in want]
    assert table["parent_id"] == [x["parent"] for x in want]
    assert table["process_id"] == [x["pid"] for x in want]
    assert table["instance_id"] == [x["instance"] if isinstance(x["instance"], str) else str(x["instance"]) for x in want]
    assert table["thread_id"] == [_as_int(x["tid"]) or 0 for x in want]
    assert table["nc_idx"] == [_as_int(x["nc"]) for x in want]
    assert table["pcore_idx"] == [_as_int(x["pcore"]) for x in want]
    assert parsed == {k: v for k, v in doc.items() if k != "trace_event"}

    # Through load_profile: every row's arguments, by the Profile's lazy column, whole and at some rows.
    p = nw.load_profile(path, cache=False, prepare=False)
    assert len(p) == len(want)
    by_row = {x["row"]: x["args"] for x in want}
    source = p._table.column(ROW).to_pylist()
    assert p.column("extra_attributes_json").to_pylist() == [by_row[r] for r in source]
    some = np.arange(len(p))[::-2]
    assert p.values_at("extra_attributes_json", some).to_pylist() == [by_row[source[i]] for i in some]
    assert any("not objects" in kind for kind in p.warnings) == bool(not_objects)
    if "mem_usage" in doc:
        assert p.counters.get("host_memory")["used_bytes"].tolist() == [10 * k for k in range(5)]


def test_a_repeated_key_keeps_its_last_value_and_odd_spacing_is_read(tmp_path: Path) -> None:
    path = tmp_path / "system_profile.json"
    path.write_text('{ "trace_event" : [ {"name": "a", "timestamp": 5, "name": "b", "k": 1, "k": 2} ,\n\t'
                    '{"timestamp":"7","name":"c"} ] , "instance_id": "i-9" }')
    p = nw.load_profile(path, cache=False, prepare=False)
    assert p.events["name"].tolist() == ["b", "c"]
    assert p.events["instance_id"].tolist() == ["i-9", "i-9"]
    assert p.column("extra_attributes_json").to_pylist() == ['{"k":2}', None]


@pytest.mark.parametrize(("text", "said"), [
    ('[{"name": "a"}]', "holds a list"),
    ('{"trace_event": {"name": "a"}}', "'trace_event' is a dict, not a list"),
    ('{"other": [], "more": 1}', "has no trace_event"),
    ('{"trace_event": [{"name": "a", "timestamp": 1}', "is not valid JSON"),
    ('{"trace_event": [{"name": "a", "timestamp": 1}], }', "is not valid JSON"),
])
def test_a_foreign_or_damaged_document_is_named_and_explained(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "system_profile.json"
    path.write_text(text)
    with pytest.raises(ProfileError) as err:
        neuron_json.read(path, Filters())
    assert said in str(err.value) and "system_profile.json" in str(err.value)


@pytest.mark.parametrize("seed", range(20))
def test_optional_ints_reads_each_value_as_the_per_value_rule_does(seed: int) -> None:
    # Arrow converts a whole list at once when it can; the result must be the one `_as_int` gives
    # value by value, whichever values are mixed in.
    rng = random.Random(seed)
    pool = [None, 0, -1, 7, 2**62, -(2**63), 2**63, 2**70, 2.5, -2.5, 1e18, 9.3e18, float("nan"), float("inf"),
            -0.0, True, False, "12", " 3 ", "x", "1e3", [], {}]
    values = [rng.choice(pool[:6] if rng.random() < 0.5 else pool) for _ in range(rng.randint(0, 12))]
    assert optional_ints(values).to_pylist() == [_as_int(v) for v in values]
