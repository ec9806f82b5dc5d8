"""findings(job) on a generated 3-node job: its rows' job-wide gains (issue 37, item 4).

`findings(job)` runs the job's rules (`across`), each part's own rules in its task, and gives each part
row the gain of its fix on the whole job (what_if(job)). Each case runs in a fresh child (numba's cache
and the parse cache warm from a first, untimed run), the job's result store fresh: `findings(job)`
once (every part task computed) and again in the same process (the parts' results from the store).
Reported: wall seconds, CPU seconds of the child's whole process tree (its Dask workers too: wall
seconds stretch with the machine's load), the tree's peak RSS, the load average.

    python bench/bench_findings_job.py [--nodes 3] [--events 300000] [--repeat 2] [--code DIR ...]

`--code DIR` (repeatable): a folder holding another `neuron_widgets` (e.g. `git archive <commit>
neuron_widgets | tar -x -C DIR`) run instead of this tree's, the trees' runs taken in turn.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, machine, tree_peak

CODE = """
import json, time
import neuron_widgets as nw
from neuron_widgets import analysis as A
job = nw.load_job({path!r}, results={results!r})
out = {{}}
for name in ("first", "again"):
    t0 = time.perf_counter()
    f = A.findings(job)
    out[name + "_s"] = time.perf_counter() - t0
out["rows"] = len(f)
out["gains"] = int(f["gain_ns"].notna().sum())
print(json.dumps(out))
"""


def run(path: Path, code_dir: str | None) -> dict:
    env = dict(os.environ, NEURON_WIDGETS_PROGRESS="0")
    if code_dir is not None:
        env["PYTHONPATH"] = os.pathsep.join([code_dir, *filter(None, [env.get("PYTHONPATH")])])
    with tempfile.TemporaryDirectory() as tmp:
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        child = subprocess.Popen([sys.executable, "-c", CODE.format(path=str(path), results=str(Path(tmp) / "r"))],
                                 stdout=subprocess.PIPE, text=True, env=env, cwd=code_dir)
        peak = tree_peak(child)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if child.returncode:
            raise RuntimeError(f"the child failed ({child.returncode})")
        out = json.loads(child.stdout.read().strip().splitlines()[-1])
    out["cpu_s"] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)
    out["peak_mb"] = round(peak / 1e6)
    out["load"] = [round(load, 1), round(os.getloadavg()[0], 1)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--events", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--code", action="append", help="another tree's folder holding neuron_widgets (repeatable)")
    args = ap.parse_args()
    from neuron_widgets.sample.job import write_job

    path = OUT / f"job-findings-{args.nodes}x{args.events}"
    done = path.with_name(path.name + ".done")  # beside it: inside, it would be one more part
    if not done.exists():
        write_job(path, nodes=args.nodes, events=args.events, processes=2, cores=4, seed=3)
        done.write_text("")
    print(machine(), flush=True)
    trees = args.code or [None]
    for tree in trees:
        run(path, tree)  # numba's cache, the parse cache
    runs: dict[str, list[dict]] = {str(t): [] for t in trees}
    for _ in range(args.repeat):  # interleaved: a busy spell of the machine hits every tree
        for tree in trees:
            r = run(path, tree)
            runs[str(tree)].append(r)
            print(f"{tree or 'this tree'}: {json.dumps(r)}", flush=True)
    for tree, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("first_s", "again_s", "cpu_s", "peak_mb")}
        print(f"{tree}: findings(job) {med['first_s']:.1f} s, again {med['again_s']:.1f} s; tree CPU {med['cpu_s']:.1f} s "
              f"(both calls), peak {med['peak_mb']:.0f} MB; rows {rs[0]['rows']}, {rs[0]['gains']} with a job gain; "
              f"loads {[r['load'] for r in rs]}")


if __name__ == "__main__":
    main()
