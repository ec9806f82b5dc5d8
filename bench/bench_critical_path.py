"""Critical path and what-if on 1M-event Neuron profiles.

For each profile: `load_profile(prepare=False)`, then `critical_path` (first call: reads the
arguments and flow ids it needs, builds the graph, walks the path), `critical_path` again (kept),
`critical_path_breakdown`, and `what_if` (a replay of the whole graph; the graph is kept from the
path). Medians over fresh loads. Goals (issue 37): the path of a 1M-event profile in 2 s or less,
a what-if replay at 1M events in 1 s or less.

Profiles: the 1M-event sample (2 instances x 2 processes x 2 cores, most events framework and
runtime children the model does not read), a 1M-event sample with 16 cores per process, where
the model reads more of the events, and a 1M-event Kineto-like Chrome trace (an op on each of 8
CPU threads launching a kernel on one of 4 streams through a flow).

A job: a generated multi-node job (`--job-nodes` nodes, `--job-events` events in all, 2
processes x 4 NeuronCores per node), `critical_path(job)` against `across(job, ["stragglers"])`
in the same script, each in a fresh child on Dask's local processes with no result cache:
seconds (wall, and CPU of the child's whole tree), and the peak RSS of the child's whole process
tree (its workers too), sampled every 50 ms. Goal: the path in at most 1.2x the time of across, a 2 GB tree peak.

    python bench/bench_critical_path.py [--repeat 3] [--job-nodes 24] [--job-events 4800000] [--job-only | --no-job]
                                        [--job-dir bench/out/job-24x8000steps]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, machine, sample, tree_peak

CODE = """
import json, time
import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.critical_path import graph_of
from neuron_widgets.analysis.frame import frame_of
p = nw.load_profile({path!r}, prepare=False)
c0 = time.process_time()
t0 = time.perf_counter()
path = A.critical_path(p)
t1 = time.perf_counter()
c1 = time.process_time()
A.critical_path(p)
t2 = time.perf_counter()
A.critical_path_breakdown(p)
t3 = time.perf_counter()
c3 = time.process_time()
w = A.what_if(p, {{"kind": ["compute", "kernel"], "nc_idx": [0, None]}}, 0.5)
t4 = time.perf_counter()
c4 = time.process_time()
w = A.what_if(p, [({{"kind": ["compute", "kernel"]}}, 0.5), ({{"kind": "gap"}}, 0.0)])
t5 = time.perf_counter()
g, _ = graph_of(frame_of(p))
print(json.dumps({{"events": len(p), "instants": len(g), "edges": int(g.src.size), "segments": len(path),
                  "path_s": t1 - t0, "path_again_s": t2 - t1, "breakdown_s": t3 - t2, "what_if_s": t4 - t3,
                  "what_if_two_changes_s": t5 - t4, "saved_pct": w.saved_pct, "path_cpu_s": c1 - c0,
                  "what_if_cpu_s": c4 - c3}}))
"""


def dense_sample(events: int) -> Path:
    import neuron_widgets as nw

    path = OUT / f"sample_{events}_16cores"
    if not (path / "SystemProfileEvents.parquet").exists():
        nw.write_sample(path, events=events, cores=16)
    return path


def chrome_flows(events: int) -> Path:
    """A Kineto-like Chrome trace: per op a cpu_op, its cudaLaunchKernel and the kernel, joined by an ac2g flow."""
    import orjson

    path = OUT / f"chrome_flows_{events}.json"
    if path.exists():
        return path
    out = []
    for i in range(events // 3):
        tid, ts = 10 + i % 8, (i // 8) * 12.0
        out += [{"ph": "X", "cat": "cpu_op", "name": f"aten::op_{i % 97}", "pid": 1, "tid": tid, "ts": ts, "dur": 10.0},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": tid, "ts": ts + 2,
                 "dur": 3.0},
                {"ph": "X", "cat": "kernel", "name": f"kernel_{i % 31}", "pid": 0, "tid": 7 + i % 4,
                 "ts": ts + 6 + (i % 4) * 3.0, "dur": 2.0 + (i % 3)},
                {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": i, "pid": 1, "tid": tid, "ts": ts + 2},
                {"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": i, "pid": 0, "tid": 7 + i % 4,
                 "ts": ts + 6 + (i % 4) * 3.0}]
    OUT.mkdir(exist_ok=True)
    path.write_bytes(orjson.dumps({"traceEvents": out}))
    return path


JOB_CODE = """
import json, time
import neuron_widgets as nw
from neuron_widgets import analysis as A
job = nw.load_job({path!r}, results={results!r})
t0 = time.perf_counter()
if {which!r} == "across":
    got = A.across(job, ["stragglers"], cache=False)
    n = len(got["straggler_steps"])
elif {which!r} == "what_if":
    # The path's first pass, then the replay: each part replays its own graph under the change.
    got = A.what_if(job, {{"kind": "compute"}}, 0.5, cache=False)
    n = int(got.saved_ns)
else:
    got = A.critical_path(job, cache=False)
    n = len(got)
print(json.dumps({{"seconds": time.perf_counter() - t0, "rows": n}}))
"""


def job_case(which: str, path: Path, results: Path) -> dict:
    """One way of running the job in a fresh child; the peak RSS of the child's process tree."""
    import os
    import resource
    import subprocess

    env = dict(os.environ, NEURON_WIDGETS_PROGRESS="0")
    # CPU seconds of the child's whole tree (its Dask workers are reaped by it, then it by us): what the run
    # costs whatever else the machine runs, where wall seconds stretch with the load.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = subprocess.Popen([sys.executable, "-c", JOB_CODE.format(path=str(path), results=str(results), which=which)],
                             stdout=subprocess.PIPE, text=True, env=env)
    peak = tree_peak(child)
    if child.returncode:
        raise RuntimeError(f"{which} failed ({child.returncode})")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = json.loads(child.stdout.read().strip().splitlines()[-1])
    out["peak_gb"] = round(peak / 1e9, 2)
    out["cpu_s"] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)
    out["load"] = round(os.getloadavg()[0], 1)
    return out


def bench_job(nodes: int, events: int, repeat: int, path: Path | None = None) -> dict:
    import tempfile

    from neuron_widgets.sample.job import write_job

    if path is None:
        path = OUT / f"job-cp-{nodes}x{events}"
        done = path.with_name(path.name + ".done")  # beside it: inside, it would be one more part
        if not done.exists():
            write_job(path, nodes=nodes, events=events, processes=2, cores=4)
            done.write_text("")
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for which in ("across", "critical_path", "what_if"):
            runs = [job_case(which, path, Path(tmp) / which) for _ in range(repeat)]
            out[which] = {"seconds": statistics.median(r["seconds"] for r in runs),
                          "cpu_s": statistics.median(r["cpu_s"] for r in runs),
                          "peak_gb": max(r["peak_gb"] for r in runs), "rows": runs[0]["rows"],
                          "load": [r["load"] for r in runs]}
    out["ratio"] = out["critical_path"]["seconds"] / out["across"]["seconds"]
    out["cpu_ratio"] = out["critical_path"]["cpu_s"] / out["across"]["cpu_s"]
    print(f"job {path.name}: across(stragglers) {out['across']['seconds']:.1f} s, CPU {out['across']['cpu_s']:.1f} s "
          f"(peak {out['across']['peak_gb']:.2f} GB, load {out['across']['load']}), critical_path "
          f"{out['critical_path']['seconds']:.1f} s, CPU {out['critical_path']['cpu_s']:.1f} s "
          f"(peak {out['critical_path']['peak_gb']:.2f} GB, load {out['critical_path']['load']}, "
          f"{out['critical_path']['rows']:,} segments): {out['ratio']:.2f}x wall, {out['cpu_ratio']:.2f}x CPU; what_if "
          f"(compute x0.5) {out['what_if']['seconds']:.1f} s, CPU {out['what_if']['cpu_s']:.1f} s (peak "
          f"{out['what_if']['peak_gb']:.2f} GB, saved {out['what_if']['rows']:,} ns)", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--job-nodes", type=int, default=24)
    ap.add_argument("--job-events", type=int, default=4_800_000)
    ap.add_argument("--job-only", action="store_true")
    ap.add_argument("--no-job", action="store_true", help="the profiles only")
    ap.add_argument("--job-dir", help="an existing job directory instead of the generated one (e.g. bench/out/"
                    "job-24x8000steps, the many-steps job of bench_job.py)")
    args = ap.parse_args()
    from common import in_child

    results = {"machine": machine()}
    if not args.no_job:
        results["job"] = bench_job(args.job_nodes, args.job_events, args.repeat,
                                   Path(args.job_dir) if args.job_dir else None)
    for label, path in (("sample", sample(args.events)), ("sample, 16 cores per process", dense_sample(args.events)),
                        ("Kineto-like Chrome trace with flows", chrome_flows(args.events))) if not args.job_only else ():
        in_child(CODE.format(path=str(path)))  # numba's cache and the parse cache warm
        runs = [in_child(CODE.format(path=str(path))) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        results[label] = med
        print(f"{label}: {med['events']:,.0f} events, graph {med['instants']:,.0f} instants / {med['edges']:,.0f} edges, "
              f"path {med['segments']:,.0f} segments: critical_path {med['path_s']:.2f} s (again {med['path_again_s']:.3f} s), "
              f"breakdown {med['breakdown_s']:.3f} s, what_if {med['what_if_s']:.3f} s "
              f"(two changes {med['what_if_two_changes_s']:.3f} s); CPU: path {med['path_cpu_s']:.2f} s, what_if "
              f"{med['what_if_cpu_s']:.3f} s", flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_critical_path.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
