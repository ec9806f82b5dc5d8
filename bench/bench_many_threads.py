"""A Chrome trace of very many threads (one event each): grouping and HTML export.

    python bench/bench_many_threads.py --threads 1000000 --repeat 3

The trace (written once to bench/out/) has `--threads` threads in 4 processes, one complete
event each, a third of the threads named by `thread_name` metadata events. Each run is a fresh
interpreter, parse cache off: `load_profile`, then `tracks()` (the Default grouping's tracks and
lanes), then `export_profile` (the HTML page, default 25 MB budget), then `export_html` of a
Timeline. Prints one JSON line per run and the medians. Before issue 36 at 10^6 threads:
`tracks()` 31 s, `export_html` 190 s and a failure (the page's metadata outgrew its budget).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import OUT, in_child, machine

RUN = """
import json, resource, time
import neuron_widgets as nw
from neuron_widgets.export import export_html, export_profile
t0 = time.perf_counter()
p = nw.load_profile({path!r}, prepare=False, cache=False)
t1 = time.perf_counter()
tracks = p.tracks()
t2 = time.perf_counter()
out = {{"events": len(p), "tracks": len(tracks), "load_s": t1 - t0, "tracks_s": t2 - t1}}
try:
    got = export_profile({out!r}, p)
    out.update(page_mb=got["bytes"] / 1e6, exact=got["timelines"][0]["exact"])
except Exception as exc:  # the code before issue 36 failed here: recorded, not fatal
    out["export_error"] = f"{{type(exc).__name__}}: {{str(exc)[:200]}}"
out["export_profile_s"] = time.perf_counter() - t2
if {widget!r}:
    from neuron_widgets.widgets import Timeline
    t4 = time.perf_counter()
    tl = Timeline(p)
    t5 = time.perf_counter()
    export_html({out!r}, tl)
    out.update(timeline_s=t5 - t4, export_html_s=time.perf_counter() - t5)
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def trace(threads: int) -> Path:
    path = OUT / f"threads_{threads}.json"
    if path.exists():
        return path
    events: list[dict] = [{"ph": "X", "name": f"work_{i % 13}", "cat": "cpu_op", "pid": 1 + i % 4, "tid": 1000 + i,
                           "ts": i * 0.5, "dur": 3.0} for i in range(threads)]
    events += [{"ph": "M", "name": "thread_name", "pid": 1 + i % 4, "tid": 1000 + i, "args": {"name": f"worker {i}"}}
               for i in range(0, threads, 3)]
    OUT.mkdir(exist_ok=True)
    path.write_bytes(orjson.dumps({"traceEvents": events}))
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-widget", action="store_true", help="skip the Timeline and export_html")
    args = ap.parse_args()
    path = trace(args.threads)
    runs = []
    for _ in range(args.repeat):
        got = in_child(RUN.format(path=str(path), out=str(OUT / "threads.html"), widget=not args.no_widget))
        print(json.dumps(got), flush=True)
        runs.append(got)
    medians = {k: statistics.median(r[k] for r in runs) for k in runs[0] if isinstance(runs[0][k], float)}
    result = {"machine": machine(), "threads": args.threads, "medians": medians, "runs": runs}
    print(json.dumps(result["medians"]))
    (OUT / "bench_many_threads.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
