"""The Kineto critical path against HolisticTraceAnalysis's own critical path, on HTA's traces in the tests' data.

What is compared: the work on the path. HTA's path is the longest path of its graph, weighted by
work (CPU op time, kernel time, launch delays, kernel-to-kernel delays; no weight for the gaps
between a thread's top-level ops, nor for a blocking call: a sync or a `cudaMemcpy[Async]`); its
length is the sum of those weights. Ours covers the run end to end; its work is the time of its
segments that are not gaps, less the blocking calls inside them (which HTA weighs 0).

Both read the same events: HTA drops a trace's last ProfilerStep (the profiler usually stops mid-step)
and we do not, so HTA computes its path over the first ProfilerStep of its untouched trace
(`critical_path_analysis(annotation="ProfilerStep", instance_id=0)`), and ours is computed on the
trace cut as HTA cuts that window (CPU events that start in it with a duration, device events whose
runtime call does).

HTA 0.5.0's critical path crashes on pandas 3 (`CPGraph._create_event_nodes`, critical_path_analysis.py
line 415: `ops_df_start.drop(axis=1, columns=["dur"], inplace=True)` raises "Cannot specify both 'axis'
and 'index'/'columns'", which pandas 2 accepted, ignoring `axis`; the same call shape is at lines 419,
689, 752, 806). The test restores pandas 2's reading of that one call shape for its own duration
(`_pandas2_drop`). HTA's chained `df.col.fillna(..., inplace=True)` (lines 683, 729, 796, 841) do
nothing under pandas 3's copy-on-write; they run only for traces with `cuda_sync` records, which none
of these traces has (checked), so they do not change HTA's answer here.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import trace

import neuron_widgets as nw
from neuron_widgets import analysis as A

# Traces where both models read the same dependencies: the work on the paths agrees within 1%.
AGREE = ["trace_filter_sampled_rank-0", "trace_filter_sampled_rank-1", "nccl_data", "triton_example"]
# Traces where the models differ (see test_where_the_models_differ).
DIFFER = ["mi250_minitoy_train_ROCm6_2_kineto", "trace_diff_control_rank3of8"]


def _pandas2_drop(monkeypatch: pytest.MonkeyPatch) -> None:
    """DataFrame.drop(axis=..., columns=...) as pandas 2 took it (axis ignored), for HTA 0.5.0 on pandas 3."""
    if int(pd.__version__.split(".")[0]) < 3:
        return
    drop = pd.DataFrame.drop

    def pandas2_drop(self, labels=None, *, axis=0, index=None, columns=None, **kw):
        if index is not None or columns is not None:
            return drop(self, index=index, columns=columns, **kw)
        return drop(self, labels, axis=axis, **kw)

    monkeypatch.setattr(pd.DataFrame, "drop", pandas2_drop)


def _clip(src: Path, dst: Path) -> None:
    """The trace cut to its first ProfilerStep, as HTA's annotation window cuts it."""
    with gzip.open(src, "rt") as f:
        d = json.load(f)
    ev = d["traceEvents"]
    assert not any(e.get("cat") == "cuda_sync" for e in ev)  # HTA's pandas-3-silent branches stay unused
    steps = sorted((e for e in ev if e.get("ph") == "X" and re.match(r"ProfilerStep#\d+", str(e.get("name", "")))),
                   key=lambda e: e["ts"])
    lo, hi = steps[0]["ts"], steps[0]["ts"] + steps[0]["dur"]
    device = {"kernel", "gpu_memcpy", "gpu_memset"}
    cpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") not in device | {"cuda_sync", "gpu_user_annotation",
                                                                                 "Trace"}
           and lo <= e["ts"] <= hi and e.get("dur", 0) > 0]
    launched = {(e.get("args") or {}).get("correlation") for e in cpu} - {None}
    gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in device
           and (e.get("args") or {}).get("correlation") in launched]
    d["traceEvents"] = [e for e in ev if e.get("ph") == "M"] + cpu + gpu
    with gzip.open(dst, "wt") as f:
        json.dump(d, f)


@pytest.fixture(scope="module")
def clipped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Per trace, a directory with the trace as it is (HTA's input), and beside it one with the trace cut to its
    first step (ours)."""
    out = {}
    for name in AGREE + DIFFER:
        d = tmp_path_factory.mktemp(name)
        shutil.copy(trace(f"hta/{name}.json.gz"), d)
        cut = tmp_path_factory.mktemp(f"{name}-clipped")
        _clip(trace(f"hta/{name}.json.gz"), cut / f"{name}.json.gz")
        out[name] = d
        out[f"{name}-clipped"] = cut
    return out


def _ours(clipped: dict[str, Path], name: str) -> tuple[nw.Profile, pd.DataFrame]:
    p = nw.load_profile(clipped[f"{name}-clipped"] / f"{name}.json.gz", cache=False)
    return p, A.critical_path(p)


def _hta_path(d: Path, monkeypatch: pytest.MonkeyPatch):
    """HTA's critical path over the first ProfilerStep of the trace in `d`, and its breakdown."""
    hta = pytest.importorskip("hta.trace_analysis")
    _pandas2_drop(monkeypatch)
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ta = hta.TraceAnalysis(trace_dir=str(d))
            rank = ta.t.get_ranks()[0]
            g, ok = ta.critical_path_analysis(rank=rank, annotation="ProfilerStep", instance_id=0)
            assert ok
            return g, g.get_critical_path_breakdown()
    finally:
        logging.disable(logging.NOTSET)


def _our_work_us(p: nw.Profile, path: pd.DataFrame, blocking: list[str]) -> float:
    """The path's time that is not a gap, less the blocking calls inside it (HTA weighs those 0), in us."""
    work = path[path["kind"].astype(str) != "gap"]
    ev = p.events
    calls = ev[ev["name"].isin(blocking)]
    inside = 0
    for _, c in calls.iterrows():
        mine = work[(work["thread_id"] == c["thread_id"]) & (work["process_id"] == c["process_id"])]
        if ((mine["start_ts"] <= c["start_ts"]) & (mine["end_ts"] >= c["end_ts"])).any():
            inside += int(c["duration_ns"])
    return (int(work["duration_ns"].sum()) - inside) / 1000


@pytest.mark.parametrize("name", AGREE)
def test_path_work_agrees_with_hta(name, clipped, monkeypatch) -> None:
    g, _ = _hta_path(clipped[name], monkeypatch)
    theirs = float(sum(e.weight for e in g.critical_path_edges_set))
    p, path = _ours(clipped, name)
    mine = _our_work_us(p, path, g.BLOCKING_SYNC_CALLS)
    assert theirs > 0 and abs(mine - theirs) <= 0.01 * theirs, (name, mine, theirs)
    # And the path covers the run end to end, work and gaps.
    assert int(path["duration_ns"].sum()) == int(path["end_ts"].max() - path["start_ts"].min())


def test_where_the_models_differ(clipped, monkeypatch) -> None:
    """Two traces where the paths differ, for reasons of the models, checked so the explanation stays true.

    - mi250 (ROCm): HTA's path is all on the autograd thread, the thread with the most CPU work, though
      nothing recorded ties that thread's work to the run's end; the main thread waits for it inside
      `backward()`, which the trace does not record as a dependency. Ours follows recorded
      dependencies back from the run's last event (on the main thread), so that wait is a gap.
    - trace_diff (rank 3 of 8): most of HTA's length is "kernel-kernel overhead" on the NCCL stream: the
      idle time between consecutive kernels there, which HTA weighs as work when the next kernel was
      launched before the previous ended. That stream is waiting on events (cudaStreamWaitEvent, recorded
      without `cuda_sync` records, so neither model knows for which); ours leaves idle time as a gap.
    """
    g, bd = _hta_path(clipped[DIFFER[0]], monkeypatch)
    p, path = _ours(clipped, DIFFER[0])
    work = bd[bd["duration"] > 0]
    assert work["tid"].nunique() == 1
    autograd = int(work["tid"].iloc[0])
    last = path.iloc[-1]
    assert int(last["thread_id"]) != autograd and autograd not in set(path["thread_id"].dropna().astype(int))
    gaps = path[path["kind"].astype(str) == "gap"]
    assert gaps["duration_ns"].max() > 0.5 * path["duration_ns"].sum()  # the main thread's wait for it

    g, bd = _hta_path(clipped[DIFFER[1]], monkeypatch)
    theirs = float(sum(e.weight for e in g.critical_path_edges_set))
    idle = float(bd.loc[bd["bound_by"] == "gpu_kernel_kernel_overhead", "duration"].sum())
    assert idle > 0.5 * theirs
    p, path = _ours(clipped, DIFFER[1])
    mine = _our_work_us(p, path, g.BLOCKING_SYNC_CALLS)
    assert abs(mine - theirs) > 0.01 * theirs  # if they agree some day, move the trace to AGREE
    assert np.isfinite(mine)
