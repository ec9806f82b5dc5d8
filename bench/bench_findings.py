"""`analysis.findings` of a 10M-event Neuron profile against `all_analyses`, in the same fresh process.

Each run loads the profile with `load_profile(prepare=False)` (an analysis-only session), runs
`all_analyses` (which reads the arguments and flow ids both need), then `findings` (its own
analyses are those already computed once more, plus the critical path's graph and one what-if
replay per rule that predicts a gain). Also the reverse order, since the first to run pays for
reading the columns. Goal (issue 38): `findings` in at most 1.5x the time of `all_analyses`.

    python bench/bench_findings.py [--events 10000000] [--repeat 3]
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
import json, time
import neuron_widgets as nw
from neuron_widgets import analysis as A
p = nw.load_profile({path!r}, prepare=False)
order = {order!r}
t = {{}}
for name in order:
    c0 = time.process_time()
    t0 = time.perf_counter()
    r = A.all_analyses(p) if name == "all_analyses" else A.findings(p)
    t[name] = time.perf_counter() - t0
    t[name + "_cpu"] = time.process_time() - c0  # all threads' CPU: what load does not stretch
    if name == "findings":
        t["findings_rows"] = len(r)
print(json.dumps({{"events": len(p), **t}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--events", type=int, default=10_000_000)
    args = ap.parse_args()
    path = sample(args.events)
    results: dict = {"machine": machine()}
    in_child(CODE.format(path=str(path), order=["all_analyses"]))  # numba's cache warm
    for order in (["all_analyses", "findings"], ["findings", "all_analyses"]):
        runs = [in_child(CODE.format(path=str(path), order=order)) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        label = " then ".join(order)
        results[label] = med
        print(f"{label}: {med['events']:,.0f} events: all_analyses {med['all_analyses']:.2f} s, findings "
              f"{med['findings']:.2f} s ({med['findings'] / med['all_analyses']:.2f}x), {med['findings_rows']:.0f} "
              f"findings; CPU all_analyses {med['all_analyses_cpu']:.2f} s, findings {med['findings_cpu']:.2f} s "
              f"({med['findings_cpu'] / med['all_analyses_cpu']:.2f}x)", flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_findings.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
