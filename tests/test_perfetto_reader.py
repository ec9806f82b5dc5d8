"""Reading Perfetto traces: slices, interning, sequences, clocks, flows, counters, annotations, bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from perfetto_traces import BEGIN, COUNTER, END, INSTANT, Builder, neuron_explorer_layout

import neuron_widgets as nw
from neuron_widgets.analysis import stragglers, temporal_breakdown


def load(path: Path) -> nw.Profile:
    return nw.load_profile(path, prepare=False, cache=False)


def rows(p: nw.Profile) -> list[dict]:
    df = p.events.sort_values(["start_ts", "name"]).reset_index(drop=True)
    return df.to_dict("records")


def test_nested_slices_instants_and_inline_names(tmp_path: Path) -> None:
    b = Builder()
    b.thread(1, pid=10, tid=11, name="main")
    b.event(1, 100, BEGIN, 1, "outer")
    b.event(1, 110, BEGIN, 1, "inner")
    b.event(1, 120, INSTANT, 1, "mark")
    b.event(1, 150, END, 1)
    b.event(1, 200, END, 1)
    p = load(b.write(tmp_path / "t.pftrace"))
    assert p.format == "perfetto"
    got = {r["name"]: (r["start_ts"], r["end_ts"], r["process_id"], r["thread_id"]) for r in rows(p)}
    assert got == {"outer": (100, 200, 10, 11), "inner": (110, 150, 10, 11), "mark": (120, 120, 10, 11)}
    assert not p.warnings


def test_interning_is_per_sequence_and_generation(tmp_path: Path) -> None:
    b = Builder()
    b.thread(1, 10, 11)
    b.thread(2, 10, 12)
    b.intern(1, {1: "alpha"}, clear=True)
    b.intern(2, {1: "beta"}, clear=True)  # the same iid on another sequence is another name
    b.event(1, 100, BEGIN, 1, 1)
    b.event(1, 110, END, 1)
    b.event(2, 100, BEGIN, 2, 1)
    b.event(2, 110, END, 2)
    b.intern(1, {1: "gamma"}, clear=True)  # state cleared: iid 1 now means gamma on sequence 1
    b.event(1, 120, BEGIN, 1, 1)
    b.event(1, 130, END, 1)
    p = load(b.write(tmp_path / "i.pftrace"))
    got = sorted((r["name"], r["thread_id"], r["start_ts"]) for r in rows(p))
    assert got == [("alpha", 11, 100), ("beta", 12, 100), ("gamma", 11, 120)]


def test_ends_pair_in_time_order_across_file_order(tmp_path: Path) -> None:
    # Perfetto sorts by time before matching an end to the innermost open slice of its track.
    b = Builder()
    b.named(5, "queue")
    b.event(1, 100, BEGIN, 5, "parent")
    b.event(1, 300, END, 5)
    b.event(1, 150, BEGIN, 5, "child")
    b.event(1, 200, END, 5)
    p = load(b.write(tmp_path / "o.pftrace"))
    got = {r["name"]: (r["start_ts"], r["end_ts"]) for r in rows(p)}
    assert got == {"parent": (100, 300), "child": (150, 200)}
    assert p.tracks("default")["label"].str.contains("queue").all()


def test_flows_counters_and_annotations(tmp_path: Path) -> None:
    b = Builder()
    b.process(1, 10, "python")
    b.thread(2, 10, 11)
    b.named(3, "gpu stream", parent=1)
    b.named(4, "memory", parent=1, counter=True)
    b.intern(1, {7: "launch"}, {1: "size"}, clear=True)
    b.event(1, 100, BEGIN, 2, 7, {1: 4096, "flag": True, "ratio": 0.5, "who": "me", "nested": {"a": [1, 2]}},
            flows=(42,))
    b.event(1, 150, END, 2)
    b.event(1, 300, BEGIN, 3, "kernel", terminating=(42,))
    b.event(1, 400, END, 3, args={"done": 1})
    for k, v in enumerate((1.0, 5.0, 2.5)):
        b.event(1, 100 + k * 100, COUNTER, 4, value=v)
    p = load(b.write(tmp_path / "f.pftrace"))
    events = {r["name"]: r for r in rows(p)}
    assert json.loads(events["launch"]["extra_attributes_json"]) == {
        "size": 4096, "flag": True, "ratio": 0.5, "who": "me", "nested": {"a": [1, 2]}}
    assert json.loads(events["kernel"]["extra_attributes_json"]) == {"done": 1}  # the end's annotations
    assert list(events["launch"]["flow_id"]) == list(events["kernel"]["flow_id"]) == ["42"]
    a, b = p.link_pairs()
    linked = {tuple(sorted(p.column("name").to_pylist()[i] for i in pair)) for pair in zip(a, b, strict=True)}
    assert linked == {("kernel", "launch")}
    c = p.counters.get("counters")
    assert c["value"].tolist() == [1.0, 5.0, 2.5] and set(c["name"]) == {"memory"}
    assert events["kernel"]["framework_stream_id"] == "gpu stream"


def test_sequence_defaults_incremental_clock_and_snapshot(tmp_path: Path) -> None:
    b = Builder()
    b.thread(9, 10, 11)
    b.scoped_clock(1, track=9, boottime=1_000_000, start=500)
    # Deltas on clock 64, each from the previous timestamp on the sequence: 10, +5, +20
    for delta, kind, name in ((10, BEGIN, "a"), (5, END, None), (20, INSTANT, "b")):
        b.event(1, delta, kind, None, name)
    prof = load(b.write(tmp_path / "c.pftrace"))
    got = {r["name"]: (r["start_ts"], r["end_ts"]) for r in rows(prof)}
    assert got == {"a": (1_000_010, 1_000_015), "b": (1_000_035, 1_000_035)}


def test_clock_without_snapshot_is_said(tmp_path: Path) -> None:
    b = Builder()
    b.thread(1, 10, 11)
    p = b.packet(1, 100)
    p.timestamp_clock_id = 3  # MONOTONIC, and no snapshot relates it to BOOTTIME
    p.track_event.type = INSTANT
    p.track_event.track_uuid = 1
    p.track_event.name = "x"
    prof = load(b.write(tmp_path / "m.pftrace"))
    assert len(prof) == 1
    assert any("MONOTONIC" in k for k in prof.warnings)


def test_older_sdk_thread_descriptor_per_sequence(tmp_path: Path) -> None:
    b = Builder()
    p = b.packet(3)
    p.thread_descriptor.pid, p.thread_descriptor.tid, p.thread_descriptor.thread_name = 20, 21, "worker"
    b.event(3, 100, BEGIN, None, "old")
    b.event(3, 200, END, None)
    prof = load(b.write(tmp_path / "old.pftrace"))
    r = rows(prof)[0]
    assert (r["name"], r["process_id"], r["thread_id"], r["end_ts"]) == ("old", 20, 21, 200)


def test_neuron_explorer_layout_maps_to_neuron_columns(tmp_path: Path) -> None:
    path = neuron_explorer_layout().write(tmp_path / "system_profile.pftrace")
    p = load(path)
    hw = p.events[p.events["name"] == "nc_exec_running"]
    assert set(hw["instance_id"]) == {"i-0aaa", "i-0bbb"}
    assert set(zip(hw["instance_id"], hw["nc_idx"], hw["worker_gid"], strict=True)) == {
        ("i-0aaa", 0, 0), ("i-0aaa", 1, 1), ("i-0bbb", 0, 2), ("i-0bbb", 1, 3)}
    assert set(hw["trace_event_source"]) == {"neuron_hw"}
    assert set(hw["process_id"]) == {4001}
    assert json.loads(hw["extra_attributes_json"].iloc[0])["model_name"] == "neff_fwd"
    labels = p.tracks("neuron_core")["label"].tolist()
    assert "i-0aaa/NC:0" in labels and "i-0bbb/NC:1" in labels
    for mode in nw.GROUPINGS:
        assert len(p.tracks(mode))
    tb = temporal_breakdown(p)
    assert len(tb) == 4
    assert np.allclose(tb[["compute_time_pctg", "non_compute_time_pctg", "idle_time_pctg"]].sum(axis=1), 100, atol=0.01)
    late = stragglers(p)
    assert len(late) == 4


def test_device_profiles_beside_the_system_trace(tmp_path: Path) -> None:
    neuron_explorer_layout().write(tmp_path / "system_profile.pftrace")
    b = Builder()
    b.process(1, 1, "NeuronCore 0")
    b.named(2, "qSyncIO0", parent=1)
    b.named(3, "Tensor", parent=1)
    b.event(1, 100, BEGIN, 3, "MATMUL", {"operands": "a,b"})
    b.event(1, 180, END, 3)
    b.event(1, 120, BEGIN, 2, "dma packet")
    b.event(1, 130, END, 2)
    b.write(tmp_path / "device_profile_model_7.pftrace")
    p = nw.load_profile(tmp_path / "system_profile.pftrace", prepare=False)
    dp = p.device_profiles
    assert dp["device_profile_name"].tolist() == ["device_profile_model_7"] and dp["model_id"].tolist() == [7]
    trace = p.device_trace("device_profile_model_7")
    assert trace.instructions["opcode"].tolist() == ["MATMUL"]
    assert trace.instructions["timeline_track"].tolist() == ["Tensor"]
    assert trace.dma["queue_name"].tolist() == ["qSyncIO0"]
    from neuron_widgets.widgets.device_viewer import DeviceTraceViewer

    viewer = DeviceTraceViewer(str(tmp_path / "device_profile_model_7.pftrace"))
    assert set(viewer.profile.tracks("engines")["label"]) == {"Engines/Tensor", "DMA/qSyncIO0"}


def test_gzip_and_other_names_detected_by_content(tmp_path: Path) -> None:
    data = neuron_explorer_layout().bytes()
    (tmp_path / "a.perfetto-trace").write_bytes(data)
    (tmp_path / "b.pb").write_bytes(gzip.compress(data))
    (tmp_path / "c.bin").write_bytes(data)
    for name in ("a.perfetto-trace", "b.pb", "c.bin"):
        assert len(load(tmp_path / name)) == 48


# -- bad input ------------------------------------------------------------------------------

def test_truncated_trace_keeps_what_came_before(tmp_path: Path) -> None:
    data = neuron_explorer_layout().bytes()
    cut = tmp_path / "cut.pftrace"
    cut.write_bytes(data[: len(data) * 2 // 3])
    p = load(cut)
    assert 0 < len(p) < 48
    assert any("cut short" in k for k in p.warnings)


def test_length_prefix_past_the_end(tmp_path: Path) -> None:
    bad = tmp_path / "len.pftrace"
    bad.write_bytes(Builder().bytes() + b"\x0a\xff\xff\x03" + b"\x00" * 10)
    with pytest.raises(nw.ProfileError, match="cut short"):
        load(bad)


def test_unknown_packets_fields_and_wrong_types_are_counted(tmp_path: Path) -> None:
    b = Builder()
    b.thread(1, 10, 11)
    b.event(1, 100, BEGIN, 1, "kept")
    b.event(1, 200, END, 1)
    p = b.packet(1, 150)
    p.ftrace_stats.SetInParent()  # a packet kind we do not show
    p.ftrace_stats.phase = 1
    data = b.bytes()
    # A TracePacket whose track_event (field 11) is a varint, and one with an unknown field 999.
    wrong = b"\x40\x01" + b"\x58\x05"
    unknown = b"\x40\x01" + b"\xb8\x3e\x07"
    data += b"\x0a" + bytes([len(wrong)]) + wrong + b"\x0a" + bytes([len(unknown)]) + unknown
    path = tmp_path / "odd.pftrace"
    path.write_bytes(data)
    prof = load(path)
    assert [r["name"] for r in rows(prof)] == ["kept"]
    text = " ".join(prof.warnings)
    assert "unexpected wire type" in text and "does not show" in text


def test_end_without_begin_and_begin_never_ended(tmp_path: Path) -> None:
    b = Builder()
    b.thread(1, 10, 11)
    b.event(1, 50, END, 1)
    b.event(1, 100, BEGIN, 1, "hung")
    b.event(1, 120, INSTANT, 1, "later")
    p = load(b.write(tmp_path / "h.pftrace"))
    hung = next(r for r in rows(p) if r["name"] == "hung")
    assert hung["incomplete"] and hung["end_ts"] == 120
    text = " ".join(p.warnings)
    assert "no begin" in text and "never ended" in text


@pytest.mark.parametrize("content", [b"\x0a\x05\x40", b"\x0a", b"\x0aNOT-A-TRACE" * 3])
def test_garbage_is_an_error_naming_the_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "junk.pftrace"
    path.write_bytes(content)
    with pytest.raises(nw.ProfileError) as err:
        load(path)
    assert "junk.pftrace" in str(err.value)


def test_json_and_parquet_are_not_claimed(tmp_path: Path) -> None:
    from neuron_widgets.readers.perfetto import reader as perfetto

    (tmp_path / "t.json").write_text('\n{"traceEvents": []}')
    assert not perfetto.sniff(tmp_path / "t.json")
    (tmp_path / "x.pb").write_bytes(b"PAR1" + b"\x00" * 20)
    assert not perfetto.sniff(tmp_path / "x.pb")


def test_timeline_on_a_pftrace(tmp_path: Path) -> None:
    from neuron_widgets.widgets import Timeline

    p = nw.load_profile(neuron_explorer_layout().write(tmp_path / "system_profile.pftrace"))
    tl = Timeline(p, grouping="neuron_core")
    sent: list = []
    tl.send = lambda content, buffers=None: sent.append((content, buffers or []))  # type: ignore[method-assign]
    tl._on_msg(tl, {"uuid": "u", "type": "viewport", "t0": 0, "t1": tl.span[1], "width": 4000, "tracks": None,
                    "grouping": "neuron_core"}, [])
    meta, buffers = sent[-1]
    counts = dict(zip(meta["columns"], buffers, strict=True))
    assert len(np.frombuffer(counts["row"], np.int32)) == len(p)
    hw = int(p.events.loc[p.events["name"] == "nc_exec_running", "id"].iloc[0])
    tl.select(hw)
    assert tl.selection_detail["name"] == "nc_exec_running"
    assert p.event(hw)["args"]["model_name"] == "neff_fwd"  # what EventDetails shows


def test_perfetto_process_and_thread_names_label_tracks(tmp_path: Path) -> None:
    b = Builder()
    b.process(1, 10, "python")
    b.thread(2, 10, 11, "main")
    b.thread(3, 10, 12)
    for track in (2, 3):
        b.event(1, 100, BEGIN, track, "x")
        b.event(1, 200, END, track)
    p = load(b.write(tmp_path / "names.pftrace"))
    assert p.tracks("default")["label"].tolist() == ["names/python 10/main 11", "names/python 10/TID:12"]


def test_many_flow_ids_grow_the_flow_arrays(tmp_path: Path) -> None:
    # More flow ids than the first allocation holds (1,024): the bulk pass grows its arrays and reads again.
    b = Builder()
    b.thread(1, 10, 11)
    for k in range(20):
        b.event(1, 100 + k * 10, BEGIN, 1, f"e{k}", flows=tuple(range(k * 100, k * 100 + 100)))
        b.event(1, 105 + k * 10, END, 1)
    p = load(b.write(tmp_path / "flows.pftrace"))
    got = p.column("flow_id").to_pylist()
    assert sum(len(x) for x in got) == 2000 and got[0][:2] == ["0", "1"]
