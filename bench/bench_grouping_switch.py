"""First view of a grouping not yet prepared: a Timeline's grouping switched, to its first window's reply sent, and on
to the reply drawn from every event.

    python bench/bench_grouping_switch.py [--events 10000000] [--repeat 3] [--code-dir DIR] [--profile]

Each run is a fresh interpreter: the sample is loaded and prepared as `load_profile` does in the
background (its preview, then its default grouping; here in the foreground, timed apart), a
`Timeline` opened, its first window answered and its own threads (error scan, bandwidth) left to
finish. Then, as the browser does, the grouping traitlet is set to each other mode in turn (a mode
not seen before in that process) and the view's window asked for at 1920 px:

- `first_s`: from the traitlet set to the first reply handed to the comm (what the user waits for
  before the view answers; with a preview-first switch, the reply is drawn from the preview);
- `first_cpu_s`: CPU time of the kernel's thread over that (where the switch and the reply run);
- `full_s`: to the reply drawn from every event: when the first reply was a preview, the widget's
  swap is waited for (its `loading` goes off, polled every 2 ms) and the window asked for again;
- `full_cpu_s`: CPU time of every thread of the process from the switch to that reply (the
  build's two threads included).

Beside each run, the load average (1 min) before and after it: on a machine shared with other work
the wall times are mostly the wait for a core, and the CPU times say what the work was. numba's
compiled kernels were loaded by the default grouping's preparation, so they are not in these times.
`--code-dir` runs another tree's `neuron_widgets` (a `git archive` of an earlier commit: the
"before"). `--profile` prints cProfile's top functions of one switch (the first mode) instead.
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
import json, os, threading, time, cProfile, pstats, io
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
p.prepare("default", background=False)  # as load_profile's thread: the preview (2M events or more), then default
default_s = time.perf_counter() - t
tl = Timeline(p)
sent = []
tl.send = lambda content, buffers=None: sent.append((time.perf_counter(), content, sum(len(b) for b in buffers or [])))

def ask(mode):
    tl._on_msg(tl, {"type": "viewport", "uuid": mode, "grouping": mode, "t0": tl.view[0], "t1": tl.view[1],
                    "width": 1920}, [])
    done, content, nbytes = sent[-1]
    assert content["type"] == "viewport" and content["grouping"] == mode, content
    return done, content, nbytes

ask("default")
for th in threading.enumerate():  # the Timeline's own work (error scan, bandwidth) is not the switch's
    if th is not threading.current_thread() and th.name.startswith("neuron-widgets"):
        th.join()
out = {"events": len(p), "import_s": import_s, "load_s": load_s, "numba_warm_s": numba_warm_s,
       "default_prepared_s": default_s, "modes": {}}
if PROFILE:
    prof = cProfile.Profile()
    prof.enable()
for mode in MODES:
    sent.clear()
    load_before = os.getloadavg()[0]
    c, cp = time.thread_time(), time.process_time()
    t = time.perf_counter()
    tl.grouping = mode
    done, content, nbytes = ask(mode)
    first = {"first_s": done - t, "first_cpu_s": time.thread_time() - c, "first_items": content["n"],
             "first_bytes": nbytes, "preview": tl.status.startswith("preview")}
    if PROFILE:
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(45)
        out["profile"] = s.getvalue()
        break
    while tl.loading:  # the swap to every event
        time.sleep(0.002)
    if first["preview"]:
        done, content, nbytes = ask(mode)
    out["modes"][mode] = {**first, "full_s": done - t, "full_cpu_s": time.process_time() - cp,
                          "tracks": len(tl.tracks), "items": content["n"], "reply_bytes": nbytes,
                          "load": [load_before, os.getloadavg()[0]]}
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--code-dir", help="another tree's neuron_widgets to run (the 'before')")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    path = sample(args.events)
    code = CHILD.replace("PATH", repr(str(path))).replace("MODES", repr(MODES)).replace("PROFILE", repr(args.profile))
    if args.profile:
        print(in_child(code, args.code_dir)["profile"])
        return
    load_at_start = os.getloadavg()
    runs = []
    for _ in range(args.repeat):
        runs.append(in_child(code, args.code_dir))
        print(json.dumps({m: [round(v["first_s"], 3), round(v["full_s"], 3)] for m, v in runs[-1]["modes"].items()}),
              file=sys.stderr)

    def per_mode(key: str, digits: int = 3) -> dict[str, list[float]]:
        return {m: [round(r["modes"][m][key], digits) for r in runs] for m in MODES}

    first = per_mode("first_s")
    result = {
        "machine": machine(), "code": args.code_dir or "this tree", "load_avg_at_start": load_at_start,
        "events": runs[0]["events"], "runs": len(runs), "load_s": [round(r["load_s"], 3) for r in runs],
        "numba_warm_s": [round(r["numba_warm_s"], 3) for r in runs],
        "default_prepared_s": [round(r["default_prepared_s"], 3) for r in runs],
        "first_s": first, "first_cpu_s": per_mode("first_cpu_s"),
        "full_s": per_mode("full_s"), "full_cpu_s": per_mode("full_cpu_s"),
        "first_median_s": {m: round(statistics.median(v), 3) for m, v in first.items()},
        "worst_first_median_s": round(max(statistics.median(v) for v in first.values()), 3),
        "preview_first": {m: runs[0]["modes"][m]["preview"] for m in MODES},
        "load_1min": {m: [[round(x, 1) for x in r["modes"][m]["load"]] for r in runs] for m in MODES},
        "tracks": {m: runs[0]["modes"][m]["tracks"] for m in MODES},
        "first_bytes": {m: runs[0]["modes"][m]["first_bytes"] for m in MODES},
        "reply_bytes": {m: runs[0]["modes"][m]["reply_bytes"] for m in MODES},
        "load_avg_at_end": os.getloadavg(),
    }
    print(json.dumps(result, indent=1))
    OUT.mkdir(exist_ok=True)
    tag = "" if args.code_dir is None else "_" + Path(args.code_dir).name
    (OUT / f"grouping_switch_{args.events}{tag}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
