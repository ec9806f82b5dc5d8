"""Device traces on the timeline engine: DeviceEvents, the summary strip, DeviceTraceViewer and DeviceProfilePicker."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import ipywidgets as w
import numpy as np
import pandas as pd
import pytest
from conftest import trace
from test_widgets import Recorder, columns

import neuron_widgets as nw
from neuron_widgets.model.device.events import DeviceEvents
from neuron_widgets.model.device.strip import engine_strip
from neuron_widgets.model.interval_union import busy_ns
from neuron_widgets.widgets import DeviceProfilePicker, DeviceTraceViewer, EventDetails, GroupingSelector, Timeline, device_viewer

T0 = 1_000_000_000


def hand_made() -> nw.DeviceTrace:
    """Two physical cores, every table the viewer draws, flows between an instruction and a DMA packet."""
    ins = pd.DataFrame({
        "start_ts": T0 + np.array([0, 50, 230, 100, 400, 10]), "end_ts": T0 + np.array([100, 120, 300, 200, 500, 60]),
        "engine": ["tensor", "tensor", "vector", "pool", "tensor", "scalar"],
        "timeline_track": ["Tensor", "Tensor", "Vector", None, "Tensor", "Scalar"],
        "pcore_idx": [0, 0, 0, 1, 1, 1], "opcode": ["MATMUL", "MATMUL", "<b>ADD</b>", "POOL", "MATMUL", "ACT"],
        "operands": ["a", "b", "c", "d", "e", "f"], "id": [11, 12, 13, 14, 15, 16],
    })
    ins["duration_ns"] = ins["end_ts"] - ins["start_ts"]
    dma = pd.DataFrame({"start_ts": T0 + np.array([120, 130]), "end_ts": T0 + np.array([220, 150]),
                        "pcore_idx": [0, 0], "id": [7, 8], "queue_idx": [2, 12], "queue_type": ["input", "output"],
                        "transfer_bytes": [4096, 1024]})
    cc = pd.DataFrame({"start_ts": [T0 + 200], "end_ts": [T0 + 450], "operation": ["AllReduce"], "stream_id": [3],
                       "op_id": [1]})
    sem = pd.DataFrame({"timestamp": T0 + np.array([5, 300, 20]), "id": ["s1", "s1", "s2"], "value": [1, 0, 4]})
    flows = pd.DataFrame({"in_id": [11, 7], "out_id": [7, 13], "in_table": ["Instruction", "DmaPacket"],
                          "out_table": ["DmaPacket", "Instruction"]})
    summary = pd.DataFrame({"total_time": [500], "mfu_estimated_percent": [41.5]})
    info = pd.DataFrame({"execution_index": [0], "neff_name": ["neff_x"], "execution_start_ts": [T0],
                         "execution_end_ts": [T0 + 500]})
    return nw.DeviceTrace("hand-made", "test", ins, dma, sem, cc, flows, summary, info,
                          metadata={"profile_name": "hand_made_profile"})


def test_device_events_tracks_names_and_semaphore_spans() -> None:
    ev = DeviceEvents(hand_made())
    labels = ev.tracks("engines")["label"].tolist()
    assert labels == ["Core 0/Engines/Tensor", "Core 0/Engines/Vector", "Core 1/Engines/Tensor",
                      "Core 1/Engines/Scalar", "Core 1/Engines/Pool", "Core 0/DMA/queue 2", "Core 0/DMA/queue 12",
                      "CC ops/Stream 3", "Semaphores/s1", "Semaphores/s2"]
    assert ev.tracks("tables")["label"].tolist() == ["Engines", "DMA", "CC ops", "Semaphores"]
    assert len(ev) == 6 + 2 + 1 + 3
    # The two overlapping MATMULs of core 0 take two lanes of one track.
    assert ev.tracks("engines").set_index("label").loc["Core 0/Engines/Tensor", "lanes"] == 2
    # A semaphore value holds until that semaphore's next update; the last until the trace ends.
    sem = ev.events[ev.events["table"] == "semaphores"].sort_values("start_ts")
    assert sem["name"].tolist() == ["value 1", "value 4", "value 0"]
    assert (sem["end_ts"] - T0).tolist() == [300, 500, 500]
    with pytest.raises(ValueError, match="engines, tables"):
        ev.check_grouping("default")


def test_device_events_details_arguments_and_flows() -> None:
    ev = DeviceEvents(hand_made())
    row = int(np.flatnonzero(ev.events["name"].to_numpy() == "<b>ADD</b>")[0])
    event = ev.event(row=row)
    assert event["table"] == "instructions" and event["args"]["operands"] == "c" and event["args"]["id"] == 13
    assert ev.args_of_rows(np.array([row]))[0] == {"operands": "c", "engine": "vector"}
    # Flow: MATMUL 11 -> DMA 7 -> ADD 13. The DMA packet's upstream is the MATMUL, downstream the ADD.
    dma_row = int(np.flatnonzero((ev.events["table"] == "dma").to_numpy() & (ev.events["start_ts"] == T0 + 120))[0])
    deps = ev.dependencies(row=dma_row)
    assert deps["upstream"]["name"].tolist() == ["MATMUL"]
    assert deps["downstream"]["name"].tolist() == ["<b>ADD</b>"]
    assert ev.dependencies(row=row)["upstream"]["table"].tolist() == ["dma"]


def test_summary_strip_counts_overlap_once_and_reads_mfu() -> None:
    assert busy_ns(np.array([0, 50, 400]), np.array([100, 120, 500])) == 220
    assert busy_ns(np.array([], np.int64), np.array([], np.int64)) == 0
    chips = {c["label"]: c for c in engine_strip(hand_made())}
    assert chips["Execution"]["value"] == "500 ns"
    # Tensor on both cores: [0,120) and [400,500) -> 220 ns of 500.
    assert chips["Tensor"]["share"] == pytest.approx(220 / 500)
    assert chips["DMA"]["value"].startswith("5.12 kB")
    assert chips["MFU"]["value"] == "41.5%"


@pytest.mark.parametrize("seed", range(12))
def test_strip_chips_name_engines_as_their_tracks_do(seed: int) -> None:
    # ActiveTime names engines its own way (gpsimd, tensor); the chips must read as the tracks do.
    from random_device import random_device_trace

    trace = random_device_trace(seed)
    ins = trace.instructions
    if ins.empty:
        return
    trace.active_time = pd.DataFrame({"start_ts": ins["start_ts"], "end_ts": ins["end_ts"],
                                      "duration_ns": ins["end_ts"] - ins["start_ts"],
                                      "engine": ins["engine"].str.lower(), "pcore_idx": 0})
    tracks = {lab.split("/")[-1] for lab in DeviceEvents.of(trace).track_index("engines").tracks["label"]}
    engines = [c["label"] for c in engine_strip(trace) if c["label"] not in ("Execution", "DMA", "MFU", "MBU",
                                                                               "MFU achievable")]
    assert engines and set(engines) <= tracks, (engines, tracks)
    assert "gpsimd" not in engines and "tensor" not in engines


def test_viewer_draws_a_device_trace_through_the_same_wire() -> None:
    viewer = DeviceTraceViewer(hand_made())
    assert viewer.grouping == "engines" and viewer.title == "Device trace hand_made_profile · neff_x"
    assert [c["label"] for c in viewer.strip][:2] == ["Execution", "Tensor"]
    rec = Recorder(viewer)
    meta, buffers = rec.ask(type="viewport", grouping="engines", t0=0, t1=600, width=600)
    cols = columns(meta, buffers)
    assert meta["generation"] == viewer.generation and cols["row"].size == len(viewer.profile)
    assert set(cols["track"]) == set(range(len(viewer.tracks)))
    hover = rec.ask(type="hover", row=int(cols["row"][0]))[0]
    assert hover["args"]
    # Selecting an event fills EventDetails as on the system timeline, arguments included.
    details = EventDetails(viewer)
    viewer.selected_row = int(np.flatnonzero(viewer.profile.events["name"].to_numpy() == "POOL")[0])
    args = dict(map(tuple, details.event["args"]))
    assert details.event["title"] == "POOL" and args["operands"] == "d"
    selector = GroupingSelector(viewer)
    assert [v for _, v in selector.options] == ["engines", "tables"]
    selector.value = "tables"
    assert [t["label"] for t in viewer.tracks] == ["Engines", "DMA", "CC ops", "Semaphores"]


def execution_rows(profile: nw.Profile) -> np.ndarray:
    codes = profile.name_dictionary().index("nc_exec_running")
    return np.flatnonzero(profile.name_codes() == codes)


def wait_loaded(viewer: DeviceTraceViewer, timeout: float = 30) -> None:
    for th in threading.enumerate():
        if th.name == "neuron-widgets-device-trace":
            th.join(timeout)
    assert not viewer.loading


def test_viewer_follows_clicks_on_executions_and_retargets() -> None:
    profile = nw.sample_profile()
    tl = Timeline(profile)
    viewer = DeviceTraceViewer(tl)
    assert viewer.title == "Device Trace Viewer" and len(viewer.profile) == 0
    rec = Recorder(viewer)
    # A runtime event is not an execution: the viewer stays as it is.
    rt = int(np.flatnonzero(profile.array("end_ts") > 0)[0])
    gen = viewer.generation
    tl.selected_row = rt if rt not in set(execution_rows(profile)) else rt + 1
    assert viewer.generation == gen and not viewer.loading
    rows = execution_rows(profile)
    tl.selected_row = int(rows[0])
    wait_loaded(viewer)
    first = viewer.device_trace
    assert viewer.error == "" and viewer.title.startswith("Device trace ") and viewer.generation > gen
    assert first.alignment == "timestamp_sync_point"
    assert viewer.span[1] > 0 and any(t["label"] == "Engines/Tensor" for t in viewer.tracks)
    # A reply asked before the retarget is stamped with the old generation (the browser drops it).
    old = viewer.generation
    tl.selected_row = int(rows[5])
    wait_loaded(viewer)
    assert viewer.generation > old and viewer.selected_row == -1
    meta, _ = rec.ask(type="viewport", grouping="engines", t0=0, t1=viewer.span[1], width=400)
    assert meta["generation"] == viewer.generation
    # Same execution again: served from the profile's cache.
    assert profile.device_trace(int(profile.array("id")[rows[0]])) is first
    # A later binding picks the current selection up at once.
    other = DeviceTraceViewer(tl)
    wait_loaded(other)
    assert other.title.startswith("Device trace ")
    viewer.unfollow()
    gen = viewer.generation
    tl.selected_row = int(rows[2])
    wait_loaded(viewer)
    assert viewer.generation == gen


def test_viewer_shows_errors_in_the_widget_and_drops_superseded_loads() -> None:
    profile = nw.sample_profile()
    viewer = DeviceTraceViewer()
    # An event with no device profile: the error is in the widget, loading is over, the kernel is fine.
    no_nc = int(np.flatnonzero(pd.isna(profile.events["nc_idx"]).to_numpy())[0])
    viewer.open_event(int(profile.array("id")[no_nc]), profile, background=False)
    assert "ran on no NeuronCore" in viewer.error and not viewer.loading
    with pytest.raises(ValueError, match="follow"):
        viewer.open_event(1)
    # Two loads: the older one finishing last must not replace the newer one's trace.
    gate = threading.Event()
    slow = viewer._load(lambda: (gate.wait(10), hand_made())[1], "slow", "slow", background=True)
    viewer._load(lambda: nw.DeviceTrace("fast", "test", hand_made().instructions.iloc[:2]), "fast", "fast",
                 background=False)
    gate.set()
    assert slow is not None
    slow.join(10)
    assert len(viewer.device_trace) == 2 and viewer.status == "fast" and not viewer.loading


def test_strip_waits_for_the_first_window_then_follows(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a background load the tracks go out first; the strip comes once the first window is answered."""
    monkeypatch.setattr(device_viewer, "STRIP_WAIT_S", 20.0)  # so only the answer can end the wait here
    viewer = DeviceTraceViewer()
    rec = Recorder(viewer)
    trace = hand_made()
    loaded = viewer._load(lambda: trace, "hand made", "done", background=True)
    assert loaded is not None
    for _ in range(1000):
        if viewer.device_trace is trace and viewer.title.startswith("Device trace "):
            break
        threading.Event().wait(0.01)
    assert viewer.device_trace is trace and viewer.title.startswith("Device trace ")
    assert viewer.strip == [] and viewer.loading and loaded.is_alive()
    t = time.perf_counter()
    rec.ask(type="viewport", grouping="engines", t0=0, t1=viewer.span[1], width=400)
    loaded.join(10)
    assert time.perf_counter() - t < 10 and not loaded.is_alive()
    assert [c["label"] for c in viewer.strip][:2] == ["Execution", "Tensor"] and not viewer.loading
    # Shown again: the strip kept with the trace comes at once.
    viewer._load(lambda: trace, "hand made", "done", background=False)
    assert viewer.strip and not viewer.loading


def test_picker_lists_profiles_and_submit_opens_a_viewer_below() -> None:
    profile = nw.sample_profile()
    picker = DeviceProfilePicker(Timeline(profile))
    assert [c[1] for c in picker.list.columns][:4] == ["Name", "Instance", "Process", "NeuronCore"]
    assert len(picker.list.rows) == len(profile.device_profiles)
    assert all(isinstance(v, str) for r in picker.list.rows for v in r.values())
    picker._on_msg(picker.list, {"type": "submit", "index": 2}, [])
    viewer = picker.viewer
    assert viewer is not None and picker.children[-1] is viewer
    wait_loaded(viewer)
    name = profile.device_profiles["device_profile_name"].iat[2]
    assert name in viewer.title and "device clock" in viewer.notes[0]
    picker.submit(profile.device_profiles["device_profile_name"].iat[0], background=False)
    assert picker.viewer is viewer and len(picker.children) == 2  # the same viewer, retargeted
    with pytest.raises(ValueError, match="no device profile named"):
        picker.submit("nope")
    picker._on_msg(picker.list, {"type": "submit", "index": 999}, [])
    assert picker.list.status.startswith("could not open it")


def test_picker_into_an_output_or_an_existing_viewer() -> None:
    profile = nw.sample_profile()
    out = w.Output()
    picker = DeviceProfilePicker(profile, output=out)
    picker.submit(profile.device_profiles["device_profile_name"].iat[1], background=False)
    assert len(picker.children) == 1 and len(out.outputs) == 1
    mine = DeviceTraceViewer()
    DeviceProfilePicker(profile, viewer=mine).submit(profile.device_profiles["device_profile_name"].iat[1],
                                                     background=False)
    assert mine.title.startswith("Device trace ")
    # A profile without device profiles: an empty list that says so, not a crash.
    kineto = DeviceProfilePicker(nw.load_profile(trace("hta/triton_example.json.gz")))
    assert kineto.list.rows == []


def test_the_strip_shows_measured_mfu_and_labels_the_achievable_one(tmp_path) -> None:
    """neuron-profile 2.27's JSON: `_percent` metrics are fractions; the achievable MFU is not the MFU."""
    import json

    from neuron_widgets.analysis.device_profiles import _numbers

    doc = {"instruction": [{"timestamp": 0, "duration": 100, "label": "TensorMatrix", "opcode": "MATMUL", "id": 1},
                           {"timestamp": 150, "duration": 50, "label": "Vector", "opcode": "ADD", "id": 2}],
           "summary": [{"total_time": 0.0002, "mfu_estimated_percent": 0.0004,
                        "mfu_max_achievable_estimated_percent": 0.269, "mbu_estimated_percent": 0.0123}],
           "layer_summary": [{"name": "/sg00", "start": 0, "end": 200, "duration": 200, "tensor_engine_mfu": 0.0004}]}
    path = tmp_path / "device_profile_model_1.json"
    path.write_text(json.dumps(doc))
    trace = nw.load_device_trace(path)
    chips = {c["label"]: c for c in engine_strip(trace)}
    assert chips["MFU"]["value"] == "0.04%"
    assert chips["MFU achievable"]["value"] == "26.9%"
    assert chips["MBU"]["value"] == "1.23%"
    numbers = _numbers(trace)
    assert numbers["mfu_pctg"] == pytest.approx(0.04) and numbers["mfu_achievable_pctg"] == pytest.approx(26.9)


def test_a_slow_drill_down_never_replaces_a_newer_trace_shown(sample_dir: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A's events are still being indexed when the user shows B: A's load ends later and must drop its view."""
    sample = nw.load_profile(sample_dir)  # its own: no device trace read yet (the session's may hold A's)
    rows = np.flatnonzero(sample.name_codes() == sample.name_dictionary().index("nc_exec_running"))
    ids = sample.array("id")[rows]
    trace_b = sample.device_trace(int(ids[-1]))
    indexing = threading.Event()
    real = DeviceEvents.drawn

    def slow(drawn: nw.DeviceTrace) -> DeviceEvents:
        indexing.set()
        time.sleep(0.8)
        return real(drawn)

    monkeypatch.setattr(device_viewer.DeviceEvents, "drawn", staticmethod(slow))
    tl = Timeline(sample)
    v = DeviceTraceViewer(tl)
    told: list[nw.DeviceTrace] = []
    v.on_trace(told.append)
    th = v.open_event(int(ids[0]), sample)
    assert th is not None and indexing.wait(30)  # A has passed its first check that it is the newest
    v.show(trace_b, "B")
    th.join(60)
    assert v.device_trace is trace_b and v.status == "B"
    assert v.strip == DeviceTraceViewer._strip_of(trace_b)
    assert told and told[-1] is trace_b and all(t is trace_b for t in told)
