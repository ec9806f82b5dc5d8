"""Helpers shared by the benchmarks: machine description, timing, child-process memory."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, Python {platform.python_version()}, {platform.system()}"


def timeit(fn: Callable[[], object], repeat: int = 5) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def in_child(code: str, code_dir: str | Path | None = None) -> dict:
    """Run `code` in a fresh interpreter; it prints one JSON object as its last line. `code_dir`: a folder holding
    another `neuron_widgets` to import instead of this tree's (another commit's, for a before/after)."""
    env = dict(os.environ, NEURON_WIDGETS_PROGRESS="0")
    if code_dir is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code_dir), *filter(None, [env.get("PYTHONPATH")])])
    # `python -c` imports from its working folder first: run in code_dir, not in a tree holding another copy.
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                         cwd=None if code_dir is None else str(code_dir))
    return json.loads(out.stdout.strip().splitlines()[-1])


# A Summary on a Timeline in a fresh interpreter: each stage's time from the Summary's status line (each stage says
# when its charts were updated), counted from `Summary()`. `{after}` runs once all are done and adds to `out`.
SUMMARY_CHILD = """
import json, time, threading
import neuron_widgets as nw
from neuron_widgets.widgets import Timeline, Summary
p = nw.load_profile({path!r})
t0 = time.perf_counter()
tl = Timeline(p)
t1 = time.perf_counter()
s = Summary(tl)
ctor = time.perf_counter() - t1
stamps = {{}}
def watch():
    while not s.done.is_set():
        v = s.status.value
        for k in {stages!r}:
            if f"({{k}} done)" in v and k not in stamps:
                stamps[k] = time.perf_counter() - t1
        time.sleep(0.002)
threading.Thread(target=watch, daemon=True).start()
s.done.wait({timeout})
out = {{"timeline_s": t1 - t0, "ctor_s": ctor, "stages_s": stamps, "all_s": time.perf_counter() - t1,
        "events": len(p)}}
{after}
print(json.dumps(out))
"""


def summary_runs(path: Path, stages: tuple[str, ...], repeat: int, after: str = "", timeout: float = 600) -> list[dict]:
    """`repeat` runs of SUMMARY_CHILD on the profile at `path`, each in a fresh interpreter."""
    code = SUMMARY_CHILD.format(path=str(path), stages=stages, after=after, timeout=timeout)
    return [in_child(code) for _ in range(repeat)]


def sized_args(doc: str | None, events: int, repeat: int) -> argparse.Namespace:
    """The benchmarks' usual options: --events (the sample's size) and --repeat."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--events", type=int, default=events)
    ap.add_argument("--repeat", type=int, default=repeat)
    return ap.parse_args()


def device_sample(instructions: int, events: int = 1_000_000) -> Path:
    """The drill-down benchmarks' sample: one core, one device profile of `instructions`, written once."""
    import neuron_widgets as nw

    path = OUT / f"device_{instructions}"
    if not (path / "SystemProfileEvents.parquet").exists():
        nw.write_sample(path, events=events, instances=1, processes=1, cores=1, device_instructions=instructions)
    return path


def sample(events: int, seed: int = 0) -> Path:
    """The benchmarks' system-profile sample of about `events` events, written once under bench/out/ (another
    `seed`: the same layout with other timings)."""
    import neuron_widgets as nw

    path = OUT / (f"sample_{events}" if seed == 0 else f"sample_{events}_seed{seed}")
    if not (path / "SystemProfileEvents.parquet").exists():
        nw.write_sample(path, events=events, seed=seed)
    return path


def after_sample(events: int) -> Path:
    """The second run of the benches of two runs: `sample(events)`'s layout with other timings (seed 1)."""
    return sample(events, seed=1)


def two_runs(doc: str | None, code: str, name: str) -> dict[str, float]:
    """The setup the benches of two runs share (bench_align, bench_compare): --events (1M) and --repeat (1), the
    before-run `sample(events)` and the after-run `after_sample(events)`, `code` (a template of {before} and
    {after}, printing one JSON object of numbers) in `--repeat` fresh processes. Returns each number's median and
    the load average after the runs (`load`), also written to out/<name>.json with the machine."""
    args = sized_args(doc, 1_000_000, 1)
    before, after = sample(args.events), after_sample(args.events)
    runs = [in_child(code.format(before=str(before), after=str(after))) for _ in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    med["load"] = os.getloadavg()[0]
    OUT.mkdir(exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps({"machine": machine(), **med}, indent=1))
    return med


def tree_peak(child: subprocess.Popen) -> int:
    """Wait for `child`, sampling the RSS of it and every process it starts; the largest sum, in bytes.

    Workers of a job are the child's children: the peak of the whole tree is what the machine must hold.
    """
    import psutil

    proc, peak = psutil.Process(child.pid), 0
    while child.poll() is None:
        total = 0
        try:
            for p in [proc, *proc.children(recursive=True)]:
                total += p.memory_info().rss
        except psutil.Error:
            pass  # a process ended between listing and reading it
        peak = max(peak, total)
        time.sleep(0.05)
    return peak


_RSS_CHILD = """
import gc, json, threading, time
import psutil
proc = psutil.Process()
{setup}
gc.collect()
base = proc.memory_info().rss
peak = [base]
stop = threading.Event()
def watch():
    while not stop.is_set():
        peak[0] = max(peak[0], proc.memory_info().rss)
        stop.wait({every})
watcher = threading.Thread(target=watch, daemon=True); watcher.start()
t0 = time.perf_counter()
{body}
seconds = time.perf_counter() - t0
stop.set(); watcher.join()
out = {{"seconds": seconds, "peak": peak[0] - base, "base": base}}
{report}
print(json.dumps(out))
"""


def rss_in_child(body: str, setup: str = "", report: str = "", every: float = 0.01) -> dict:
    """Run `body` in a fresh interpreter, its RSS sampled every `every` s by a thread: the result's "seconds"
    (body's wall time), "peak" (the peak RSS over the body, less the RSS after `setup` and a gc, in bytes)
    and "base" (that RSS). `report` adds entries to the dict `out` (names of setup and body in scope)."""
    import textwrap

    code = _RSS_CHILD.format(setup=textwrap.dedent(setup), body=textwrap.dedent(body), report=textwrap.dedent(report),
                             every=every)
    return in_child(code)
