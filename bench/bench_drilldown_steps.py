"""Drill-down click, kernel side, step by step: where a first click's time goes until the first window's reply.

    python bench/bench_drilldown_steps.py [--instructions 1000000] [--repeat 3] [--profile]

Each run is a fresh interpreter: the drill-down sample (bench/common.device_sample) is loaded, its
Timeline opened with the default grouping prepared, a DeviceTraceViewer following it, the timeline's
browser having asked for a 1920 px window (so the viewer pushes its first window with the tracks);
then the execution is selected as a click does (`selected_row` set), and the clock runs to the first
window handed to the comm (it goes out just before the tracks); `click_cpu_s` is the CPU time the
process spent meanwhile, every thread's (on a machine shared with other work the wall time is mostly
the wait for a core). The steps are timed alone afterwards on the same trace, wall and CPU: read the
device tables whole, their drawn columns alone (the drill-down's first step), align them, the event
table, its tracks and lanes, its level-of-detail index. `--profile` prints cProfile's top functions
of the viewer's load (run in the main thread, so that cProfile sees it; its summary strip too).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, device_sample, in_child, machine

CHILD = r"""
import json, time, threading, cProfile, pstats, io
import numpy as np
import neuron_widgets as nw
from neuron_widgets.widgets import DeviceTraceViewer, Timeline
from neuron_widgets.model.device.events import DeviceEvents
from neuron_widgets.model.device import resolve as dr
from neuron_widgets.readers.neuron.device_trace import load_device_trace, load_device_trace_staged

p = nw.load_profile(PATH, prepare=False)
tl = Timeline(p)
p.lod("default")
ev = p.core.to_pandas()
row = int(ev.index[ev["name"] == "nc_exec_running"][0])
viewer = DeviceTraceViewer()
sent = []
viewer.send = lambda content, buffers=None: sent.append((time.perf_counter(), sum(len(b) for b in buffers or [])))
shown = threading.Event()
viewer.observe(lambda _c: shown.set(), names=["generation"])
viewer.follow(tl)
tl._handle_custom_msg({"type": "viewport", "uuid": "a", "grouping": tl.grouping, "t0": 0, "t1": tl.span[1],
                       "width": 3840, "tracks": [0]}, [])  # the timeline's browser asked: its width is known
time.sleep(1.0)  # the kernels the viewer warms when it starts following
if PROFILE:  # the load thread's work, run in this thread so that cProfile sees it
    prof = cProfile.Profile()
    prof.enable()
    viewer.open_event(int(p.array("id")[row]), p, background=False)
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(60)
    print(json.dumps({"profile": s.getvalue()}))
    raise SystemExit
c = time.process_time()
t = time.perf_counter()
sent.clear()
tl.selected_row = row
shown.wait(60)
to_tracks = time.perf_counter() - t
while not sent and time.perf_counter() - t < 60:
    time.sleep(0.0005)
click_cpu = time.process_time() - c
assert sent, "no first window was pushed"
to_reply = sent[0][0] - t
while viewer.loading:
    time.sleep(0.01)
out = {"rows": len(viewer.profile), "tracks": len(viewer.tracks), "click_to_tracks_s": to_tracks,
       "click_to_first_reply_s": to_reply, "click_cpu_s": click_cpu, "first_reply_bytes": sent[0][1]}
# The steps alone, on the same execution (a fresh read: the profile's caches are bypassed).
event = p.event(int(p.array("id")[row]))
name = dr.profile_for(p, event)
path = dr.locate(p, name)
def step(key, fn):
    c, t = time.process_time(), time.perf_counter()
    got = fn()
    out[key], out[key.replace("_s", "_cpu_s")] = time.perf_counter() - t, time.process_time() - c
    return got

raw = step("read_s", lambda: load_device_trace(path))
staged = step("read_drawn_s", lambda: load_device_trace_staged(path))
staged[1]()  # the rest, so that it does not run under the steps below
near = step("sync_point_s", lambda: dr.sync_points(p, event, True))
al = step("align_s", lambda: dr.aligned_trace(p, raw, event, near))
de = step("event_table_s", lambda: DeviceEvents(al))
step("tracks_lanes_s", lambda: de.track_index("engines"))
step("lod_s", lambda: de.lod("engines"))
print(json.dumps(out))
"""

STEPS = ("click_to_tracks_s", "click_to_first_reply_s", "click_cpu_s")
STEPS += tuple(k + x for k in ("read", "read_drawn", "sync_point", "align", "event_table", "tracks_lanes", "lod")
               for x in ("_s", "_cpu_s"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instructions", type=int, default=1_000_000)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    path = device_sample(args.instructions, args.events)
    code = CHILD.replace("PATH", repr(str(path))).replace("PROFILE", repr(args.profile))
    if args.profile:
        print(in_child(code)["profile"])
        return
    load_at_start = os.getloadavg()
    runs = [in_child(code) for _ in range(args.repeat)]
    result = {"machine": machine(), "load_avg_at_start": load_at_start, "instructions": args.instructions,
              "viewer_rows": runs[0]["rows"], "viewer_tracks": runs[0]["tracks"],
              "first_reply_bytes": runs[0]["first_reply_bytes"],
              **{k: [round(r[k], 3) for r in runs] for k in STEPS},
              "median": {k: round(statistics.median(r[k] for r in runs), 3) for k in STEPS},
              "load_avg_at_end": os.getloadavg()}
    print(json.dumps(result, indent=1))
    OUT.mkdir(exist_ok=True)
    (OUT / f"drilldown_steps_{args.instructions}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
