"""The Neuron JSON readers against the Chrome reader on the same events (issue 40).

The sample's events (`common.sample`) written three ways: the legacy `system_profile.json`
(`trace_event` list), the runtime's `nrt_sys_trace_fetch_events` JSON (a start and a stop per
event) and a Chrome trace (one complete "X" event each, times in microseconds, the same
`exec_id` argument). Each load runs in a fresh interpreter after a load of a 1-event file of
the same format (numba's compiled kernels loaded: counted apart, in "first load"), parse cache
off, no preparation: seconds, peak RSS over the load less the RSS before it, and the Profile's
columns (`profile.nbytes()["columns"]`). Medians of `--repeat` runs; the load average is printed.

    python bench/bench_neuron_json.py [--events 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_reader_memory import _sample_events, legacy_json, runtime_json
from common import OUT, machine, rss_in_child

WARM = """
import neuron_widgets as nw
t0 = time.perf_counter()
nw.load_profile({warm!r}, cache=False, prepare=False)
first = time.perf_counter() - t0
"""
LOAD = "p = nw.load_profile({path!r}, cache=False, prepare=False)"
REPORT = 'out.update(events=len(p), profile=p.nbytes()["columns"], warm_load=first)'


def chrome_same(events: int) -> Path:
    """The sample's events as a Chrome trace: complete events, µs times, the legacy file's exec_id argument."""
    import orjson

    path = OUT / f"chrome_same_{events}.json"
    if not path.exists():
        df = _sample_events(events)
        out = [{"ph": "X", "name": n, "ts": int(t) / 1000, "dur": int(d) / 1000, "pid": int(p), "tid": int(th),
                "args": {"exec_id": i % 1000}}
               for i, (n, t, d, p, th) in enumerate(zip(df["name"], df["start_ts"], df["duration_ns"], df["process_id"],
                                                        df["thread_id"], strict=True))]
        path.write_bytes(orjson.dumps({"traceEvents": out}))
    return path


def _warm_files() -> dict[str, Path]:
    d = OUT / "warm_neuron_json"
    (d / "legacy").mkdir(parents=True, exist_ok=True)
    files = {"legacy": d / "legacy" / "system_profile.json", "runtime": d / "runtime.json", "chrome": d / "chrome.json"}
    files["legacy"].write_text(json.dumps({"trace_event": [{"id": 1, "name": "a", "timestamp": 5, "duration": 1,
                                                              "group": "nrt-nc-000", "exec_id": 1}]}))
    files["runtime"].write_text(json.dumps({"data_version": 2, "events": [
        {"event_type": "a", "phase": "start", "tracking_id": 1, "nc_idx": 0, "timestamp_ns": 5, "data": {"exec_id": 1}},
        {"event_type": "a", "phase": "stop", "tracking_id": 1, "nc_idx": 0, "timestamp_ns": 6}]}))
    files["chrome"].write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "a", "ts": 1.5, "dur": 1.0, "pid": 1,
                                                             "tid": 1, "args": {"exec_id": 1}}]}))
    return files


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", nargs="+", default=["chrome", "legacy", "runtime"])
    a = ap.parse_args()
    print(machine(), "| load average before:", os.getloadavg(), flush=True)
    warm = _warm_files()
    make = {"chrome": chrome_same, "legacy": legacy_json, "runtime": runtime_json}
    got = {}
    print("| format | file | events | seconds (runs) | peak RSS over the load | Profile's columns | peak / Profile |")
    print("|---|---|---|---|---|---|---|")
    for key in a.formats:
        path = make[key](a.events)
        runs = [rss_in_child(LOAD.format(path=str(path)), WARM.format(warm=str(warm[key])), REPORT)
                for _ in range(a.repeat)]
        s = statistics.median(r["seconds"] for r in runs)
        peak = statistics.median(r["peak"] for r in runs)
        prof = runs[0]["profile"]
        got[key] = s
        each = ", ".join(f"{r['seconds']:.2f}" for r in runs)
        print(f"| {key} | {path.stat().st_size / 1e6:,.0f} MB | {runs[0]['events']:,} | {s:.2f} "
              f"({each}) | {peak / 1e9:.3f} GB | {prof / 1e9:.3f} GB | "
              f"{peak / prof:.2f}x |", flush=True)
    if "chrome" in got:
        for key in ("legacy", "runtime"):
            if key in got:
                print(f"{key} / chrome time: {got[key] / got['chrome']:.2f}x")
    print("load average after:", os.getloadavg())


if __name__ == "__main__":
    main()
