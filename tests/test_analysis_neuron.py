"""The analyses on hand-written Neuron profiles whose answers are worked out on paper below."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.frame import frame_of

INST, PID = "i-0handwritten0000", 10


def write(directory: Path, events: list[tuple], flows: bool = True) -> nw.Profile:
    """events: (name, source, nc, start, end or None, args, flow ids)."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (name, source, nc, start, end, args, flow) in enumerate(events):
        rows.append({"id": i + 1, "name": name, "start_ts": start, "end_ts": end,
                     "duration_ns": None if end is None else end - start, "trace_event_source": source,
                     "instance_id": INST, "process_id": PID, "thread_id": 100 + nc if source == "neuron_rt" else 200 + nc,
                     "nc_idx": nc, "pcore_idx": nc if source == "neuron_hw" else None,
                     "worker_gid": nc if source == "neuron_hw" else None,
                     "flow_id": [str(f) for f in flow] if flow and flows else None,
                     "extra_attributes_json": json.dumps(args) if args else None})
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("start_ts", pa.int64()), ("end_ts", pa.int64()),
                        ("duration_ns", pa.int64()), ("trace_event_source", pa.string()), ("instance_id", pa.string()),
                        ("process_id", pa.int64()), ("thread_id", pa.int64()), ("nc_idx", pa.int64()),
                        ("pcore_idx", pa.int64()), ("worker_gid", pa.int64()), ("flow_id", pa.list_(pa.string())),
                        ("extra_attributes_json", pa.string())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), directory / "SystemProfileEvents.parquet")
    return nw.load_profile(directory)


def ex(nc: int, start: int, end: int | None, exec_id: int, model: str, flow: int | None) -> list[tuple]:
    return [("nc_exec_running", "neuron_hw", nc, start, end, {"exec_id": exec_id, "model_name": model, "nc_idx": nc},
             [flow] if flow else None)]


def rt(nc: int, start: int, end: int | None, exec_id: int, flow: int | None, ret: int = 0) -> list[tuple]:
    return [("nrt_execute", "neuron_rt", nc, start, end, {"exec_id": exec_id, "ret": ret}, [flow] if flow else None)]


def cc(nc: int, name: str, start: int, end: int, exec_id: int) -> list[tuple]:
    return [(name, "neuron_hw", nc, start, end, {"exec_id": exec_id, "cc_op": "all_reduce"}, None)]


# Core 0: two executions, the second launched late by the host (its nrt_execute starts at 200,
# after the first execution ended at 90). Core 1: back to back, 2 ns apart, launched early.
# Step 1's barrier: core 0 arrives at 50, core 1 at 58 (core 1 last, 8 late).
# Step 2's barrier: core 1 arrives at 180, core 0 at 250 (core 0 last, 70 late).
EVENTS = [
    *rt(0, 0, 100, 1, 1), *ex(0, 10, 90, 1, "neff_A", 1),
    *cc(0, "cc_exec_barrier", 50, 60, 1), *cc(0, "cc_running", 55, 70, 1),
    *rt(0, 200, 300, 2, 2), *ex(0, 210, 290, 2, "neff_B", 2),
    *cc(0, "cc_exec_barrier", 250, 280, 2), *cc(0, "cc_running", 280, 285, 2),
    *rt(1, 0, 100, 1, 3), *ex(1, 10, 90, 1, "neff_A", 3),
    *cc(1, "cc_exec_barrier", 58, 60, 1), *cc(1, "cc_running", 60, 70, 1),
    *rt(1, 50, 195, 2, 4), *ex(1, 92, 190, 2, "neff_B", 4),
    *cc(1, "cc_exec_barrier", 180, 185, 2), *cc(1, "cc_running", 185, 188, 2),
]


@pytest.fixture(params=[True, False], ids=["flows", "no-flows"])
def two_cores(request: pytest.FixtureRequest, tmp_path: Path) -> nw.Profile:
    return write(tmp_path / "p", EVENTS, flows=request.param)


def by_core(df, column):
    return dict(zip(df["nc_idx"].astype(int), df[column], strict=True))


def test_temporal_breakdown_on_paper(two_cores: nw.Profile) -> None:
    t = A.temporal_breakdown(two_cores)
    # Core 0: span 10..290 = 280; busy 80 + 80 = 160; barrier 10 + 30 = 40; collective within busy
    # 15 + 5 = 20, less its 5 under the barrier = 15; compute 160 - 40 - 15 = 105; idle 120.
    # Core 1: span 10..190 = 180; busy 80 + 98 = 178; barrier 2 + 5 = 7; collective 10 + 3 = 13;
    # compute 158; idle 2.
    assert by_core(t, "span_ns") == {0: 280, 1: 180}
    assert by_core(t, "compute_time_ns") == {0: 105, 1: 158}
    assert by_core(t, "collective_time_ns") == {0: 15, 1: 13}
    assert by_core(t, "barrier_time_ns") == {0: 40, 1: 7}
    assert by_core(t, "idle_time_ns") == {0: 120, 1: 2}
    assert by_core(t, "non_compute_time_ns") == {0: 55, 1: 20}
    assert by_core(t, "compute_time_pctg")[0] == pytest.approx(37.5)
    assert by_core(t, "idle_time_pctg")[0] == pytest.approx(100 * 120 / 280)
    parts = t[["compute_time_pctg", "collective_time_pctg", "barrier_time_pctg", "idle_time_pctg"]].sum(axis=1)
    assert np.allclose(parts, 100)
    assert list(t["worker_gid"]) == [0, 1]


def test_idle_time_breakdown_on_paper(two_cores: nw.Profile) -> None:
    idle = A.idle_time_breakdown(two_cores, kernel_wait_ns=5)
    got = {(int(r.nc_idx), r.idle_category): r.idle_time_ns for r in idle.itertuples()}
    # Core 0's gap (90 -> 210) is the host's: its nrt_execute started at 200, after 90.
    # Core 1's gap (90 -> 92) is shorter than 5 ns and its launch (50) came before 90: kernel wait.
    assert got == {(0, "host_wait"): 120, (0, "kernel_wait"): 0, (0, "other"): 0,
                   (1, "host_wait"): 0, (1, "kernel_wait"): 2, (1, "other"): 0}
    # With a 1 ns threshold the 2 ns gap is no launch overhead any more.
    idle = A.idle_time_breakdown(two_cores, kernel_wait_ns=1)
    assert idle[(idle["nc_idx"] == 1) & (idle["idle_category"] == "other")]["idle_time_ns"].item() == 2
    assert idle[idle["nc_idx"] == 0]["idle_time_ratio"].tolist() == [1.0, 0.0, 0.0]


def test_launch_stats_on_paper(two_cores: nw.Profile) -> None:
    ls = A.launch_stats(two_cores).sort_values(["nc_idx", "start_ts"])
    assert ls["cpu_duration_ns"].tolist() == [100, 100, 100, 145]
    assert ls["device_duration_ns"].tolist() == [80, 80, 80, 98]
    assert ls["launch_delay_ns"].tolist() == [10, 10, 10, 42]
    assert ls["exec_id"].tolist() == [1, 2, 1, 2]
    linked = set(ls["linked_by"])
    assert linked == ({"flow"} if "flow_id" in two_cores.column_names and
                      two_cores.column("flow_id").null_count < len(two_cores) else {"time"})


def test_stragglers_on_paper(two_cores: nw.Profile) -> None:
    s = A.stragglers(two_cores)
    # Each core is last once; core 0 by 70 (step 2), core 1 by 8 (step 1): core 0 is worse.
    assert s["nc_idx"].tolist() == [0, 1]
    assert s["times_last"].tolist() == [1, 1]
    assert s["mean_lag_ns"].tolist() == [35.0, 4.0]
    assert s["max_lag_ns"].tolist() == [70, 8]
    assert s["wait_caused_ns"].tolist() == [70, 8]
    steps = A.stragglers(two_cores, per_step=True)
    assert steps["step"].tolist() == [1, 2]
    assert steps["nc_idx"].tolist() == [1, 0]
    assert steps["lag_ns"].tolist() == [8, 70]


def test_kernel_breakdown_and_overlap_on_paper(two_cores: nw.Profile) -> None:
    neff, names = A.kernel_breakdown(two_cores)
    assert neff.set_index("model_name")["sum_ns"].to_dict() == {"neff_B": 178, "neff_A": 160}
    assert neff["percentage"].sum() == pytest.approx(100)
    assert names.set_index("name").loc["nc_exec_running", "count"] == 4
    over = A.comm_comp_overlap(two_cores)
    assert over["overlap_time_ns"].tolist() == [0, 0]
    assert over["comm_time_ns"].tolist() == [20, 13]
    assert "device profile" in " ".join(over.attrs["notes"])


def test_two_executions_at_once_overlap(tmp_path: Path) -> None:
    # A collective of exec 1 (20..40) runs while exec 2 (30..60) computes on the same core: 10 ns.
    p = write(tmp_path / "p", [*ex(0, 0, 50, 1, "a", None), *ex(0, 30, 60, 2, "b", None),
                               *cc(0, "cc_running", 20, 40, 1)])
    assert A.comm_comp_overlap(p)["overlap_time_ns"].tolist() == [10]
    assert A.comm_comp_overlap(p)["comp_comm_overlap_pctg"].tolist() == [50.0]


def test_errors_hangs_and_the_tail(tmp_path: Path) -> None:
    events = [*rt(0, 0, 100, 1, 1, ret=1003), *ex(0, 10, 90, 1, "neff_A", 1),
              ("numerical_err", "neuron_hw", 0, 70, 70, {"exec_id": 1, "ret": 1003}, None),
              *rt(0, 200, None, 2, 2), *ex(0, 210, None, 2, "neff_B", 2),
              ("kbl_exec_wait", "neuron_rt", 0, 205, None, {"exec_id": 2}, None),
              *rt(1, 0, 40, 1, 3, ret=5), *ex(1, 5, 35, 1, "neff_A", 3), *rt(1, 300, 320, 2, 4)]
    p = write(tmp_path / "p", events)
    e = A.errors_and_hangs(p)
    assert e["kind"].tolist() == ["error", "error", "error", "hang"]
    assert e["name"].tolist() == ["nrt_execute", "nrt_execute", "numerical_err", "nc_exec_running"]
    assert e["code"].tolist()[:3] == [1003, 5, 1003]
    assert "NaN" in e["meaning"][0] and "NRT_TIMEOUT" in e["meaning"][1]
    # None of the error events carries a model name: each comes from its execution (core, exec_id).
    assert e["model_name"].tolist() == ["neff_A", "neff_A", "neff_A", "neff_B"]
    hang = e.iloc[-1]
    assert (hang["nc_idx"], hang["exec_id"]) == (0, 2)  # three open events, one hang
    tail = A.last_events(p, hang, n=3)
    assert tail["name"].tolist() == ["nrt_execute", "kbl_exec_wait", "nc_exec_running"]
    assert tail["incomplete"].tolist() == [True, True, True]
    # An unclosed execution counts as running to the profile's end.
    t = A.temporal_breakdown(p)
    assert any("never completed" in n for n in t.attrs["notes"])
    assert by_core(t, "busy_time_ns")[0] == 80 + (p.end_ts - 210)


def test_compare_by_name_neff_and_core(two_cores: nw.Profile, tmp_path: Path) -> None:
    slower = write(tmp_path / "slow", [(n, s, c, a, (b + 20 if n == "nc_exec_running" and b else b), args, f)
                                       for n, s, c, a, b, args, f in EVENTS])
    d = A.compare(two_cores, slower)
    row = d.iloc[0]
    assert row["name"] == "nc_exec_running" and row["delta_total_ns"] == 80 and row["delta_mean_ns"] == 20
    assert (d["delta_total_ns"].iloc[1:] == 0).all()
    neff = A.compare(two_cores, slower, by="neff").set_index("model_name")
    assert neff["delta_total_ns"].to_dict() == {"neff_A": 40, "neff_B": 40}
    cores = A.compare(two_cores, slower, by="core")
    assert set(cores["worker_gid"]) == {0, 1}
    assert (cores["delta_idle_time_pctg"] < 0).all()
    with pytest.raises(ValueError, match="by must be"):
        A.compare(two_cores, slower, by="thread")


def test_filtered_profiles_and_notes(two_cores: nw.Profile) -> None:
    one = two_cores.filter(neuron_cores="1")
    t = A.temporal_breakdown(one)
    assert t["nc_idx"].tolist() == [1]
    assert t["compute_time_ns"].tolist() == [158]
    late = two_cores.filter(time_range=(150, 400))
    assert A.temporal_breakdown(late)["executions"].tolist() == [1, 1]
    assert A.stragglers(one).empty  # one core: nobody to wait for
    assert A.errors_and_hangs(one).empty


def test_no_barrier_events_says_so(tmp_path: Path) -> None:
    p = write(tmp_path / "p", [*ex(0, 0, 10, 1, "a", None), *ex(0, 20, 30, 2, "a", None)])
    t = A.temporal_breakdown(p)
    assert t["compute_time_ns"].tolist() == [20]
    assert any("no cc_exec_barrier" in n for n in t.attrs["notes"])
    assert A.stragglers(p).empty and any("no cc_exec_barrier" in n for n in A.stragglers(p).attrs["notes"])


def test_the_sample_tells_its_story(sample: nw.Profile) -> None:
    s = A.stragglers(sample)
    worst = s.iloc[0]
    # The sample's last core of the last process is late in most steps (sample/system.py).
    assert (worst["nc_idx"], worst["times_last"] > 0.6 * worst["steps"]) == (1, True)
    e = A.errors_and_hangs(sample)
    assert sorted(e["kind"]) == ["error", "error", "hang"]
    assert set(e.loc[e["kind"] == "error", "code"]) == {1003}
    t = A.temporal_breakdown(sample)
    assert len(t) == 8 and (t["barrier_time_ns"] > 0).all() and (t["collective_time_ns"] > 0).all()
    neff, _ = A.kernel_breakdown(sample)
    assert set(neff["model_name"]) == {"neff_fwd_5c1f9a77", "neff_bwd_9e02d4b1"}
    launches = A.launch_stats(sample)
    assert (launches["linked_by"] == "flow").all() and (launches["launch_delay_ns"] > 0).all()


def test_cores_are_numbered_alike_with_or_without_a_timeline(tmp_path: Path) -> None:
    # Four cores met in the file in no particular order: instance "i-b" first, process 20 before 10.
    write(tmp_path / "p", [*ex(1, 0, 10, 1, "a", None), *ex(0, 0, 12, 1, "a", None), *ex(1, 20, 30, 2, "a", None),
                               *ex(0, 20, 35, 2, "a", None), ("nrt_load", "neuron_rt", 0, 0, 5, None, None)])
    t = pq.read_table(tmp_path / "p" / "SystemProfileEvents.parquet")
    t = t.set_column(t.schema.get_field_index("instance_id"), "instance_id",
                     pa.array(["i-b", "i-b", "i-a", "i-a", "i-a"]))
    t = t.set_column(t.schema.get_field_index("process_id"), "process_id", pa.array([20, 10, 20, 10, 10]))
    pq.write_table(t, tmp_path / "p" / "SystemProfileEvents.parquet")
    seen = []
    for prepared in (False, True):
        profile = nw.load_profile(tmp_path / "p", prepare=False)
        if prepared:
            profile.track_index("default")  # what a timeline builds: the cores then come from its combos
        assert (profile._combos is not None) == prepared
        fr = frame_of(profile)
        codes, cores = fr.core_codes()
        assert list(zip(cores["instance_id"], cores["process_id"], cores["nc_idx"], strict=True)) == [
            ("i-a", 10, 0), ("i-a", 20, 1), ("i-b", 10, 0), ("i-b", 20, 1)]
        every = codes.full()
        by_id = dict(zip(profile.array("id").tolist(), every.tolist(), strict=True))
        assert by_id == {1: 3, 2: 2, 3: 1, 4: 0, 5: 0}  # the runtime event is on core (i-a, 10, 0) too
        assert codes[np.arange(5)].tolist() == every.tolist()
        assert codes[profile.row_of(5)] == 0
        assert cores["worker_gid"].tolist() == [0, 1, 0, 1]
        seen.append(A.temporal_breakdown(profile)[["instance_id", "process_id", "nc_idx", "busy_time_ns"]])
    assert seen[0].equals(seen[1])
    assert seen[0]["busy_time_ns"].tolist() == [15, 10, 12, 10]


def test_hundreds_of_cores(tmp_path: Path) -> None:
    # More cores than a byte can number: each runs one execution of its own length.
    events = [e for nc in range(300) for e in ex(nc, 0, 10 + nc, 1, "a", None)]
    events += [("nrt_load", "neuron_rt", nc, 0, 5, None, None) for nc in (0, 150, 299)]
    p = write(tmp_path / "p", events)
    t = A.temporal_breakdown(p)
    assert t["nc_idx"].tolist() == list(range(300))
    assert t["busy_time_ns"].tolist() == [10 + nc for nc in range(300)]
    codes, cores = frame_of(p).core_codes()
    nc_of_row = frame_of(p).combo_values("nc_idx", np.arange(len(p)))
    assert [cores["nc_idx"][c] for c in codes[np.arange(len(p))]] == list(nc_of_row)
