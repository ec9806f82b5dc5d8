"""Viewport query latency on the sample: random windows from the whole span down to microseconds.

    python bench/bench_viewport.py [--events 10000000] [--queries 300] [--width 1920]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, machine


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--width", type=int, default=1920)
    ap.add_argument("--grouping", default="default")
    args = ap.parse_args()
    import neuron_widgets as nw

    path = OUT / f"sample_{args.events}"
    if not (path / "SystemProfileEvents.parquet").exists():
        nw.write_sample(path, events=args.events)
    p = nw.load_profile(path)
    t = time.perf_counter()
    p.track_index(args.grouping)
    grouping_s = time.perf_counter() - t
    t = time.perf_counter()
    p.lod(args.grouping)
    lod_s = time.perf_counter() - t
    p.viewport(args.grouping, p.start_ts, p.end_ts + 1, args.width)  # warm the kernels
    rng = np.random.default_rng(0)
    span = p.end_ts - p.start_ts + 1
    times, items = [], []
    for _ in range(args.queries):
        width = int(10 ** rng.uniform(3, np.log10(span)))  # 1 us .. the whole profile
        t0 = int(rng.integers(p.start_ts, p.end_ts - width + 2)) if width < span else p.start_ts
        t = time.perf_counter()
        v = p.viewport(args.grouping, t0, t0 + width, args.width)
        times.append(time.perf_counter() - t)
        items.append(len(v["row"]))
    whole = []
    for _ in range(20):
        t = time.perf_counter()
        v = p.viewport(args.grouping, p.start_ts, p.end_ts + 1, args.width)
        whole.append(time.perf_counter() - t)
    lanes = int(p.tracks(args.grouping)["lanes"].sum())
    result = {
        "machine": machine(), "events": len(p), "grouping": args.grouping, "tracks": len(p.tracks(args.grouping)),
        "lanes": lanes, "width_px": args.width, "queries": args.queries,
        "p50_ms": 1e3 * float(np.percentile(times, 50)), "p95_ms": 1e3 * float(np.percentile(times, 95)),
        "max_ms": 1e3 * float(np.max(times)), "whole_span_p50_ms": 1e3 * float(np.median(whole)),
        "whole_span_items": len(v["row"]), "max_items": int(max(items)),
        "items_bound": (2 * args.width + 2) * lanes,
        "grouping_build_s": grouping_s, "lod_build_s": lod_s,
        "lod_bytes_per_event": p.lod(args.grouping).nbytes() / len(p),
        "held_bytes_per_event_timeline_ready": (p.nbytes()["columns"] + p.track_index(args.grouping).nbytes()
                                                + p.lod(args.grouping).nbytes() + p.track_index(args.grouping).combo.nbytes)
        / len(p),
    }
    print(json.dumps(result, indent=2))
    OUT.mkdir(exist_ok=True)
    (OUT / f"viewport_{args.events}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
