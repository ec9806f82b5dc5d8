"""`Summary(after, compare=before)` of two Neuron samples (seeds 0 and 1): when it paints, when it compares.

In a fresh process: both loaded (`prepare=False`); the Summary made (how long its constructor takes: the
comparison used to run there), then the time until its first chart has data (the temporal breakdown), until the
comparison starts (every other section applied: it is the last analysis), and until it is done. `--eager`
measures the old way for scale: the section built with its comparison (`FixSection(before, after)`) first.

    python bench/bench_summary_compare.py [--events 1000000] [--eager]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, after_sample, in_child, machine, sample

CODE = """
import json, threading, time
import neuron_widgets as nw
import neuron_widgets.summary.compare as SC
from neuron_widgets.widgets import Summary
b = nw.load_profile({before!r}, prepare=False)
a = nw.load_profile({after!r}, prepare=False)
out = {{"events": len(b) + len(a)}}
if {eager!r}:
    t0 = time.perf_counter(); SC.FixSection(b, a); out["eager_section"] = time.perf_counter() - t0
real, started = SC.compare_runs, {{}}
def timed(x, y, **kw):
    started.setdefault("t", time.perf_counter())
    return real(x, y, **kw)
SC.compare_runs = timed
t0 = time.perf_counter()
s = Summary(a, compare=b)
out["constructor"] = time.perf_counter() - t0
src = s.charts.sources[id(s.charts.temporal)]
while not src.data["device"] and not s.done.is_set():
    time.sleep(0.01)
out["first_chart"] = time.perf_counter() - t0
s.done.wait(600)
out["done"] = time.perf_counter() - t0
out["compare_started"] = started.get("t", float("nan")) - t0
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--eager", action="store_true")
    args = ap.parse_args()
    before, after = sample(args.events), after_sample(args.events)
    r = in_child(CODE.format(before=str(before), after=str(after), eager=args.eager))
    load = os.getloadavg()[0]
    eager = f"; the section built eagerly first (the old constructor's cost) {r['eager_section']:.2f} s" \
        if "eager_section" in r else ""
    print(f"{machine()}, load {load:.1f}: {r['events']:,.0f} events in the two runs: Summary(after, compare=before) "
          f"returns in {r['constructor']:.2f} s, first chart filled at {r['first_chart']:.2f} s, the comparison "
          f"starts at {r['compare_started']:.2f} s (after every other section), done at {r['done']:.2f} s{eager}",
          flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_summary_compare.json").write_text(json.dumps({"machine": machine(), "load": load, **r}, indent=1))


if __name__ == "__main__":
    main()
