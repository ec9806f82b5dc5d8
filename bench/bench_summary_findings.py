"""The Summary's findings and critical path sections: when they fill in, after the first charts (which they must
not delay), on an N-event sample (default 1M).

Each run in a fresh interpreter: load the sample, open a Timeline, then `Summary(tl)`; stage times come from the
Summary's status line (each stage says when its charts were updated), counted from `Summary()`.

    python bench/bench_summary_findings.py [--events 1000000] [--repeat 2]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, machine, sample, sized_args, summary_runs

STAGES = ("temporal", "kernels", "idle", "stragglers", "problems", "findings", "critical path")
COUNTS = """
out["findings"] = len(s.results.get("findings", []))
out["workers_drawn"] = len(s.charts.critical.source.data["worker"])
"""


def main() -> None:
    args = sized_args(__doc__, events=1_000_000, repeat=2)
    runs = summary_runs(sample(args.events), STAGES, args.repeat, after=COUNTS)

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
