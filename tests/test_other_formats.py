"""Legacy Neuron JSON and the runtime's trace JSON, from hand-written files per the published fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neuron_widgets as nw
from neuron_widgets.readers.columns import _as_int

INST = "i-0b1e4a2f9c8d7e6f5"
T0 = 1_700_000_000_000_000_000


def legacy(tmp_path: Path, key: str = "trace_event") -> Path:
    events = [
        {"id": 1, "name": "nrt_execute", "timestamp": T0, "duration": 5000, "group": "nrt-nc-000", "instance_id": INST,
         "lnc_idx": 0, "process_id": 42, "thread_id": 7, "type": 3, "parent_id": None, "size": 0},
        {"id": 2, "name": "kbl_exec_wait", "timestamp": T0 + 1000, "duration": 3000, "group": "nrt-nc-000",
         "instance_id": INST, "process_id": 42, "type": 4, "parent_id": 1},
        {"id": 3, "name": "nc_exec_running", "timestamp": T0 + 1200, "duration": 2500, "instance_id": INST,
         "process_id": 42, "thread_id": 7, "nc_idx": 0, "lnc_idx": 0, "device_core_idx": 4, "exec_id": 9,
         "model_name": "neff_x", "timestamp_unit": "ns"},
        {"id": 4, "name": "aten::mm", "timestamp": T0 + 500, "duration": 100, "group": "framework-8037",
         "instance_id": INST, "process_id": 42, "type": 99999},
        {"id": 5, "name": "nrt_tensor_write", "timestamp": T0 + 9000, "duration": 10, "group": "nrt-nc-001",
         "instance_id": INST, "process_id": 42, "thread_id": 8, "tensor_id": 2**60 + 3, "tensor_name": "<script>x</script>"},
        "garbage",
    ]
    doc = {key: events,
           "mem_usage": [{"instance_id": INST, "percent_usage": 40.5, "timestamp": T0, "usage": 123}],
           "cpu_util": [{"cpu_id": 0, "instance_id": INST, "timestamp": T0, "util": 55.0}, {"cpu_id": 1}],
           "device_mem_usage": [{"hbm_idx": 0, "total_bytes": 10, "dram_spill_bytes": 1, "timestamp": T0}]}
    (tmp_path / "system_profile.json").write_text(json.dumps(doc))
    (tmp_path / "device_profile_model_10001.json").write_text(json.dumps({"summary": [{}], "instruction": []}))
    return tmp_path / "system_profile.json"


@pytest.mark.parametrize("key", ["trace_event", "trace_events", "events"])
def test_legacy_system_profile(tmp_path: Path, key: str) -> None:
    p = nw.load_profile(legacy(tmp_path, key))
    assert p.format == "neuron-json"
    e = p.events.set_index("id")
    assert e.loc[4, "trace_event_source"] == "framework" and e.loc[4, "thread_id"] == 8037
    assert e.loc[3, "trace_event_source"] == "neuron_hw" and e.loc[3, "pcore_idx"] == 4
    assert e.loc[1, "nc_idx"] == 0 and e.loc[5, "nc_idx"] == 1  # from lnc_idx and from the group name
    # The nested event has no thread of its own: it sits with its parent, one lane deeper.
    assert e.loc[2, "parent_id"] == 1 and e.loc[2, "thread_id"] == 7
    lanes = dict(zip(p.core.column("id").to_pylist(), p.track_index("default").lane.tolist(), strict=True))
    assert lanes[2] == lanes[1] + 1
    # nrt_tensor_write moves data to the device: its own transfer track per instance and core.
    assert set(p.tracks()["label"]) == {f"{INST}/PID:42/framework/TID:8037", f"{INST}/PID:42/neuron_rt/NC:0",
                                         f"{INST}/NC:1/host_to_device_transfers", f"{INST}/PID:42/neuron_hw/NC0:4"}
    args = p.event(5)["args"]
    assert args["tensor_id"] == 2**60 + 3 and args["tensor_name"] == "<script>x</script>"
    assert p.event(3)["args"] == {"device_core_idx": 4, "exec_id": 9, "model_name": "neff_x"}
    assert p.host_memory["used_bytes"].tolist() == [123]
    assert p.cpu_usage["cpu_id"].tolist() == ["0"]
    assert "dram_spill_bytes" in p.hbm_usage
    assert p.device_profiles["model_id"].tolist() == [10001]
    text = " ".join(p.warnings.lines())
    assert "not objects, skipped: 1" in text and "cpu_util entries without a usable timestamp, skipped: 1" in text


def test_legacy_device_file_is_explained(tmp_path: Path) -> None:
    legacy(tmp_path)
    with pytest.raises(nw.ProfileError, match=r"device_profile_model_10001\.json: is a device profile") as got:
        nw.load_profile(tmp_path / "device_profile_model_10001.json")
    assert "nw.load_device_trace(" in str(got.value) and "DeviceTraceViewer(" in str(got.value)
    # Alone, it points to no system_profile.json that is not there.
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "device_profile_model_10001.json").write_bytes((tmp_path / "device_profile_model_10001.json").read_bytes())
    with pytest.raises(nw.ProfileError) as got:
        nw.load_profile(alone / "device_profile_model_10001.json")
    assert "no system_profile.json is beside it" in str(got.value) and "Load the system_profile.json" not in str(got.value)


def test_legacy_without_events(tmp_path: Path) -> None:
    (tmp_path / "system_profile.json").write_text(json.dumps({"mem_usage": [], "version": 1}))
    with pytest.raises(nw.ProfileError, match=r"has no trace_event / trace_events / events list \(its keys: mem_usage"):
        nw.load_profile(tmp_path / "system_profile.json")


def runtime_doc() -> dict:
    return {"data_version": 2, "instance_id": INST, "events": [
        {"event_type": "nrt_execute", "phase": "start", "tracking_id": 5, "nc_idx": 1, "timestamp_ns": T0 + 100,
         "data": {"exec_id": 1, "model_id": 3, "model_name": "neff_a"}},
        {"event_type": "nc_exec_running", "phase": "start", "tracking_id": 6, "nc_idx": 1, "timestamp_ns": T0 + 200,
         "data": {"exec_id": 1, "device_core_idx": 3, "nc_timestamp_ns": 99}},
        {"event_type": "nc_exec_running", "phase": "stop", "tracking_id": 6, "nc_idx": 1, "timestamp_ns": T0 + 700},
        {"event_type": "nrt_execute", "phase": "stop", "tracking_id": 5, "nc_idx": 1, "timestamp_ns": T0 + 900,
         "data": {"ret": 0}},
        {"event_type": "hw_notify", "phase": "instant", "tracking_id": 7, "nc_idx": 1, "timestamp_ns": T0 + 300},
        {"event_type": "nrt_execute", "phase": "start", "tracking_id": 8, "nc_idx": 1, "timestamp_ns": T0 + 1000,
         "data": {"exec_id": 2}},
        {"event_type": "nrt_execute", "phase": "stop", "tracking_id": 99, "nc_idx": 1, "timestamp_ns": T0 + 1100},
    ]}


def test_runtime_json(tmp_path: Path) -> None:
    (tmp_path / "rt.json").write_text(json.dumps(runtime_doc()))
    p = nw.load_profile(tmp_path / "rt.json")
    assert p.format == "neuron-runtime-json"
    ev = p.events
    done = ev[(ev["name"] == "nrt_execute") & ~ev["incomplete"]].iloc[0]
    assert (done["start_ts"], done["end_ts"]) == (T0 + 100, T0 + 900)
    assert p.event(int(done["id"]))["args"] == {"tracking_id": 5, "exec_id": 1, "model_id": 3, "model_name": "neff_a",
                                                "ret": 0}
    hang = ev[ev["incomplete"]]
    assert hang["name"].tolist() == ["nrt_execute"] and hang["end_ts"].iloc[0] == p.end_ts
    hw = ev[ev["name"] == "nc_exec_running"].iloc[0]
    assert hw["trace_event_source"] == "neuron_hw" and hw["pcore_idx"] == 3
    assert (ev[ev["name"] == "hw_notify"]["duration_ns"] == 0).all()
    text = " ".join(p.warnings.lines())
    assert "never stopped (shown open to the trace end, marked incomplete): 1" in text
    assert "'stop' events with no open 'start' of the same tracking_id, ignored: 1" in text
    assert "events without an end time" not in text  # counted once, not twice
    assert set(p.tracks("neuron_core")["label"]) == {f"{INST}/NC:1"}


_value = st.one_of(st.none(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
                   st.text(max_size=4), st.booleans(), st.lists(st.integers(), max_size=2))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(st.fixed_dictionaries({}, optional={
    "event_type": st.sampled_from(["nrt_execute", "nc_exec_running"]) | _value,
    "phase": st.sampled_from(["start", "stop", "instant"]) | _value, "tracking_id": _value, "nc_idx": _value,
    "timestamp_ns": st.integers(0, 2**62) | _value, "data": st.dictionaries(st.text(max_size=3), _value, max_size=3) | _value,
}) | _value, max_size=20))
def test_fuzz_runtime_json(tmp_path: Path, events) -> None:
    p = _loaded_or_explained(tmp_path / "rt.json", {"data_version": 2, "events": events})
    if p is None:
        return
    # Times past 2^62 - 1 ns are dropped and counted (README, "Limits and safety").
    timed = [e for e in events if isinstance(e, dict) and (t := _as_int(e.get("timestamp_ns"))) is not None
             and abs(t) < 2**62]
    starts = sum(1 for e in timed if e.get("phase") == "start")
    stops = sum(1 for e in timed if e.get("phase") == "stop")
    others = len(timed) - starts - stops
    unmatched = sum(v for k, v in p.warnings.counts.items() if "no open 'start'" in k)
    hanging = int(p.core.column("incomplete").to_numpy().sum())
    # Every start is one event (closed, or kept open); every stop closes one or is counted.
    assert len(p) == starts + others
    assert stops == (starts - hanging) + unmatched


def _loaded_or_explained(path: Path, doc: object) -> nw.Profile | None:
    """Load `doc` written to `path`: a usable profile, or None after checking the error names the file."""
    path.write_text(json.dumps(doc))
    try:
        p = nw.load_profile(path)
    except nw.ProfileError as exc:
        assert path.name in str(exc)
        return None
    for g in nw.GROUPINGS:
        assert p.tracks(g)["events"].sum() == len(p)
    assert p.table.num_rows == len(p)
    return p


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(st.fixed_dictionaries({}, optional={
    "id": _value, "name": st.sampled_from(["nrt_execute", "nc_exec_running"]) | _value, "timestamp": _value,
    "duration": _value, "group": _value, "instance_id": _value, "process_id": _value, "thread_id": _value,
    "parent_id": _value, "type": _value, "nc_idx": _value, "timestamp_unit": _value,
}) | _value, max_size=20), series=_value)
def test_fuzz_legacy_json(tmp_path: Path, events, series) -> None:
    doc = {"trace_event": events, "mem_usage": series, "cpu_util": [series]}
    p = _loaded_or_explained(tmp_path / "system_profile.json", doc)
    if p is None:
        return
    usable = [e for e in events if isinstance(e, dict)]
    dropped = sum(v for k, v in p.warnings.counts.items() if "dropped" in k)
    assert len(p) + dropped == len(usable)


def _legacy_doc(events: list) -> dict:
    return {"trace_event": events}


def _runtime_doc(events: list) -> dict:
    return {"data_version": 2, "events": events}


@pytest.mark.parametrize("make", [_legacy_doc, _runtime_doc], ids=["legacy", "runtime"])
def test_truncated_and_fake_gzip(tmp_path: Path, make) -> None:
    text = json.dumps(make([{"name": "a", "event_type": "a", "timestamp": 1, "timestamp_ns": 1}]))
    (tmp_path / "cut.json").write_text(text[: len(text) - 5])
    with pytest.raises(nw.ProfileError, match=r"cut\.json: is not valid JSON .*cut short"):
        nw.load_profile(tmp_path / "cut.json")
    (tmp_path / "plain.json.gz").write_text(text)
    assert len(nw.load_profile(tmp_path / "plain.json.gz")) == 1
    import gzip as gz

    (tmp_path / "half.json.gz").write_bytes(gz.compress(text.encode() * 200)[:60])
    with pytest.raises(nw.ProfileError, match=r"half\.json\.gz: the compressed data is damaged or cut short"):
        nw.load_profile(tmp_path / "half.json.gz")


def test_legacy_bad_values_are_counted(tmp_path: Path) -> None:
    events = [
        {"id": 1, "name": "ok", "timestamp": T0, "duration": 10, "process_id": 1},
        {"id": 1, "name": "dup", "timestamp": T0 + 5, "duration": 10, "process_id": 1},
        {"id": 2**60, "name": "bigid", "timestamp": T0 + 6, "duration": 1, "process_id": 1},
        {"id": 3, "name": "nan", "timestamp": "NaN", "duration": 1},
        {"id": 4, "name": "overflow", "timestamp": 10**30, "duration": 1},
        {"id": 5, "name": "backwards", "timestamp": T0 + 8, "duration": -4},
        {"id": 6, "name": "x" * 10_000_000, "timestamp": T0 + 9, "duration": 1},
    ]
    (tmp_path / "system_profile.json").write_text(json.dumps({"trace_event": events}))
    p = nw.load_profile(tmp_path / "system_profile.json")
    names = p.core.column("name").to_pylist()
    assert {"ok", "dup", "bigid", "backwards"} <= set(names) and "nan" not in names and "overflow" not in names
    assert 2**60 in p.core.column("id").to_pylist()
    assert max(len(n) for n in names) == 10_000_000
    text = " ".join(p.warnings.lines())
    assert "events without a usable timestamp, dropped: 2" in text
    assert "ending before they start" in text and "duplicate event ids" in text
