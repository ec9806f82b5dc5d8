"""Every reader's peak memory against the size of the Profile it returns (issue 24).

Each load runs in a fresh interpreter (parse cache off, no preparation): the peak RSS over the
load, less the interpreter's RSS after importing the package, is the reader's peak; the
Profile's own size is `profile.nbytes` (its held columns and indexes). The ratio says how many
times what it returns a reader holds at its worst.

Formats and their samples (written once under bench/out/): the Neuron Explorer Parquet sample
(write_sample), the same profile as a Perfetto trace (export_perfetto) and a Kineto-like Chrome JSON
trace, and the two JSON layouts of the Neuron runtime written from the same sample's events: the
legacy `system_profile.json` (`trace_event` list) and `nrt_sys_trace_fetch_events` (start/stop
pairs). (The device reader's memory is in bench_device.py's section; raw captures are converted
by neuron-explorer, which this machine does not have.)

    python bench/bench_reader_memory.py [--events 1000000 3000000] [--formats parquet perfetto chrome legacy runtime]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_perfetto import chrome_trace, pftrace
from common import OUT, machine, rss_in_child, sample

LOAD = "p = nw.load_profile({path!r}, cache=False, prepare=False)"
# What the Profile holds once the load's transients are collected, and the size of its columns.
REPORT = """
gc.collect()
out.update(events=len(p), held=proc.memory_info().rss - base, profile=p.nbytes()["columns"])
"""

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, nargs="+", default=[1_000_000, 3_000_000])
    ap.add_argument("--formats", nargs="+", default=["parquet", "perfetto", "chrome", "legacy", "runtime"])
    a = ap.parse_args()
    print(machine(), flush=True)
    print("| format | file | events | seconds | peak RSS over the load | held after | Profile's columns | peak / Profile |")
    print("|---|---|---|---|---|---|---|---|")
    for n in a.events:
        cases = {"parquet": ("Neuron Parquet", sample), "perfetto": ("Perfetto", pftrace),
                 "chrome": ("Chrome JSON (Kineto-like)", chrome_trace),
                 "legacy": ("Neuron legacy JSON", legacy_json), "runtime": ("Neuron runtime JSON", runtime_json)}
        for key in a.formats:
            fmt, make = cases[key]
            path = make(n)
            r = rss_in_child(LOAD.format(path=str(path)), "import neuron_widgets as nw", REPORT, every=0.02)
            _row(fmt, path, r)


def _sample_events(events: int):
    import neuron_widgets as nw

    cols = ["name", "start_ts", "duration_ns", "instance_id", "process_id", "thread_id", "nc_idx"]
    return nw.load_profile(sample(events), prepare=False, cache=False).events[cols]


def legacy_json(events: int) -> Path:
    """`neuron-explorer view --output-format json`'s system_profile.json, from the sample's events."""
    import orjson

    path = OUT / f"legacy_{events}" / "system_profile.json"
    if not path.exists():
        df = _sample_events(events)
        nc = df["nc_idx"].fillna(0).astype(int).tolist()
        out = [{"id": i, "name": n, "timestamp": int(t), "duration": int(d), "group": f"nrt-nc-{c:03d}",
                "instance_id": inst, "process_id": int(p), "thread_id": int(th), "nc_idx": c, "exec_id": i % 1000}
               for i, (n, t, d, inst, p, th, c) in enumerate(zip(df["name"], df["start_ts"], df["duration_ns"],
                                                                  df["instance_id"], df["process_id"], df["thread_id"],
                                                                  nc, strict=True))]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(orjson.dumps({"trace_event": out}))
    return path


def runtime_json(events: int) -> Path:
    """`nrt_sys_trace_fetch_events()` JSON: a start and a stop per event of the sample, sharing a tracking_id."""
    import orjson

    path = OUT / f"runtime_{events}.json"
    if not path.exists():
        df = _sample_events(events)
        nc = df["nc_idx"].fillna(0).astype(int).tolist()
        out = []
        for i, (n, t, d, c) in enumerate(zip(df["name"], df["start_ts"], df["duration_ns"], nc, strict=True)):
            out.append({"event_type": n, "phase": "start", "tracking_id": i, "nc_idx": c, "timestamp_ns": int(t),
                        "data": {"exec_id": i % 1000}})
            out.append({"event_type": n, "phase": "stop", "tracking_id": i, "nc_idx": c, "timestamp_ns": int(t + d)})
        path.write_bytes(orjson.dumps({"data_version": 2, "instance_id": "i-0bench", "events": out}))
    return path


def _row(fmt: str, path: Path, r: dict) -> None:
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size
    print(f"| {fmt} | {size / 1e6:,.0f} MB | {r['events']:,} | {r['seconds']:.1f} | {r['peak'] / 1e9:.2f} GB | "
          f"{r['held'] / 1e9:.2f} GB | {r['profile'] / 1e9:.2f} GB | {r['peak'] / max(r['profile'], 1):.1f}x |", flush=True)


if __name__ == "__main__":
    main()
