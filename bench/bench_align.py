"""`nw.align(before, after, step=k)` of two Neuron samples' Timelines (seeds 0 and 1: the same layout, other timings).

In a fresh process: both loaded (`prepare=False`), a Timeline of each, then `align` (each run's what-if
steps, aligned), then a re-align on another step and one view moved in the kernel (both followed). Peak RSS.

    python bench/bench_align.py [--events 1000000] [--repeat 1]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, two_runs

CODE = """
import json, resource, time
import neuron_widgets as nw
from neuron_widgets.widgets import Timeline
b = nw.load_profile({before!r}, prepare=False)
a = nw.load_profile({after!r}, prepare=False)
tb, ta = Timeline(b), Timeline(a)
t0 = time.perf_counter(); pair = nw.align(tb, ta, step=3); took = time.perf_counter() - t0
t0 = time.perf_counter(); pair.step = 5; realign = time.perf_counter() - t0
t0 = time.perf_counter()
for i in range(100):
    tb.view = [tb.view[0] + 1000.0, tb.view[1] + 1000.0]
moved = (time.perf_counter() - t0) / 100
print(json.dumps({{"events": len(b) + len(a), "align": took, "realign": realign, "view_ms": moved * 1e3,
                  "steps": len(pair.steps), "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def main() -> None:
    med = two_runs(__doc__, CODE, "bench_align")
    print(f"{machine()}, load {med['load']:.1f}: {med['events']:,.0f} events in the two runs: align {med['align']:.2f} s "
          f"({med['steps']:.0f} steps in both), re-align {med['realign'] * 1e3:.1f} ms, a view followed in the "
          f"kernel {med['view_ms']:.2f} ms, peak {med['peak_mb']:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
