"""Findings of device traces (Neuron Explorer's conditions) and Kineto traces (HTA's vocabulary): each rule fires
on a trace built to have the problem, and not on one without it; random traces never crash."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
from random_device import random_device_trace

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.findings_rows import COLUMNS
from neuron_widgets.model.device.trace import DeviceTrace

TRACES = Path(__file__).parent / "data" / "traces"


def _trace(opcodes: dict[str, tuple[str, int]], dma: pd.DataFrame | None = None, summary: dict | None = None,
           fmt: str = "neuron-parquet") -> DeviceTrace:
    """Back-to-back instructions per engine track: {track: (opcode, count)} of 100 ns each, or a list of pairs."""
    rows = []
    for track, spec in opcodes.items():
        t = 0
        for op, n in (spec if isinstance(spec, list) else [spec]):
            for _ in range(n):
                rows.append({"start_ts": t, "end_ts": t + 100, "timeline_track": track, "engine": track.lower(),
                             "opcode": op})
                t += 100
    s = pd.DataFrame({"name": list(summary), "value": list(summary.values())}) if summary else pd.DataFrame()
    return DeviceTrace("t", fmt, pd.DataFrame(rows), dma=dma if dma is not None else pd.DataFrame(), summary=s)


def _rules(f: pd.DataFrame) -> set[str]:
    return set(f["rule"])


def test_mfu_far_below_achievable() -> None:
    t = _trace({"Tensor": ("MATMUL", 100)}, summary={"mfu_estimated_percent": 0.02,
                                                     "mfu_max_achievable_estimated_percent": 0.30}, fmt="neuron-json")
    f = A.findings(t)
    r = f[f["rule"] == "mfu"].iloc[0]
    assert r["evidence"]["mfu_pct"] == pytest.approx(2.0) and r["evidence"]["achievable_pct"] == pytest.approx(30.0)
    assert "Measured MFU is 2%, 6.7% of the 30% this NEFF could reach" in r["title"] and np.isnan(r["gain_ns"])
    ok = _trace({"Tensor": ("MATMUL", 100)}, summary={"mfu_estimated_percent": 0.2,
                                                      "mfu_max_achievable_estimated_percent": 0.30}, fmt="neuron-json")
    assert "mfu" not in _rules(A.findings(ok))


def test_transpose_share_of_the_tensor_engine() -> None:
    f = A.findings(_trace({"Tensor": [("MATMUL", 80), ("TRANSPOSE", 20)], "Vector": ("TRANSPOSE", 50)}))
    r = f[f["rule"] == "transpose"].iloc[0]
    assert r["evidence"]["share"] == pytest.approx(0.2) and r["evidence"]["transposes"] == 20
    assert "Transposes are 20% of the tensor engine's instruction time (20 of 100 instructions)" in r["title"]
    # at 10% exactly: not over Neuron Explorer's threshold; transposes on other engines do not count
    assert "transpose" not in _rules(A.findings(_trace({"Tensor": [("MATMUL", 90), ("TRANSPOSE", 10)],
                                                        "Vector": ("TRANSPOSE", 500)})))


def _dma(n: int, each: int, gap: int, size: int) -> pd.DataFrame:
    s = np.arange(n, dtype=np.int64) * (each + gap)
    return pd.DataFrame({"start_ts": s, "end_ts": s + each, "queue_name": "qSyncIO0-Q1-E0",
                         "transfer_bytes": np.full(n, size)})


def test_dma_bound_and_small_dmas() -> None:
    t = _trace({"Tensor": ("MATMUL", 20)}, dma=_dma(2000, 5, 0, 64))  # DMA busy 10 µs, the engine 2 µs
    f = A.findings(t)
    r = f[f["rule"] == "dma_bound"].iloc[0]
    assert r["evidence"]["dma_busy_share"] == pytest.approx(1.0) and r["evidence"]["busiest_engine"] == "Tensor"
    s = f[f["rule"] == "small_dma"].iloc[0]
    assert s["evidence"]["average_bytes"] == 64 and "2,000 DMA packets move 64 bytes on average" in s["title"]
    quiet = A.findings(_trace({"Tensor": ("MATMUL", 200)}, dma=_dma(2000, 1, 9, 4096)))
    assert not {"dma_bound", "small_dma"} & _rules(quiet)


def test_semaphore_waits_per_engine() -> None:
    t = _trace({"Tensor": ("MATMUL", 100), "Sync": [("SEM_WAIT", 40), ("EVENT_SET", 60)]})
    r = A.findings(t).set_index("rule").loc["semaphore_waits"]
    assert r["evidence"]["engine"] == "Sync" and r["evidence"]["share"] == pytest.approx(0.4)
    assert r["title"].startswith("Sync sits in semaphore waits 40%")
    t = _trace({"Tensor": ("MATMUL", 100), "Sync": [("SEM_WAIT", 10), ("EVENT_SET", 90)]})
    assert "semaphore_waits" not in _rules(A.findings(t))


def test_spill_reload_share_of_hbm_reads() -> None:
    f = A.findings(_trace({"Tensor": ("MATMUL", 10)}, summary={"hbm_read_bytes": 1000, "hbm_reload_bytes": 400}))
    r = f[f["rule"] == "spill_reload"].iloc[0]
    assert r["evidence"]["share"] == pytest.approx(0.4) and "40% of the execution's HBM reads" in r["title"]
    f = A.findings(_trace({"Tensor": ("MATMUL", 10)}, summary={"hbm_read_bytes": 1000, "hbm_reload_bytes": 250}))
    assert "spill_reload" not in _rules(f)


def test_the_sample_device_trace() -> None:
    trace = nw.sample_profile().device_trace("neuron_profile_001")
    f = A.findings(trace)
    assert list(f.columns) == COLUMNS and f["gain_ns"].isna().all()
    assert "semaphore_waits" in _rules(f)


@pytest.mark.parametrize("seed", range(0, 60, 4))
def test_random_device_traces_never_crash(seed: int) -> None:
    f = A.findings(random_device_trace(seed))
    assert list(f.columns) == COLUMNS and f["severity"].isin(["high", "medium", "low"]).all()
    assert all(isinstance(t, str) and t for t in f["title"])
    json.dumps(f["evidence"].tolist())


def _kineto(tmp_path: Path, sync: bool, call: str = "cudaMemcpy") -> nw.Profile:
    """One CPU thread launching kernels on a stream; with `sync`, a blocking `call` after each kernel."""
    ev = [{"ph": "X", "cat": "python_function", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]
    t = 0.0
    for i in range(50):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t, "dur": 5,
                   "args": {"correlation": i}})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": t + 6, "dur": 40,
                   "args": {"correlation": i, "stream": 7, "device": 0}})
        ev += [{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": i, "pid": 1, "tid": 1, "ts": t},
               {"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": i, "pid": 0, "tid": 7, "ts": t + 6}]
        t += 6
        if sync:
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": 1, "tid": 1, "ts": t, "dur": 45})
            t += 45
    path = tmp_path / (f"{call}.json" if sync else "async.json")
    path.write_bytes(orjson.dumps({"traceEvents": ev, "distributedInfo": {"rank": 0}}))
    return nw.load_profile(path, cache=False, prepare=False)


def test_synchronous_memcpy(tmp_path: Path) -> None:
    f = A.findings(_kineto(tmp_path, True))
    r = f[f["rule"] == "sync_memcpy"].iloc[0]
    assert r["evidence"]["calls"] == {"cudaMemcpy": 50} and r["title"].startswith("50 cudaMemcpy synchronise")
    assert "sync_memcpy" not in _rules(A.findings(_kineto(tmp_path, False)))


def test_device_synchronisation_on_the_critical_path(tmp_path: Path) -> None:
    f = A.findings(_kineto(tmp_path, True, "cudaDeviceSynchronize"))
    r = f[f["rule"] == "device_sync"].iloc[0]
    assert r["evidence"]["calls_total"] == 50 and r["evidence"]["on_path"] >= 45
    assert r["evidence"]["wait_ns"] == pytest.approx(45_000 * r["evidence"]["on_path"])
    assert "The critical path runs through" in r["title"] and "cudaDeviceSynchronize" in r["title"]
    assert "device_sync" not in _rules(A.findings(_kineto(tmp_path, False)))
    assert "device_sync" not in _rules(A.findings(_kineto(tmp_path, True)))  # a cudaMemcpy is not this rule's


def test_real_kineto_traces() -> None:
    p = nw.load_profile(TRACES / "param-dlrm-8rank" / "worker0_step_12.1694128201545.pt.trace.json.gz", cache=False,
                        prepare=False)
    f = A.findings(p)
    span = A.what_if(p, None, 1.0).span_ns
    g = f["gain_ns"].dropna()
    assert (g <= span).all() and (np.diff(g.to_numpy()) <= 0).all()
    idle = f[f["rule"] == "gpu_idle"].iloc[0]
    assert idle["title"].startswith("rank0/GPU 0 is idle 49%") and idle["gain_ns"] > 0
    # low_overlap's what-if saves nothing on this trace (the NCCL kernels are off the critical path): a note, no row.
    assert "low_overlap" not in set(f["rule"])
    assert any(n.startswith("low_overlap: rank0/GPU 0's communication runs") for n in f.attrs["notes"])
    plain = A.findings(nw.load_profile(TRACES / "catapult" / "simple_trace.json", cache=False, prepare=False))
    assert plain.empty and "plain trace" in plain.attrs["notes"][0]


def _bounded(f: pd.DataFrame, p: nw.Profile) -> None:
    assert list(f.columns) == COLUMNS
    span = A.what_if(p, None, 1.0).span_ns if len(p) else 0
    g = f["gain_ns"].to_numpy(float)
    known = g[np.isfinite(g)]
    assert (known >= 0).all() and (known <= span).all() and (np.diff(known) <= 0).all()
    json.dumps(f["evidence"].tolist())


@pytest.mark.parametrize("seed", range(0, 30, 3))
def test_random_chrome_and_kineto_traces_never_crash(seed: int, tmp_path: Path) -> None:
    from test_critical_path_chrome import random_trace

    from neuron_widgets.sample.kineto import write_kineto

    path = tmp_path / "t.json"
    path.write_text(json.dumps(random_trace(seed)))
    p = nw.load_profile(path, cache=False, prepare=False)
    _bounded(A.findings(p), p)
    paths = write_kineto(tmp_path / "k", seed=seed, ranks=2 + seed % 3, late_rank=seed % 2)
    k = nw.load_profile(paths, cache=False, prepare=False)
    _bounded(A.findings(k), k)


def test_the_late_rank_of_a_kineto_job_read_as_one_profile(tmp_path: Path) -> None:
    from neuron_widgets.sample.kineto import write_kineto

    k = nw.load_profile(write_kineto(tmp_path / "k", seed=1, ranks=4, late_rank=2), cache=False, prepare=False)
    r = A.findings(k).set_index("rule").loc["straggler"]
    st = A.stragglers(k).iloc[0]
    assert r["evidence"]["rank"] == 2 and r["evidence"]["times_last"] == st["times_last"]
    # The rank as the Timeline labels its GPU: the track filter shows its streams.
    assert r["evidence"]["gpu"] == "rank2/GPU 2" and any(t.startswith("rank2/GPU 2/") for t in k.tracks("default")["label"])
    assert r["title"].startswith(f"rank2/GPU 2 arrives last at {int(st['times_last'])} of {int(st['steps'])} NCCL collectives")
    one = nw.load_profile(write_kineto(tmp_path / "one", seed=1, ranks=2, late_rank=0)[0], cache=False, prepare=False)
    assert "straggler" not in set(A.findings(one)["rule"])  # one rank: nobody to be late for


def _sequence(tmp_path: Path, runs: int, dur: float, name: str) -> nw.Profile:
    """A CPU thread launching three kernels a, b, c in turn (each launch 5 µs), `runs` times, on one stream."""
    ev, t, i = [], 0.0, 0
    for _ in range(runs):
        for kname in ("kern_a", "kern_b", "kern_c"):
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t,
                       "dur": 5, "args": {"correlation": i}})
            ev.append({"ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": 7, "ts": t + 6, "dur": dur,
                       "args": {"correlation": i, "stream": 7, "device": 0}})
            ev += [{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": i, "pid": 1, "tid": 1, "ts": t},
                   {"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": i, "pid": 0, "tid": 7, "ts": t + 6}]
            t, i = t + max(6.0, dur + 1), i + 1
    path = tmp_path / f"{name}.json"
    path.write_bytes(orjson.dumps({"traceEvents": ev, "distributedInfo": {"rank": 0}}))
    return nw.load_profile(path, cache=False, prepare=False)


def test_frequent_short_kernels_are_a_fusion_candidate(tmp_path: Path) -> None:
    p = _sequence(tmp_path, 150, 3, "short")
    r = A.findings(p).set_index("rule").loc["fusion"]
    assert r["evidence"]["kernels"] == ["kern_a", "kern_b", "kern_c"] and r["evidence"]["runs"] == 150
    assert r["evidence"]["launches_removed"] == 300 and r["evidence"]["mean_kernel_ns"] == pytest.approx(3000)
    assert "kern_a → kern_b → kern_c run in this order 150 times, 3 µs each" in r["title"]
    assert "(300 launches fewer)" in r["title"] and np.isnan(r["gain_ns"]) and "not known" in r["title"]
    assert "fusion" not in _rules(A.findings(_sequence(tmp_path, 60, 3, "few")))  # under 100 runs
    assert "fusion" not in _rules(A.findings(_sequence(tmp_path, 150, 40, "long")))  # kernels longer than a launch
