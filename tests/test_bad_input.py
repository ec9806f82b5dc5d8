"""Every reader against bad input: a clear ProfileError, or a load with the problem counted."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neuron_widgets as nw

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(nw.ProfileError, match=r"nope\.json: no such file or directory\. Check the path"):
        nw.load_profile(tmp_path / "nope.json")


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "trace.json").write_bytes(b"")
    with pytest.raises(nw.ProfileError, match=r"trace\.json: the file is empty\. The capture or the conversion"):
        nw.load_profile(tmp_path / "trace.json")


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(nw.ProfileError, match=r"the capture directory is empty: the runtime wrote no profile\. "
                                              r"Enable capture \(NEURON_RT_INSPECT_ENABLE=1"):
        nw.load_profile(tmp_path)


def test_truncated_json(tmp_path: Path) -> None:
    (tmp_path / "trace.json").write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "du')
    with pytest.raises(nw.ProfileError, match=r"trace\.json: is not valid JSON .*cut short"):
        nw.load_profile(tmp_path / "trace.json")


def test_truncated_gzip(tmp_path: Path) -> None:
    data = gzip.compress(json.dumps({"traceEvents": [{"ph": "X", "name": "a", "ts": i, "dur": 1, "pid": 1, "tid": 1}
                                                     for i in range(5000)]}).encode())
    (tmp_path / "t.json.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(nw.ProfileError, match=r"t\.json\.gz: the compressed data is damaged or cut short"):
        nw.load_profile(tmp_path / "t.json.gz")


def test_gz_that_is_not_gzip(tmp_path: Path) -> None:
    # Plain JSON under a .gz name is read as what it is ...
    (tmp_path / "plain.json.gz").write_text(json.dumps([{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]))
    assert len(nw.load_profile(tmp_path / "plain.json.gz")) == 1
    # ... and garbage under a .gz name is named for what it is.
    (tmp_path / "junk.json.gz").write_bytes(b"\x00\x01binary junk")
    with pytest.raises(nw.ProfileError, match=r"junk\.json\.gz: is not a profile format neuron-widgets reads"):
        nw.load_profile(tmp_path / "junk.json.gz")


def test_foreign_file_named_trace_json(tmp_path: Path) -> None:
    (tmp_path / "trace.json").write_bytes(PNG)
    with pytest.raises(nw.ProfileError, match=r"trace\.json: is not a profile format .*it is a PNG image"):
        nw.load_profile(tmp_path / "trace.json")


def test_json_without_trace_events(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"learning_rate": 0.1, "layers": 4}')
    with pytest.raises(nw.ProfileError, match=r"has no traceEvents list \(its keys: learning_rate, layers\)"):
        nw.load_profile(tmp_path / "config.json")
    (tmp_path / "num.json").write_text("42")
    with pytest.raises(nw.ProfileError, match="is not a profile format"):
        nw.load_profile(tmp_path / "num.json")


def test_bad_timestamps_are_counted(tmp_path: Path) -> None:
    ev = [
        {"ph": "X", "name": "ok", "ts": 1, "dur": 2, "pid": 1, "tid": 1},
        {"ph": "X", "name": "huge", "ts": 1e300, "dur": 2, "pid": 1, "tid": 1},
        {"ph": "X", "name": "text", "ts": "soon", "dur": 2, "pid": 1, "tid": 1},
        {"ph": "X", "name": "none", "dur": 2, "pid": 1, "tid": 1},
        {"ph": "X", "name": "negative", "ts": 5, "dur": -3, "pid": 1, "tid": 1},
        {"ph": "X", "name": "strnum", "ts": "7", "dur": "1.5", "pid": 1, "tid": 1},
    ]
    (tmp_path / "t.json").write_text(json.dumps(ev))
    p = nw.load_profile(tmp_path / "t.json")
    assert sorted(p.core.column("name").to_pylist()) == ["negative", "ok", "strnum"]
    text = " ".join(p.warnings.lines())
    assert "ts is missing, not a number or out of range, dropped: 3" in text
    assert "negative duration" in text
    e = p.events.set_index("name")
    assert e.loc["strnum", "duration_ns"] == 1500 and e.loc["negative", "duration_ns"] == 0


def test_nan_literal_is_rejected_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('[{"ph": "X", "name": "a", "ts": NaN, "dur": 1}]')
    with pytest.raises(nw.ProfileError, match="is not valid JSON"):
        nw.load_profile(tmp_path / "t.json")


def test_ids_above_2_53_survive_in_args(tmp_path: Path) -> None:
    big = 2**60 + 1
    (tmp_path / "t.json").write_text(json.dumps([{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1,
                                                  "args": {"correlation": big}}]))
    p = nw.load_profile(tmp_path / "t.json")
    assert p.event(row=0)["args"]["correlation"] == big


def test_ten_megabyte_strings(tmp_path: Path) -> None:
    name = "x" * 10_000_000
    (tmp_path / "t.json").write_text(json.dumps([{"ph": "X", "name": name, "ts": 1, "dur": 1, "pid": 1, "tid": 1}]))
    p = nw.load_profile(tmp_path / "t.json")
    assert len(p.core.column("name")[0].as_py()) == 10_000_000


def test_directory_of_foreign_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(nw.ProfileError, match=r"a directory holding notes\.txt"):
        nw.load_profile(tmp_path)


def test_several_paths_name_the_missing_one(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('[{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]')
    with pytest.raises(nw.ProfileError, match=r"b\.json: no such file or directory"):
        nw.load_profile([tmp_path / "a.json", tmp_path / "b.json"])
    with pytest.raises(nw.ProfileError, match="an empty list of paths"):
        nw.load_profile([])


_value = st.one_of(st.none(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=5),
                   st.booleans(), st.lists(st.integers(), max_size=2),
                   st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
_event = st.fixed_dictionaries(
    {"ph": st.sampled_from(list("XBEiICsftbneSTFMPZ")) | st.text(max_size=2)},
    optional={"name": _value, "ts": _value, "dur": _value, "pid": _value, "tid": _value, "id": _value,
              "cat": _value, "args": _value, "bp": _value, "id2": _value, "s": _value},
)
_docs = st.one_of(st.lists(_event | _value, max_size=25),
                  st.fixed_dictionaries({"traceEvents": st.lists(_event, max_size=25)},
                                        optional={"distributedInfo": _value, "hostname": _value}))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=_docs)
def test_fuzz_chrome_reader_never_crashes(tmp_path: Path, doc) -> None:
    path = tmp_path / "fuzz.json"
    path.write_bytes(json.dumps(doc).encode())
    try:
        p = nw.load_profile(path)
    except nw.ProfileError as exc:
        assert "fuzz.json" in str(exc)
        return
    # Whatever loads is usable by every view, and the columns are consistent.
    for g in nw.GROUPINGS:
        assert p.tracks(g)["events"].sum() == len(p)
    core = p.core
    assert (core.column("end_ts").to_numpy() >= core.column("start_ts").to_numpy()).all()
    assert p.table.num_rows == len(p)  # lazy columns materialise
    if len(p):
        p.event(row=0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(st.tuples(st.sampled_from("XBEi"), st.integers(0, 50), st.integers(0, 20), st.integers(1, 3)),
                       max_size=40))
def test_fuzz_no_event_dropped_uncounted(tmp_path: Path, events) -> None:
    doc = [{"ph": ph, "name": f"n{i}", "ts": ts, "dur": dur, "pid": 1, "tid": tid} for i, (ph, ts, dur, tid) in enumerate(events)]
    path = tmp_path / "count.json"
    path.write_text(json.dumps(doc))
    p = nw.load_profile(path)
    begins = sum(1 for e in doc if e["ph"] == "B")
    ends = sum(1 for e in doc if e["ph"] == "E")
    others = sum(1 for e in doc if e["ph"] in "Xi")
    unmatched = sum(v for k, v in p.warnings.counts.items() if "no open 'B'" in k)
    # Every X and i is an event; every B is one event (closed or marked incomplete); every E closes one B or is counted.
    assert len(p) == others + begins
    assert ends == (begins - int(p.core.column("incomplete").to_numpy().sum())) + unmatched


def test_a_registered_reader_is_used(tmp_path: Path) -> None:
    from neuron_widgets.readers import READERS, Reader, register

    def read(path: Path, filters) -> nw.Profile:
        del filters
        return nw.load_profile(path.with_suffix(".json"))

    (tmp_path / "t.json").write_text(json.dumps([{"ph": "X", "name": "mine", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]))
    (tmp_path / "t.custom").write_text("custom")
    reader = Reader("custom", lambda p: p.suffix == ".custom", read)
    register(reader, first=True)
    try:
        assert nw.load_profile(tmp_path / "t.custom").core.column("name").to_pylist() == ["mine"]
        assert nw.load_profile(tmp_path / "t.custom", format="custom").core.column("name").to_pylist() == ["mine"]
    finally:
        READERS.remove(reader)
    with pytest.raises(nw.ProfileError, match="is not a profile format"):
        nw.load_profile(tmp_path / "t.custom")


# Bytes spliced into a valid document of each JSON reader: text that is not UTF-8, lone escaped
# surrogates, deep nesting, huge and far numbers (issue 36). Each either loads, every time in range
# and every dictionary holding each text once, or is a ProfileError naming the file.
_SPLICES = st.one_of(st.binary(min_size=1, max_size=6), st.sampled_from([
    b"\xff", b"\xc3", b"\xed\xa0\x80", b"\\udc80", b"\\ud800\\u0041", b"[" * 5000, b"9" * 40, b"1e400", b"-9223372036854775808"]))
_DOCS = {
    "chrome.json": (b'{"traceEvents": [{"ph": "X", "name": "%s", "ts": 1, "dur": 2, "pid": 1, "tid": 1},'
                    b'{"ph": "X", "name": "b", "ts": %s, "dur": 2, "pid": 1, "tid": 1, "args": {"k": "%s"}}]}'),
    "system_profile.json": (b'{"trace_event": [{"name": "%s", "timestamp": 1, "duration": 2},'
                            b'{"name": "b", "timestamp": %s, "duration": 2, "timestamp_unit": "s", "k": "%s"}]}'),
    "rt.json": (b'{"data_version": 2, "events": [{"event_type": "%s", "phase": "start", "tracking_id": 1, "timestamp_ns": 1},'
                b'{"event_type": "b", "phase": "start", "tracking_id": 2, "timestamp_ns": %s, "data": {"k": "%s"}}]}'),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(_DOCS)), a=_SPLICES, b=_SPLICES, c=_SPLICES, number=st.sampled_from(
    [b"5", b"9223372036854775807", b"-9223372036854775808", b"1e300", b"10000000000", b"4611686018427387904"]))
def test_fuzz_json_bytes_never_crash(tmp_path: Path, name: str, a: bytes, b: bytes, c: bytes, number: bytes) -> None:
    path = tmp_path / name
    # The time is a number, or (when `b` opens brackets) a deep nest.
    path.write_bytes(_DOCS[name] % (a, b if b.startswith(b"[") else number, c))
    try:
        p = nw.load_profile(path, cache=False, prepare=False)
    except nw.ProfileError as exc:
        assert str(exc).startswith(str(path))
        return
    _usable(p)


def _usable(p: nw.Profile) -> None:
    core = p.core
    start, end = core.column("start_ts").to_numpy(), core.column("end_ts").to_numpy()
    assert (end >= start).all() and (abs(start) < 2**62).all() and (abs(end) < 2**62).all()
    for col in core.columns:
        for chunk in col.chunks:
            if hasattr(chunk, "dictionary"):
                values = chunk.dictionary.to_pylist()
                assert len(values) == len(set(values))
    assert len(p.events) == len(p)  # pandas refuses a dictionary with a repeated text
    for g in nw.GROUPINGS:
        assert p.tracks(g)["events"].sum() == len(p)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.tuples(st.integers(0, 10**6), st.binary(min_size=1, max_size=8)), min_size=1, max_size=4))
def test_fuzz_perfetto_bytes_never_crash(tmp_path: Path, cuts: list[tuple[int, bytes]]) -> None:
    from perfetto_traces import neuron_explorer_layout

    data = bytearray(neuron_explorer_layout().bytes())
    for at, junk in cuts:  # overwrite a few bytes: lengths, tags, names, timestamps
        at %= len(data)
        data[at: at + len(junk)] = junk
    path = tmp_path / "t.pftrace"
    path.write_bytes(bytes(data))
    try:
        p = nw.load_profile(path, cache=False, prepare=False, max_inflated_bytes=1 << 20)
    except nw.ProfileError as exc:
        assert str(exc).startswith(str(path))
        return
    _usable(p)
    for row in range(min(len(p), 5)):
        p.event(row=row)  # annotations decode on demand


def test_gzip_of_several_members_and_a_failed_check(tmp_path: Path) -> None:
    events = [{"ph": "X", "name": f"e{i}", "ts": i, "dur": 1, "pid": 1, "tid": 1} for i in range(500)]
    text = json.dumps({"traceEvents": events}).encode()
    # Two members (`cat a.gz b.gz`), cut inside a name: one stream, the events of both.
    (tmp_path / "two.json.gz").write_bytes(gzip.compress(text[:3001]) + gzip.compress(text[3001:]))
    p = nw.load_profile(tmp_path / "two.json.gz", cache=False)
    assert sorted(p.core.column("name").to_pylist()) == sorted(e["name"] for e in events)
    bad = bytearray(gzip.compress(text))
    bad[-8] ^= 0xFF  # the CRC in the trailer
    (tmp_path / "crc.json.gz").write_bytes(bytes(bad))
    with pytest.raises(nw.ProfileError, match=r"crc\.json\.gz: the compressed data is damaged or cut short"):
        nw.load_profile(tmp_path / "crc.json.gz", cache=False)
