"""Broken text in a profile: bytes that are not UTF-8, lone escaped surrogates, empty names, deep nesting.

Each either loads with the broken bytes replaced and counted in `profile.warnings`, or stops with a
ProfileError naming the file; never a UnicodeDecodeError, a RecursionError or a TypeError.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from perfetto_traces import BEGIN, END, Builder

import neuron_widgets as nw
from neuron_widgets.cli import main

BAD = b"\xff\xfe"  # two bytes that start no UTF-8 sequence
REPLACED = "\N{REPLACEMENT CHARACTER}" * 2


def _load(path: Path) -> nw.Profile:
    return nw.load_profile(path, cache=False, prepare=False)


def _warned(p: nw.Profile, words: str) -> int:
    return sum(n for kind, n in p.warnings.counts.items() if words in kind)


# One document per JSON reader: a name holding bytes that are not UTF-8, beside an event that is fine.
_JSON_DOCS = {
    "chrome": b'{"traceEvents": [{"ph": "X", "name": "a' + BAD + b'b", "ts": 1, "dur": 2, "pid": 1, "tid": 1},'
              b'{"ph": "X", "name": "fine", "ts": 5, "dur": 2, "pid": 1, "tid": 1, "args": {"k": "v' + BAD + b'"}}]}',
    "legacy": b'{"trace_event": [{"id": 1, "name": "a' + BAD + b'b", "timestamp": 1, "duration": 2},'
              b'{"id": 2, "name": "fine", "timestamp": 5, "duration": 2, "note": "v' + BAD + b'"}]}',
    "runtime": b'{"data_version": 2, "events": ['
               b'{"event_type": "a' + BAD + b'b", "phase": "start", "tracking_id": 1, "nc_idx": 0, "timestamp_ns": 1},'
               b'{"event_type": "a' + BAD + b'b", "phase": "stop", "tracking_id": 1, "nc_idx": 0, "timestamp_ns": 3},'
               b'{"event_type": "fine", "phase": "start", "tracking_id": 2, "nc_idx": 0, "timestamp_ns": 5,'
               b' "data": {"k": "v' + BAD + b'"}},'
               b'{"event_type": "fine", "phase": "stop", "tracking_id": 2, "nc_idx": 0, "timestamp_ns": 7}]}',
}


@pytest.mark.parametrize("kind", sorted(_JSON_DOCS))
@pytest.mark.parametrize("gz", [False, True])
def test_json_names_not_utf8_are_replaced_and_counted(tmp_path: Path, kind: str, gz: bool) -> None:
    import gzip

    data = _JSON_DOCS[kind]
    path = tmp_path / (f"{kind}.json.gz" if gz else f"{kind}.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    p = _load(path)
    assert sorted(p.events["name"]) == [f"a{REPLACED}b", "fine"]
    fine = p.event(row=int(p.events.index[p.events["name"] == "fine"][0]))
    assert REPLACED in json.dumps(fine, ensure_ascii=False)  # the argument's bytes replaced too
    # Every byte that was replaced is counted (the runtime file has its broken name twice).
    assert _warned(p, "not UTF-8") == {"chrome": 4, "legacy": 4, "runtime": 6}[kind]


@pytest.mark.parametrize("kind", sorted(_JSON_DOCS))
def test_json_lone_escaped_surrogates_are_replaced(tmp_path: Path, kind: str) -> None:
    # Python's json module writes a str holding a lone surrogate (from os.fsdecode of a file name) this way.
    data = _JSON_DOCS[kind].replace(b"a" + BAD + b"b", rb"a\udc80\\udc80b")
    path = tmp_path / "t.json"
    path.write_bytes(data)
    p = _load(path)
    assert "a\N{REPLACEMENT CHARACTER}\\udc80b" in set(p.events["name"])  # the escaped backslash kept as is
    assert _warned(p, "not UTF-8") >= 1


def _deep(kind: str, depth: int) -> bytes:
    nest = b"[" * depth + b"]" * depth
    return {"chrome": b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "args": {"x": ' + nest + b"}}]}",
            "bare": nest,
            "legacy": b'{"trace_event": [{"name": "a", "timestamp": 1, "duration": 2, "x": ' + nest + b"}]}",
            "runtime": b'{"data_version": 2, "events": [{"event_type": "a", "phase": "start", "tracking_id": 1,'
                       b' "timestamp_ns": 1, "data": ' + nest + b"}]}"}[kind]


@pytest.mark.parametrize("kind", ["chrome", "bare", "legacy", "runtime"])
def test_json_nested_100000_deep_is_a_profile_error(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(_deep(kind, 100_000))
    with pytest.raises(nw.ProfileError, match=r"deep\.json: .*nested too deeply"):
        _load(path)


def test_cli_says_deep_json_and_bad_text_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "deep.json").write_bytes(_deep("chrome", 100_000))
    assert main(["info", str(tmp_path / "deep.json")]) == 1
    err = capsys.readouterr().err
    assert "deep.json" in err and "nested too deeply" in err and "Traceback" not in err
    (tmp_path / "bad.json").write_bytes(_JSON_DOCS["chrome"])
    assert main(["info", str(tmp_path / "bad.json")]) == 0
    assert "codec" not in capsys.readouterr().err


def _perfetto_with_placeholders() -> bytes:
    b = Builder()
    b.named(10, "TRACKNAMEX")
    b.thread(11, 5, 6, "THREADNAMEX")
    b.process(12, 5, "PROCNAMEXX")
    b.intern(1, names={1: "INTERNEDXX"}, cats={1: "CATEGORYXX"}, clear=True)
    b.event(1, 100, BEGIN, 10, name="a", args={"ARGNAMEXXX": "ARGVALUEXX"})
    b.event(1, 200, END, 10)
    b.event(1, 100, BEGIN, 11, name=1).category_iids.append(1)
    b.event(1, 200, END, 11)
    b.event(1, 300, BEGIN, 11, name="EVNAMEXXXX", category="INLINECATX")
    b.event(1, 400, END, 11)
    return b.bytes()


@pytest.mark.parametrize("word", ["TRACKNAMEX", "THREADNAMEX", "PROCNAMEXX", "INTERNEDXX", "CATEGORYXX", "EVNAMEXXXX",
                                  "INLINECATX", "ARGNAMEXXX", "ARGVALUEXX"])
def test_perfetto_texts_not_utf8_are_replaced(tmp_path: Path, word: str) -> None:
    data = _perfetto_with_placeholders()
    w = word.encode()
    assert data.count(w) == 1
    broken = w[:3] + BAD + w[5:]
    (tmp_path / "t.pftrace").write_bytes(data.replace(w, broken))
    p = _load(tmp_path / "t.pftrace")
    assert len(p) == 3
    fixed = broken.decode("utf-8", "replace")
    shown = [*p.events["name"], *p.events["category"].dropna(), *p.tracks("default")["label"], *p.tracks("thread")["label"],
             *(json.dumps(p.event(row=r)["args"], ensure_ascii=False) for r in range(len(p)))]
    assert any(fixed in s for s in shown), shown
    if not word.startswith("ARG"):  # annotations are decoded when asked for, after the load
        assert _warned(p, "not UTF-8") >= 1


def test_empty_name_exported_to_perfetto_and_read_back(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "", "ts": 1, "dur": 2, "pid": 1, "tid": 1},
        {"ph": "X", "name": "x", "ts": 3, "dur": 2, "pid": 1, "tid": 1}]}))
    nw.export_perfetto(_load(tmp_path / "t.json"), tmp_path / "t.pftrace")
    p = _load(tmp_path / "t.pftrace")
    assert sorted(p.events["name"]) == ["", "x"]
    names = p.core.column("name").chunk(0).dictionary.to_pylist()
    assert sorted(names) == sorted(set(names))


def test_perfetto_slice_named_empty_beside_one_without_a_name(tmp_path: Path) -> None:
    b = Builder()
    b.named(10, "t")
    b.event(1, 100, BEGIN, 10, name="")
    b.event(1, 150, END, 10)
    b.event(1, 200, BEGIN, 10)  # no name at all
    b.event(1, 250, END, 10)
    p = _load(b.write(tmp_path / "t.pftrace"))
    assert list(p.events["name"]) == ["", ""]
    assert p.core.column("name").chunk(0).dictionary.to_pylist() == [""]


def test_unique_dictionaries_keeps_the_values() -> None:
    from neuron_widgets.readers.columns import unique_dictionaries

    col = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, None, 3], pa.int32()), pa.array(["", "a", "", "a"]))
    table = pa.table({"name": pa.chunked_array([col]), "n": pa.array([1, 2, 3, 4, 5])})
    fixed = unique_dictionaries(table)
    assert fixed.column("name").to_pylist() == ["", "a", "", None, "a"]
    assert fixed.column("name").chunk(0).dictionary.to_pylist() == ["", "a"]
    fixed.to_pandas()  # pandas refuses repeated categories
    with pytest.raises(ValueError, match="unique"):
        table.to_pandas()
    ok = pa.DictionaryArray.from_arrays(pa.array([1, 0], pa.int8()), pa.array(["p", "q"]))
    t2 = pa.table({"k": ok})
    assert unique_dictionaries(t2) is t2  # nothing to do: the same table


@pytest.mark.parametrize("kind", sorted(_JSON_DOCS))
def test_broken_text_only_where_the_load_does_not_look(tmp_path: Path, kind: str) -> None:
    # Arguments are kept as the file's bytes and worked out when asked for: their broken text is
    # still found, replaced and counted as the file loads, and the event's details read.
    data = _JSON_DOCS[kind].replace(b"a" + BAD + b"b", b"ab")
    (tmp_path / "t.json").write_bytes(data)
    p = _load(tmp_path / "t.json")
    assert _warned(p, "not UTF-8") == 2
    for row in range(len(p)):
        p.event(row=row)
    assert REPLACED in p.table.column("extra_attributes_json").to_pylist().__repr__()


@pytest.mark.parametrize("kind", sorted(_JSON_DOCS))
@pytest.mark.parametrize("in_metadata", [False, True])
def test_lone_surrogate_only_in_arguments_or_metadata(tmp_path: Path, kind: str, in_metadata: bool) -> None:
    data = _JSON_DOCS[kind].replace(b"a" + BAD + b"b", b"ab").replace(b"v" + BAD, rb"v\udc80")
    if in_metadata:
        data = data[:-1] + rb', "note": "x\ud800"}'  # a top-level key beside the events
    (tmp_path / "t.json").write_bytes(data)
    p = _load(tmp_path / "t.json")
    for row in range(len(p)):
        p.event(row=row)  # no DecodeError when the details are worked out
    assert len(p.table) == len(p)
