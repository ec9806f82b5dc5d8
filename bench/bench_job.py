"""A whole multi-node job analysed part by part (issue 24).

1. A generated 24-node job (4 processes x 8 NeuronCores per node, about 25M events, a remote
   straggler on the last node, a hang on the first), written once into bench/out/.
2. `nw.load_job` (metadata only).
3. The same per-part work three ways, no result cache: a plain loop in this process
   (`scheduler="sync"`), `across()` on Dask's local process scheduler (the default), and on a
   `LocalCluster(n_workers=2)` client. Seconds, and the peak RSS of the whole process tree
   (workers included), sampled every 50 ms. Frames compared; the top straggler named.
4. A second `across()` call: every part from the result cache.
5. A simulated 512-node job: 512 part directories opened by `load_job`, and job-wide stragglers
   from 512 parts' arrival tables (32 cores x 60 steps each), not events.

    python bench/bench_job.py [--nodes 24] [--events 25000000] [--skip-cluster]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine

OUT = Path(__file__).resolve().parent / "out"
ANALYSES = ["temporal_breakdown", "idle_time_breakdown", "stragglers", "errors_and_hangs"]


class TreePeak:
    """Peak RSS of this process and all its children, sampled in a thread."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for p in [me, *me.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(0.05)

    def __enter__(self) -> TreePeak:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


def job_dir(nodes: int, events: int) -> Path:
    from neuron_widgets.sample.job import write_job

    path = OUT / f"job-{nodes}x{events}"
    done = path.with_name(path.name + ".done")  # beside it: inside, it would be one more part
    if not done.exists():
        shutil.rmtree(path, ignore_errors=True)
        t0 = time.perf_counter()
        write_job(path, nodes=nodes, events=events, processes=4, cores=8)
        done.write_text("")
        print(f"wrote the job in {time.perf_counter() - t0:.0f} s", flush=True)
    return path


def run(label: str, fn) -> tuple[dict, float, float]:
    with TreePeak() as peak:
        t0 = time.perf_counter()
        got = fn()
        seconds = time.perf_counter() - t0
    print(f"{label}: {seconds:.1f} s, tree peak RSS {peak.peak / 1e9:.2f} GB", flush=True)
    return got, seconds, peak.peak / 1e9


def same(a: dict, b: dict) -> bool:
    for name in ("temporal_breakdown", "idle_time_breakdown", "stragglers", "straggler_steps", "errors_and_hangs"):
        try:
            pd.testing.assert_frame_equal(a[name], b[name])
        except AssertionError as exc:
            print(f"{name} differs: {exc}")
            return False
    return True


def simulated(parts: int = 512, cores: int = 32, steps: int = 60) -> dict:
    """load_job over 512 small part directories, and job_stragglers over 512 parts' arrival tables."""
    import neuron_widgets as nw
    from neuron_widgets.analysis.stragglers import job_stragglers
    from neuron_widgets.sample.job import write_job

    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp())
    try:
        one = write_job(tmp / "src", nodes=2, events=4_000, processes=1, cores=2)
        root = tmp / "big"
        root.mkdir()
        for i in range(parts):
            (root / f"node-{i:03d}").symlink_to(one / "node-00", target_is_directory=True)
        t0 = time.perf_counter()
        job = nw.load_job(root)
        open_s = time.perf_counter() - t0
        assert len(job) == parts
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    tables = []
    base = 1_772_323_200_000_000_000
    late = (parts - 1, cores - 1)
    for p in range(parts):
        s = np.repeat(np.arange(steps), cores)
        c = np.tile(np.arange(cores), steps)
        arrive = base + s * 10_000_000 + rng.integers(0, 10_000, s.size)
        arrive[(c == late[1])] += 80_000 if p == late[0] else 0
        arr = pd.DataFrame({"model_name": "bwd.neff", "key": s + 1, "collective": 0, "step": s + 1,
                            "instance_id": f"i-{p:04d}", "process_id": 1000 + c // 8, "nc_idx": c % 8,
                            "worker_gid": p * cores + c, "arrive": arrive, "length": 100_000 - (arrive - arrive.min()) % 1000,
                            "release": arrive + 100_000, "id": np.arange(s.size)})
        runs = arr[["instance_id", "process_id", "nc_idx", "worker_gid"]].assign(model_name="bwd.neff", key=s + 1)
        tables.append((f"node-{p:03d}", {"kind": "neuron", "notes": [], "arrivals": arr, "runs": runs.drop_duplicates()}))
    rows = sum(len(t["arrivals"]) for _, t in tables)
    with TreePeak() as peak:
        t0 = time.perf_counter()
        cores_df, steps_df, lag = job_stragglers(tables)
        cross_s = time.perf_counter() - t0
    top = cores_df.iloc[0]
    return {"parts": parts, "open_s": round(open_s, 2), "arrival_rows": rows, "cross_part_s": round(cross_s, 2),
            "cross_part_peak_gb": round(peak.peak / 1e9, 2), "top": f"{top['part']} nc {top['nc_idx']}",
            "steps": len(steps_df)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=24)
    ap.add_argument("--events", type=int, default=25_000_000)
    ap.add_argument("--skip-cluster", action="store_true")
    args = ap.parse_args()
    import neuron_widgets as nw
    from neuron_widgets.analysis import across

    print(machine(), flush=True)
    path = job_dir(args.nodes, args.events)
    t0 = time.perf_counter()
    job = nw.load_job(path, results=Path(tempfile.mkdtemp()) / "results")
    open_s = time.perf_counter() - t0
    events = int(job.parts["events"].sum())
    print(f"load_job: {len(job)} parts, {events:,} events, {open_s:.3f} s", flush=True)
    loop, loop_s, loop_gb = run("plain loop in one process", lambda: across(job, ANALYSES, scheduler="sync", cache=False))
    dask_, dask_s, dask_gb = run("across(), Dask local processes",
                                 lambda: across(job, ANALYSES, cache=False))
    result = {"machine": machine(), "parts": len(job), "events": events, "open_s": round(open_s, 3),
              "loop_s": round(loop_s, 1), "loop_peak_gb": round(loop_gb, 2), "across_s": round(dask_s, 1),
              "across_peak_gb": round(dask_gb, 2), "speedup": round(loop_s / dask_s, 2), "same": same(loop, dask_)}
    if not args.skip_cluster:
        from dask.distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
            remote, cl_s, cl_gb = run("across(), LocalCluster(n_workers=2)", lambda: across(job, ANALYSES, client, cache=False))
        result.update(cluster_s=round(cl_s, 1), cluster_peak_gb=round(cl_gb, 2), cluster_same=same(loop, remote))
    _, first_s, _ = run("across() filling the result cache", lambda: across(job, ANALYSES))
    again, again_s, _ = run("across() again, from the cache", lambda: across(job, ANALYSES))
    top = loop["stragglers"].iloc[0]
    result.update(cache_fill_s=round(first_s, 1), cached_s=round(again_s, 2), cached_same=same(loop, again),
                  top_straggler=f"{top['part']} process {top['process_id']} nc {top['nc_idx']} "
                                f"(last {top['times_last']} of {top['steps']} steps)",
                  statuses=sorted(set(again["parts"]["status"])))
    result["simulated_512"] = simulated()
    print(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
