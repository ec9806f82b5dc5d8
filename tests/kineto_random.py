"""Random Kineto-like jobs for the critical-path tests: ranks in lock-step, launches, syncs, stream waits, NCCL.

Each rank has a host thread (now and then a second one) that launches kernels and copies on two
streams, records events, makes a stream wait for another's event, synchronises a stream, an event or
the device (with Kineto's `cuda_sync` records or without them), and ends each step with an NCCL
kernel per process group, which ends when the last rank's has started plus a transfer. Now and then
a synchronising call returns before what it waited for ends (the model must drop that edge).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

COMPUTE, COPY, NCCL_STREAM = (7, 13), 13, 20


class Rank:
    def __init__(self, rank: int, rng: np.random.Generator, records: bool, flows: bool) -> None:
        self.rank, self.rng, self.records, self.flows = rank, rng, records, flows
        self.pid = 1000 + rank
        self.ev: list[dict] = [
            {"ph": "M", "name": "process_name", "pid": self.pid, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_labels", "pid": rank, "tid": 0, "args": {"labels": f"GPU {rank}"}},
            {"ph": "M", "name": "process_name", "pid": rank, "tid": 0, "args": {"name": "python"}}]
        self.corr = 100 * (rank + 1)
        self.free = {s: 0 for s in (*COMPUTE, NCCL_STREAM)}  # when each stream is next free
        self.waits: dict[int, int] = {}  # a stream's next kernel starts after this (a stream wait)
        self.recorded: list[tuple[int, int]] = []  # (cudaEventRecord's correlation id, stream)
        self.record_end: dict[int, int] = {}  # an event record's correlation id -> the end of what it recorded
        self.clock = {1: int(rng.integers(0, 30)), 2: int(rng.integers(0, 30))}

    def call(self, tid: int, name: str, ts: int, dur: int) -> int:
        self.corr += 1
        self.ev.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": self.pid, "tid": tid, "ts": ts,
                        "dur": max(dur, 1), "args": {"correlation": self.corr, "External id": self.corr}})
        return self.corr

    def kernel(self, tid: int, at: int, stream: int, name: str, cat: str = "kernel", extra: dict | None = None) -> dict:
        c = self.call(tid, "cudaMemcpyAsync" if cat == "gpu_memcpy" else "cudaLaunchKernel", at, 3)
        start = max(at + int(self.rng.integers(2, 15)), self.free[stream], self.waits.pop(stream, 0))
        e = {"ph": "X", "cat": cat, "name": name, "pid": self.rank, "tid": stream, "ts": start,
             "dur": int(self.rng.integers(5, 80)), "args": {"correlation": c, "stream": stream, "device": self.rank,
                                                            **(extra or {})}}
        self.ev.append(e)
        if self.flows:
            self.ev += [{"ph": "s", "id": c, "cat": "ac2g", "name": "ac2g", "pid": self.pid, "tid": tid, "ts": at},
                        {"ph": "f", "id": c, "cat": "ac2g", "name": "ac2g", "pid": self.rank, "tid": stream,
                         "ts": start, "bp": "e"}]
        self.free[stream] = start + e["dur"]
        return e

    def record(self, name: str, c: int, stream: int, ts: int, dur: int, **args: int) -> None:
        if self.records:
            self.ev.append({"ph": "X", "cat": "cuda_sync", "name": name, "pid": self.rank, "tid": stream, "ts": ts,
                            "dur": max(dur, 0), "args": {"correlation": c, "stream": stream, "device": self.rank,
                                                         **args}})

    def sync_until(self, t: int) -> int:
        """When a synchronising call returns that waited for `t`: after it, now and then (wrongly) before."""
        return t + int(self.rng.integers(1, 6)) if self.rng.random() > .1 else t - int(self.rng.integers(1, 10))

    def op(self, tid: int) -> None:
        rng = self.rng
        t = self.clock[tid]
        start, c = t, t + 2
        children = []
        for _ in range(int(rng.integers(1, 5))):
            what = str(rng.choice(["launch", "launch", "copy", "record", "wait", "stream", "event", "device", "handoff"]))
            if what == "handoff":  # a long kernel on one stream that the next kernel on the other waits for
                s = int(rng.choice(COMPUTE))
                self.kernel(tid, c, s, "gemm")["dur"] += 200
                self.free[s] += 200
                rc = self.call(tid, "cudaEventRecord", c + 4, 2)
                self.recorded.append((rc, s))
                self.record_end[rc] = self.free[s]
                c += 7
                what = "wait"
            elif what == "launch":
                self.kernel(tid, c, int(rng.choice(COMPUTE)), str(rng.choice(["gemm", "relu", "softmax"])))
                c += 4
            elif what == "copy":
                self.kernel(tid, c, COPY, "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy")
                c += 4
            elif what == "record":
                s = int(rng.choice(COMPUTE))
                rc = self.call(tid, "cudaEventRecord", c, 2)
                self.recorded.append((rc, s))
                self.record_end[rc] = self.free[s]
                c += 3
            if what == "wait" and self.recorded:
                rc, s = self.recorded[-1]
                w = int(rng.choice([x for x in COMPUTE if x != s]))
                wc = self.call(tid, "cudaStreamWaitEvent", c, 2)
                self.waits[w] = max(self.waits.get(w, 0), self.record_end[rc])
                self.record("Stream Wait Event", wc, w, c + 1, 0, wait_on_stream=s, wait_on_cuda_event_record_corr_id=rc)
                c += 3
                if rng.random() < .7:
                    self.kernel(tid, c, w, "relu")
                    c += 4
            elif what == "stream":
                s = int(rng.choice(COMPUTE))
                until = max(c + 2, self.sync_until(self.free[s]))
                sc = self.call(tid, "cudaStreamSynchronize", c, until - c)
                self.record("Stream Sync", sc, s, c + 1, until - c - 1)
                c = until + 1
            elif what == "event" and self.recorded:
                rc, s = self.recorded[int(rng.integers(0, len(self.recorded)))]
                until = max(c + 2, self.sync_until(self.record_end[rc]))
                ec = self.call(tid, "cudaEventSynchronize", c, until - c)
                self.record("Event Sync", ec, COMPUTE[0], c + 1, until - c - 1, wait_on_stream=s,
                            wait_on_cuda_event_record_corr_id=rc)
                c = until + 1
            elif what == "device":
                until = max(c + 2, self.sync_until(max(self.free.values())))
                dc = self.call(tid, "cudaDeviceSynchronize", c, until - c)
                self.record("Context Sync", dc, COMPUTE[0], c + 1, until - c - 1)
                c = until + 1
            children.append(what)
        end = c + int(rng.integers(1, 20))
        self.ev.append({"ph": "X", "cat": "cpu_op", "name": f"aten::op{len(children)}", "pid": self.pid, "tid": tid,
                        "ts": start, "dur": end - start})
        self.clock[tid] = end + int(rng.integers(0, 30))


def random_job(seed: int) -> list[dict]:
    """Every rank's trace (1-3 ranks, 1-4 steps)."""
    rng = np.random.default_rng(seed)
    n_ranks = int(rng.integers(1, 4))
    ranks = [Rank(r, rng, records=rng.random() < .6, flows=rng.random() < .5) for r in range(n_ranks)]
    second = rng.random() < .3
    groups = [("0", "ncclDevKernel_AllReduce_Sum_f32_RING_LL")]
    if rng.random() < .5:
        groups.append(("1", "ncclDevKernel_AllGather_RING_LL"))
    if rng.random() < .3:  # an older trace: no process group names, matched by name
        groups = [(None, name) for _, name in groups]
    for _ in range(int(rng.integers(1, 5))):
        for r in ranks:
            for _ in range(int(rng.integers(1, 5))):
                r.op(1)
                if second and rng.random() < .5:
                    r.op(2)
        for pg, name in groups:
            if rng.random() < .2:
                continue  # a collective the ranks skip this step
            kernels = []
            for r in ranks:
                t = r.clock[1]
                extra = {"Process Group Name": pg, "Collective name": "allreduce"} if pg is not None else {}
                kernels.append((r, r.kernel(1, t + 2, NCCL_STREAM, name, extra=extra)))
                r.ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": r.pid, "tid": 1, "ts": t,
                             "dur": 8})
                r.clock[1] = t + 10 + int(rng.integers(0, 10))
            last = max(k["ts"] for _, k in kernels)
            for r, k in kernels:  # it ends when the last rank's has started, plus the transfer
                k["dur"] = max(1, last - k["ts"] + int(rng.integers(5, 40)) + (int(rng.integers(-40, 0)) if
                                                                                  rng.random() < .1 else 0))
                r.free[NCCL_STREAM] = k["ts"] + k["dur"]
    return [{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": r.rank, "world_size": n_ranks},
             "traceEvents": r.ev} for r in ranks]


def write_job(out: Path, seed: int) -> list[Path]:
    files = []
    for k, trace in enumerate(random_job(seed)):
        f = out / f"s{seed}-rank{k}.json"
        f.write_text(json.dumps(trace))
        files.append(f)
    return files
