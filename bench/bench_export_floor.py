"""The memory and CPU floor of an HTML export: what it asks of the model, without the export's own work.

    python bench/bench_export_floor.py [--events 10000000]

Loads the benchmarks' sample and, step by step, computes what `export_profile` needs from the
Profile (error and unfinished rows, counter series, grouping keys, flow pairs, the overview, the
arguments of 900k rows as the 25 MB page of 10M events keeps exact), printing RSS after each.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import machine, sample  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    import neuron_widgets as nw
    from neuron_widgets.model.counter_series import counter_series
    from neuron_widgets.model.overview import overview
    from neuron_widgets.model.problem_rows import error_rows, incomplete_rows

    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--args-rows", type=int, default=900_000)
    args = ap.parse_args()
    print(machine(), "load average", os.getloadavg())
    t0 = time.perf_counter()
    p = nw.load_profile(sample(args.events))
    print(f"{'load':24s} rss {rss_mb():6.0f} MB  wall {time.perf_counter() - t0:5.1f} s")
    rows = np.sort(np.random.default_rng(0).choice(len(p), min(args.args_rows, len(p)), replace=False))
    steps = [("error/unfinished rows", lambda: (error_rows(p), incomplete_rows(p))),
             ("counter series", lambda: counter_series(p)),
             ("start/end/name", lambda: (p.array("start_ts"), p.array("end_ts"), p.name_codes())),
             ("grouping keys", lambda: [p.grouping_keys(g) for g in p.groupings]),
             ("flow pairs", p.link_pairs),
             ("overview", lambda: overview(p)),
             ("core columns", lambda: [p.column(c) for c in p.core.column_names]),
             (f"args of {rows.size:,} rows", lambda: p.details_of_rows(rows))]
    kept = []
    for name, step in steps:
        c = time.process_time()
        kept.append(step())
        print(f"{name:24s} rss {rss_mb():6.0f} MB  cpu {time.process_time() - c:5.1f} s")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
