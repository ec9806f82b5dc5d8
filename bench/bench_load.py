"""Parquet load speed and memory on the sample profile (default 10M events).

Each measurement runs in a fresh interpreter so peak and steady memory are the load's own.
Compares against the floor: pyarrow reading the same columns of the same file.

    python bench/bench_load.py [--events 10000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, in_child, machine

CHILD = r"""
import json, os, resource, time, gc
import psutil
import neuron_widgets as nw
proc = psutil.Process()
base = proc.memory_info().rss
path = {path!r}
t0 = time.perf_counter()
p = nw.load_profile(path)
load = time.perf_counter() - t0
gc.collect()
steady_load = proc.memory_info().rss - base
t0 = time.perf_counter()
p.track_index("default")
p.lod("default")
grouping = time.perf_counter() - t0
gc.collect()
steady_timeline = proc.memory_info().rss - base
t0 = time.perf_counter()
for g in nw.GROUPINGS:
    p.track_index(g)
all_groupings = time.perf_counter() - t0
gc.collect()
steady_all = proc.memory_info().rss - base
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
t0 = time.perf_counter()
again = nw.load_profile(path)
warm = time.perf_counter() - t0
print(json.dumps(dict(events=len(p), load=load, warm=warm, grouping=grouping, all_groupings=all_groupings,
                      steady_load=steady_load, steady_timeline=steady_timeline, steady_all=steady_all, peak=peak,
                      nbytes=p.nbytes(), pandas_built="events" in p.__dict__)))
"""

FLOOR = r"""
import json, time
import pyarrow.dataset as ds
cols = ["id", "name", "start_ts", "end_ts", "duration_ns", "trace_event_source", "instance_id", "process_id",
        "thread_id", "nc_idx", "pcore_idx", "worker_gid", "framework_stream_id"]
t0 = time.perf_counter()
t = ds.dataset({path!r}).to_table(columns=cols)
print(json.dumps(dict(seconds=time.perf_counter() - t0, rows=t.num_rows)))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = OUT / f"sample_{args.events}"
    if not (path / "SystemProfileEvents.parquet").exists():
        import neuron_widgets as nw

        nw.write_sample(path, events=args.events)
    runs = [in_child(CHILD.format(path=str(path))) for _ in range(args.repeat)]
    floor = [in_child(FLOOR.format(path=str(path / "SystemProfileEvents.parquet"))) for _ in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in ("load", "warm", "grouping", "all_groupings", "steady_load",
                                                              "steady_timeline", "steady_all", "peak")}
    n = runs[0]["events"]
    result = {
        "machine": machine(), "events": n,
        "load_s": med["load"], "events_per_s": n / med["load"], "load_runs_s": [r["load"] for r in runs],
        "warm_load_s": med["warm"], "warm_events_per_s": n / med["warm"],
        "pyarrow_floor_s": statistics.median(f["seconds"] for f in floor),
        "first_grouping_with_lod_s": med["grouping"], "all_six_groupings_s": med["all_groupings"],
        "steady_bytes_per_event_after_load": med["steady_load"] / n,
        "steady_bytes_per_event_timeline_ready_with_lod": med["steady_timeline"] / n,
        "steady_bytes_per_event_all_groupings": med["steady_all"] / n,
        "peak_bytes_per_event": med["peak"] / n,
        "held_bytes_per_event": runs[0]["nbytes"]["total"] / n,
        "pandas_built_on_load": runs[0]["pandas_built"],
    }
    print(json.dumps(result, indent=2))
    OUT.mkdir(exist_ok=True)
    (OUT / f"load_{args.events}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
