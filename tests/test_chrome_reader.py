from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import trace, traces_listed

import neuron_widgets as nw

ALL_TRACES = traces_listed("*/*.json*")


def write(tmp_path: Path, events, name: str = "trace.json", **top) -> Path:
    path = tmp_path / name
    doc = {"traceEvents": events, **top} if not isinstance(events, str) else events
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


def names(p: nw.Profile) -> list[str]:
    return p.core.column("name").to_pylist()


@pytest.mark.parametrize("rel", ALL_TRACES)
def test_every_real_trace_loads_and_groups(rel: str) -> None:
    p = nw.load_profile(trace(rel))
    assert len(p) > 0
    for g in nw.GROUPINGS:
        tracks = p.tracks(g)
        assert tracks["events"].sum() == len(p)
        assert tracks["label"].is_unique
    idx = p.track_index("default")
    # Lanes never put two overlapping events side by side in one lane of a track.
    start, end = p.core.column("start_ts").to_numpy(), p.core.column("end_ts").to_numpy()
    key = idx.track.astype(np.int64) * 100_000 + idx.lane
    order = np.lexsort((start, key))
    same = key[order][1:] == key[order][:-1]
    nested_or_after = (start[order][1:] >= end[order][:-1]) | (end[order][1:] <= end[order][:-1])
    assert not (same & ~nested_or_after & (start[order][1:] < end[order][:-1]) & (end[order][1:] > end[order][:-1])).any()


def test_kineto_mapping() -> None:
    p = nw.load_profile(trace("hta/trace_diff_control_rank3of8.json.gz"))
    ev = p.events
    assert set(ev["instance_id"]) == {"rank3"}
    kernels = ev[ev["category"] == "kernel"]
    assert (kernels["trace_event_source"] == "device").all()
    assert set(kernels["process_id"]) == {3}
    streams = [a["stream"] for a in map(json.loads, kernels["extra_attributes_json"])]
    assert kernels["thread_id"].tolist() == streams
    cpu = ev[ev["category"] == "cpu_op"]
    assert (cpu["trace_event_source"] == "framework").all()
    labels = set(p.tracks("default")["label"])
    # Kineto's own names: process_labels for GPUs, thread names with their ids; no Neuron source tier.
    assert "rank3/GPU 3/stream 7" in labels
    assert any(lab.startswith("rank3/python") and "/thread 3113936 (" in lab for lab in labels)
    order = p.tracks("default")["label"].tolist()
    assert order[0].startswith("rank3/python")  # process_sort_index: CPU first, then GPUs, Spans last
    assert [lab.split("/")[1] for lab in order][-3:] == ["Spans", "(no pid)", "Traces"]
    # Text ids by their text, not the codes the reader gives them (a real negative tid stays a number).
    assert not any("PID:-" in lab or lab.endswith(("TID:-1", "TID:-2", "TID:-3")) for lab in order)
    # Integer microseconds become exact nanoseconds.
    first = ev.sort_values("start_ts").iloc[0]
    assert first["start_ts"] % 1000 == 0
    assert p.metadata["distributedInfo"]["rank"] == 3
    assert p.metadata["process_names"]["3113936"] == "python3.8"


def test_a_device_process_named_with_its_id_and_its_unnamed_streams(tmp_path: Path) -> None:
    # An MTIA trace: the device process "MTIA 0" is pid 0, its kernels' thread (the stream) has no name.
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "MTIA 0"}},
          {"ph": "M", "name": "process_name", "pid": 5, "args": {"name": "python"}},
          {"ph": "M", "name": "process_name", "pid": 6, "args": {"name": "worker 60"}}]
    ev += [{"ph": "X", "name": "k", "cat": "kernel", "pid": 0, "tid": 7, "ts": 10 * i, "dur": 5,
            "args": {"stream": 7, "device": 0}} for i in range(3)]
    ev += [{"ph": "X", "name": "op", "cat": "cpu_op", "pid": pid, "tid": pid, "ts": 10 * i, "dur": 5}
           for i in range(3) for pid in (5, 6)]
    path = tmp_path / "mtia.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    p = nw.load_profile(path, cache=False)
    inst = p.events["instance_id"].iloc[0]
    # The id once where the name already says it on its own ("worker 60" is not pid 6).
    assert set(p.tracks("default")["label"]) == {f"{inst}/MTIA 0/Stream:7", f"{inst}/python 5/TID:5",
                                                 f"{inst}/worker 60 6/TID:6"}
    # The same stream in the Thread grouping as in the Default one.
    assert set(p.tracks("thread")["label"]) == {f"{inst}/MTIA 0/Stream:7", f"{inst}/python 5/TID:5",
                                                f"{inst}/worker 60 6/TID:6"}


def test_kineto_flows_link_launch_to_kernel() -> None:
    path = trace("hta/nccl_data.json.gz")
    raw = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    starts = {str(e["id"]) for e in raw if e.get("ph") == "s"}
    ends = {str(e["id"]) for e in raw if e.get("ph") == "f"}
    both = starts & ends
    p = nw.load_profile(path)
    ev = p.table.to_pandas()
    linked = ev[ev["flow_id"].notna()]
    by_flow: dict[str, list[str]] = {}
    for cat, ids in zip(linked["category"], linked["flow_id"], strict=True):
        for f in ids:
            by_flow.setdefault(f, []).append(cat)
    # Every flow with both ends in the file joins two slices; launches reach GPU work.
    assert all(len(by_flow.get(f, [])) >= 2 for f in both)
    launches = [cats for f, cats in by_flow.items() if f in both and "cuda_runtime" in cats]
    assert launches and all({"kernel", "gpu_memcpy", "gpu_memset"} & set(c) for c in launches)


def test_unclosed_slices_are_incomplete() -> None:
    p = nw.load_profile(trace("catapult/main_thread_has_unclosed_slices.json"))
    inc = p.events[p.events["incomplete"]]
    assert len(inc) == 4
    assert (inc["end_ts"] == p.end_ts).all()
    assert p.warnings.counts[next(k for k in p.warnings if "never ended" in k)] == 4


def test_bare_array_and_counters() -> None:
    big = nw.load_profile(trace("catapult/big_trace.json"))
    assert len(big) > 900
    simple = nw.load_profile(trace("catapult/simple_trace.json"))
    c = simple.counter("counters")
    assert {"timestamp", "name", "series", "value"} <= set(c.columns) and len(c) > 0
    assert any("'P' (sample)" in k for k in simple.warnings)


def test_hand_written_phases(tmp_path: Path) -> None:
    ev = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "trainer"}},
        {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 2, "args": {"sort_index": 5}},
        {"ph": "X", "name": "outer", "pid": 1, "tid": 2, "ts": 10.0, "dur": 100.0, "args": {"a": 1}},
        {"ph": "B", "name": "inner", "pid": 1, "tid": 2, "ts": 20.5, "args": {"x": "y"}},
        {"ph": "B", "name": "deeper", "pid": 1, "tid": 2, "ts": 21.0},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 22.0},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 30.25, "args": {"result": 7}},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 31.0},  # unmatched
        {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 40.0, "s": "t"},
        {"ph": "C", "name": "mem", "pid": 1, "ts": 40.0, "args": {"used": 5, "free": "x"}},
        {"ph": "s", "name": "f", "cat": "c", "id": 9, "pid": 1, "tid": 2, "ts": 12.0},
        {"ph": "f", "name": "f", "cat": "c", "id": 9, "pid": 1, "tid": 3, "ts": 50.0},
        {"ph": "X", "name": "target", "pid": 1, "tid": 3, "ts": 55.0, "dur": 1.0},
        {"ph": "b", "name": "req", "cat": "n", "id": "0x1", "pid": 1, "tid": 2, "ts": 5.0},
        {"ph": "n", "name": "step", "cat": "n", "id": "0x1", "pid": 1, "tid": 2, "ts": 6.0},
        {"ph": "e", "name": "req", "cat": "n", "id": "0x1", "pid": 1, "tid": 2, "ts": 60.0},
        {"ph": "S", "name": "load", "cat": "a", "id": 4, "pid": 1, "tid": 2, "ts": 70.0},
        {"ph": "F", "name": "load", "cat": "a", "id": 4, "pid": 2, "tid": 1, "ts": 80.0},
        {"ph": "Z", "name": "weird", "pid": 1, "tid": 2, "ts": 1.0},
        "not an event",
    ]
    p = nw.load_profile(write(tmp_path, ev))
    e = p.events.set_index("name")
    assert e.loc["outer", "start_ts"] == 10_000 and e.loc["outer", "duration_ns"] == 100_000
    assert e.loc["inner", "start_ts"] == 20_500 and e.loc["inner", "end_ts"] == 30_250
    assert p.event(int(e.loc["inner", "id"]))["args"] == {"x": "y", "result": 7}
    assert e.loc["deeper", "duration_ns"] == 1_000
    assert e.loc["mark", "duration_ns"] == 0
    assert e.loc["req", "duration_ns"] == 55_000 and e.loc["load", "duration_ns"] == 10_000
    lanes = dict(zip(names(p), p.track_index("default").lane.tolist(), strict=True))
    assert (lanes["outer"], lanes["inner"], lanes["deeper"]) == (0, 1, 2)
    # Async events get a row of their own instead of wrapping the thread's slices.
    labels = dict(zip(names(p), p.tracks("default")["label"].to_numpy()[p.track_index("default").track], strict=True))
    assert labels["outer"] == "trace/trainer 1/TID:2"  # its process_name, with the id
    assert labels["req"] == "trace/trainer 1/n (async)"
    flows = dict(zip(names(p), p.column("flow_id").to_pylist(), strict=True))
    assert flows["outer"] == ["9"] and flows["target"] == ["9"]
    text = " ".join(p.warnings.lines())
    assert "'E' events with no open 'B'" in text
    assert "unknown phase 'Z'" in text
    assert "not objects" in text
    assert "counter values that are not numbers" in text
    assert p.metadata["process_names"] == {"1": "trainer"}
    assert p.counter("counters")["value"].tolist() == [5.0]


def test_fractional_microseconds_are_nanoseconds(tmp_path: Path) -> None:
    ev = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1700000000000000.25, "dur": 0.5},
          {"ph": "X", "name": "b", "pid": 1, "tid": 2, "ts": 12345.678, "dur": 0.001}]
    p = nw.load_profile(write(tmp_path, ev))
    e = p.events.set_index("name")
    # Epoch-scale values keep every digit float64 holds; relative ones keep all three decimals.
    assert e.loc["a", "start_ts"] == 1_700_000_000_000_000_250 and e.loc["a", "duration_ns"] == 500
    assert e.loc["b", "start_ts"] == 12_345_678 and e.loc["b", "duration_ns"] == 1


def test_ndet_events_become_neuron_sources(tmp_path: Path) -> None:
    ev = [
        {"ph": "X", "name": "nrt_execute", "pid": 10, "tid": 11, "ts": 1, "dur": 50, "args": {"nd": 0, "nc": 1, "exec_id": 3}},
        {"ph": "X", "name": "nc_exec", "pid": 10, "tid": 12, "ts": 5, "dur": 40, "args": {"nd": 0, "nc": 1, "exec_id": 3}},
        {"ph": "X", "name": "numerical_error", "pid": 10, "tid": 12, "ts": 30, "dur": 0, "args": {"nc": 1, "ret": 1003}},
    ]
    p = nw.load_profile(write(tmp_path, ev, "ndet.json"))
    src = dict(zip(names(p), p.core.column("trace_event_source").to_pylist(), strict=True))
    assert src == {"nrt_execute": "neuron_rt", "nc_exec": "neuron_hw", "numerical_error": "neuron_hw"}
    assert set(p.core.column("nc_idx").to_pylist()) == {1}
    assert "ndet/PID:10/neuron_hw/NC:1" in set(p.tracks()["label"])


def test_array_without_closing_bracket(tmp_path: Path) -> None:
    text = '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},\n{"ph":"X","name":"b","pid":1,"tid":1,"ts":4,"dur":2},\n'
    p = nw.load_profile(write(tmp_path, text))
    assert names(p) == ["a", "b"]


def test_gzip_and_string_ids(tmp_path: Path) -> None:
    ev = [{"ph": "X", "name": "span", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1, "dur": 2}]
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": ev}).encode()))
    p = nw.load_profile(path)
    assert len(p) == 1
    assert p.metadata["text_ids"]["process"] == {str(p.events["process_id"].iloc[0]): "Spans"}


def test_odd_ids_among_integers(tmp_path: Path) -> None:
    # true is not the process 1 (though Python says True == 1); text ids keep their text; a flow's id
    # may be written 3 or "3" and is one flow.
    ev = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
          {"ph": "X", "name": "b", "pid": True, "tid": 1, "ts": 1, "dur": 10},
          {"ph": "X", "name": "c", "pid": "Spans", "tid": 2**70, "ts": 2, "dur": 10},
          {"ph": "X", "name": "d", "pid": 1, "tid": 1, "ts": 20, "dur": 10},
          {"ph": "s", "name": "f", "id": 3, "pid": 1, "tid": 1, "ts": 5},
          {"ph": "f", "name": "f", "id": "3", "pid": 1, "tid": 1, "ts": 21, "bp": "e"}]
    p = nw.load_profile(write(tmp_path, ev), cache=False)
    pid = dict(zip(p.events["name"], p.events["process_id"], strict=True))
    assert pid["a"] == pid["d"] == 1 and pid["b"] != 1 and pid["c"] not in (1, pid["b"])
    texts = p.metadata["text_ids"]
    assert texts["process"][str(pid["b"])] == "True" and texts["process"][str(pid["c"])] == "Spans"
    assert str(2**70) in texts["thread"].values()
    flows = dict(zip(p.events["name"], p.column("flow_id").to_pylist(), strict=True))
    assert flows["a"] == ["3"] and flows["d"] == ["3"] and flows["b"] is None
