"""A small Kineto (PyTorch profiler) job: two ranks of a GPU training loop, written on demand.

It is what the tour's Kineto section shows on any install (no trace files needed): CPU ops and
their CUDA launches, kernels on two streams, memory copies, an NCCL all-reduce per step that
rank 0 reaches late (so rank 1 waits for it), and launch gaps that leave the GPU idle.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np

RANKS = 2
STEPS = 6
COMPUTE = ("ampere_sgemm_128x64_tn", "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>",
           "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
           "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>")
OPS = ("aten::linear", "aten::gelu", "aten::matmul", "aten::sum")
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
STREAMS = (7, 20)  # compute, NCCL
# Part of the cached sample's directory name: bump it when what job_events writes changes.
VERSION = 2


def job_events(seed: int = 0, ranks: int = RANKS, steps: int = STEPS, late_rank: int = 0) -> list[dict]:
    """Every rank's trace. Steps run in lock-step: a rank's all-reduce ends when the last rank's has run."""
    rng = np.random.default_rng(seed)
    events: list[list[dict]] = []
    for rank in range(ranks):
        host_pid = 4100 + rank
        # As Kineto writes a GPU: a process whose pid is the device index, named after the host
        # process and labelled "GPU n" (what Perfetto and the Timeline show), its streams as threads.
        events.append([
            {"ph": "M", "name": "process_name", "pid": host_pid, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_labels", "pid": host_pid, "tid": 0, "args": {"labels": "CPU"}},
            {"ph": "M", "name": "process_name", "pid": rank, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_labels", "pid": rank, "tid": 0, "args": {"labels": f"GPU {rank}"}},
            {"ph": "M", "name": "process_sort_index", "pid": rank, "tid": 0, "args": {"sort_index": 0x1000000 + rank}},
            *({"ph": "M", "name": "thread_name", "pid": rank, "tid": stream, "args": {"name": f"stream {stream} "}}
              for stream in STREAMS)])
    correlation = [1000 * (r + 1) for r in range(ranks)]
    t = 1_000.0
    for step in range(steps):
        arrivals, pending = [], []
        for rank in range(ranks):
            host_pid = tid = 4100 + rank
            ev = events[rank]
            clock, gpu = t, t
            # A host-to-device copy of the batch, then the forward and backward kernels.
            launches = [("cudaMemcpyAsync", "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy", 40.0)]
            launches += [("cudaLaunchKernel", COMPUTE[k % len(COMPUTE)], "kernel", float(rng.uniform(60, 160)))
                         for k in range(8)]
            for i, (api, kernel, cat, dur) in enumerate(launches):
                correlation[rank] += 1
                c = correlation[rank]
                ev.append({"ph": "X", "cat": "cpu_op", "name": OPS[i % len(OPS)], "pid": host_pid, "tid": tid,
                           "ts": clock, "dur": 18.0, "args": {"External id": i}})
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": host_pid, "tid": tid, "ts": clock + 4,
                           "dur": 8.0, "args": {"correlation": c, "External id": i}})
                start = max(clock + 12 + float(rng.uniform(3, 12)), gpu)
                ev.append({"ph": "X", "cat": cat, "name": kernel, "pid": rank, "tid": 7, "ts": start, "dur": dur,
                           "args": {"correlation": c, "stream": 7, "device": rank, "External id": i}})
                ev.append({"ph": "s", "id": c, "cat": "ac2g", "name": "ac2g", "pid": host_pid, "tid": tid,
                           "ts": clock + 4, "bp": "e"})
                ev.append({"ph": "f", "id": c, "cat": "ac2g", "name": "ac2g", "pid": rank, "tid": 7, "ts": start,
                           "bp": "e"})
                gpu = start + dur
                # The host sometimes stalls (a data-loader wait): the GPU runs dry.
                clock += 20 + (float(rng.uniform(150, 300)) if i == 3 and step % 3 == 1 else 0.0)
            # The late rank's host is slower in every other step: its all-reduce starts late, the others wait.
            clock += 900.0 if rank == late_rank and step % 2 == 0 else 0.0
            correlation[rank] += 1
            arrivals.append(max(clock + 20, gpu))
            pending.append((rank, host_pid, clock, correlation[rank]))
        done = max(arrivals) + 120.0
        for (rank, host_pid, clock, c), arrive in zip(pending, arrivals, strict=True):
            ev = events[rank]
            ev.append({"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": host_pid, "tid": host_pid,
                       "ts": clock, "dur": 18.0, "args": {"External id": 99}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": host_pid, "tid": host_pid,
                       "ts": clock + 4, "dur": 8.0, "args": {"correlation": c, "External id": 99}})
            ev.append({"ph": "X", "cat": "kernel", "name": ALLREDUCE, "pid": rank, "tid": 20, "ts": arrive,
                       "dur": done - arrive, "args": {"correlation": c, "stream": 20, "device": rank, "External id": 99}})
            ev.append({"ph": "s", "id": c, "cat": "ac2g", "name": "ac2g", "pid": host_pid, "tid": host_pid,
                       "ts": clock + 4, "bp": "e"})
            ev.append({"ph": "f", "id": c, "cat": "ac2g", "name": "ac2g", "pid": rank, "tid": 20, "ts": arrive, "bp": "e"})
            ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": host_pid,
                       "tid": host_pid, "ts": t, "dur": done + 20 - t})
        t = done + 30
    return [{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": r, "world_size": ranks},
             "deviceProperties": [{"id": r, "name": "Sample GPU", "totalGlobalMem": 42_000_000_000}],
             "traceEvents": events[r], "displayTimeUnit": "ms", "baseTimeNanoseconds": 1_700_000_000_000_000_000}
            for r in range(ranks)]


def write_kineto(out: str | os.PathLike[str], seed: int = 0, ranks: int = RANKS, steps: int = STEPS,
                 late_rank: int = 0) -> list[Path]:
    """One gzipped Kineto JSON per rank under `out` (rank-0.pt.trace.json.gz, ...)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank, doc in enumerate(job_events(seed, ranks, steps, late_rank)):
        path = out / f"rank-{rank}.pt.trace.json.gz"
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(doc, f)
        paths.append(path)
    return paths
