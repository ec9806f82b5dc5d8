"""Traces from other tools read as their own tools show them: names, order, tiers, counters, clocks, async."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import trace

import neuron_widgets as nw
from neuron_widgets.model.counter_series import counter_series


def write(tmp_path: Path, doc: object, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def load(path: Path) -> nw.Profile:
    return nw.load_profile(path, prepare=False, cache=False)


def test_names_and_sort_order_from_metadata_events(tmp_path: Path) -> None:
    ev = [
        {"ph": "M", "name": "process_name", "pid": 20, "args": {"name": "Renderer"}},
        {"ph": "M", "name": "process_name", "pid": 30, "args": {"name": "Browser"}},
        {"ph": "M", "name": "process_sort_index", "pid": 30, "args": {"sort_index": -1}},
        {"ph": "M", "name": "thread_name", "pid": 30, "tid": 31, "args": {"name": "CrBrowserMain"}},
        {"ph": "M", "name": "thread_name", "pid": 20, "tid": 21, "args": {"name": "CrRendererMain"}},
        {"ph": "M", "name": "thread_name", "pid": 20, "tid": 22, "args": {"name": "Compositor"}},
        {"ph": "M", "name": "thread_sort_index", "pid": 20, "tid": 22, "args": {"sort_index": 0}},
        {"ph": "M", "name": "thread_sort_index", "pid": 20, "tid": 21, "args": {"sort_index": 1}},
        *({"ph": "X", "name": "task", "pid": pid, "tid": tid, "ts": 1, "dur": 1} for pid, tid in ((20, 21), (20, 22), (30, 31))),
    ]
    p = load(write(tmp_path, {"traceEvents": ev}))
    labels = p.tracks("default")["label"].tolist()
    # Browser first (its sort index), then the renderer's threads in their own order; no "framework" tier.
    assert labels == ["t/Browser 30/CrBrowserMain 31", "t/Renderer 20/Compositor 22", "t/Renderer 20/CrRendererMain 21"]
    assert p.tracks("process")["label"].tolist() == ["t/Browser 30", "t/Renderer 20"]
    assert p.tracks("thread")["label"].tolist()[0] == "t/Browser 30/CrBrowserMain 31"


def test_without_names_or_sort_indexes_labels_and_order_are_kept(tmp_path: Path) -> None:
    ev = [{"ph": "X", "name": "a", "pid": pid, "tid": tid, "ts": 1, "dur": 1} for pid, tid in ((5, 2), (3, 9), (3, 4))]
    p = load(write(tmp_path, {"traceEvents": ev}))
    assert p.tracks("default")["label"].tolist() == ["t/PID:3/TID:4", "t/PID:3/TID:9", "t/PID:5/TID:2"]


def test_kineto_text_ids_labels_and_order() -> None:
    p = load(trace("hta/nccl_data.json.gz"))
    labels = p.tracks("default")["label"].tolist()
    assert labels[0] == "rank0/python3.10 2910249/thread 2910249 (pt_main_thread)"
    assert "rank0/GPU 0/stream 7" in labels
    assert labels[-3:] == ["rank0/Spans/PyTorch Profiler", "rank0/(no pid)/(no tid)", "rank0/Traces/Trace PyTorch Profiler"]
    # The one-event bookkeeping rows never come first, in any mode.
    for mode in ("process", "thread", "cpu_device"):
        assert p.tracks(mode)["label"].tolist()[0].startswith("rank0/python3.10 2910249")


def test_kineto_trace_recorded_with_torch_neuronx_keeps_neuron_tiers(tmp_path: Path) -> None:
    ev = [{"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "python"}},
          {"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": 7, "tid": 7, "ts": 1, "dur": 5},
          {"ph": "X", "name": "nrt_execute", "cat": "neuron_rt", "pid": 7, "tid": 7, "ts": 2, "dur": 3, "args": {"nc_idx": 0}},
          {"ph": "X", "name": "nc_exec_running", "cat": "neuron_hw", "pid": 7, "tid": 8, "ts": 2, "dur": 2,
           "args": {"nc_idx": 0}}]
    p = load(write(tmp_path, {"traceEvents": ev}, "neuronx.json"))
    assert set(p.tracks("default")["label"]) == {"neuronx/python 7/framework/TID:7", "neuronx/python 7/neuron_rt/NC:0",
                                                 "neuronx/python 7/neuron_hw/NC:0"}


def test_fuchsia_system_trace_events_name_processes_and_threads(tmp_path: Path) -> None:
    doc = {"traceEvents": [{"ph": "X", "name": "work", "pid": 1000, "tid": 1001, "ts": 0, "dur": 3}],
           "systemTraceEvents": {"type": "fuchsia", "events": [
               {"ph": "p", "pid": 1000, "name": "root_presenter"},
               {"ph": "t", "pid": 1000, "tid": 1001, "name": "initial-thread"}]}}
    p = load(write(tmp_path, doc))
    assert p.tracks("default")["label"].tolist() == ["t/root_presenter 1000/initial-thread 1001"]


def test_counters_are_series_per_process_and_id(tmp_path: Path) -> None:
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Browser"}},
          {"ph": "C", "name": "memory", "pid": 1, "ts": 0, "args": {"used": 10}},
          {"ph": "C", "name": "memory", "pid": 2, "ts": 0, "args": {"used": 50}},
          {"ph": "C", "name": "memory", "pid": 2, "ts": 10, "args": {"used": 55}},
          {"ph": "C", "name": "ctr", "id": 7, "pid": 2, "ts": 5, "args": {"a": 1}},
          {"ph": "C", "name": "ctr", "id": 8, "pid": 2, "ts": 5, "args": {"a": 3}},
          {"ph": "X", "name": "w", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]
    p = load(write(tmp_path, {"traceEvents": ev}))
    series = {s["label"]: counter_series(p).data[s["key"]][1].tolist() for s in counter_series(p).series}
    assert series == {"t/Browser 1/memory/used": [10.0], "t/PID:2/memory/used": [50.0, 55.0],
                      "t/PID:2/ctr 7/a": [1.0], "t/PID:2/ctr 8/a": [3.0]}


def test_events_on_a_far_clock_are_counted_and_the_view_opens_on_the_rest(tmp_path: Path) -> None:
    from neuron_widgets.widgets import Timeline

    ev = [{"ph": "X", "name": f"boot_{i % 3}", "pid": 1, "tid": 1, "ts": 100 + i * 10, "dur": 5} for i in range(300)]
    late = 1e12  # a million seconds later, in microseconds
    ev += [{"ph": "X", "name": "work", "pid": 1, "tid": 2, "ts": late + i * 20, "dur": 15} for i in range(20_000)]
    p = nw.load_profile(write(tmp_path, {"traceEvents": ev}), prepare=False)
    (kind,) = [k for k in p.warnings if "away from the rest" in k]
    assert p.warnings[kind] == 300 and "278 h" in kind and "boot_0" in p.warnings.examples[kind][0]
    a, b = p.home_range
    assert a == int(late * 1000) and b - a < 1e9 and p.start_ts < a
    tl = Timeline(p)
    # Times count from the dense part (its start is 0); the early clock's events lie a million seconds before.
    assert p.origin_ts == a and tl.home[0] == 0 and tl.view == tl.home
    assert tl.span[0] == pytest.approx(-1e15, rel=1e-6) and tl.span[1] == tl.home[1]
    assert len(p) == 20_300  # the outliers stay loaded
    found = p.events[p.events["name"] == "boot_1"]
    assert len(found) == 100


def test_one_gap_in_an_ordinary_trace_is_not_a_clock_split() -> None:
    for rel in ("hta/nccl_data.json.gz", "catapult/big_trace.json", "param-dlrm-8rank"):
        p = load(trace(rel))
        assert p.clock_split.outliers == [] and p.home_range == (p.start_ts, p.end_ts)


def test_async_events_that_never_end_are_open_markers(tmp_path: Path) -> None:
    ev = [{"ph": "b", "name": "request", "cat": "net", "id": i, "pid": 1, "tid": 1, "ts": i * 10.0} for i in range(300)]
    ev += [{"ph": "b", "name": "done", "cat": "net", "id": 1000, "pid": 1, "tid": 1, "ts": 5.0},
           {"ph": "e", "name": "done", "cat": "net", "id": 1000, "pid": 1, "tid": 1, "ts": 50.0},
           {"ph": "X", "name": "slice", "pid": 1, "tid": 1, "ts": 0, "dur": 10_000}]
    p = load(write(tmp_path, {"traceEvents": ev}))
    opened = p.events[p.events["name"] == "request"]
    assert opened["incomplete"].all() and (opened["end_ts"] == opened["start_ts"]).all()
    idx = p.track_index("default")
    lanes = idx.tracks.set_index("label")["lanes"]
    assert lanes["t/PID:1/net (async)"] <= 2  # not one row each to the end of the trace
    done = p.events[p.events["name"] == "done"].iloc[0]
    assert done["end_ts"] - done["start_ts"] == 45_000 and not done["incomplete"]
    assert any("open-ended markers" in k and p.warnings[k] == 300 for k in p.warnings)
    assert np.isfinite(p.end_ts)


def test_host_device_transfer_tracks_and_bandwidth(tmp_path: Path) -> None:
    ev = [{"ph": "X", "name": "dmem_buf_copyin", "cat": "neuron_rt", "pid": 1, "tid": 2, "ts": 0, "dur": 10,
           "args": {"nc_idx": 0, "size": 100_000}},
          {"ph": "X", "name": "dmem_buf_copyin", "cat": "neuron_rt", "pid": 1, "tid": 2, "ts": 5, "dur": 10,
           "args": {"nc_idx": 0, "size": 200_000}},
          {"ph": "X", "name": "nrt_tensor_read", "cat": "neuron_rt", "pid": 1, "tid": 2, "ts": 20, "dur": 4,
           "args": {"nc_idx": 0, "size": 4_000}},
          {"ph": "X", "name": "nrt_execute", "cat": "neuron_rt", "pid": 1, "tid": 2, "ts": 0, "dur": 30, "args": {"nc_idx": 0}}]
    p = load(write(tmp_path, {"traceEvents": ev}, "inst.json"))
    labels = p.tracks("default")["label"].tolist()
    assert labels == ["inst/PID:1/neuron_rt/NC:0", "inst/NC:0/host_to_device_transfers", "inst/NC:0/device_to_host_transfers"]
    series = counter_series(p)
    got = {s["label"]: s for s in series.series if s["kind"] == "bandwidth"}
    assert set(got) == {"inst/Host-device bandwidth/NC:0/host_to_device", "inst/Host-device bandwidth/NC:0/device_to_host"}
    t, v = series.data[got["inst/Host-device bandwidth/NC:0/host_to_device"]["key"]]
    # 100 kB over 10 µs is 10 GB/s; the second copy (200 kB over 10 µs) adds 20 GB/s from 5 µs on.
    assert t.tolist() == [0, 5_000, 10_000, 15_000] and v.tolist() == [1e10, 3e10, 2e10, 0.0]
    assert got["inst/Host-device bandwidth/NC:0/host_to_device"]["unit"] == "B/s"
    t, v = series.data[got["inst/Host-device bandwidth/NC:0/device_to_host"]["key"]]
    assert v.tolist() == [1e9, 0.0]


def test_the_sample_shows_transfer_tracks_in_the_timeline() -> None:
    import time

    from neuron_widgets.widgets import Timeline

    p = nw.sample_profile()
    tl = Timeline(p)
    labels = p.tracks("default")["label"].tolist()
    assert any(lab.endswith("/NC:0/host_to_device_transfers") for lab in labels)
    assert any(lab.endswith("/NC:1/device_to_host_transfers") for lab in labels)
    deadline = time.time() + 30
    while not any(c["kind"] == "bandwidth" for c in tl.counters) and time.time() < deadline:
        time.sleep(0.05)  # added by a background thread
    bw = [c for c in tl.counters if c["kind"] == "bandwidth"]
    assert len(bw) == 8 and all(c["max"] > 1e9 for c in bw)
