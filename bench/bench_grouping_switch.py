"""First view of a grouping not yet prepared: a Timeline's grouping switched, to its first window's reply sent.

    python bench/bench_grouping_switch.py [--events 10000000] [--repeat 3] [--profile]

Each run is a fresh interpreter: the sample is loaded, its default grouping prepared (as
`load_profile` does in the background), a `Timeline` opened and its first window answered. Then,
as the browser does, the grouping traitlet is set to each other mode in turn (a mode not seen
before in that process) and the view's window asked for at 1920 px; the clock runs from the
traitlet set to the reply handed to the comm (the kernel is blocked that long). numba's compiled
kernels were loaded by the default grouping's preparation, so they are not in these times; the
first build's numba cache load is reported apart (`numba_warm_s`). The switch's CPU time in the
kernel's thread (`switch_cpu_s`, where all of its work runs) is reported beside the wall time: on a
machine shared with other work the wall time is mostly the wait for a core. `--profile` prints cProfile's
top functions of one switch (the first mode) instead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, in_child, machine, sample

MODES = ("cpu_device", "neuron_core", "thread", "process", "instance")

CHILD = r"""
import json, time, cProfile, pstats, io
import numpy as np
t = time.perf_counter()
import neuron_widgets as nw
from neuron_widgets.model import order
from neuron_widgets.widgets import Timeline
import_s = time.perf_counter() - t
t = time.perf_counter()
p = nw.load_profile(PATH, prepare=False)
load_s = time.perf_counter() - t
t = time.perf_counter()
order.warm()
numba_warm_s = time.perf_counter() - t
t = time.perf_counter()
p.lod("default")
default_s = time.perf_counter() - t
tl = Timeline(p)
sent = []
tl.send = lambda content, buffers=None: sent.append((time.perf_counter(), content, sum(len(b) for b in buffers or [])))

def ask(mode):
    tl._on_msg(tl, {"type": "viewport", "uuid": mode, "grouping": mode, "t0": tl.view[0], "t1": tl.view[1],
                    "width": 1920}, [])

ask("default")
out = {"events": len(p), "import_s": import_s, "load_s": load_s, "numba_warm_s": numba_warm_s,
       "default_prepared_s": default_s, "modes": {}}
if PROFILE:
    prof = cProfile.Profile()
    prof.enable()
for mode in MODES:
    sent.clear()
    c = time.thread_time()
    t = time.perf_counter()
    tl.grouping = mode
    ask(mode)
    done, content, nbytes = sent[-1]
    assert content["type"] == "viewport" and content["grouping"] == mode, content
    out["modes"][mode] = {"s": done - t, "cpu_s": time.thread_time() - c, "tracks": len(tl.tracks),
                          "items": content["n"], "reply_bytes": nbytes}
    if PROFILE:
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(45)
        out["profile"] = s.getvalue()
        break
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    path = sample(args.events)
    code = CHILD.replace("PATH", repr(str(path))).replace("MODES", repr(MODES)).replace("PROFILE", repr(args.profile))
    if args.profile:
        print(in_child(code)["profile"])
        return
    load_at_start = os.getloadavg()
    runs = []
    for _ in range(args.repeat):
        runs.append(in_child(code))
        print(json.dumps({m: round(v["s"], 3) for m, v in runs[-1]["modes"].items()}), file=sys.stderr)
    per_mode = {m: [r["modes"][m]["s"] for r in runs] for m in MODES}
    result = {
        "machine": machine(), "load_avg_at_start": load_at_start, "events": runs[0]["events"],
        "runs": len(runs), "load_s": [round(r["load_s"], 3) for r in runs],
        "numba_warm_s": [round(r["numba_warm_s"], 3) for r in runs],
        "default_prepared_s": [round(r["default_prepared_s"], 3) for r in runs],
        "switch_s": {m: [round(x, 3) for x in v] for m, v in per_mode.items()},
        "switch_median_s": {m: round(statistics.median(v), 3) for m, v in per_mode.items()},
        "switch_cpu_s": {m: [round(r["modes"][m]["cpu_s"], 3) for r in runs] for m in MODES},
        "worst_median_s": round(max(statistics.median(v) for v in per_mode.values()), 3),
        "tracks": {m: runs[0]["modes"][m]["tracks"] for m in MODES},
        "reply_bytes": {m: runs[0]["modes"][m]["reply_bytes"] for m in MODES},
        "load_avg_at_end": os.getloadavg(),
    }
    print(json.dumps(result, indent=1))
    OUT.mkdir(exist_ok=True)
    (OUT / f"grouping_switch_{args.events}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
