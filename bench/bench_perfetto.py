"""Perfetto read/write and the parse cache.

1. Reading: our `load_profile` of a .pftrace (every column built, cache off) against a bare
   `Trace.ParseFromString` of the same bytes with Perfetto's compiled classes (which builds no
   columns), at ~100k and ~10M slices; events/s and peak RSS, each in a fresh interpreter (the two
   alternated); wall and CPU seconds (the ratio is ours / the bare parse), with the load average.
   Both sides have their imports done before their clocks start: ours by reading a tiny trace
   first (the proto import and numba's cached kernels), whose CPU is reported apart. Each process
   then reads (parses) the same file a second time: "again", memory already taken from the system.
   `--before DIR` (a folder holding another `neuron_widgets`, e.g. `git archive <commit> neuron_widgets`)
   runs that code too, in turn with the bare parse and this tree's, in the same script: before/after
   under the same load. Minor page faults (fresh memory taken from the system) are counted for each.
2. Writing: `export_perfetto` of the 10M-event sample: seconds, peak RSS against the 1M sample
   (flat memory), bytes per event. The profile is loaded as by default (its per-event indexes,
   which the Timeline shares, built first), so the memory measured is the writer's own.
3. Re-opening from the parse cache: first parse against the second `load_profile` of the same
   file, on the HTA traces and a 1M-event Chrome trace, in the same interpreter.

    python bench/bench_perfetto.py [--events 10000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, in_child, machine, sample

TRACES = Path(__file__).resolve().parents[1] / "tests/data/traces"

PEAK = """
import threading, psutil
proc = psutil.Process()
peak = [proc.memory_info().rss]
stop = threading.Event()
def watch():
    while not stop.is_set():
        peak[0] = max(peak[0], proc.memory_info().rss); stop.wait(0.01)
threading.Thread(target=watch, daemon=True).start()
"""

BARE = PEAK + """
import json, resource, time
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
data = open({path!r}, "rb").read()
base = proc.memory_info().rss
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
t0, c0 = time.perf_counter(), time.process_time()
t = pb.Trace(); t.ParseFromString(data)
t1, c1 = time.perf_counter(), time.process_time()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
stop.set()
packets = len(t.packet)
del t
c2 = time.process_time(); t = pb.Trace(); t.ParseFromString(data); again = time.process_time() - c2
print(json.dumps({{"seconds": t1 - t0, "cpu": c1 - c0, "packets": packets, "peak_mb": peak[0] / 1e6,
                   "added_mb": (peak[0] - base) / 1e6, "again_cpu": again, "faults": faults}}))
"""

OURS = PEAK + """
import json, resource, time
import neuron_widgets as nw
# A first read of a tiny trace: the compiled proto imported and numba's cached kernels loaded, as in any
# process after its first Perfetto read (the bare parse imports its classes before its clock starts too).
# What that first read costs is reported apart ("first_cpu").
w0 = time.process_time()
nw.load_profile({warm!r}, cache=False, prepare=False)
first_cpu = time.process_time() - w0
base = proc.memory_info().rss
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
t0, c0 = time.perf_counter(), time.process_time()
p = nw.load_profile({path!r}, cache=False, prepare=False)
t1, c1 = time.perf_counter(), time.process_time()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
stop.set()
events = len(p)
del p
c2 = time.process_time(); nw.load_profile({path!r}, cache=False, prepare=False); again = time.process_time() - c2
print(json.dumps({{"seconds": t1 - t0, "cpu": c1 - c0, "events": events, "peak_mb": peak[0] / 1e6,
                   "added_mb": (peak[0] - base) / 1e6, "first_cpu": first_cpu, "again_cpu": again, "faults": faults}}))
"""

WRITE = PEAK + """
import json, time, os
import neuron_widgets as nw
p = nw.load_profile({src!r})
p.prepare("default", background=False)  # the indexes a default load builds for the Timeline, done
p.name_codes()
nw.export_perfetto(nw.load_profile({small!r}, prepare=False), {out!r} + ".warm")  # compiled kernels loaded
os.remove({out!r} + ".warm")
base = proc.memory_info().rss
peak[0] = base
t0 = time.perf_counter()
got = nw.export_perfetto(p, {out!r})
t1 = time.perf_counter()
stop.set()
print(json.dumps({{"seconds": t1 - t0, "events": got["events"], "bytes": got["bytes"], "peak_mb": peak[0] / 1e6,
                   "added_mb": (peak[0] - base) / 1e6}}))
"""

REOPEN = """
import json, os, shutil, tempfile, time
os.environ["NEURON_WIDGETS_CACHE"] = tempfile.mkdtemp()
import neuron_widgets as nw
from neuron_widgets.readers import cache
nw.load_profile({warm!r}, prepare=False, cache=False)  # imports and compiled kernels loaded
first, again = [], []
for _ in range({repeat}):
    shutil.rmtree(cache.root(), ignore_errors=True)
    t0 = time.perf_counter(); p = nw.load_profile({path!r}, prepare=False); first.append(time.perf_counter() - t0)
    cache.flush()
    t0 = time.perf_counter(); q = nw.load_profile({path!r}, prepare=False); again.append(time.perf_counter() - t0)
    assert "cached" in q.extra and len(q) == len(p)
    t0 = time.perf_counter(); q.column("extra_attributes_json"); args_s = time.perf_counter() - t0
print(json.dumps({{"events": len(p), "first_s": sorted(first)[len(first) // 2], "again_s": sorted(again)[len(again) // 2],
                   "args_after_reopen_s": args_s}}))
"""


def chrome_trace(events: int) -> Path:
    """A Kineto-like Chrome trace of `events` complete events with arguments, written once."""
    path = OUT / f"chrome_{events}.json"
    if path.exists():
        return path
    out = []
    for i in range(events):
        out.append({"ph": "X", "cat": "cpu_op" if i % 3 else "kernel", "name": f"aten::op_{i % 97}", "pid": 1 + i % 4,
                    "tid": 10 + i % 8, "ts": i * 1.5, "dur": 1.0 + (i % 5),
                    "args": {"External id": i, "Sequence number": i // 7, "Input Dims": [[i % 64, 128]]}})
    OUT.mkdir(exist_ok=True)
    path.write_bytes(orjson.dumps({"traceEvents": out}))
    return path


def pftrace(events: int) -> Path:
    import neuron_widgets as nw

    path = OUT / f"sample_{events}.pftrace"
    if not path.exists():
        nw.export_perfetto(nw.load_profile(sample(events), prepare=False), path)
    return path


def _side(name: str, runs: list[dict]) -> dict:
    """Medians of one side's runs: wall and CPU seconds, the second read's CPU, minor page faults, memory."""
    med = statistics.median
    out = {f"{name}_s": med(r["seconds"] for r in runs), f"{name}_cpu_s": med(r["cpu"] for r in runs),
           f"{name}_again_cpu_s": med(r["again_cpu"] for r in runs), f"{name}_faults": med(r["faults"] for r in runs),
           f"{name}_runs_cpu": [round(r["cpu"], 4) for r in runs], f"{name}_runs_s": [round(r["seconds"], 3) for r in runs],
           f"{name}_peak_mb": max(r["peak_mb"] for r in runs), f"{name}_added_mb": max(r["added_mb"] for r in runs)}
    if "first_cpu" in runs[0]:
        out[f"{name}_first_read_in_process_cpu_s"] = med(r["first_cpu"] for r in runs)
        out[f"{name}_events_per_s"] = runs[0]["events"] / out[f"{name}_s"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=["read", "write", "reopen"], action="append")
    ap.add_argument("--before", help="a folder holding another neuron_widgets to read with too (before/after)")
    args = ap.parse_args()
    parts = set(args.only or ["read", "write", "reopen"])
    result: dict = {"machine": machine()}
    for n in dict.fromkeys((100_000, args.events)) if "read" in parts else ():
        path = pftrace(n)
        warm = pftrace(1_000)
        # Alternated, so that a change in the machine's load falls on all sides alike.
        bare: list[dict] = []
        sides: dict[str, list[dict]] = {"ours": [], **({"before": []} if args.before else {})}
        loads = []
        for _ in range(args.repeat):
            loads.append(os.getloadavg()[0])
            bare.append(in_child(BARE.format(path=str(path))))
            for side, runs in sides.items():
                code_dir = args.before if side == "before" else None
                runs.append(in_child(OURS.format(path=str(path), warm=str(warm)), code_dir=code_dir))
        row = {"file_mb": path.stat().st_size / 1e6, "events": sides["ours"][0]["events"], "packets": bare[0]["packets"],
               "load_average": os.getloadavg(), "loads_at_runs": loads, **_side("bare", bare)}
        for side, runs in sides.items():
            row.update(_side(side, runs))
            row[f"{side}_ratio_cpu"] = row[f"{side}_cpu_s"] / row["bare_cpu_s"]
            row[f"{side}_ratio_wall"] = row[f"{side}_s"] / row["bare_s"]
            row[f"{side}_again_ratio_cpu"] = row[f"{side}_again_cpu_s"] / row["bare_again_cpu_s"]
            # Each run's ratio against the bare parse run just before it (same moment's load).
            row[f"{side}_run_ratios_cpu"] = [round(o["cpu"] / b["cpu"], 3) for o, b in zip(runs, bare, strict=True)]
        result[f"read {n:,}"] = row
        print("read", n, json.dumps(row), flush=True)
    small = sample(100_000)
    for n in (1_000_000, args.events) if "write" in parts else ():
        out = OUT / f"written_{n}.pftrace"
        got = in_child(WRITE.format(src=str(sample(n)), small=str(small), out=str(out)))
        got["bytes_per_event"] = got["bytes"] / got["events"]
        result[f"write {n:,}"] = got
        print("write", n, json.dumps(got), flush=True)
        out.unlink(missing_ok=True)
    warm = str(TRACES / "hta/triton_example.json.gz")
    files = [*sorted((TRACES / "hta").glob("*.json.gz")), chrome_trace(1_000_000), pftrace(100_000)]
    for f in files if "reopen" in parts else ():
        got = in_child(REOPEN.format(path=str(f), warm=warm, repeat=args.repeat))
        got["speedup"] = got["first_s"] / got["again_s"]
        result[f"reopen {f.name}"] = got
        print("reopen", f.name, json.dumps(got), flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / f"bench_perfetto{'_' + '_'.join(sorted(parts)) if args.only else ''}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
