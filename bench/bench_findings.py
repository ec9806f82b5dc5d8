"""`analysis.findings` of a 10M-event Neuron profile against `all_analyses` (issue 38: at most 1.5x).

Three shapes, each in a fresh process on a profile loaded with `load_profile(prepare=False)` (an
analysis-only session), the runs of the shapes taken in turn so a change of load falls on all:
- `all_analyses` alone, and `findings` alone: each pays for reading the columns and for every analysis
  it needs (findings needs all of all_analyses' but the kernels, then the dependency graph, the path
  and one what-if replay per rule that predicts a gain): the first-call ratio;
- `all_analyses` then `findings` in one process: what findings adds once the analyses it shares are
  computed (kept per profile: temporal, idle, overlap, stragglers, errors_and_hangs).
Each gives wall and CPU seconds (all threads: what the machine's load does not stretch), the process's
peak RSS and the load average when it started. `--code DIR` (repeatable) runs another tree's
`neuron_widgets` (e.g. `git archive <commit> neuron_widgets | tar -x -C DIR`): with several, a
before/after, their runs taken in turn too.

    python bench/bench_findings.py [--events 10000000] [--repeat 3] [--code DIR ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, in_child, machine, sample

CODE = """
import json, os, resource, time
import neuron_widgets as nw
from neuron_widgets import analysis as A
load = os.getloadavg()[0]
p = nw.load_profile({path!r}, prepare=False)
t = {{"events": len(p), "load": load}}
for name in {order!r}:
    c0 = time.process_time()
    t0 = time.perf_counter()
    r = A.all_analyses(p) if name == "all_analyses" else A.findings(p)
    t[name] = time.perf_counter() - t0
    t[name + "_cpu"] = time.process_time() - c0
    if name == "findings":
        t["findings_rows"] = len(r)
t["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(t))
"""
SHAPES = {"all_analyses": ["all_analyses"], "findings": ["findings"], "both": ["all_analyses", "findings"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--code", action="append", help="a folder holding the neuron_widgets to measure (repeatable)")
    args = ap.parse_args()
    path = sample(args.events)
    trees: list[str | None] = args.code or [None]

    def run(shape: str, tree: str | None) -> dict:
        return in_child(CODE.format(path=str(path), order=SHAPES[shape]), tree)

    for tree in trees:
        run("all_analyses", tree)  # numba's cache warm
    runs: dict[str | None, dict[str, list[dict]]] = {t: {s: [] for s in SHAPES} for t in trees}
    for _ in range(args.repeat):
        for shape in SHAPES:
            for tree in trees:
                runs[tree][shape].append(run(shape, tree))
    for tree in trees:
        report(tree, runs[tree], args.repeat)


def report(tree: str | None, runs: dict[str, list[dict]], repeat: int) -> None:
    med = {s: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for s, rs in runs.items()}
    a, f, both = med["all_analyses"], med["findings"], med["both"]
    results = {"machine": machine(), "code": tree or "this tree", "events": a["events"], "medians": med,
               "runs": runs,
               "first_call_ratio": f["findings"] / a["all_analyses"],
               "first_call_ratio_cpu": f["findings_cpu"] / a["all_analyses_cpu"],
               "after_ratio": both["findings"] / both["all_analyses"],
               "after_ratio_cpu": both["findings_cpu"] / both["all_analyses_cpu"]}
    loads = [r["load"] for rs in runs.values() for r in rs]
    print(f"{tree or 'this tree'}: {a['events']:,.0f} events, {repeat} runs each, medians (load "
          f"{min(loads):.1f}-{max(loads):.1f}):")
    print(f"  alone: all_analyses {a['all_analyses']:.2f} s (CPU {a['all_analyses_cpu']:.2f} s, {a['peak_mb']:.0f} MB), "
          f"findings {f['findings']:.2f} s (CPU {f['findings_cpu']:.2f} s, {f['peak_mb']:.0f} MB): "
          f"{results['first_call_ratio']:.2f}x (CPU {results['first_call_ratio_cpu']:.2f}x), {f['findings_rows']:.0f} findings")
    print(f"  all_analyses then findings: {both['all_analyses']:.2f} s, {both['findings']:.2f} s: {results['after_ratio']:.2f}x "
          f"(CPU {both['all_analyses_cpu']:.2f} s, {both['findings_cpu']:.2f} s: {results['after_ratio_cpu']:.2f}x; "
          f"{both['peak_mb']:.0f} MB)", flush=True)
    OUT.mkdir(exist_ok=True)
    name = "bench_findings.json" if tree is None else f"bench_findings_{Path(tree).name}.json"
    (OUT / name).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
