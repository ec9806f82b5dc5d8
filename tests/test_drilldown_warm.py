"""A drill-down loads no compiled kernel on the click: the viewer loads them when it starts following.

numba loads a kernel (from its cache, or compiles it) the first time it meets each argument type,
and whether an array is writable is part of that type. Two kernels were warmed with writable arrays
and met read-only ones on the click, which then loaded them (7-15 ms each). Checked in a fresh
interpreter, where nothing is loaded yet, as in a new notebook kernel.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import neuron_widgets as nw

CHILD = r"""
import json, sys
import numba.core.dispatcher as dispatcher
import neuron_widgets as nw
from neuron_widgets.widgets import DeviceTraceViewer, Timeline, device_viewer

p = nw.load_profile(sys.argv[1])
tl = Timeline(p)
p.lod(tl.grouping)
tl._handle_custom_msg({"type": "viewport", "uuid": "a", "grouping": tl.grouping, "t0": 0, "t1": tl.span[1],
                       "width": 1920, "tracks": [0]}, [])
viewer = DeviceTraceViewer()
viewer.follow(tl)
device_viewer._warm()  # what follow() starts in a thread, awaited here
loaded = []
original = dispatcher.Dispatcher._compile_for_args
def recording(self, *args, **kws):
    loaded.append(self.py_func.__module__ + "." + self.py_func.__qualname__)
    return original(self, *args, **kws)
dispatcher.Dispatcher._compile_for_args = recording
execution = p.core.to_pandas().query("name == 'nc_exec_running'")["id"].iloc[0]
viewer.open_event(int(execution), p, background=False)
print(json.dumps({"loaded": loaded, "rows": len(viewer.profile), "tree": len(viewer.hierarchy.get("rows", []))}))
"""


def test_a_first_drill_down_loads_no_kernel(tmp_path: Path) -> None:
    sample = nw.write_sample(tmp_path / "s", events=3000, instances=1, processes=1, cores=1, device_instructions=3000)
    run = subprocess.run([sys.executable, "-c", CHILD, str(sample)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["rows"] > 3000 and got["tree"] > 0  # the drill-down ran: the instructions and the layer tree shown
    assert got["loaded"] == []
