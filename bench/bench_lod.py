"""The level-of-detail index's build: `track_lod.build_lod` (what `Profile.lod` runs: the finest level in one pass,
the coarser ones merged by `lod_kernels.merge_runs`), `viewport.build` (level by level, `lod_kernels.coarsen`) and
that merge alone (every coarser level of the finest, `coarsen` over and over).

Each tree is timed in fresh processes, taking turns (A B A B ...) so a change in the machine's load falls on both;
CPU seconds beside wall seconds, and the load average before each run. Kernels are compiled (or read from numba's
cache) before the clock starts.

    python bench/bench_lod.py [--events 10000000] [--repeat 5] [--rounds 3] [--before DIR] [--after DIR]

`--before`/`--after`: folders holding a `neuron_widgets` to import (another commit's, e.g. from
`git archive <rev> neuron_widgets | tar -x -C DIR`); without them, this tree only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, in_child, machine

CHILD = """
import json, time
import numpy as np
import neuron_widgets as nw
from neuron_widgets.model import lod_kernels as k, track_lod, viewport
p = nw.load_profile({path!r})
idx = p.track_index({grouping!r})
start, end = p.array("start_ts"), p.array("end_ts")
lanes = idx.tracks["lanes"].to_numpy()
small = slice(0, 1000)
track_lod.build_lod(idx, start, end)  # compiled, or read from numba's cache, before the clock starts
viewport.build(idx.track[small], idx.lane[small], lanes, start[small], end[small])
# The merge alone: every coarser level of viewport.build's finest one, level by level (lod_kernels.coarsen).
finest = viewport.build(idx.track, idx.lane, lanes, start, end)
levels = (finest.lvl_key, finest.lvl_lo, finest.lvl_best, finest.lvl_max, finest.lvl_fs, finest.lvl_bs, finest.lvl_be)
first = [a[finest.lvl_off[0, 0]:finest.lvl_off[0, -1]] for a in levels]
first_off = finest.lvl_off[0] - finest.lvl_off[0, 0]
def coarsen_all():
    level = (*first, first_off)
    while level[0].size and level[0].max() > 0:  # up to one bucket a lane
        level = k.coarsen(*level)
out = {{"events": len(p), "lanes": int(lanes.sum()), "build_lod": [], "viewport_build": [], "coarsen": []}}
for _ in range({repeat}):
    for name, fn in (("build_lod", lambda: track_lod.build_lod(idx, start, end)),
                     ("viewport_build", lambda: viewport.build(idx.track, idx.lane, lanes, start, end)),
                     ("coarsen", coarsen_all)):
        c, w = time.process_time(), time.perf_counter()
        fn()
        out[name].append([time.process_time() - c, time.perf_counter() - w])
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--grouping", default="default")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", type=Path)
    ap.add_argument("--after", type=Path)
    args = ap.parse_args()
    import neuron_widgets as nw

    path = OUT / f"sample_{args.events}"
    if not (path / "SystemProfileEvents.parquet").exists():
        nw.write_sample(path, events=args.events)
    trees = {"before": args.before, "after": args.after} if args.before or args.after else {"this tree": None}
    measures = ("build_lod", "viewport_build", "coarsen")
    runs: dict[str, dict[str, list[list[float]]]] = {t: {m: [] for m in measures} for t in trees}
    loads: dict[str, list[float]] = {t: [] for t in trees}
    events = lanes = 0
    for _ in range(args.rounds):
        for tree, where in trees.items():
            loads[tree].append(os.getloadavg()[0])
            got = in_child(CHILD.format(path=str(path), grouping=args.grouping, repeat=args.repeat), where)
            events, lanes = got["events"], got["lanes"]
            for name in measures:
                runs[tree][name] += got[name]
    result = {"machine": machine(), "events": events, "lanes": lanes, "grouping": args.grouping,
              "runs_per_tree": args.rounds * args.repeat, "load_1min": loads, "trees": {}}
    for tree in trees:
        result["trees"][tree] = {name: {"cpu_median_s": statistics.median(r[0] for r in rs),
                                        "cpu_min_s": min(r[0] for r in rs),
                                        "wall_median_s": statistics.median(r[1] for r in rs)}
                                 for name, rs in runs[tree].items()}
    print(json.dumps(result, indent=1))
    for tree, by in result["trees"].items():
        for name, r in by.items():
            print(f"{tree:>10} {name:<15} CPU median {r['cpu_median_s']:.3f} s (min {r['cpu_min_s']:.3f}), "
                  f"wall median {r['wall_median_s']:.3f} s")


if __name__ == "__main__":
    main()
