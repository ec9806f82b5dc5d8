"""`compare(before, after, by="step")` of two Neuron samples (seeds 0 and 1: the same layout, other timings).

In a fresh process: both loaded (`prepare=False`), `findings` of the before-run alone (for scale),
then `compare` (each run's what-if steps and findings), then the Summary's section (a second
comparison, the graphs already built; an export of the same Summary reuses the section's). Peak
RSS of the process.

    python bench/bench_compare.py [--events 1000000] [--repeat 1]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, two_runs

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


def main() -> None:
    med = two_runs(__doc__, CODE, "bench_compare")
    print(f"{machine()}, load {med['load']:.1f}: {med['events']:,.0f} events in the two runs: findings of one "
          f"{med['findings_one']:.2f} s, compare by step {med['compare']:.2f} s ({med['steps']:.0f} steps, "
          f"{med['findings']:.0f} findings), the Summary's section after it (compared again, graphs built) "
          f"{med['section']:.2f} s, "
          f"peak {med['peak_mb']:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
