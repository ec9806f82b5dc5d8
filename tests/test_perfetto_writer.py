"""Writing Perfetto traces: a valid TracePacket stream, and the round trip back to the same profile."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import trace
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

import neuron_widgets as nw
from neuron_widgets.cli import main
from neuron_widgets.export.perfetto import export_perfetto

COLUMNS = ["name", "start_ts", "end_ts", "trace_event_source", "instance_id", "process_id", "thread_id", "nc_idx",
           "pcore_idx", "worker_gid", "framework_stream_id", "incomplete"]


def check_valid(path: Path) -> pb.Trace:
    """What Perfetto's importer relies on: described tracks, interned names, strictly nested slices."""
    t = pb.Trace.FromString(path.read_bytes())
    described, names, arg_names, pids = set(), set(), set(), []
    per_track: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for k, p in enumerate(t.packet):
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            described.add(d.uuid)
            if d.HasField("process"):
                pids.append(d.process.pid)
        if p.HasField("interned_data"):
            names |= {e.iid for e in p.interned_data.event_names}
            arg_names |= {e.iid for e in p.interned_data.debug_annotation_names}
        if p.HasField("track_event"):
            te = p.track_event
            assert te.track_uuid in described, "an event on a track described later or never"
            if te.type in (pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_INSTANT):
                assert te.name_iid in names
                assert all(a.name_iid in arg_names for a in te.debug_annotations)
            if te.type != pb.TrackEvent.TYPE_COUNTER:
                per_track[te.track_uuid].append((p.timestamp, k, te.type))
    assert len(pids) == len(set(pids)), "two process descriptors share a pid: Perfetto would merge them"
    for events in per_track.values():
        depth = 0
        for _, _, kind in sorted(events):
            if kind == pb.TrackEvent.TYPE_SLICE_BEGIN:
                depth += 1
            elif kind == pb.TrackEvent.TYPE_SLICE_END:
                depth -= 1
                assert depth >= 0, "an end with nothing open on its track"
    return t


def _numbers(v: object) -> object:
    # A key whose values mix 24 and 24.5 is written as doubles: the same number, read back as 24.0.
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, dict):
        return {k: _numbers(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_numbers(x) for x in v]
    return v


def frame(p: nw.Profile) -> pd.DataFrame:
    df = p.events[[*COLUMNS, "extra_attributes_json", "flow_id"]].copy()
    df["args"] = [json.dumps(_numbers(json.loads(x)), sort_keys=True) if isinstance(x, str) else None
                  for x in df.pop("extra_attributes_json")]
    df["flow_id"] = [tuple(sorted(x)) if x is not None else () for x in df["flow_id"]]
    for c in ("name", "trace_event_source", "instance_id", "framework_stream_id"):
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    keys = ["start_ts", "end_ts", "name", "instance_id", "process_id", "thread_id", "nc_idx", "worker_gid", "args"]
    return df.astype({"nc_idx": "Int64", "pcore_idx": "Int64", "worker_gid": "Int64"}).sort_values(
        keys, na_position="first").reset_index(drop=True)


@pytest.mark.parametrize("grouping", ["default", "neuron_core", "process"])
def test_sample_round_trip(sample: nw.Profile, tmp_path: Path, grouping: str) -> None:
    out = tmp_path / "s.pftrace"
    got = export_perfetto(sample, out, grouping=grouping, chunk=4096)  # several chunks
    assert got["events"] == len(sample)
    check_valid(out)
    back = nw.load_profile(out, prepare=False, cache=False)
    assert not [k for k in back.warnings if "never ended" not in k]
    a, b = frame(sample), frame(back)
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
    for mode in nw.GROUPINGS:
        assert sample.tracks(mode)["label"].tolist() == back.tracks(mode)["label"].tolist()
    # Flows link the same events.
    def pairs(p: nw.Profile) -> set:
        i, j = p.link_pairs()
        s, e = p.array("start_ts"), p.array("end_ts")
        return {tuple(sorted(((s[x], e[x]), (s[y], e[y])))) for x, y in zip(i, j, strict=True)}
    assert pairs(sample) == pairs(back)
    labels = {d.track_descriptor.name for d in pb.Trace.FromString(out.read_bytes()).packet
              if d.HasField("track_descriptor")}
    assert set(sample.tracks(grouping)["label"]) <= labels


def test_chunks_do_not_change_the_bytes(sample: nw.Profile, tmp_path: Path) -> None:
    export_perfetto(sample, tmp_path / "a.pftrace", chunk=1000)
    export_perfetto(sample, tmp_path / "b.pftrace", chunk=1 << 20)
    a, b = pb.Trace.FromString((tmp_path / "a.pftrace").read_bytes()), pb.Trace.FromString((tmp_path / "b.pftrace").read_bytes())
    events = [(p.timestamp, p.track_event.SerializeToString()) for p in a.packet if p.HasField("track_event")]
    assert events == [(p.timestamp, p.track_event.SerializeToString()) for p in b.packet if p.HasField("track_event")]


def test_counters_become_counter_tracks(sample: nw.Profile, tmp_path: Path) -> None:
    t = check_valid(Path(export_perfetto(sample, tmp_path / "c.pftrace")["path"]))
    counter_tracks = {p.track_descriptor.uuid: p.track_descriptor.name for p in t.packet
                      if p.HasField("track_descriptor") and p.track_descriptor.HasField("counter")}
    assert any("HBM usage" in n for n in counter_tracks.values())
    assert any("Host memory" in n for n in counter_tracks.values())
    values = [p.track_event.double_counter_value for p in t.packet
              if p.HasField("track_event") and p.track_event.track_uuid in counter_tracks]
    assert len(values) > 100 and max(values) > 0


def test_overlapping_events_that_do_not_nest_get_sibling_tracks(tmp_path: Path) -> None:
    doc = {"traceEvents": [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 10},  # overlaps a, not inside it
        {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 6, "dur": 2},
    ]}
    src = tmp_path / "t.json"
    src.write_text(json.dumps(doc))
    p = nw.load_profile(src, prepare=False)
    out = tmp_path / "t.pftrace"
    export_perfetto(p, out)
    t = check_valid(out)
    names = [d.track_descriptor.name for d in t.packet if d.HasField("track_descriptor")]
    assert any(n.endswith("(2)") for n in names)
    back = nw.load_profile(out, prepare=False, cache=False)
    assert sorted(zip(back.column("name").to_pylist(), back.array("start_ts"), back.array("end_ts"), strict=True)) == \
        [("a", 0, 10_000), ("b", 5_000, 15_000), ("c", 6_000, 8_000)]
    assert back.tracks("default")["label"].tolist() == p.tracks("default")["label"].tolist()


def test_kineto_trace_round_trip(tmp_path: Path) -> None:
    p = nw.load_profile(trace("hta/trace_filter_sampled_rank-0.json.gz"), prepare=False)
    out = tmp_path / "k.pftrace"
    export_perfetto(p, out)
    check_valid(out)
    back = nw.load_profile(out, prepare=False, cache=False)
    pd.testing.assert_frame_equal(frame(p), frame(back), check_dtype=False)


def test_a_timeline_exports_its_grouping_and_range(sample: nw.Profile, tmp_path: Path) -> None:
    from neuron_widgets.widgets.timeline import Timeline

    tl = Timeline(sample, grouping="neuron_core")
    o = sample.origin_ts
    tl.view = [1_000_000.0, 20_000_000.0]
    got = nw.export_perfetto(tl, tmp_path / "v.pftrace")
    back = nw.load_profile(tmp_path / "v.pftrace", prepare=False, cache=False)
    s, e = sample.array("start_ts"), sample.array("end_ts")
    inside = int(((s <= o + 20_000_000) & (e >= o + 1_000_000)).sum())
    assert got["grouping"] == "neuron_core" and got["events"] == len(back) == inside < len(sample)
    t = pb.Trace.FromString((tmp_path / "v.pftrace").read_bytes())
    names = {d.track_descriptor.name for d in t.packet if d.HasField("track_descriptor")}
    assert set(sample.tracks("neuron_core")["label"]) & names


def test_a_device_viewer_exports_its_device_trace(sample_dir: Path, tmp_path: Path) -> None:
    from neuron_widgets.widgets.device_viewer import DeviceTraceViewer

    dev = sorted((sample_dir / "device_profiles").iterdir())[0]
    viewer = DeviceTraceViewer(str(dev))
    out = tmp_path / "d.pftrace"
    got = nw.export_perfetto(viewer, out, time_range=None)
    check_valid(out)
    t = pb.Trace.FromString(out.read_bytes())
    names = {d.track_descriptor.name for d in t.packet if d.HasField("track_descriptor")}
    assert set(viewer.profile.tracks("engines")["label"]) <= names
    assert got["events"] > 0
    back = nw.load_device_trace(out)
    assert len(back.instructions) + len(back.dma) == got["events"]


def test_cli_convert_both_ways(sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.pftrace"
    assert main(["convert", str(sample_dir), "-o", str(out)]) == 0
    assert "events" in capsys.readouterr().out
    pq_dir = tmp_path / "pq"
    assert main(["convert", str(out), "-o", str(pq_dir), "--to", "parquet"]) == 0
    again = nw.load_profile(pq_dir, prepare=False)
    first = nw.load_profile(sample_dir, prepare=False)
    assert again.format == "neuron-parquet" and len(again) == len(first)
    assert np.array_equal(np.sort(again.array("start_ts")), np.sort(first.array("start_ts")))
    assert "no table for these counters" in capsys.readouterr().out  # the .pftrace's counter tracks
    direct = tmp_path / "direct"
    assert main(["convert", str(sample_dir), "-o", str(direct), "--to", "parquet"]) == 0
    side = nw.load_profile(direct, prepare=False)
    assert len(side.hbm_usage) == len(first.hbm_usage) and len(side.cpu_usage) == len(first.cpu_usage)
    assert main(["convert", str(tmp_path / "missing.json"), "-o", str(tmp_path / "y.pftrace")]) == 1
    assert "missing.json" in capsys.readouterr().err
