"""The Kineto critical path (launches, stream/event/device syncs, stream waits, NCCL across ranks) against the
reference, on random Kineto-like jobs, and on small traces whose path is known."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from kineto_random import write_job
from reference_critical_path import ChromeModel

import neuron_widgets as nw
from neuron_widgets import analysis as A


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["kind"] = df["kind"].astype(str)
    return df.astype(object).where(df.notna(), None).reset_index(drop=True)


def _load(files):
    return nw.load_profile(files if len(files) > 1 else files[0], cache=False, prepare=False)


@pytest.mark.parametrize("chunk", range(4))
def test_kineto_path_and_replay_match_the_reference(chunk, tmp_path):
    seen = {"rank jumps": 0, "waited for a kernel": 0, "stream waits": 0, "collectives": 0}
    for seed in range(chunk * 40, (chunk + 1) * 40):
        p = _load(write_job(tmp_path, seed))
        fast = A.critical_path(p)
        ref = ChromeModel(p)
        want = ref.path_frame()
        got = _plain(fast.drop(columns="part"))
        assert len(got) == len(want), seed
        assert (got.to_numpy() == _plain(want).to_numpy()).all(), seed
        assert int(fast["duration_ns"].sum()) == ref.replay([])[0], seed
        kinds, names, inst = fast["kind"].astype(str).tolist(), fast["name"].tolist(), fast["instance_id"].tolist()
        seen["rank jumps"] += sum(1 for i in range(1, len(kinds)) if kinds[i] == "collective" and inst[i] != inst[i - 1]
                                  and kinds[i - 1] != "gap")
        seen["waited for a kernel"] += sum(1 for i in range(1, len(kinds)) if kinds[i - 1] in ("kernel", "memcpy")
                                           and str(names[i]).endswith("Synchronize"))
        seen["stream waits"] += sum(1 for v, ps in ref.preds.items() for q in ps if q[4] == 4 and v[0] == "s"
                                    and ref.bind[v] is q)
        seen["collectives"] += sum(1 for k in ref.t if k[0] == "m")
        rng = np.random.default_rng(seed)
        changes = [({"kind": str(rng.choice(["kernel", "host", "gap", "collective", "launch"]))},
                    float(rng.choice([0.0, 0.5, 2.0])))]
        if len(fast):
            seg = fast.iloc[int(rng.integers(0, len(fast)))]
            changes.append(({"instance_id": seg["instance_id"], "thread_id": int(seg["thread_id"])}, 0.5))
        span, predicted = ref.replay(changes)
        w = A.what_if(p, changes)
        assert w.span_ns == span and abs(w.predicted_span_ns - predicted) <= 1, (seed, changes)
    # The random jobs exercise what the model adds: the path crosses ranks at collectives, goes from a kernel to
    # the call that waited for it, and kernels bound by a stream wait.
    assert seen["rank jumps"] >= 3, seen
    assert seen["waited for a kernel"] >= 5, seen
    assert seen["stream waits"] >= 3, seen
    assert seen["collectives"] >= 20, seen


def _x(name, ts, dur, pid, tid, cat, **args) -> dict:
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, "cat": cat, "args": args}


GPU0 = [{"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}]


def _write(tmp_path, name, events, rank=None):
    f = tmp_path / name
    trace = {"traceEvents": events}
    if rank is not None:
        trace["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
    f.write_text(json.dumps(trace))
    return f


@pytest.mark.parametrize("named", [True, False])
def test_a_stream_sync_waits_for_the_stream_its_record_names(named, tmp_path):
    ev = [*GPU0, _x("step", 0, 200, 100, 1, "cpu_op"),
          _x("cudaLaunchKernel", 5, 3, 100, 1, "cuda_runtime", correlation=1),
          _x("gemm", 10, 40, 0, 7, "kernel", correlation=1, stream=7),
          _x("cudaLaunchKernel", 10, 3, 100, 1, "cuda_runtime", correlation=2),
          _x("relu", 15, 65, 0, 13, "kernel", correlation=2, stream=13),
          _x("cudaStreamSynchronize", 20, 80, 100, 1, "cuda_runtime", correlation=3)]
    if named:  # Kineto's record: the call synchronised stream 7
        ev.append(_x("Stream Sync", 21, 78, 0, 7, "cuda_sync", correlation=3, stream=7))
    path = A.critical_path(nw.load_profile(_write(tmp_path, "t.json", ev), cache=False))
    names = path["name"].tolist()
    kinds = path["kind"].astype(str).tolist()
    waited, other = ("gemm", "relu") if named else ("relu", "gemm")
    assert waited in names and other not in names
    i = names.index(waited)
    assert kinds[i] == "kernel" and names[i + 1] == "cudaStreamSynchronize" and kinds[i + 1] == "host"
    assert int(path["duration_ns"].sum()) == 200_000


@pytest.mark.parametrize("recorded", [True, False])
def test_a_stream_wait_holds_the_next_kernel_until_the_recorded_one_ends(recorded, tmp_path):
    ev = [*GPU0, _x("step", 0, 180, 100, 1, "cpu_op"),
          _x("cudaLaunchKernel", 4, 2, 100, 1, "cuda_runtime", correlation=1),
          _x("gemm", 10, 100, 0, 7, "kernel", correlation=1, stream=7),
          _x("cudaEventRecord", 8, 2, 100, 1, "cuda_runtime", correlation=2),
          _x("cudaStreamWaitEvent", 12, 2, 100, 1, "cuda_runtime", correlation=3),
          _x("cudaLaunchKernel", 16, 2, 100, 1, "cuda_runtime", correlation=4),
          _x("relu", 110, 50, 0, 13, "kernel", correlation=4, stream=13),
          _x("cudaDeviceSynchronize", 20, 150, 100, 1, "cuda_runtime", correlation=5)]
    if recorded:
        ev.append(_x("Stream Wait Event", 13, 0, 0, 13, "cuda_sync", correlation=3, stream=13, wait_on_stream=7,
                     wait_on_cuda_event_record_corr_id=2))
    path = A.critical_path(nw.load_profile(_write(tmp_path, "t.json", ev), cache=False))
    seq = list(zip(path["kind"].astype(str), path["name"], strict=True))
    i = seq.index(("kernel", "relu"))
    assert seq[i + 1] == ("host", "cudaDeviceSynchronize")  # the device sync waited for the last kernel
    # With the record, relu waited for gemm on the other stream; without it, for its launch.
    assert seq[i - 1] == (("kernel", "gemm") if recorded else ("launch", "cudaLaunchKernel"))


def test_an_nccl_kernel_ends_after_the_last_rank_arrives(tmp_path):
    files = []
    for rank, (fwd, nccl_at) in enumerate([(50, 55), (200, 205)]):  # rank 1's forward is slow
        host, dev = 100 + rank, rank
        ev = [{"ph": "M", "name": "process_labels", "pid": dev, "tid": 0, "args": {"labels": f"GPU {dev}"}},
              _x("forward", 0, fwd, host, 1, "cpu_op"),
              _x("record_param_comms", fwd, 10, host, 1, "cpu_op"),
              _x("cudaLaunchKernel", fwd + 2, 2, host, 1, "cuda_runtime", correlation=1),
              _x("ncclDevKernel_AllReduce_Sum_f32_RING_LL", nccl_at, 225 - nccl_at, dev, 20, "kernel", correlation=1,
                 stream=20, **{"Process Group Name": "0"}),
              _x("cudaStreamSynchronize", fwd + 10, 230 - fwd - 10 - rank, host, 1, "cuda_runtime", correlation=2)]
        files.append(_write(tmp_path, f"rank{rank}.json", ev, rank))
    p = nw.load_profile(files, cache=False)
    path = A.critical_path(p)
    seq = list(zip(path["kind"].astype(str), path["name"], path["process_id"].astype(int), strict=True))
    # Rank 0's all-reduce waited for rank 1's (the path jumps there at 205 us), then transferred to 225 us.
    assert seq == [("host", "forward", 101), ("host", "record_param_comms", 101), ("launch", "cudaLaunchKernel", 101),
                   ("collective", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0),
                   ("host", "cudaStreamSynchronize", 100)]
    assert any("1 NCCL collectives matched across ranks" in n for n in path.attrs["notes"])
    coll = path[path["kind"].astype(str) == "collective"].iloc[0]
    assert (int(coll["start_ts"] - path["start_ts"].min()), int(coll["duration_ns"])) == (205_000, 20_000)
    # Halving rank 1's host work before its launch (100 us of forward, 1 us of the op launching it) brings rank
    # 0's all-reduce, and the run's end, 101 us earlier.
    w = A.what_if(p, {"process_id": 101, "kind": "host"}, 0.5)
    assert w.span_ns == 230_000 and abs(w.saved_ns - 101_000) <= 1
