from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import neuron_widgets as nw
from neuron_widgets.model.lanes import assign_lanes, track_order

INST = "i-0b1e4a2f9c8d7e6f5"


def profile(rows: list[dict]) -> nw.Profile:
    base = {"nc_idx": None, "pcore_idx": None, "worker_gid": None, "framework_stream_id": None,
            "instance_id": INST, "process_id": 1765325, "thread_id": 0}
    full = [{**base, "id": i, **r} for i, r in enumerate(rows)]
    for r in full:
        r.setdefault("end_ts", r["start_ts"] + r.pop("dur", 10))
        r["duration_ns"] = r["end_ts"] - r["start_ts"]
    t = pa.Table.from_pylist(full, schema=pa.schema([
        ("id", pa.int64()), ("name", pa.string()), ("start_ts", pa.int64()), ("end_ts", pa.int64()),
        ("duration_ns", pa.int64()), ("trace_event_source", pa.string()), ("instance_id", pa.string()),
        ("process_id", pa.int64()), ("thread_id", pa.int64()), ("nc_idx", pa.int64()), ("pcore_idx", pa.int64()),
        ("worker_gid", pa.int64()), ("framework_stream_id", pa.string())]))
    from neuron_widgets.errors import LoadWarnings
    from neuron_widgets.model.schema import normalise

    return nw.Profile(normalise(t, LoadWarnings(), "test"), source="test", format="test")


ROWS = [
    {"name": "aten::mm", "trace_event_source": "framework", "start_ts": 0, "thread_id": 0},
    {"name": "graph", "trace_event_source": "framework", "start_ts": 5, "framework_stream_id": "0"},
    {"name": "nrt_execute", "trace_event_source": "neuron_rt", "start_ts": 10, "thread_id": 7, "nc_idx": 0},
    {"name": "nrt_load", "trace_event_source": "neuron_rt", "start_ts": 12, "thread_id": 8},
    {"name": "nc_exec_running", "trace_event_source": "neuron_hw", "start_ts": 20, "thread_id": 7, "nc_idx": 0,
     "pcore_idx": 4, "worker_gid": 12},
    {"name": "nc_exec_running", "trace_event_source": "neuron_hw", "start_ts": 21, "thread_id": 9, "nc_idx": 1,
     "pcore_idx": 5},
]


@pytest.mark.parametrize(("mode", "labels"), [
    ("default", [f"{INST}/PID:1765325/framework/TID:0", f"{INST}/PID:1765325/framework/Stream:0",
                 f"{INST}/PID:1765325/neuron_rt/TID:8", f"{INST}/PID:1765325/neuron_rt/NC:0",
                 f"{INST}/PID:1765325/neuron_hw/NC0:4", f"{INST}/PID:1765325/neuron_hw/NC1:5"]),
    ("cpu_device", [f"{INST}/PID:1765325/TID:0/framework", f"{INST}/PID:1765325/TID:7/neuron_rt",
                    f"{INST}/PID:1765325/TID:8/neuron_rt", f"{INST}/PID:1765325/Worker:1/neuron_hw",
                    f"{INST}/PID:1765325/Worker:12/neuron_hw"]),
    ("neuron_core", [f"{INST}/NC:0", f"{INST}/NC:1", f"{INST}/PID:1765325/TID:0", f"{INST}/PID:1765325/TID:8"]),
    ("thread", [f"{INST}/PID:1765325/TID:0", f"{INST}/PID:1765325/TID:7", f"{INST}/PID:1765325/TID:8",
                f"{INST}/PID:1765325/TID:9"]),
    ("process", [f"{INST}/PID:1765325"]),
    ("instance", [INST]),
])
def test_labels_exactly_as_neuron_explorer(mode: str, labels: list[str]) -> None:
    p = profile(ROWS)
    assert p.tracks(mode)["label"].tolist() == labels
    assert p.tracks(mode)["events"].sum() == len(ROWS)


def test_track_of_each_event_matches_its_label() -> None:
    p = profile(ROWS)
    idx = p.track_index("default")
    label_of = p.tracks("default")["label"].to_numpy()[idx.track]
    got = dict(zip(p.core.column("start_ts").to_pylist(), label_of.tolist(), strict=True))
    assert got[20].endswith("/neuron_hw/NC0:4")
    assert got[5].endswith("/framework/Stream:0")
    # Order of events inside a track follows time; offsets delimit tracks.
    for t in range(len(idx.tracks)):
        rows = idx.order[idx.offsets[t]:idx.offsets[t + 1]]
        assert (idx.track[rows] == t).all()
        assert (np.diff(p.core.column("start_ts").to_numpy()[rows]) >= 0).all()


def test_unknown_grouping() -> None:
    with pytest.raises(ValueError, match="unknown grouping 'nc'; choose one of: default, cpu_device"):
        profile(ROWS).tracks("nc")


def test_cached_per_grouping() -> None:
    p = profile(ROWS)
    assert p.track_index("thread") is p.track_index("thread")
    assert p.nbytes()["grouping"] > 0


def test_lanes_nesting_depth_and_first_free_lane() -> None:
    rows = [
        {"name": "a", "trace_event_source": "framework", "start_ts": 0, "end_ts": 100},
        {"name": "b", "trace_event_source": "framework", "start_ts": 10, "end_ts": 50},
        {"name": "c", "trace_event_source": "framework", "start_ts": 20, "end_ts": 30},
        {"name": "i", "trace_event_source": "framework", "start_ts": 20, "end_ts": 20},
        {"name": "d", "trace_event_source": "framework", "start_ts": 60, "end_ts": 70},
        # Overlaps d without nesting in it: takes the first lane free at 65 (lane 2).
        {"name": "e", "trace_event_source": "framework", "start_ts": 65, "end_ts": 120},
        {"name": "f", "trace_event_source": "framework", "start_ts": 100, "end_ts": 110},
        {"name": "same", "trace_event_source": "framework", "start_ts": 0, "end_ts": 100},
    ]
    p = profile(rows)
    lane = dict(zip(p.core.column("name").to_pylist(), p.track_index("default").lane.tolist(), strict=True))
    assert lane["a"] == 0 and lane["same"] == 1  # equal spans nest
    assert (lane["b"], lane["c"], lane["i"]) == (2, 3, 4)
    assert (lane["d"], lane["e"]) == (2, 3)
    assert lane["f"] == 0  # a has ended at 100, lane 0 is free again
    assert p.tracks("default")["lanes"].tolist() == [5]


def test_lanes_against_a_reference_on_random_data() -> None:
    rng = np.random.default_rng(1)
    n = 3000
    track = rng.integers(0, 5, n).astype(np.int32)
    start = np.sort(rng.integers(0, 10_000, n))
    end = start + rng.integers(0, 400, n)
    order0 = np.lexsort((-end, start))
    track, start, end = track[order0], start[order0], end[order0]
    order = track_order(track, 5)
    lanes, per_track = assign_lanes(track, start, end, order, 5)
    for t in range(5):
        free: list[int] = []
        for i in order[track[order] == t]:
            s, e = start[i], max(end[i], start[i] + 1)
            k = next((j for j, f in enumerate(free) if f <= s), len(free))
            if k == len(free):
                free.append(e)
            else:
                free[k] = e
            assert lanes[i] == k
        assert per_track[t] == len(free)


def test_dependency_chain_on_the_sample(sample: nw.Profile) -> None:
    ev = sample.core.to_pandas()
    fw = ev[ev["name"] == "forward"].iloc[3]
    d = sample.dependencies(int(fw["id"]))
    assert d["upstream"].empty
    down = d["downstream"]
    assert sorted(down["name"]) == ["nc_exec_running", "nc_exec_running", "nrt_execute", "nrt_execute"]
    assert set(down["instance_id"]) == {fw["instance_id"]} and set(down["process_id"]) == {fw["process_id"]}
    hw = down[down["name"] == "nc_exec_running"].iloc[0]
    back = sample.dependencies(int(hw["id"]))
    assert sorted(back["upstream"]["name"]) == ["forward", "nrt_execute"]
    assert back["downstream"].empty
    rt = back["upstream"][back["upstream"]["name"] == "nrt_execute"].iloc[0]
    assert rt["nc_idx"] == hw["nc_idx"]
    plain = ev[ev["name"] == "kbl_exec_pre"].iloc[0]
    assert sample.dependencies(int(plain["id"]))["downstream"].empty


def test_dependency_chain_on_kineto() -> None:
    from conftest import trace

    p = nw.load_profile(trace("hta/nccl_data.json.gz"))
    t = p.table
    cats = t.column("category").to_pylist()
    launches = [i for i, (c, f) in enumerate(zip(cats, t.column("flow_id").to_pylist(), strict=True))
                if c == "cuda_runtime" and f][:300]
    linked = [p.dependencies(row=r) for r in launches]
    with_gpu = [d for d in linked if len(d["downstream"])]
    # Launches whose flow has its other end in the file reach GPU work, and only GPU work.
    assert len(with_gpu) > 100
    assert all(set(d["downstream"]["trace_event_source"]) == {"device"} for d in with_gpu)
    assert all(d["upstream"].empty for d in linked)
