"""Analyses: neuron-widgets against HTA on the same Kineto traces, and on the 10M-event Neuron sample.

1. HTA traces (first parse: the parse cache off; and opened again: from the cache):
   `load_profile` + temporal, idle, kernel breakdowns and comm/comp overlap, against
   HTA's `TraceAnalysis(trace_dir)` + its four (`get_temporal_breakdown`,
   `get_idle_time_breakdown` for every rank, `get_gpu_kernel_breakdown`, `get_comm_comp_overlap`),
   same files, medians reported: in this one interpreter with imports done once (alternating
   runs after a warm-up round; with the default load, which also prepares the timeline in a
   background thread, and with `prepare=False`), and each run in a fresh interpreter (imports
   included).
2. The 10M-event sample: `all_analyses` (all eight), right after `load_profile` returns (the
   background preparation of the timeline still running), right after `load_profile(prepare=False)`
   (an analysis-only session) and once the preparation is done; peak RSS and the memory the
   analyses add.

    python bench/bench_analysis.py [--repeat 3] [--events 10000000] [--skip-hta] [--skip-neuron]
    python bench/bench_analysis.py --first-parse-only   # part 1's one-interpreter first parse only
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, in_child, machine, sample

TRACES = Path(__file__).resolve().parents[1] / "tests/data/traces"
SETS = {
    "nccl_data (40.5k events, 1 rank)": ["hta/nccl_data.json.gz"],
    "trace_diff_control_rank3of8 (109k events)": ["hta/trace_diff_control_rank3of8.json.gz"],
    "trace_filter_sampled (2 ranks)": ["hta/trace_filter_sampled_rank-0.json.gz", "hta/trace_filter_sampled_rank-1.json.gz"],
    "param-dlrm (8 ranks)": [str(p.relative_to(TRACES)) for p in sorted((TRACES / "param-dlrm-8rank").glob("*.gz"))],
}

OURS = """
import json, time
t0 = time.perf_counter()
import neuron_widgets as nw
from neuron_widgets import analysis as A
files = {files!r}
p = nw.load_profile(files if len(files) > 1 else files[0], cache={cache})
t1 = time.perf_counter()
A.temporal_breakdown(p); A.idle_time_breakdown(p); A.kernel_breakdown(p); A.comm_comp_overlap(p)
t2 = time.perf_counter()
print(json.dumps({{"load": t1 - t0, "analyses": t2 - t1, "total": t2 - t0, "events": len(p)}}))
"""

HTA = """
import json, time, logging, warnings, shutil, tempfile
logging.disable(logging.WARNING); warnings.simplefilter("ignore")
d = tempfile.mkdtemp()
for f in {files!r}:
    shutil.copy(f, d)
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
ta = TraceAnalysis(trace_dir=d)
t1 = time.perf_counter()
ta.get_temporal_breakdown(visualize=False)
for r in ta.t.get_ranks():
    ta.get_idle_time_breakdown(ranks=[r], visualize=False)
ta.get_gpu_kernel_breakdown(visualize=False)
ta.get_comm_comp_overlap(visualize=False)
t2 = time.perf_counter()
print(json.dumps({{"load": t1 - t0, "analyses": t2 - t1, "total": t2 - t0}}))
"""

NEURON = """
import json, time, threading, psutil
import neuron_widgets as nw
from neuron_widgets import analysis as A
proc = psutil.Process()
peak = [0]
stop = threading.Event()
def watch():
    while not stop.is_set():
        peak[0] = max(peak[0], proc.memory_info().rss); stop.wait(0.02)
threading.Thread(target=watch, daemon=True).start()
p = nw.load_profile({path!r}{load})
{wait}
rss0 = proc.memory_info().rss
t0 = time.perf_counter()
out = A.all_analyses(p)
t1 = time.perf_counter()
stop.set()
print(json.dumps({{"seconds": t1 - t0, "events": len(p), "rss_before_mb": rss0 / 1e6,
                   "rss_after_mb": proc.memory_info().rss / 1e6, "peak_mb": peak[0] / 1e6,
                   "launches": len(out["launches"]), "steps": len(out["straggler_steps"])}}))
"""


def med(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def in_process(files: list[str], repeat: int, prepare: bool = True, cache: bool = False) -> dict:
    """Both tools in this interpreter, imports done once (what a notebook pays per trace), alternating runs."""
    import gc
    import logging
    import shutil
    import tempfile
    import threading
    import time
    import warnings

    import neuron_widgets as nw
    from neuron_widgets import analysis as A
    from neuron_widgets.readers import cache as parse_cache

    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    from hta.trace_analysis import TraceAnalysis

    d = tempfile.mkdtemp()
    for f in files:
        shutil.copy(f, d)
    ours, theirs = [], []
    def settle() -> None:
        # Each side is timed alone: the other's garbage collected, our background preparation done.
        gc.collect()
        parse_cache.flush()
        for t in threading.enumerate():
            if t.name.startswith("neuron-widgets"):
                t.join()

    for _ in range(repeat + 1):  # the first round warms both (numba's cache, HTA's parser set-up)
        settle()
        t0 = time.perf_counter()
        p = nw.load_profile(files if len(files) > 1 else files[0], prepare=prepare, cache=cache)
        A.temporal_breakdown(p)
        A.idle_time_breakdown(p)
        A.kernel_breakdown(p)
        A.comm_comp_overlap(p)
        ours.append(time.perf_counter() - t0)
        del p
        settle()
        t0 = time.perf_counter()
        ta = TraceAnalysis(trace_dir=d)
        ta.get_temporal_breakdown(visualize=False)
        for r in ta.t.get_ranks():
            ta.get_idle_time_breakdown(ranks=[r], visualize=False)
        ta.get_gpu_kernel_breakdown(visualize=False)
        ta.get_comm_comp_overlap(visualize=False)
        theirs.append(time.perf_counter() - t0)
        del ta
    ours, theirs = ours[1:], theirs[1:]
    return {"ours_s": statistics.median(ours), "hta_s": statistics.median(theirs),
            "speedup": statistics.median(theirs) / statistics.median(ours),
            "runs_ours": [round(x, 3) for x in ours], "runs_hta": [round(x, 3) for x in theirs]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--skip-hta", action="store_true")
    ap.add_argument("--skip-neuron", action="store_true")
    ap.add_argument("--first-parse-only", action="store_true",
                    help="only the one-interpreter first parse against HTA (the issue-40 measure), with the load average")
    args = ap.parse_args()
    import os
    import tempfile

    os.environ["NEURON_WIDGETS_CACHE"] = tempfile.mkdtemp(prefix="bench-cache-")  # children inherit it
    result: dict = {"machine": machine()}
    if args.first_parse_only:
        OUT.mkdir(exist_ok=True)
        for label, rel in SETS.items():
            files = [str(TRACES / f) for f in rel]
            load_before = os.getloadavg()[0]
            row = in_process(files, max(args.repeat, 7))
            row["load_average"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
            result[label] = row
            print(label, json.dumps(row), flush=True)
        (OUT / "bench_analysis_first_parse.json").write_text(json.dumps(result, indent=1))
        return
    if not args.skip_hta:
        for label, rel in SETS.items():
            files = [str(TRACES / f) for f in rel]
            ours = [in_child(OURS.format(files=files, cache=False)) for _ in range(args.repeat)]
            in_child(OURS.format(files=files, cache=True))  # writes the parse-cache entries
            reopened = [in_child(OURS.format(files=files, cache=True)) for _ in range(args.repeat)]
            hta = [in_child(HTA.format(files=files)) for _ in range(args.repeat)]
            row = {"events": ours[0]["events"],
                   "ours_load_s": med(ours, "load"), "ours_analyses_s": med(ours, "analyses"), "ours_total_s": med(ours, "total"),
                   "hta_load_s": med(hta, "load"), "hta_analyses_s": med(hta, "analyses"), "hta_total_s": med(hta, "total"),
                   "runs_ours_total": [round(r["total"], 3) for r in ours],
                   "runs_hta_total": [round(r["total"], 3) for r in hta]}
            row["speedup_fresh_interpreter"] = row["hta_total_s"] / row["ours_total_s"]
            row["reopened_total_s"] = med(reopened, "total")
            row["speedup_fresh_interpreter_reopened"] = row["hta_total_s"] / row["reopened_total_s"]
            # Runs of a tenth of a second on a shared host spread by 30%: more of them than of the fresh ones.
            rounds = max(args.repeat, 7)
            row["in_process"] = in_process(files, rounds)
            # The same file opened again: load_profile maps the parse cache's columns.
            row["in_process_reopened"] = in_process(files, rounds, cache=True)
            # An analysis-only session need not build the timeline's tracks in the background.
            row["in_process_prepare_off"] = in_process(files, rounds, prepare=False)
            result[label] = row
            print(label, json.dumps(row), flush=True)
    if not args.skip_neuron:
        path = sample(args.events)
        for when, load, wait in (("right after load_profile, its background preparation running", "", ""),
                                 ("right after load_profile(prepare=False)", ", prepare=False", ""),
                                 ("after the timeline's preparation", "", "p.prepare(background=False)")):
            runs = [in_child(NEURON.format(path=str(path), load=load, wait=wait)) for _ in range(args.repeat)]
            row = {"events": runs[0]["events"], "seconds": med(runs, "seconds"),
                   "runs": [round(r["seconds"], 2) for r in runs],
                   "rss_added_mb": med([{"d": r["rss_after_mb"] - r["rss_before_mb"]} for r in runs], "d"),
                   "peak_mb": med(runs, "peak_mb"), "launches": runs[0]["launches"], "steps": runs[0]["steps"]}
            result[f"10M sample, {when}"] = row
            print(when, json.dumps(row), flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_analysis.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
