"""Every reader's peak memory against the size of the Profile it returns (issue 24).

Each load runs in a fresh interpreter (parse cache off, no preparation): the peak RSS over the
load, less the interpreter's RSS after importing the package, is the reader's peak; the
Profile's own size is `profile.nbytes` (its held columns and indexes). The ratio says how many
times what it returns a reader holds at its worst.

Formats and their samples (written once under bench/out/): the Neuron Explorer Parquet sample
(write_sample), the same profile as a Perfetto trace (export_perfetto) and a Kineto-like Chrome JSON
trace. (The device reader's memory is in bench_device.py's section.)

    python bench/bench_reader_memory.py [--events 1000000 3000000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_perfetto import chrome_trace, pftrace
from common import in_child, machine, sample

CHILD = r"""
import gc, json, resource, threading, time
import psutil
import neuron_widgets as nw
proc = psutil.Process()
gc.collect()
base = proc.memory_info().rss
peak = [base]
stop = threading.Event()
def watch():
    while not stop.is_set():
        peak[0] = max(peak[0], proc.memory_info().rss)
        stop.wait(0.02)
t = threading.Thread(target=watch, daemon=True); t.start()
t0 = time.perf_counter()
p = nw.load_profile({path!r}, cache=False, prepare=False)
{after}
seconds = time.perf_counter() - t0
stop.set(); t.join()
gc.collect()
held = proc.memory_info().rss - base
size = p.nbytes()["columns"]
print(json.dumps({{"events": len(p), "seconds": seconds, "peak": peak[0] - base, "held": held, "profile": size}}))
"""

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, nargs="+", default=[1_000_000, 3_000_000])
    a = ap.parse_args()
    print(machine(), flush=True)
    print("| format | file | events | seconds | peak RSS over the load | held after | Profile's columns | peak / Profile |")
    print("|---|---|---|---|---|---|---|---|")
    for n in a.events:
        cases = [("Neuron Parquet", sample(n)), ("Perfetto", pftrace(n)), ("Chrome JSON (Kineto-like)", chrome_trace(n))]
        for fmt, path in cases:
            r = in_child(CHILD.format(path=str(path), after=""))
            _row(fmt, path, r)


def _row(fmt: str, path: Path, r: dict) -> None:
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size
    print(f"| {fmt} | {size / 1e6:,.0f} MB | {r['events']:,} | {r['seconds']:.1f} | {r['peak'] / 1e9:.2f} GB | "
          f"{r['held'] / 1e9:.2f} GB | {r['profile'] / 1e9:.2f} GB | {r['peak'] / max(r['profile'], 1):.1f}x |", flush=True)


if __name__ == "__main__":
    main()
