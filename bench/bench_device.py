"""Drill-down to a device trace: first open (read + align) and a second open of the same execution.

    python bench/bench_device.py [--instructions 1000000]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, device_sample, machine


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instructions", type=int, default=1_000_000)
    ap.add_argument("--events", type=int, default=1_000_000)
    args = ap.parse_args()
    import neuron_widgets as nw

    path = device_sample(args.instructions, args.events)
    p = nw.load_profile(path)
    ev = p.core.to_pandas()
    first = int(ev[ev["name"] == "nc_exec_running"].iloc[0]["id"])
    t = time.perf_counter()
    d = p.device_trace(first)
    cold = time.perf_counter() - t
    t = time.perf_counter()
    p.device_trace(first)
    warm = time.perf_counter() - t
    viewer = viewer_timings(path, first)
    result = {"machine": machine(), "instructions": len(d), "dma_rows": len(d.dma), "system_events": len(p),
              "first_open_s": cold, "second_open_ms": 1e3 * warm, "alignment": d.alignment,
              "residual_ns": d.residual_ns, **viewer}
    print(json.dumps(result, indent=2))
    OUT.mkdir(exist_ok=True)
    (OUT / f"device_{args.instructions}.json").write_text(json.dumps(result, indent=2))


def viewer_timings(path: Path, event_id: int) -> dict[str, float]:
    """A click as the user makes it: the system Timeline's selection set to the nc_exec_running
    event, the DeviceTraceViewer that follows it loading in its thread, then the browser's first
    window request (1920 px), answered as soon as the tracks are out.

    Included: the Timeline's own selection details (the event's arguments, its dependency
    chain), the device read, alignment, event table, tracks, lanes, level-of-detail index and
    the first reply. The browser then paints that reply; its paint time is the front-end
    benchmark's frame time.
    """
    import neuron_widgets as nw
    from neuron_widgets.widgets import DeviceTraceViewer, Timeline

    p = nw.load_profile(path, prepare=False)
    timeline = Timeline(p)  # the system timeline the user clicks in is on screen already
    p.lod("default")
    row = p.row_of(event_id)
    viewer = DeviceTraceViewer()
    sent: list[int] = []
    viewer.send = lambda content, buffers=None: sent.append(sum(len(b) for b in buffers or []))  # type: ignore[method-assign]
    shown = threading.Event()
    viewer.observe(lambda _c: shown.set(), names=["generation"])
    viewer.follow(timeline)

    def click() -> tuple[float, float]:
        """(click to tracks on the wire, the first window's reply): the browser asks as soon as it has tracks."""
        timeline.selected_row = -1
        shown.clear()
        t = time.perf_counter()
        timeline.selected_row = row
        shown.wait(60)
        to_tracks = time.perf_counter() - t
        t = time.perf_counter()
        viewer._on_msg(viewer, {"type": "viewport", "uuid": "b", "grouping": "engines", "t0": viewer.view[0],
                                "t1": viewer.view[1], "width": 1920}, [])
        return to_tracks, time.perf_counter() - t

    cold = click()
    while viewer.loading:  # the summary strip, computed after the tracks are out
        time.sleep(0.01)
    warm = click()
    return {"click_to_tracks_s": cold[0], "first_reply_s": cold[1], "click_to_first_reply_s": sum(cold),
            "second_click_to_reply_ms": 1e3 * sum(warm), "first_reply_bytes": sent[0],
            "viewer_rows": len(viewer.profile), "viewer_tracks": len(viewer.tracks)}


if __name__ == "__main__":
    main()
