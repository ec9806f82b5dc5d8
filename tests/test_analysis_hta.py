"""The Kineto analyses against HolisticTraceAnalysis itself, on real traces, and on odd inputs."""

from __future__ import annotations

import logging
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import trace, trace_files, traces_listed

import neuron_widgets as nw
from neuron_widgets import analysis as A

SETS = {
    "sampled-2-ranks": ["hta/trace_filter_sampled_rank-0.json.gz", "hta/trace_filter_sampled_rank-1.json.gz"],
    "nccl": ["hta/nccl_data.json.gz"],
    "diff-rank3": ["hta/trace_diff_control_rank3of8.json.gz"],
    "rocm": ["hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz"],
    "dlrm-8-ranks": traces_listed("param-dlrm-8rank/*.json.gz"),
}
# Generated Kineto jobs (neuron_widgets.sample.kineto): (seed, ranks, steps, late rank).
GENERATED = {f"generated-{seed}": (seed, 2 + seed % 3, 3 + seed % 5, seed % (2 + seed % 3)) for seed in range(6)}


@pytest.fixture(scope="module", params=[*SETS, *GENERATED])
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """(our Profile, HTA's TraceAnalysis) on the same files."""
    hta = pytest.importorskip("hta.trace_analysis")
    d = tmp_path_factory.mktemp(request.param)
    if request.param in GENERATED:
        from neuron_widgets.sample.kineto import write_kineto

        seed, ranks, steps, late = GENERATED[request.param]
        files = write_kineto(d, seed, ranks, steps, late)
    else:
        files = [trace(f) for f in SETS[request.param]]
        for f in files:
            shutil.copy(f, d)
    logging.disable(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ta = hta.TraceAnalysis(trace_dir=str(d))
    logging.disable(logging.NOTSET)
    ours = nw.load_profile(files if len(files) > 1 else files[0])
    return ours, ta


def quiet(fn, *args, **kwargs):
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    finally:
        logging.disable(logging.NOTSET)


def test_temporal_breakdown_agrees_with_hta(pair) -> None:
    ours, ta = pair
    theirs = quiet(ta.get_temporal_breakdown, visualize=False).set_index("rank")
    mine = A.temporal_breakdown(ours).set_index("rank")
    assert sorted(mine.index) == sorted(theirs.index)
    for col in ("idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg"):
        diff = (mine[col] - theirs.loc[mine.index, col]).abs()
        assert (diff <= 0.5).all(), (col, diff.max())
    # HTA's times are in the trace's microseconds.
    assert np.allclose(mine["span_ns"] / 1000, theirs.loc[mine.index, "kernel_time(us)"], rtol=1e-3, atol=2)


def test_idle_time_breakdown_agrees_with_hta(pair) -> None:
    ours, ta = pair
    mine = A.idle_time_breakdown(ours)
    for rank in ta.t.get_ranks():
        theirs, _ = quiet(ta.get_idle_time_breakdown, ranks=[rank], visualize=False)
        df = ta.t.get_trace(rank)
        # HTA joins a kernel whose launch call is not in the trace to the trace's first event
        # (index_correlation 0 is row 0), and so may call its gap a host wait. We leave such
        # gaps out of host waits: on those streams only the total idle time must agree.
        unlinked = set(df[df["stream"].ne(-1) & df["index_correlation"].eq(0)]["stream"])
        for stream, their in theirs.groupby("stream"):
            got = mine[(mine["rank"] == rank) & (mine["stream"] == stream)].set_index("idle_category")["idle_time_ns"] / 1000
            total = their["idle_time"].sum()
            tol = max(0.005 * total, 2)
            assert got.sum() == pytest.approx(total, abs=tol), (rank, stream)
            for r in their.itertuples():
                if stream in unlinked:  # HTA's wrong host waits also hide some kernel waits there
                    continue
                assert got[r.idle_category] == pytest.approx(r.idle_time, abs=tol), (rank, stream, r.idle_category)
            if stream in unlinked:
                assert got["host_wait"] <= their.set_index("idle_category")["idle_time"].get("host_wait", 0) + tol


def test_comm_comp_overlap_agrees_with_hta(pair) -> None:
    ours, ta = pair
    theirs = quiet(ta.get_comm_comp_overlap, visualize=False).set_index("rank")["comp_comm_overlap_pctg"]
    mine = A.comm_comp_overlap(ours).set_index("rank")["comp_comm_overlap_pctg"]
    for rank, value in theirs.items():
        if np.isnan(value):
            assert np.isnan(mine.get(rank, np.nan))
        else:
            assert abs(mine[rank] - value) <= 0.5


def test_kernel_breakdown_agrees_with_hta(pair) -> None:
    ours, ta = pair
    their_types, their_names = quiet(ta.get_gpu_kernel_breakdown, visualize=False)
    my_types, my_names = A.kernel_breakdown(ours)
    t = their_types.set_index("kernel_type")["sum"]
    m = my_types.set_index("kernel_type")["sum"]
    assert set(m.index) == set(t.index)
    assert np.allclose(m[t.index], t, rtol=0.01, atol=5)
    # Every named kernel HTA lists (not its "others") has the same total per rank.
    named = their_names[their_names["name"] != "others"]
    mine = my_names.set_index(["name", "rank", "kernel_type"])["sum (us)"]
    for r in named.itertuples():
        key = (r.name, r.rank, r.kernel_type)
        assert key in mine.index, key
        assert mine[key] == pytest.approx(r._2, rel=0.01, abs=5), key
    # Together the rows of a rank and type hold all of its kernel time, others included.
    per = their_names.groupby(["rank", "kernel_type"])["sum (us)"].sum()
    mine_per = my_names.groupby(["rank", "kernel_type"])["sum (us)"].sum()
    assert np.allclose(mine_per[per.index], per, rtol=0.01, atol=5)


def test_launch_stats_agree_with_hta(pair) -> None:
    ours, ta = pair
    mine = A.launch_stats(ours)
    theirs = quiet(ta.get_cuda_kernel_launch_stats, ranks=ta.t.get_ranks(), visualize=False)
    # HTA knows CUDA's launch calls only; we also read HIP's (ROCm), where HTA finds nothing.
    assert set(mine["launch_name"]) <= set(A.launches.LAUNCH_NAMES + A.launches.MEMORY_LAUNCH_NAMES)
    mine = mine[~mine["launch_name"].str.startswith("hip")]
    for rank, df in theirs.items():
        got = mine[mine["rank"] == rank].set_index("correlation")
        assert len(got) == len(df), rank
        if df.empty:
            continue
        their = df.set_index("correlation")
        for col, ns in (("cpu_duration", "cpu_duration_ns"), ("gpu_duration", "device_duration_ns"),
                        ("launch_delay", "launch_delay_ns")):
            assert np.allclose(got.loc[their.index, ns] / 1000, their[col], atol=1), col


def test_stragglers_across_ranks() -> None:
    p = nw.load_profile(trace_files("param-dlrm-8rank"))
    s = A.stragglers(p)
    assert sorted(s["rank"]) == list(range(8))
    assert s["times_last"].sum() == len(A.stragglers(p, per_step=True))
    assert s["times_last"].is_monotonic_decreasing
    steps = A.stragglers(p, per_step=True)
    # Each step's straggler arrived last: its lag is the step's largest.
    assert (steps["lag_ns"] >= 0).all() and (steps["devices"] == 8).all()
    one = nw.load_profile(trace("hta/nccl_data.json.gz"))
    assert any("one rank only" in n for n in A.stragglers(one).attrs["notes"])


def test_compare_two_kineto_traces() -> None:
    a = nw.load_profile(trace("hta/trace_filter_sampled_rank-0.json.gz"))
    b = nw.load_profile(trace("hta/trace_filter_sampled_rank-1.json.gz"))
    d = A.compare(a, b)
    assert d["delta_total_ns"].abs().is_monotonic_decreasing
    ev_a = a.core.to_pandas()
    top = d.iloc[0]
    assert top["count_a"] == (ev_a["name"] == top["name"]).sum()
    assert top["total_ns_a"] == ev_a.loc[ev_a["name"] == top["name"], "duration_ns"].sum()
    cores = A.compare(a, b, by="core")
    # Two different ranks: matched by position, and said so.
    assert list(cores["rank"]) == [0] and any("position" in n for n in cores.attrs["notes"])
    assert cores["delta_idle_time_pctg"].iloc[0] == pytest.approx(
        cores["idle_time_pctg_b"].iloc[0] - cores["idle_time_pctg_a"].iloc[0])


ODD = ["catapult/simple_trace.json", "catapult/big_trace.json", "catapult/main_thread_has_unclosed_slices.json",
       "catapult/async_begin_end.json", "hta/triton_example.json.gz", "kineto/before_fix_trace.json"]


@pytest.mark.parametrize("rel", ODD)
def test_every_analysis_runs_on_odd_traces(rel: str) -> None:
    p = nw.load_profile(trace(rel))
    run_all(p)


def test_every_analysis_runs_on_empty_and_tiny_profiles(sample: nw.Profile, tmp_path: Path) -> None:
    empty = sample.filter(instances=["i-none"])
    assert len(empty) == 0
    for df in run_all(empty):
        assert df.empty
    one = nw.load_profile(_write_json(tmp_path / "one.json", [{"ph": "X", "name": "k", "cat": "kernel", "ts": 1,
                                                                "dur": 5, "pid": 0, "tid": 7,
                                                                "args": {"stream": 7, "correlation": 1}}]))
    t = A.temporal_breakdown(one)
    assert t["span_ns"].tolist() == [5000] and t["idle_time_ns"].tolist() == [0]
    hw = sample.filter(event_types="nc_exec_running")
    assert A.temporal_breakdown(hw)["barrier_time_ns"].eq(0).all()
    run_all(hw)


def run_all(p: nw.Profile) -> list[pd.DataFrame]:
    out = [A.temporal_breakdown(p), A.idle_time_breakdown(p), *A.kernel_breakdown(p), A.comm_comp_overlap(p),
           A.launch_stats(p), A.stragglers(p), A.stragglers(p, per_step=True), A.errors_and_hangs(p),
           A.compare(p, p)]
    for df in out:
        assert isinstance(df, pd.DataFrame)
        assert isinstance(df.attrs.get("notes", []), list)
    return out


def _write_json(path: Path, events: list[dict]) -> Path:
    import json

    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_kernels_whose_runtime_calls_carry_no_correlation_id(tmp_path: Path) -> None:
    # A trace cut at the host side: runtime calls without ids. Every gap is then not the host's fault.
    events = [{"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "ts": t, "dur": 2, "pid": 1, "tid": 1}
              for t in (0, 10, 20)]
    events += [{"ph": "X", "name": "k", "cat": "kernel", "ts": t, "dur": 5, "pid": 0, "tid": 7,
                "args": {"stream": 7, "correlation": i}} for i, t in enumerate((3, 50, 200))]
    p = nw.load_profile(_write_json(tmp_path / "t.json", events))
    idle = A.idle_time_breakdown(p)
    assert idle.loc[idle["idle_category"] == "host_wait", "idle_time_ns"].sum() == 0
    assert idle["idle_time_ns"].sum() == (50 - 8 + 200 - 55) * 1000
    assert A.launch_stats(p).empty
    run_all(p)
