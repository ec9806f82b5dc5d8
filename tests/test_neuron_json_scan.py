"""The byte-scan roads of the Neuron JSON readers against their msgspec roads on random documents.

The scan (`readers/neuron/scan.py`) reads whole columns of the common value kinds and hands a
batch with anything else to the msgspec road; either way the arrays, the codes, the skipped
entries and every row's arguments must be those of the msgspec road (itself checked against a
dict-per-event reference in test_legacy_json_reader.py and test_runtime_json_reader.py).
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neuron_widgets.errors import LoadWarnings
from neuron_widgets.model.profile import Profile
from neuron_widgets.model.schema import normalise
from neuron_widgets.readers.columns import LeftoverArgs, document
from neuron_widgets.readers.neuron import legacy_json as neuron_json
from neuron_widgets.readers.neuron import legacy_json_fast as fast
from neuron_widgets.readers.neuron import legacy_json_rows as json_rows
from neuron_widgets.readers.neuron import scan as neuron_scan

MISSING = object()
# Mostly the kinds the scan reads itself; some values (text numbers, floats, escapes, 19 digits)
# send their batch to msgspec.
PLAIN: dict[str, list[Any]] = {
    "id": [MISSING, None, *range(30), 2**62, 2**63 - 1, 2**63, -(2**63), 18446744073709551616],
    "name": [MISSING, None, "nc_exec_running", "cc_exec_barrier", "nrt_execute", "é名", "", "model_load"],
    "timestamp": [MISSING, None, *range(1000, 1030), -5, 2**62, 10**18, 1772323200000010193, 2**63 - 1, -(2**63),
                  2**63, 10**19, -(2**63) - 1, 2**64 + 5, 99999999999999999999],
    "duration": [MISSING, None, 10, 0, -5, 2**62],
    "timestamp_unit": [MISSING, "ns", "us", "ms", "s", "weird", None, 3, [1], {"u": 1}],
    "type": [MISSING, 99999, "99999", 1, None, True, {"a": 1}],
    "group": [MISSING, "nrt-nc-003", "nrt-nc-12", "framework-8037", "framework-x", "framework-99999999999999999999",
              "nrt-nc-0", "other", 5, None],
    "instance_id": [MISSING, "i-1", "i-2", "", None, False],
    "process_id": [MISSING, None, 4, 123456],
    "thread_id": [MISSING, None, 0, 7],
    "nc_idx": [MISSING, None, 0, 3],
    "lnc_idx": [MISSING, None, 1],
    "device_core_idx": [MISSING, 0, 5, None],
    "parent_id": [MISSING, None, *range(10), 99999],
    "exec_id": [MISSING, 1, 2**40, "x"],
    "nested": [MISSING, {"a": [1, {"b": "<x>", "name": 3}], "c": None}, [], "a\"b\\c"],
}
ODD: dict[str, list[Any]] = {"timestamp": ["1234", 1.5, True], "name": [5, "a\nb"], "id": ["3", 2.0],
                             "thread_id": ["8", True], "instance_id": [7], "nc_idx": [2**70]}


def random_events(rng: random.Random, odd: float) -> list[Any]:
    events: list[Any] = []
    for _ in range(rng.randint(0, 50)):
        if rng.random() < 0.03:
            events.append(rng.choice([3, "x", [1, 2], None, 2.5, {}]))
            continue
        e = {k: v for k, pool in PLAIN.items() if (v := rng.choice(pool)) is not MISSING}
        if rng.random() < odd:
            k = rng.choice(list(ODD))
            e[k] = rng.choice(ODD[k])
        events.append(dict(rng.sample(list(e.items()), len(e))))
    return events


def write(path: Path, doc: dict, rng: random.Random) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.3:
        text = text.replace(":", " : ").replace(",", " ,\n\t")
    path.write_text(text, encoding="utf-8")
    return path


def assert_parts_equal(a: list[dict[str, np.ndarray]], b: list[dict[str, np.ndarray]]) -> None:
    ca = {k: np.concatenate([p[k] for p in a]) for k in a[0]}
    cb = {k: np.concatenate([p[k] for p in b]) for k in b[0]}
    assert ca.keys() == cb.keys()
    for k in ca:
        assert ca[k].tolist() == cb[k].tolist(), k


@pytest.mark.parametrize("seed", range(80))
def test_legacy_scan_road_equals_the_msgspec_road(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    events = random_events(rng, odd=rng.choice([0.0, 0.0, 0.05, 0.3]))
    doc = {"trace_event": events, "instance_id": "i-top"}
    path = write(tmp_path / "system_profile.json", doc, rng)
    batch = rng.choice([1, 2, 5, 1000])

    _, raws = document(path, neuron_json.KEYS, neuron_json.WHAT)
    kept, parts, names, sources, instances = json_rows.decode(raws, batch=batch)
    slow = json_rows.table(parts, names, sources, instances, "i", LoadWarnings(), "f")

    want_args = LeftoverArgs(kept, json_rows.MAPPED)
    # The mapped file read a batch at a time, and the same document gzipped (read whole).
    zipped = tmp_path / "system_profile.json.gz"
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    for f in (path, zipped):
        got_doc, packed, entries, reader = neuron_scan.read_events(f, neuron_json.KEYS, neuron_json.WHAT, fast.SPEC,
                                                                    fast.Reader, batch=batch)
        assert got_doc == {"instance_id": "i-top"}
        assert entries == reader.entries == len(raws)
        assert reader.entries - reader.objects == len(raws) - len(kept)
        got = json_rows.table(*reader.result(), "i", LoadWarnings(), "f")
        assert got.to_pydict() == slow.to_pydict()
        got_args = fast.PackedLeftover(packed, json_rows.MAPPED)
        assert got_args.rows() == want_args.rows()
        assert [got_args.text(r) for r in range(got_args.rows())] == [want_args.text(r) for r in range(want_args.rows())]


def test_a_plain_batch_takes_the_scan_road(tmp_path: Path) -> None:
    # The comparisons above are only worth something if the scan road is taken: plain events are
    # read without msgspec's decoding.
    events = [{"id": i, "name": "nrt_execute", "timestamp": 10 * i, "duration": 5, "group": "nrt-nc-001",
               "exec_id": i} for i in range(20)]
    path = write(tmp_path / "system_profile.json", {"trace_event": events}, random.Random(0))
    _, buf = neuron_scan.event_bytes(path, neuron_json.KEYS, neuron_json.WHAT)
    reader = fast.Reader()
    seen = []
    original = reader.fast

    def spy(b: neuron_scan.Batch) -> Any:
        out = original(b)
        seen.append(out is not None)
        return out

    reader.fast = spy  # type: ignore[method-assign]
    reader.read(buf, batch=7)
    assert seen == [True, True, True]
    assert reader.parts[0]["nc"].tolist() == [1] * 7


def test_an_uncompressed_file_is_read_without_the_whole_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = [{"id": i, "name": "a", "timestamp": i, "k": i} for i in range(10)]
    path = write(tmp_path / "system_profile.json", {"v": 1, "trace_event": events, "w": [2]}, random.Random(1))

    def whole(*_: Any) -> Any:
        raise AssertionError("read whole")

    monkeypatch.setattr(neuron_scan, "event_bytes", whole)
    doc, packed, entries, _ = neuron_scan.read_events(path, neuron_json.KEYS, neuron_json.WHAT, fast.SPEC,
                                                           fast.Reader, batch=3)
    assert doc == {"v": 1, "w": [2]} and entries == 10 and json.loads(packed[9]) == {"k": 9}


@pytest.mark.parametrize("seed", range(40))
def test_a_damaged_or_odd_document_reads_as_the_whole_document_road_says(tmp_path: Path, seed: int) -> None:
    # Cut short, a byte changed, the list twice, escaped or repeated top-level keys, bytes that are not
    # UTF-8: the mapped road gives up and the whole document's road gives its result or its error.
    rng = random.Random(seed)
    events = random_events(rng, odd=0.05)
    doc = {"a": [1, {"b": 2}], "trace_event": events, "z": "x"}
    text = json.dumps(doc, ensure_ascii=False).encode()
    how = seed % 5
    if how == 0:
        text = text[:rng.randrange(len(text))]
    elif how == 1:
        k = rng.randrange(len(text))
        text = text[:k] + rng.choice([b"}", b"]", b",", b'"', b"\\", b"x", b" ", b"\xff"]) + text[k + 1:]
    elif how == 2:
        text = text[:-1] + b', "events": [{"name": "e", "timestamp": 1}]' + rng.choice([b"", b', "trace_event": []']) + b"}"
    elif how == 3:
        text = text.replace(b'"z"', rng.choice([b'"\\u007a"', b'"trace_event"', b'"a"']))
    else:
        text = text.replace(b'"x"', b'"\xe9\xff"')
    path = tmp_path / "plain" / "system_profile.json"
    zipped = tmp_path / "zipped" / "system_profile.json"  # compressed: told by its first bytes
    for f, data in ((path, text), (zipped, gzip.compress(text))):
        f.parent.mkdir()
        f.write_bytes(data)
    results = []
    for f in (path, zipped):
        try:
            got_doc, packed, entries, reader = neuron_scan.read_events(f, neuron_json.KEYS, neuron_json.WHAT,
                                                                        fast.SPEC, fast.Reader, batch=4)
        except Exception as exc:  # the error is what is compared
            results.append(str(exc).replace(str(f.parent), "F"))
            continue
        table = json_rows.table(*reader.result(), "i", LoadWarnings(), "f").to_pydict()
        results.append((got_doc, entries, table, [packed[r] for r in range(len(packed))]))
    assert results[0] == results[1]


RUNTIME: dict[str, list[Any]] = {
    "event_type": [MISSING, None, "nrt_execute", "nc_exec_running", "kbl_x", "é名"],
    "tracking_id": [MISSING, None, *range(6), "t1", "t2", True, False, 2**63 - 1, -(2**63)],
    "nc_idx": [MISSING, None, 0, 1, 7],
    "timestamp_ns": [MISSING, None, *range(100, 140), 1772323200000010193, 2**62],
}
DATA: dict[str, list[Any]] = {
    "instance_id": [MISSING, None, "i-1", "", False],
    "pid": [MISSING, None, 5, 77],
    "tid": [MISSING, None, 0, 9],
    "device_core_idx": [MISSING, None, 0, 3],
    "exec_id": [MISSING, 1, "x", [1, {"a": None}]],
    "model_name": [MISSING, "m<1>"],
}
ODD_RUNTIME: dict[str, list[Any]] = {"tracking_id": [2.5, 2**64, [1]], "timestamp_ns": ["120", 130.0],
                                     "event_type": [5, "a\\b"], "data": ["text", [1], 3], "phase": ["st\\u0061rt"]}


def random_runtime(rng: random.Random, odd: float) -> list[Any]:
    events: list[Any] = []
    for _ in range(rng.randint(0, 60)):
        if rng.random() < 0.03:
            events.append(rng.choice([3, "x", None, []]))
            continue
        e = {k: v for k, pool in RUNTIME.items() if (v := rng.choice(pool)) is not MISSING}
        e["phase"] = rng.choice(["start", "start", "stop", "stop", "instant", None, 3])
        if rng.random() < 0.8:
            e["data"] = {k: v for k, pool in DATA.items() if (v := rng.choice(pool)) is not MISSING}
        elif rng.random() < 0.5:
            e["data"] = None
        if rng.random() < odd:
            k = rng.choice(list(ODD_RUNTIME))
            e[k] = rng.choice(ODD_RUNTIME[k])
        events.append(dict(rng.sample(list(e.items()), len(e))))
    return events


@pytest.mark.parametrize("seed", range(60))
def test_runtime_scan_road_equals_the_msgspec_road(tmp_path: Path, seed: int) -> None:
    from neuron_widgets.readers.neuron import runtime_json
    from neuron_widgets.readers.neuron import runtime_json_fast as rfast
    from neuron_widgets.readers.neuron import runtime_json_rows as rows

    rng = random.Random(seed)
    doc: dict[str, Any] = {"data_version": 2, "events": random_runtime(rng, odd=rng.choice([0.0, 0.0, 0.05, 0.3]))}
    if rng.random() < 0.5:
        doc["pid"] = rng.choice([42, "x", None])
    path = write(tmp_path / "plain" / "nrt.json", doc, rng)
    zipped = tmp_path / "zipped" / "nrt.json"
    zipped.parent.mkdir()
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    batch = rng.choice([1, 3, 7, 1000])

    def rows_of(c: dict[str, np.ndarray], names: list[str], instances: list[str], args: Any) -> tuple:
        said = LoadWarnings()
        start, stop = rows.pair(c, said, "f")
        plain = rows.table(dict(c), start, stop, names, instances, "i")
        ordered = rows.table(c, start, stop, names, instances, "i", ordered=True)
        # Cut in the Profile's order by the reader, the table is the one the Profile would sort.
        profiles = [Profile(normalise(t, LoadWarnings(), "f"), source="f", format="f") for t in (plain, ordered)]
        assert profiles[0]._table.equals(profiles[1]._table)
        pairs = rows.PairArgs(args, start, stop)
        return plain.to_pydict(), said.lines(), [pairs.text(r) for r in range(pairs.rows())]

    _, raws = document(path, runtime_json.KEYS, runtime_json.WHAT)
    kept, c, names, instances = rows.decode(raws, doc.get("pid", 0), batch=batch)
    want = rows_of(c, names, instances, kept)
    for f in (path, zipped):
        got_doc, packed, entries, reader = neuron_scan.read_events(f, runtime_json.KEYS, runtime_json.WHAT, rfast.SPEC,
                                                                    rfast.Reader, batch=batch)
        assert entries == len(raws) and reader.entries - reader.objects == len(raws) - len(kept)
        assert got_doc == {k: v for k, v in doc.items() if k != "events"}
        got = rows_of(*reader.result(got_doc.get("pid", 0)), packed)
        assert got == want
