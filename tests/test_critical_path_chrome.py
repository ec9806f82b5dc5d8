"""The critical path of plain Chrome traces (threads in order, flows) against the reference, on random traces."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from reference_critical_path import ChromeModel

import neuron_widgets as nw
from neuron_widgets import analysis as A


def random_trace(seed: int) -> dict:
    """Threads of nested events (some GPU streams of kernels, copies and NCCL kernels; synchronising calls at
    the top or inside), flows between them, now and then an event left open."""
    rng = np.random.default_rng(seed)
    events, slices = [], []
    for pid in range(1, int(rng.integers(1, 3)) + 1):
        for tid in range(1, int(rng.integers(1, 5)) + 1):
            stream = rng.random() < .3
            t = int(rng.integers(0, 50))
            for _ in range(int(rng.integers(1, 12))):
                dur = int(rng.integers(1, 60))
                if stream:
                    cat = str(rng.choice(["kernel", "gpu_memcpy", "kernel"]))
                    name = str(rng.choice(["gemm", "ncclKernel_AllReduce", "Memcpy HtoD"]))
                else:
                    cat, name = "cpu_op", str(rng.choice(["aten::mm", "step", "load", "cudaDeviceSynchronize"]))
                e = {"name": name, "ph": "X", "ts": t, "dur": dur, "pid": pid, "tid": tid, "cat": cat}
                events.append(e)
                slices.append(e)
                if not stream:
                    c = t + 1
                    for _ in range(int(rng.integers(0, 3))):  # children, properly nested
                        if c + 2 >= t + dur:
                            break
                        d = int(rng.integers(1, max(2, (t + dur - c) // 2)))
                        child = {"name": str(rng.choice(["cudaLaunchKernel", "cudaLaunchKernel", "cudaStreamSynchronize"])),
                                 "ph": "X", "ts": c, "dur": d, "pid": pid, "tid": tid, "cat": "cuda_runtime"}
                        events.append(child)
                        slices.append(child)
                        c += d + int(rng.integers(1, 4))
                t += dur + int(rng.integers(0, 40))
            if rng.random() < .15:
                events.append({"name": "open", "ph": "B", "ts": t + 5, "pid": pid, "tid": tid, "cat": "cpu_op"})
    # Launch, kernel, synchronise: a thread that waits for its kernels (now and then it returns before one ends).
    t = int(rng.integers(0, 100))
    for j in range(int(rng.integers(0, 6))):
        kernel_at, kernel_dur = t + 10 + int(rng.integers(0, 20)), int(rng.integers(5, 60))
        sync_end = min(t + 95, kernel_at + kernel_dur + int(rng.integers(-3, 6)))
        events += [{"name": "step", "ph": "X", "ts": t, "dur": 100, "pid": 3, "tid": 90, "cat": "cpu_op"},
                   {"name": "cudaLaunchKernel", "ph": "X", "ts": t + 5, "dur": 3, "pid": 3, "tid": 90,
                    "cat": "cuda_runtime"},
                   {"name": "cudaStreamSynchronize", "ph": "X", "ts": t + 12, "dur": max(sync_end - t - 12, 1),
                    "pid": 3, "tid": 90, "cat": "cuda_runtime"},
                   {"name": "gemm", "ph": "X", "ts": kernel_at, "dur": kernel_dur, "pid": 4, "tid": 91, "cat": "kernel"},
                   {"name": "ac2g", "ph": "s", "ts": t + 5, "id": 10_000 + j, "pid": 3, "tid": 90, "cat": "ac2g"},
                   {"name": "ac2g", "ph": "f", "bp": "e", "ts": kernel_at, "id": 10_000 + j, "pid": 4, "tid": 91,
                    "cat": "ac2g"}]
        t += 100 + int(rng.integers(0, 30))
    for k in range(int(rng.integers(0, 2 * len(slices) // 3 + 1))):
        a, b = (slices[int(i)] for i in rng.integers(0, len(slices), 2))
        if a is b:
            continue
        a, b = (a, b) if (a["ts"], id(a)) < (b["ts"], id(b)) else (b, a)
        events.append({"name": "flow", "ph": "s", "ts": a["ts"], "id": k + 1, "pid": a["pid"], "tid": a["tid"],
                       "cat": "ac2g"})
        events.append({"name": "flow", "ph": "f", "bp": "e", "ts": b["ts"], "id": k + 1, "pid": b["pid"],
                       "tid": b["tid"], "cat": "ac2g"})
    if rng.random() < .4:  # Kineto's markers: the trace's span, a GPU annotation, the window's end
        end = max(e["ts"] + e.get("dur", 0) for e in events)
        events += [{"name": "PyTorch Profiler (0)", "ph": "X", "ts": 0, "dur": end, "pid": 1, "tid": 1, "cat": "Trace"},
                   {"name": "ann", "ph": "X", "ts": 0, "dur": end, "pid": 9, "tid": 9, "cat": "gpu_user_annotation"},
                   {"name": "ProfilerStep#1", "ph": "X", "ts": 0, "dur": end, "pid": 1, "tid": 2, "cat": "user_annotation"},
                   {"name": "Record Window End", "ph": "i", "s": "t", "ts": end + 500, "pid": -3, "tid": -3}]
    return {"traceEvents": events}


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["kind"] = df["kind"].astype(str)
    return df.astype(object).where(df.notna(), None).reset_index(drop=True)


@pytest.mark.parametrize("chunk", range(2))
def test_chrome_path_and_replay_match_the_reference(chunk, tmp_path):
    flows_on_path = waited = 0
    for seed in range(chunk * 40, (chunk + 1) * 40):
        f = tmp_path / f"t{seed}.json"
        f.write_text(json.dumps(random_trace(seed)))
        p = nw.load_profile(f, cache=False, prepare=False)
        fast = A.critical_path(p)
        ref = ChromeModel(p)
        want = ref.path_frame()
        got = _plain(fast.drop(columns="part"))
        assert len(got) == len(want), seed
        assert (got.to_numpy() == _plain(want).to_numpy()).all(), seed
        assert int(fast["duration_ns"].sum()) == ref.replay([])[0], seed
        flows_on_path += int((fast["kind"] == "launch").sum())
        kinds, names = fast["kind"].astype(str).tolist(), fast["name"].tolist()
        waited += sum(1 for i in range(1, len(kinds)) if kinds[i - 1] == "kernel" and names[i] == "cudaStreamSynchronize")
        rng = np.random.default_rng(seed)
        changes = [({"kind": str(rng.choice(["kernel", "host", "gap", "launch"]))}, float(rng.choice([0.0, 0.5, 2.0])))]
        if len(fast):
            seg = fast.iloc[int(rng.integers(0, len(fast)))]
            changes.append(({"thread_id": int(seg["thread_id"]), "process_id": int(seg["process_id"])}, 0.5))
        span, predicted = ref.replay(changes)
        w = A.what_if(p, changes)
        assert w.span_ns == span and abs(w.predicted_span_ns - predicted) <= 1, (seed, changes)
    assert flows_on_path >= 5  # the path follows flows between threads
    assert waited >= 5  # and goes from a kernel back to the call that waited for it


def test_a_flow_leaves_its_thread_where_the_launch_starts(tmp_path):
    ev = [{"name": "step", "ph": "X", "ts": 0, "dur": 100, "pid": 1, "tid": 1, "cat": "cpu_op"},
          {"name": "cudaLaunchKernel", "ph": "X", "ts": 10, "dur": 5, "pid": 1, "tid": 1, "cat": "cuda_runtime"},
          {"name": "gemm", "ph": "X", "ts": 30, "dur": 150, "pid": 0, "tid": 7, "cat": "kernel"},
          {"name": "ac2g", "ph": "s", "ts": 10, "id": 5, "pid": 1, "tid": 1, "cat": "ac2g"},
          {"name": "ac2g", "ph": "f", "ts": 30, "id": 5, "pid": 0, "tid": 7, "cat": "ac2g", "bp": "e"}]
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": ev}))
    p = nw.load_profile(f, cache=False)
    path = A.critical_path(p)
    assert path["kind"].astype(str).tolist() == ["host", "launch", "kernel"]
    assert path["name"].tolist() == ["step", "cudaLaunchKernel", "gemm"]
    assert path["duration_ns"].tolist() == [10_000, 20_000, 150_000]
    w = A.what_if(p, {"kind": "kernel"}, 0.5)
    assert (w.span_ns, w.predicted_span_ns) == (180_000, 105_000)  # the step (100 us) no longer bounds it
