"""The Summary widget at 10M events: first charts after load, all charts, brushed updates; export size.

Each run in a fresh interpreter: load the sample, open a Timeline, then `Summary(tl)`; times are
taken from the Summary's own status (each analysis stage reports when its charts were updated)
and counted from `Summary()`; "from load" adds the Timeline's creation. A brushed range is
summarised through the widget's own path (filter, analyses, chart updates).

    python bench/bench_summary.py [--events 10000000] [--repeat 3]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, in_child, machine, sample, sized_args, summary_runs

STAGES = ("temporal", "kernels", "idle", "stragglers", "problems")
# After the Summary is done: brushed ranges through the widget's own path.
BRUSH = """
out["brush_s"] = {}
for a, b in (("100ms", "150ms"), ("1s", "1.2s"), ("2s", "4s")):
    t = time.perf_counter()
    s._start(tl._abs_range((a, b)))
    s.done.wait(120)
    out["brush_s"][f"{a}-{b}"] = time.perf_counter() - t
"""

EXPORT = """
import json
import neuron_widgets as nw
from neuron_widgets.widgets import Timeline, Summary
from neuron_widgets.export import export_html
p = nw.sample_profile()
tl = Timeline(p)
a = export_html({out!r} + "/plain.html", tl, time_range="all")
s = Summary(tl)
s.done.wait(60)
b = export_html({out!r} + "/with-summary.html", tl, s, time_range="all")
print(json.dumps({{"plain_bytes": a["bytes"], "with_summary_bytes": b["bytes"]}}))
"""


def main() -> None:
    args = sized_args(__doc__, events=10_000_000, repeat=3)
    runs = summary_runs(sample(args.events), STAGES, args.repeat, after=BRUSH, timeout=300)
    first = [r["stages_s"]["temporal"] for r in runs]
    result = {
        "machine": machine(), "events": runs[0]["events"],
        "first_charts_from_summary_s": statistics.median(first), "runs_first": [round(x, 2) for x in first],
        "first_charts_from_load_s": statistics.median(r["stages_s"]["temporal"] + r["timeline_s"] for r in runs),
        "constructor_s": statistics.median(r["ctor_s"] for r in runs),
        "all_charts_s": statistics.median(r["all_s"] for r in runs), "runs_all": [round(r["all_s"], 2) for r in runs],
        "stages_s": runs[0]["stages_s"],
        "brush_s": {k: statistics.median(r["brush_s"][k] for r in runs) for k in runs[0]["brush_s"]},
    }
    OUT.mkdir(exist_ok=True)
    result["export"] = in_child(EXPORT.format(out=str(OUT)))
    result["export"]["summary_adds_bytes"] = result["export"]["with_summary_bytes"] - result["export"]["plain_bytes"]
    print(json.dumps(result, indent=1))
    (OUT / "bench_summary.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
