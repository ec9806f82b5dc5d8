"""Rules the other findings tests do not build a trace for: a Neuron error code on generated executions, and the
Kineto rules' launch delay, idle GPU and unoverlapped communication on generated traces (each where it must fire,
with the right who and numbers, and where it must not); and the titles' words on the tests' real traces (kernel
names told apart, an open event named by its Timeline track, transpose FLOPs from the instructions' own columns)."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
from random_neuron import write_profile
from schedule_neuron import simulate
from test_findings import _clean_job
from test_findings_device import _trace

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.findings_kineto import short_kernel

TRACES = Path(__file__).parent / "data" / "traces"
NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float"


def test_an_error_code_names_its_core_its_meaning_and_how_often(tmp_path: Path) -> None:
    job = _clean_job()
    rows = simulate(job)
    inst, pid, nc = job.cores[2]
    failed = {3, 7}
    for r in rows:  # the runtime call of executions 3 and 7 on that core returns 1003 (a numerical error)
        if r["name"] == "nrt_execute" and (r["instance_id"], r["process_id"], r["nc_idx"]) == (inst, pid, nc):
            args = json.loads(r["extra_attributes_json"])
            if args.get("exec_id") in failed:
                r["extra_attributes_json"] = json.dumps({**args, "ret": 1003})
    f = A.findings(write_profile(tmp_path / "p", rows))
    err = f[f["rule"] == "error"]
    assert len(err) == 1, f["title"].tolist()
    r = err.iloc[0]
    assert r["evidence"]["code"] == 1003 and r["evidence"]["count"] == 2 and r["severity"] == "high"
    assert "numerical error" in r["title"] and "2 times on" in r["title"] and f"PID:{pid}/neuron_rt/NC:{nc}" in r["title"]
    assert "first in execution 3" in r["title"] and np.isnan(r["gain_ns"])
    assert A.findings(write_profile(tmp_path / "ok", simulate(job)))["rule"].tolist() == []


def _kineto(path: Path, n: int = 200, launch_delay: float = 1, gap: float = 0, kernel: float = 10,
            nccl: str | None = None, sync: bool = False) -> nw.Profile:
    """One CPU thread launching, per iteration, after `gap` µs of untraced host time: a compute kernel (`kernel` µs,
    stream 7) starting `launch_delay` µs after its launch call returns (or when its stream frees), and with `nccl` an
    NCCL kernel as long, on the same stream ("serial": nothing overlaps it) or on stream 8 beside the next compute
    kernel ("overlap"); `sync`: a cudaStreamSynchronize after each iteration, to the stream's last kernel's end."""
    ev: list[dict] = []
    t, corr, free = 0.0, 0, {7: 0.0, 8: 0.0}
    for _ in range(n):
        t += gap
        for name, stream in [("gemm_kernel", 7)] + ([(NCCL, 7 if nccl == "serial" else 8)] if nccl else []):
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t,
                       "dur": 5, "args": {"correlation": corr}})
            start = max(t + 5 + launch_delay, free[stream])
            free[stream] = start + kernel
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": start, "dur": kernel,
                       "args": {"correlation": corr, "stream": stream, "device": 0}})
            ev += [{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 1, "tid": 1, "ts": t},
                   {"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": stream,
                    "ts": start}]
            corr, t = corr + 1, t + 6
        if sync:
            end = max(free.values())
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": t,
                       "dur": max(end - t, 1), "args": {"stream": 7}})
            t = max(end, t + 1) + 1
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0,
               "dur": max(max(free.values()), t) + 1})
    path.write_bytes(orjson.dumps({"traceEvents": ev, "distributedInfo": {"rank": 0, "world_size": 1}}))
    return nw.load_profile(path, cache=False, prepare=False)


def _one(f: pd.DataFrame, rule: str) -> pd.Series:
    got = f[f["rule"] == rule]
    assert len(got) == 1, (rule, f["title"].tolist(), f.attrs["notes"])
    return got.iloc[0]


def test_kineto_launch_delay(tmp_path: Path) -> None:
    p = _kineto(tmp_path / "late.json", launch_delay=30, sync=True)  # each kernel 30 µs after its call returns
    r = _one(A.findings(p), "launch_delay")
    assert r["evidence"]["mean_delay_ns"] == pytest.approx(30_000) and r["evidence"]["launches"] == 200
    assert r["evidence"]["mean_latency_ns"] == pytest.approx(35_000)  # and 35 µs after it starts (a 5 µs call)
    w = A.what_if(p, {"kind": "launch"}, 0.0)
    assert r["gain_ns"] == w.saved_ns and r["gain_ns"] > 0.02 * w.span_ns
    assert r["title"].startswith("Kernels start 30 µs after their launch call returns on average")
    assert "35 µs after the call starts, over 200 launches" in r["title"]
    # Kernels long enough that the launches run ahead of them: their latency is off the critical path.
    assert "launch_delay" not in set(A.findings(_kineto(tmp_path / "ahead.json", kernel=50))["rule"])


def test_kineto_gpu_idle(tmp_path: Path) -> None:
    p = _kineto(tmp_path / "idle.json", gap=90)  # 90 µs of host time before each 10 µs kernel
    f = A.findings(p)
    r = _one(f, "gpu_idle")
    t = A.temporal_breakdown(p).iloc[0]
    assert r["evidence"]["idle_share"] == pytest.approx(t["idle_time_pctg"] / 100) and r["evidence"]["idle_share"] > 0.85
    w = A.what_if(p, {"kind": "gap", "thread_id": [1]}, 0.0)  # the host thread's gaps (thread 7 is the stream)
    assert r["gain_ns"] == w.saved_ns and r["gain_ns"] > 0.5 * w.span_ns
    assert "is idle 90% of its" in r["title"]
    assert "gpu_idle" not in set(A.findings(_kineto(tmp_path / "busy.json", kernel=50))["rule"])


def test_kineto_low_overlap(tmp_path: Path) -> None:
    p = _kineto(tmp_path / "serial.json", kernel=40, nccl="serial", sync=True)
    r = _one(A.findings(p), "low_overlap")
    ov = A.comm_comp_overlap(p).iloc[0]
    assert r["evidence"]["overlap_pct"] == ov["comp_comm_overlap_pctg"] == 0.0
    assert r["evidence"]["comm_ns"] == 200 * 40_000 and r["evidence"]["exposed_ns"] == 200 * 40_000
    assert r["gain_ns"] == A.what_if(p, {"kind": "collective"}, 0.0).saved_ns > 0
    assert r["title"].startswith("None of ") and "(8 ms exposed of 8 ms)" in r["title"]
    over = A.findings(_kineto(tmp_path / "overlap.json", kernel=40, nccl="overlap"))
    assert "low_overlap" not in set(over["rule"])
    assert A.comm_comp_overlap(nw.load_profile(tmp_path / "overlap.json", cache=False, prepare=False)).iloc[0][
        "comp_comm_overlap_pctg"] > 99


def test_kernel_names_are_told_apart_in_a_fusion_title() -> None:
    p = nw.load_profile(sorted(glob.glob(str(TRACES / "param-dlrm-8rank" / "*.gz"))), cache=False, prepare=False)
    r = _one(A.findings(p), "fusion")
    assert ("vectorized_elementwise_kernel<addcmul_cuda_kernel> → vectorized_elementwise_kernel<sqrt_kernel_cuda> → "
            "vectorized_elementwise_kernel<CUDAFunctorOnSelf_add> run in this order 110 times") in r["title"]
    assert all(k.startswith("void at::native::vectorized_elementwise_kernel<4, at::native::") for k in
               r["evidence"]["kernels"])  # the evidence keeps the names whole
    assert short_kernel("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>"
                        "(float*, float const*, int, int, int, bool const*, int, bool)") == "softmax_warp_forward<float>"
    assert short_kernel("ampere_sgemm_128x64_nn") == "ampere_sgemm_128x64_nn"


@pytest.mark.parametrize(("name", "track", "said"), [
    ("async_begin_end.json", "async_begin_end/PID:1/r (async)", "3 events still open when the recording stopped (b, S, "
     "D on async_begin_end/PID:1/r (async), the first from 0 ns into the trace): their durations end"),
    ("nestable_async.json", "nestable_async/PID:26037/bar (async)", "1 event still open when the recording stopped "
     "(REQUEST_BAR on nestable_async/PID:26037/bar (async), from 0 ns into the trace): its duration ends at the trace's end"),
])
def test_an_open_event_is_named_by_its_timeline_track(name: str, track: str, said: str) -> None:
    p = nw.load_profile(TRACES / "catapult" / name, cache=False)
    r = _one(A.findings(p), "incomplete")
    assert r["title"].startswith(said), r["title"]
    assert track in set(p.tracks("default")["label"])  # the track filter finds it


def test_transpose_flops_from_the_instructions_own_columns() -> None:
    def with_flops(transpose: int) -> pd.DataFrame:
        t = _trace({"Tensor": [("MATMUL", 80), ("TRANSPOSE", 20)]})
        ins = t.instructions.assign(raw_flops=1000, flops_transpose=0)
        ins.loc[ins["opcode"] == "TRANSPOSE", "flops_transpose"] = transpose
        t.instructions = ins
        return A.findings(t)

    r = _one(with_flops(1000), "transpose")  # 20 of 100 instructions all transpose: 20% of the hardware FLOPs
    assert r["evidence"]["share"] == pytest.approx(0.2) and r["evidence"]["measured_by"] == "hardware FLOPs (raw_flops)"
    assert r["title"].startswith("Transposes are 20% of the tensor engine's hardware FLOPs (raw_flops) (20 of 100")
    assert "transpose" not in set(with_flops(500)["rule"])  # 10% exactly: not over Neuron Explorer's bar
