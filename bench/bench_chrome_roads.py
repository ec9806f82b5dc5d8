"""The Chrome reader's two roads on the same files: the byte scan (chrome_fast) against msgspec's objects.

Per file, in a fresh interpreter per road (parse cache off, no background preparation): the
median of `--repeat` loads after one warm-up load, the memory the loaded profile keeps (RSS after
the load, the file's bytes freed, less RSS before it), and the floor any JSON reader pays here:
gunzip plus `orjson.loads` of the whole document. The files: the HTA and DLRM traces, and a
generated Kineto-like trace of 1M events with arguments (bench_perfetto.chrome_trace).

    python bench/bench_chrome_roads.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_perfetto import chrome_trace
from common import OUT, in_child, machine

TRACES = Path(__file__).resolve().parents[1] / "tests/data/traces"

LOAD = """
import gc, json, time, psutil
import neuron_widgets as nw
from neuron_widgets.readers.chrome import fast as chrome_fast
if {slow!r}:
    chrome_fast.gather = lambda buf, builder: None
proc = psutil.Process()
nw.load_profile({path!r}, cache=False, prepare=False)  # warm-up: numba's kernels loaded, files in the page cache
gc.collect()
times = []
for _ in range({repeat}):
    gc.collect()
    rss0 = proc.memory_info().rss
    t0 = time.perf_counter()
    p = nw.load_profile({path!r}, cache=False, prepare=False)
    times.append(time.perf_counter() - t0)
    gc.collect()
    kept = proc.memory_info().rss - rss0
    del p
print(json.dumps({{"seconds": sorted(times)[len(times) // 2], "runs": [round(t, 4) for t in times],
                   "kept_mb": kept / 1e6, "fast": not {slow!r}}}))
"""

BARE = """
import json, time, orjson
from neuron_widgets.readers.sniff import read_all
from pathlib import Path
times = []
for _ in range({repeat} + 1):
    t0 = time.perf_counter()
    orjson.loads(read_all(Path({path!r})))
    times.append(time.perf_counter() - t0)
times = times[1:]
print(json.dumps({{"seconds": sorted(times)[len(times) // 2]}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    files = [TRACES / "hta/nccl_data.json.gz", TRACES / "hta/trace_diff_control_rank3of8.json.gz",
             sorted((TRACES / "param-dlrm-8rank").glob("*.gz"))[0], chrome_trace(1_000_000)]
    result: dict = {"machine": machine()}
    for path in files:
        row = {}
        for road, slow in (("fast", False), ("msgspec", True)):
            row[road] = in_child(LOAD.format(path=str(path), slow=slow, repeat=args.repeat))
        row["bare_gunzip_orjson_s"] = in_child(BARE.format(path=str(path), repeat=args.repeat))["seconds"]
        row["speedup"] = row["msgspec"]["seconds"] / row["fast"]["seconds"]
        result[path.name] = row
        print(path.name, json.dumps(row), flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "chrome_roads.json").write_text(json.dumps(result, indent=2))
    print(statistics.median(r["speedup"] for k, r in result.items() if k != "machine"))


if __name__ == "__main__":
    main()
