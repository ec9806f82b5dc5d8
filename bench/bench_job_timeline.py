"""JobTimeline(job): how fast a job's timeline opens, summarises and opens a part (issue 24), and draws the
job's critical path (issue 37).

1. The generated 24-node job of bench_job.py (about 25M events; written there once): JobTimeline(job)
   with an empty result store (the spans drawn from metadata, then every part's density computed
   on Dask's local processes, tree peak RSS), again from the result cache, then one part opened
   (its events loaded and drawn: the first viewport reply).
2. The Critical path toggle on that job: how soon the click returns, the path shown on the folded
   parts (analysis.critical_path(job) on Dask's local processes, then placed; wall, this process's
   CPU, tree peak), the analysis alone beside it, and the path placed anew after the largest part is
   opened and after a grouping switch (wall and CPU: the kernel's own work).
3. A simulated 512-part job: 512 parts' densities (1024 bins each), not events: the overview
   built and its first viewport answered.

    python bench/bench_job_timeline.py [--nodes 24] [--events 25000000] [--only critical]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_job import TreePeak, job_dir
from common import machine


def first_view(tl) -> float:
    from neuron_widgets.widgets import wire

    t0 = time.perf_counter()
    wire.viewport_reply(tl.profile, tl.grouping, tl.view[0], tl.view[1], 1400, None, tl._marked, None, None)
    return time.perf_counter() - t0


def real_job(nodes: int, events: int) -> None:
    import neuron_widgets as nw

    path = job_dir(nodes, events)
    with tempfile.TemporaryDirectory() as results:
        with TreePeak() as peak:
            t0 = time.perf_counter()
            job = nw.load_job(path, results=results)
            tl = nw.JobTimeline(job)
            opened = time.perf_counter() - t0
            assert tl.summarised.wait(3600)
            summarised = time.perf_counter() - t0
        assert not tl.error, tl.error
        print(f"{nodes} parts, {int(job.parts['events'].sum()):,} events: spans drawn {opened:.2f} s; "
              f"every density computed {summarised:.1f} s (tree peak {peak.peak / 1e9:.2f} GB); "
              f"overview {len(tl.profile):,} events, first view {first_view(tl):.3f} s", flush=True)
        t0 = time.perf_counter()
        again = nw.JobTimeline(nw.load_job(path, results=results))
        assert again.summarised.wait(600)
        print(f"  again, from the result cache: {time.perf_counter() - t0:.2f} s to every density", flush=True)
        t0 = time.perf_counter()
        part = again.open_part(job.specs[-1].name)
        loaded = time.perf_counter() - t0
        print(f"  open_part({job.specs[-1].name}): {len(part):,} events in {loaded:.1f} s, "
              f"first view {first_view(again):.2f} s", flush=True)


def tree_cpu() -> float:
    """CPU seconds of this process and of its children that have ended (Dask's local workers, once reaped)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def shown(tl) -> tuple[float, float]:
    """Wall and this process's CPU seconds until the path is shown (the kernel's threads answer; polled)."""
    t0, c0 = time.perf_counter(), time.process_time()
    while tl.critical_info.get("state") == "computing":
        time.sleep(0.01)
    assert tl.critical_info.get("state") == "shown", tl.critical_info
    return time.perf_counter() - t0, time.process_time() - c0


def critical(nodes: int, events: int) -> None:
    import neuron_widgets as nw
    from neuron_widgets import analysis

    path = job_dir(nodes, events)
    with tempfile.TemporaryDirectory() as results:
        job = nw.load_job(path, results=results)
        tl = nw.JobTimeline(job)
        assert tl.summarised.wait(3600) and not tl.error, tl.error
        with TreePeak() as peak:
            t0, tree0 = time.perf_counter(), tree_cpu()
            tl.critical_path = True
            returned = time.perf_counter() - t0
            wall, cpu = shown(tl)
        print(f"critical path toggle on {nodes} parts: the click returned in {returned * 1e3:.0f} ms; shown on the "
              f"folded parts {wall + returned:.1f} s (this process's CPU {cpu:.1f} s, with its ended workers "
              f"{tree_cpu() - tree0:.1f} s; tree peak {peak.peak / 1e9:.2f} GB): {tl.critical_info['text']}", flush=True)
        print(f"  {tl.critical_info['headline']}", flush=True)
        with tempfile.TemporaryDirectory() as fresh:
            t0, tree0 = time.perf_counter(), tree_cpu()
            alone = analysis.critical_path(nw.load_job(path, results=fresh))
            print(f"  analysis.critical_path(job) alone, empty store: {time.perf_counter() - t0:.1f} s "
                  f"(CPU with its ended workers {tree_cpu() - tree0:.1f} s), {len(alone):,} segments", flush=True)
        t0, c0 = time.perf_counter(), time.process_time()
        tl.critical_path = False
        tl.critical_path = True
        wall, cpu = shown(tl)
        print(f"  off and on again (computed once): {time.perf_counter() - t0:.2f} s, CPU {time.process_time() - c0:.2f} s",
              flush=True)
        name = max(job.specs, key=lambda s: int(job.parts.set_index("part").loc[s.name, "events"])).name
        t0 = time.perf_counter()
        part = tl.open_part(name)
        opened = time.perf_counter() - t0
        wall, cpu = shown(tl)
        print(f"  open_part({name}): {len(part):,} events in {opened:.1f} s, then the path placed anew in {wall:.2f} s "
              f"(CPU {cpu:.2f} s): {tl.critical_info['text']}", flush=True)
        t0, c0 = time.perf_counter(), time.process_time()
        tl.grouping = "thread"
        wall, cpu = shown(tl)
        print(f"  grouping 'thread': placed anew {time.perf_counter() - t0:.2f} s (CPU {time.process_time() - c0:.2f} s, "
              f"the grouping's own tracks and lanes included)", flush=True)


def simulated(parts: int) -> None:
    from neuron_widgets.analysis.density import BINS
    from neuron_widgets.job.view import overview_profile
    from neuron_widgets.widgets.timeline import Timeline

    rng = np.random.default_rng(0)
    base = 1_772_323_200_000_000_000
    density = {}
    for k in range(parts):
        edges = base + np.linspace(0, 60e9, BINS + 1).astype(np.int64) + int(rng.integers(0, 1e8))
        share = np.clip(rng.normal(0.7, 0.25, BINS), 0, 1) * (rng.random(BINS) > 0.1)
        density[f"node-{k:03d}"] = pd.DataFrame({"start_ts": edges[:-1], "end_ts": edges[1:],
                                                 "busy_ns": (share * 32 * np.diff(edges)).astype(np.int64),
                                                 "busy_share": share, "devices": 32, "device_kind": "NeuronCores"})
    t0 = time.perf_counter()
    ov = overview_profile(list(density), density, {})
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    tl = Timeline(ov)
    shown = time.perf_counter() - t0
    print(f"{parts} simulated parts: overview of {len(ov):,} runs built in {built:.2f} s, shown in {shown:.2f} s, "
          f"first view {first_view(tl):.3f} s ({len(tl.tracks)} tracks)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=24)
    ap.add_argument("--events", type=int, default=25_000_000)
    ap.add_argument("--simulated", type=int, default=512)
    ap.add_argument("--only", choices=["simulated", "open", "critical"], default=None)
    a = ap.parse_args()
    print(machine(), flush=True)
    if a.only in (None, "simulated"):
        simulated(a.simulated)
    if a.only in (None, "open"):
        real_job(a.nodes, a.events)
    if a.only in (None, "critical"):
        critical(a.nodes, a.events)


if __name__ == "__main__":
    main()
