"""`compare(before, after, by="step")` of two Neuron samples (seeds 0 and 1: the same layout, other timings).

In a fresh process: both loaded (`prepare=False`), `findings` of the before-run alone (for scale),
then `compare` (each run's what-if steps and findings), then the Summary's section (a second
comparison, the graphs already built; an export of the same Summary reuses the section's). Peak
RSS of the process.

    python bench/bench_compare.py [--events 1000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, in_child, machine, sample

CODE = """
import json, resource, time
import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.summary.compare import FixSection
b = nw.load_profile({before!r}, prepare=False)
a = nw.load_profile({after!r}, prepare=False)
t0 = time.perf_counter(); A.findings(b); alone = time.perf_counter() - t0
t0 = time.perf_counter(); c = A.compare(b, a, by="step"); took = time.perf_counter() - t0
t0 = time.perf_counter(); FixSection(b, a); section = time.perf_counter() - t0
print(json.dumps({{"events": len(b) + len(a), "findings_one": alone, "compare": took, "section": section,
                  "steps": len(c.steps), "findings": len(c.findings),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def after_sample(events: int) -> Path:
    import neuron_widgets as nw

    path = OUT / f"sample_{events}_seed1"
    if not (path / "SystemProfileEvents.parquet").exists():
        nw.write_sample(path, events=events, seed=1)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--events", type=int, default=1_000_000)
    args = ap.parse_args()
    before, after = sample(args.events), after_sample(args.events)
    code = CODE.format(before=str(before), after=str(after))
    runs = [in_child(code) for _ in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    load = os.getloadavg()[0]
    print(f"{machine()}, load {load:.1f}: {med['events']:,.0f} events in the two runs: findings of one "
          f"{med['findings_one']:.2f} s, compare by step {med['compare']:.2f} s ({med['steps']:.0f} steps, "
          f"{med['findings']:.0f} findings), the Summary's section after it (compared again, graphs built) "
          f"{med['section']:.2f} s, "
          f"peak {med['peak_mb']:.0f} MB", flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_compare.json").write_text(json.dumps({"machine": machine(), "load": load, **med}, indent=1))


if __name__ == "__main__":
    main()
