"""The Summary's findings and critical path sections: when they fill in, after the first charts (which they must
not delay), on an N-event sample (default 1M).

Each run in a fresh interpreter: load the sample, open a Timeline, then `Summary(tl)`; stage times come from the
Summary's status line (each stage says when its charts were updated), counted from `Summary()`.

    python bench/bench_summary_findings.py [--events 1000000] [--repeat 2]
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

CHILD = """
import json, time, threading
import neuron_widgets as nw
from neuron_widgets.widgets import Timeline, Summary
p = nw.load_profile({path!r})
tl = Timeline(p)
t1 = time.perf_counter()
s = Summary(tl)
stamps = {{}}
def watch():
    while not s.done.is_set():
        v = s.status.value
        for k in ("temporal", "kernels", "idle", "stragglers", "problems", "findings", "critical path"):
            if f"({{k}} done)" in v and k not in stamps:
                stamps[k] = time.perf_counter() - t1
        time.sleep(0.002)
threading.Thread(target=watch, daemon=True).start()
s.done.wait(600)
print(json.dumps({{"stages_s": stamps, "all_s": time.perf_counter() - t1, "events": len(p),
                  "findings": len(s.results.get("findings", [])),
                  "workers_drawn": len(s.charts.critical.source.data["worker"])}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    path = sample(args.events)
    runs = [in_child(CHILD.format(path=str(path))) for _ in range(args.repeat)]

    def med(stage: str) -> float:
        return round(statistics.median(r["stages_s"].get(stage, float("nan")) for r in runs), 2)

    result = {"machine": machine(), "load": os.getloadavg(), "events": runs[0]["events"],
              "first_charts_s": med("temporal"), "problems_s": med("problems"), "findings_s": med("findings"),
              "critical_path_s": med("critical path"), "all_s": round(statistics.median(r["all_s"] for r in runs), 2),
              "runs": runs}
    OUT.mkdir(exist_ok=True)
    print(json.dumps(result, indent=1))
    (OUT / "bench_summary_findings.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
