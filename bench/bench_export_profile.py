"""Where an HTML export's time and memory go: cProfile of `export_profile` and its RSS sampled over time.

    python bench/bench_export_profile.py [--events 10000000] [--top 40] [--no-cprofile]

Loads the benchmarks' sample (waiting for its background preparation), then exports the whole
profile at the default budget, with cProfile on (functions by cumulative and own time) and a
thread sampling the process's RSS every 20 ms: the peak, and the RSS at each tenth of the export.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import OUT, machine, sample  # noqa: E402


def main() -> None:
    import neuron_widgets as nw
    from neuron_widgets.export import export_profile

    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--no-cprofile", action="store_true", help="time and RSS only")
    a = ap.parse_args()
    print(machine(), "| load average", os.getloadavg(), flush=True)
    proc = psutil.Process()
    t0 = time.perf_counter()
    p = nw.load_profile(sample(a.events))
    while not p.ready(p.default_grouping):  # the background preparation, so it is not counted in the export
        time.sleep(0.1)
    print(f"load {time.perf_counter() - t0:.1f} s, RSS {proc.memory_info().rss / 2**20:.0f} MB", flush=True)
    samples: list[tuple[float, int]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            samples.append((time.perf_counter(), proc.memory_info().rss))
            stop.wait(0.02)

    base = proc.memory_info().rss
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    prof = None if a.no_cprofile else cProfile.Profile()
    c0, w0 = time.process_time(), time.perf_counter()
    if prof is not None:
        prof.enable()
    got = export_profile(OUT / f"export_{a.events}_profiled.html", p)
    if prof is not None:
        prof.disable()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    stop.set()
    watcher.join()
    peak = max(r for _, r in samples)
    print(f"export {wall:.1f} s wall, {cpu:.1f} s CPU; RSS before {base / 2**20:.0f} MB, peak {peak / 2**20:.0f} MB "
          f"(+{(peak - base) / 2**20:.0f}); file {got['bytes'] / 1e6:.1f} MB; {got['timelines'][0]}")
    print("RSS by tenth of the export (MB):",
          " ".join(f"{max((r for t, r in samples if w0 + i * wall / 10 <= t < w0 + (i + 1) * wall / 10), default=0) / 2**20:.0f}"
                   for i in range(10)))
    print("load average after", os.getloadavg())
    if prof is not None:
        for key in ("cumulative", "tottime"):
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats(key).print_stats(a.top)
            print(s.getvalue())


if __name__ == "__main__":
    main()
