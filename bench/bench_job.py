"""A whole multi-node job analysed part by part (issue 24).

1. Two generated 24-node jobs (4 processes x 8 NeuronCores per node, a remote straggler on the
   last node, a hang on the first), written once into bench/out/: "events", about 25M events in
   1,289 full steps, and "steps", 8,000 lean steps per node (about 1.1M events and 256k
   collective arrivals per node: the shape whose per-step results once dominated memory).
2. `nw.load_job` (metadata only).
3. The same per-part work three ways, no result cache: a plain loop in this process
   (`scheduler="sync"`), `across()` on Dask's local process scheduler (the default), and on a
   `LocalCluster(n_workers=2)` client. Seconds, and the peak RSS of the whole process tree
   (workers included), sampled every 50 ms. Frames compared; the top straggler named.
4. A second `across()` call: every part from the result cache.
5. A simulated 512-node job: 512 part directories opened by `load_job`, and job-wide stragglers
   from 512 parts' arrival tables (32 cores x 60 steps each), not events.

    python bench/bench_job.py [--shape events|steps|both] [--nodes 24] [--events 25000000] [--steps 8000]
                              [--skip-cluster] [--skip-cache] [--skip-simulated] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
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
import contextlib

from common import machine, tree_peak

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
                with contextlib.suppress(psutil.Error):
                    total += p.memory_info().rss
            self.peak = max(self.peak, total)
            self._stop.wait(0.05)

    def __enter__(self) -> TreePeak:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


def job_dir(nodes: int, events: int, steps: int | None = None) -> Path:
    from neuron_widgets.sample.job import write_job

    path = OUT / (f"job-{nodes}x{events}" if steps is None else f"job-{nodes}x{steps}steps")
    done = path.with_name(path.name + ".done")  # beside it: inside, it would be one more part
    if not done.exists():
        shutil.rmtree(path, ignore_errors=True)
        t0 = time.perf_counter()
        write_job(path, nodes=nodes, events=events, processes=4, cores=8, steps=steps)
        done.write_text("")
        print(f"wrote the job in {time.perf_counter() - t0:.0f} s", flush=True)
    return path


def case(which: str, path: Path, results: Path) -> dict:
    """One way of running the job's analyses, in this (fresh) process; frames pickled for comparison."""
    import pickle

    import neuron_widgets as nw
    from neuron_widgets.analysis import across

    job = nw.load_job(path, results=results)
    t0 = time.perf_counter()
    if which == "loop":
        got = across(job, ANALYSES, scheduler="sync", cache=False)
    elif which == "across":
        got = across(job, ANALYSES, cache=False)
    elif which == "cluster":
        from dask.distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
            t0 = time.perf_counter()  # the cluster's start is not the analyses' time
            got = across(job, ANALYSES, client, cache=False)
    else:  # "fill" then "cached": the result cache
        got = across(job, ANALYSES)
    seconds = time.perf_counter() - t0
    with open(results.parent / f"{which}.pkl", "wb") as f:
        pickle.dump({k: v for k, v in got.items() if k != "parts"}, f)
    return {"seconds": seconds, "statuses": sorted(set(got["parts"]["status"]))}


def run(which: str, path: Path, results: Path) -> dict:
    """`case(which)` in a child process; the peak RSS of the child's whole tree (its workers too)."""
    import subprocess

    child = subprocess.Popen([sys.executable, __file__, "--case", which, "--path", str(path), "--results", str(results)],
                             stdout=subprocess.PIPE, text=True)
    peak = tree_peak(child)
    out = json.loads(child.stdout.read().strip().splitlines()[-1])
    out["peak_gb"] = round(peak / 1e9, 3)
    print(f"{which}: {out['seconds']:.1f} s, tree peak RSS {out['peak_gb']:.3f} GB", flush=True)
    return out


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
    from neuron_widgets.analysis.stragglers_job import job_stragglers, narrow_part
    from neuron_widgets.sample.job import write_job

    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp())
    try:
        one = write_job(tmp / "src", nodes=2, events=4_000, processes=1, cores=2)
        root = tmp / "big"
        root.mkdir()
        for i in range(parts):  # hard-linked copies: links to one directory are one part, analysed once
            node = root / f"node-{i:03d}"
            node.mkdir()
            for f in (one / "node-00").iterdir():
                os.link(f, node / f.name)
        t0 = time.perf_counter()
        job = nw.load_job(root)
        open_s = time.perf_counter() - t0
        assert len(job) == parts
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    tables = []
    base = 1_772_323_200_000_000_000
    devices = pd.DataFrame({"process_id": 1000 + np.arange(cores) // 8, "nc_idx": np.arange(cores) % 8})
    labels = pd.DataFrame({"model_name": "bwd.neff", "key": np.arange(steps) + 1, "collective": 0,
                           "step": np.arange(steps) + 1})
    for p in range(parts):
        s = np.repeat(np.arange(steps), cores)
        c = np.tile(np.arange(cores), steps)
        arrive = base + s * 10_000_000 + rng.integers(0, 10_000, s.size)
        if p == parts - 1:
            arrive[c == cores - 1] += 80_000  # the remote straggler
        arr = pd.DataFrame({"step": s, "dev": c, "arrive": arrive, "length": 100_000 - (arrive - arrive.min()) % 1000,
                            "release": arrive + 100_000, "id": np.arange(s.size)})
        runs = pd.DataFrame({"dev": c, "model_name": "bwd.neff", "key": s + 1})
        dev = devices.assign(instance_id=f"i-{p:04d}", worker_gid=p * cores + np.arange(cores))
        tables.append((f"node-{p:03d}", narrow_part("neuron", [], arr, labels, dev[["instance_id", "process_id", "nc_idx",
                                                                                 "worker_gid"]], runs)))
    rows = sum(len(t["arrivals"]) for _, t in tables)
    with TreePeak() as peak:
        t0 = time.perf_counter()
        cores_df, steps_df, _lag = job_stragglers(tables)
        cross_s = time.perf_counter() - t0
    top = cores_df.iloc[0]
    return {"parts": parts, "open_s": round(open_s, 2), "arrival_rows": rows, "cross_part_s": round(cross_s, 2),
            "cross_part_peak_gb": round(peak.peak / 1e9, 2), "top": f"{top['part']} nc {top['nc_idx']}",
            "steps": len(steps_df)}


def one_shape(path: Path, repeat: int, skip_cluster: bool, skip_cache: bool = False) -> dict:
    """Every case on one job, interleaved; frames compared with the plain loop's."""
    import pickle

    import neuron_widgets as nw

    work = Path(tempfile.mkdtemp())
    results = work / "results"
    t0 = time.perf_counter()
    job = nw.load_job(path, results=results)
    open_s = time.perf_counter() - t0
    events = int(job.parts["events"].sum())
    print(f"load_job {path.name}: {len(job)} parts, {events:,} events, {open_s:.3f} s", flush=True)
    cases = ["loop", "across"] + ([] if skip_cluster else ["cluster"])
    runs: dict[str, list[dict]] = {c: [] for c in cases}
    for _ in range(repeat):  # interleaved, so a slow spell of the machine hits every case
        for c in cases:
            runs[c].append(run(c, path, results))
    fill, cached = (None, None) if skip_cache else (run("fill", path, results), run("cached", path, results))

    def load(which: str) -> dict:
        with open(work / f"{which}.pkl", "rb") as f:
            return pickle.load(f)

    loop = load("loop")
    best = {c: min(r["seconds"] for r in runs[c]) for c in cases}
    result = {"job": path.name, "parts": len(job), "events": events, "open_s": round(open_s, 3),
              **{f"{c}_s": [round(r["seconds"], 1) for r in runs[c]] for c in cases},
              **{f"{c}_peak_gb": max(r["peak_gb"] for r in runs[c]) for c in cases},
              "speedup_best": round(best["loop"] / best["across"], 2),
              "speedup_median": round(float(np.median([r["seconds"] for r in runs["loop"]]))
                                      / float(np.median([r["seconds"] for r in runs["across"]])), 2),
              "across_same": same(loop, load("across"))}
    if fill is not None and cached is not None:
        result.update({"cache_fill_s": round(fill["seconds"], 1), "cached_s": round(cached["seconds"], 2),
                       "cached_statuses": cached["statuses"], "cached_same": same(loop, load("cached"))})
    if "cluster" in cases:
        result["cluster_same"] = same(loop, load("cluster"))
    top = loop["stragglers"].iloc[0]
    result["top_straggler"] = (f"{top['part']} process {top['process_id']} nc {top['nc_idx']} "
                               f"(last {top['times_last']} of {top['steps']} steps)")
    shutil.rmtree(work, ignore_errors=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=24)
    ap.add_argument("--events", type=int, default=25_000_000)
    ap.add_argument("--steps", type=int, default=8_000)
    ap.add_argument("--shape", choices=["events", "steps", "both"], default="both")
    ap.add_argument("--skip-cluster", action="store_true")
    ap.add_argument("--skip-cache", action="store_true", help="no result-cache runs (fill, cached)")
    ap.add_argument("--skip-simulated", action="store_true", help="no simulated 512-node job")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--case")
    ap.add_argument("--path")
    ap.add_argument("--results")
    args = ap.parse_args()
    if args.case:
        print(json.dumps(case(args.case, Path(args.path), Path(args.results))))
        return
    print(machine(), flush=True)
    result: dict = {"machine": machine()}
    for shape in (["events", "steps"] if args.shape == "both" else [args.shape]):
        path = job_dir(args.nodes, args.events, args.steps if shape == "steps" else None)
        result[shape] = one_shape(path, args.repeat, args.skip_cluster, args.skip_cache)
        print(json.dumps({shape: result[shape]}, indent=1, default=str), flush=True)
    if not args.skip_simulated:
        result["simulated_512"] = simulated()
    print(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
