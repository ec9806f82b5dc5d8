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
    python bench/bench_analysis.py --first-parse-only --before <commit>   # and that commit's code, same run

With `--before`, each trace is measured twice per round, each in a fresh interpreter: the commit's code
(`git archive`d under bench/out/, its numba cache kept there between runs) and this tree's, one after
the other, each against HTA in the same interpreter. Wall and CPU seconds both: ours is the process's
CPU (every thread); HTA's adds the CPU of the parser processes it forks for several ranks.
"""

from __future__ import annotations

import argparse
import json
import resource
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
    ours, theirs, ours_cpu, theirs_cpu = [], [], [], []

    def cpu() -> float:
        # This process's threads, and the parser processes HTA forks (reaped by its pool) for several ranks.
        return time.process_time() + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime + \
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime

    def settle() -> None:
        # Each side is timed alone: the other's garbage collected, our background preparation done.
        gc.collect()
        parse_cache.flush()
        for t in threading.enumerate():
            if t.name.startswith("neuron-widgets"):
                t.join()

    for _ in range(repeat + 1):  # the first round warms both (numba's cache, HTA's parser set-up)
        settle()
        c0, t0 = cpu(), time.perf_counter()
        p = nw.load_profile(files if len(files) > 1 else files[0], prepare=prepare, cache=cache)
        A.temporal_breakdown(p)
        A.idle_time_breakdown(p)
        A.kernel_breakdown(p)
        A.comm_comp_overlap(p)
        ours.append(time.perf_counter() - t0)
        ours_cpu.append(cpu() - c0)
        del p
        settle()
        c0, t0 = cpu(), time.perf_counter()
        ta = TraceAnalysis(trace_dir=d)
        ta.get_temporal_breakdown(visualize=False)
        for r in ta.t.get_ranks():
            ta.get_idle_time_breakdown(ranks=[r], visualize=False)
        ta.get_gpu_kernel_breakdown(visualize=False)
        ta.get_comm_comp_overlap(visualize=False)
        theirs.append(time.perf_counter() - t0)
        theirs_cpu.append(cpu() - c0)
        del ta
    ours, theirs, ours_cpu, theirs_cpu = ours[1:], theirs[1:], ours_cpu[1:], theirs_cpu[1:]
    med = statistics.median
    return {"ours_s": med(ours), "hta_s": med(theirs), "speedup": med(theirs) / med(ours),
            "ours_cpu_s": med(ours_cpu), "hta_cpu_s": med(theirs_cpu), "speedup_cpu": med(theirs_cpu) / med(ours_cpu),
            # Each round's own ratio: the two sides of a round ran seconds apart, under about the same load.
            "speedup_per_round": [round(b / a, 1) for a, b in zip(ours, theirs, strict=True)],
            "runs_ours": [round(x, 3) for x in ours], "runs_hta": [round(x, 3) for x in theirs],
            "runs_ours_cpu": [round(x, 3) for x in ours_cpu], "runs_hta_cpu": [round(x, 3) for x in theirs_cpu]}


# One trace's first-parse measure in a fresh interpreter, importing the neuron_widgets of the folder it runs in.
_FIRST_PARSE_CHILD = """
import json, sys
sys.path.insert(0, {bench!r})
import bench_analysis
print(json.dumps(bench_analysis.in_process({files!r}, {rounds})))
"""


def archived(ref: str) -> Path:
    """The package as it was at commit `ref`, under bench/out/ (kept: its numba cache then serves later runs)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    sha = subprocess.run(["git", "rev-parse", "--short", ref], cwd=root, check=True, capture_output=True,
                         text=True).stdout.strip()
    where = OUT / f"code_{sha}"
    if not (where / "neuron_widgets").is_dir():
        where.mkdir(parents=True, exist_ok=True)
        tar = subprocess.run(["git", "archive", sha, "neuron_widgets"], cwd=root, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(where)], input=tar, check=True)
    return where


def first_parse(before: str | None, rounds: int) -> dict:
    """The issue-40 measure: every trace, this tree's code (and `before`'s, each in its own interpreter)."""
    import os

    result: dict = {"machine": machine()}
    code_dirs: dict[str, Path | None] = {"after": None}
    if before:
        code_dirs = {f"before ({before})": archived(before), "after": Path(__file__).resolve().parents[1]}
    for label, rel in SETS.items():
        files = [str(TRACES / f) for f in rel]
        row: dict = {}
        for which, code_dir in code_dirs.items():
            load_before = os.getloadavg()[0]
            if code_dir is None:
                got = in_process(files, rounds)
            else:
                got = in_child(_FIRST_PARSE_CHILD.format(bench=str(Path(__file__).resolve().parent), files=files,
                                                         rounds=rounds), code_dir)
            got["load_average"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
            row[which] = got
            print(label, which, json.dumps(got), flush=True)
        result[label] = row if before else row["after"]
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--skip-hta", action="store_true")
    ap.add_argument("--skip-neuron", action="store_true")
    ap.add_argument("--first-parse-only", action="store_true",
                    help="only the one-interpreter first parse against HTA (the issue-40 measure), with the load average")
    ap.add_argument("--before", help="with --first-parse-only: also this commit's code, in the same run")
    args = ap.parse_args()
    import os
    import tempfile

    os.environ["NEURON_WIDGETS_CACHE"] = tempfile.mkdtemp(prefix="bench-cache-")  # children inherit it
    result: dict = {"machine": machine()}
    if args.first_parse_only:
        OUT.mkdir(exist_ok=True)
        result = first_parse(args.before, max(args.repeat, 7))
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
