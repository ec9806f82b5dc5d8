"""The Summary names threads as the Timeline does, and its Busy card and busy chart share one measure (issue 35.4).

A process or thread whose name holds "/" (Chrome's "chrome://tracing", "CompositorRasterWorker1/21775") keeps its
name whole; a browser's async slices of one category, emitted on several threads, are one Timeline track and one
row; the Busy card is the mean of the busy chart's bars (each thread's busy time over the span summarised), said
on its hover; a brushed range's span is the brush, and busy time is counted inside it. Busy time per track is
checked against a slow reference on random traces with async slices and random brushes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bokeh.models import ColumnDataSource
from conftest import trace

import neuron_widgets as nw
from neuron_widgets.analysis.threads import thread_breakdown
from neuron_widgets.summary.data import BUSY_MEANS, SPAN_MEANS, track_parts
from neuron_widgets.widgets import Summary, Timeline


def _m(name: str, pid: int, tid: int, value: str) -> dict:
    return {"ph": "M", "name": name, "pid": pid, "tid": tid, "args": {"name": value}}


def _x(name: str, pid: int, tid: int, ts: int, dur: int, **kw: object) -> dict:
    return {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, **kw}


def slashes(path: Path) -> Path:
    """lthi's shapes: names with "/" in a process and in threads; an async category on two threads; an error."""
    ev = [_m("process_name", 10, 0, "chrome://tracing"), _m("thread_name", 10, 21775, "CompositorRasterWorker1/21775"),
          _m("thread_name", 10, 1287, "CrRendererMain"),
          _m("process_name", 20, 0, "Renderer"), _m("thread_name", 20, 1287, "CrRendererMain"),
          _m("thread_name", 20, 22031, "CompositorRasterWorker1/22031"),
          _m("process_name", 30, 0, "Browser"), _m("thread_name", 30, 1, "CrBrowserMain"),
          _x("RasterTask", 10, 21775, 0, 4000), _x("RasterTask", 20, 22031, 1000, 2000),
          _x("RunTask", 10, 1287, 0, 9000), _x("RunTask", 20, 1287, 0, 500),
          _x("Crash", 10, 21775, 5000, 10, args={"error": "segfault"}), _x("MessageLoop::RunTask", 30, 1, 0, 10000),
          {"ph": "b", "cat": "browser", "name": "Loading", "id": "0x1", "pid": 30, "tid": 1, "ts": 100},
          {"ph": "e", "cat": "browser", "name": "Loading", "id": "0x1", "pid": 30, "tid": 1, "ts": 3100},
          {"ph": "b", "cat": "browser", "name": "Navigation", "id": "0x2", "pid": 30, "tid": 2, "ts": 2000},
          {"ph": "e", "cat": "browser", "name": "Navigation", "id": "0x2", "pid": 30, "tid": 2, "ts": 6000}]
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def summarised(p: nw.Profile | Timeline) -> Summary:
    s = Summary(p)
    assert s.done.wait(60) and "Could not" not in s.status.value, s.status.value
    return s


def bars(s: Summary) -> dict:
    return s.charts.temporal.select_one({"type": ColumnDataSource, "name": "nw-temporal"}).data


def cards(s: Summary) -> dict[str, str]:
    return {d.text.split("\n")[0]: d.text.split("\n")[1] for d in s.charts.head.children[0].children}


def test_names_holding_a_slash_stay_whole(tmp_path: Path) -> None:
    p = nw.load_profile(slashes(tmp_path / "lthi.json"), cache=False)
    s = summarised(p)
    devices = bars(s)["device"]
    # The thread's own name whole; its process whole before it where two processes have a thread of that name.
    assert sorted(devices) == sorted(["CrBrowserMain 1", "browser (async)", "chrome://tracing 10/CrRendererMain 1287",
                                      "Renderer 20/CrRendererMain 1287", "CompositorRasterWorker1/21775",
                                      "CompositorRasterWorker1/22031"])
    timeline = [str(x) for x in p.tracks("default")["label"]]
    assert all(any(t.endswith("/" + d) for t in timeline) for d in devices)
    assert "The busiest thread is CrBrowserMain 1 " in s.charts.head.children[1].text
    # The tables name the same threads the same way (the error on the raster worker, the longest events).
    assert s.charts.problems.source.data["device"] == ["CompositorRasterWorker1/21775"]
    assert set(s.charts.longest.source.data["thread"]) <= set(devices)
    parts = track_parts(p)
    assert parts["lthi/chrome://tracing 10/CompositorRasterWorker1/21775"] == \
        ("lthi", "chrome://tracing 10", "CompositorRasterWorker1/21775")


def test_a_real_webviews_worker_threads_keep_their_names() -> None:
    """catapult's webview trace names its pool threads "WorkerPool/11807", "CompositorTileWorker1/11772": each
    read whole (it was "11807"), each a row, as the Timeline's track ends."""
    p = nw.load_profile(trace("catapult/webview.json.gz"), cache=False)
    devices = bars(summarised(p))["device"]
    assert {"CompositorTileWorker1/11772", "BrowserBlockingWorker1/11760", "WorkerPool/11807"} <= set(devices)
    assert not [d for d in devices if d.isdigit()] and len(set(devices)) == len(devices)
    timeline = [str(x) for x in p.tracks("default")["label"]]
    assert all(any(t.endswith("/" + d) for t in timeline) for d in devices)


def test_an_async_category_on_two_threads_is_one_row(tmp_path: Path) -> None:
    p = nw.load_profile(slashes(tmp_path / "lthi.json"), cache=False)
    t = thread_breakdown(p)
    rows = t[t["track"] == "lthi/Browser 30/browser (async)"]
    assert len(rows) == 1 and int(rows["events"].iloc[0]) == 2
    assert int(rows["busy_time_ns"].iloc[0]) == (6000 - 100) * 1000  # the union of both threads' slices
    assert t["track"].is_unique
    assert bars(summarised(p))["device"].count("browser (async)") == 1


def test_the_busy_card_is_the_mean_of_the_busy_bars(tmp_path: Path) -> None:
    """The torch-neuronx shape: a 100 ms profiler span, a thread busy 50 ms, one busy 0.5 ms; the card said 83.5%
    (busy over each thread's own span), the chart 50% and 0.5% of the 100 ms."""
    doc = {"traceEvents": [
        _m("process_name", 77, 0, "python3.10"), _m("thread_name", 77, 77, "pt_main_thread"),
        {"ph": "X", "name": "PyTorch Profiler (0)", "cat": "Trace", "pid": "Spans", "tid": "PyTorch Profiler",
         "ts": 0, "dur": 100000},
        _x("to", 77, 77, 10, 30000), _x("train_step", 77, 77, 40000, 20000), _x("aten::mm", 77, 78, 100, 500)]}
    path = tmp_path / "neuronx.json"
    path.write_text(json.dumps(doc))
    s = summarised(nw.load_profile(path, cache=False))
    b = bars(s)
    assert b["busy_pctg"] == [50.0, 0.5]
    assert cards(s)["Busy"] == f"{np.mean(b['busy_pctg']):.1f}%"
    busy = s.charts.layout.select_one({"name": "nw-headline-busy"})
    span = s.charts.layout.select_one({"name": "nw-headline-span"})
    assert busy.html_attributes["title"] == BUSY_MEANS["chrome"] and "mean of the bars" in BUSY_MEANS["chrome"]
    assert span.html_attributes["title"] == SPAN_MEANS


def test_a_brushed_ranges_span_is_the_brush(sample: nw.Profile) -> None:
    """Issue 35.7: the tour's brushed Summary said "Span 5.96 ms" for a 5 ms brush (the events crossing it)."""
    tl = Timeline(sample)
    tl.brush_range = ("25ms", "30ms")
    s = summarised(tl)
    assert cards(s)["Span"] == "5 ms"
    assert s.charts.layout.select_one({"name": "nw-headline-span"}).html_attributes["title"] == SPAN_MEANS
    # The exported page rebuilds the charts from the same results: the same span.
    from neuron_widgets.summary import SummaryCharts

    again = SummaryCharts(sample.filter(time_range=tl.brush_range), s.results)
    assert again.head.children[0].children[0].text == "Span\n5 ms"
    tl.brush_range = None
    s2 = summarised(tl)
    assert cards(s2)["Span"] == nw.model.timefmt.duration(sample.duration_ns)


def test_a_brushed_plain_trace_counts_busy_time_inside_the_brush(tmp_path: Path) -> None:
    p = nw.load_profile(slashes(tmp_path / "lthi.json"), cache=False)
    tl = Timeline(p)
    origin = p.origin_ts
    tl.brush_range = (origin + 2_000_000, origin + 4_000_000)
    s = summarised(tl)
    assert cards(s)["Span"] == "2 ms"
    b = bars(s)
    busy = dict(zip(b["device"], b["busy_pctg"], strict=True))
    # Slices crossing the brush count only inside it: 100% at most, never more.
    assert busy["CrBrowserMain 1"] == 100.0 and busy["CompositorRasterWorker1/21775"] == 100.0
    assert busy["CompositorRasterWorker1/22031"] == 50.0 and busy["browser (async)"] == 100.0
    assert max(b["busy_pctg"]) <= 100.0
    assert cards(s)["Busy"] == f"{np.mean(b['busy_pctg']):.1f}%"


def random_async_trace(seed: int, path: Path) -> list[dict]:
    """X slices on a few threads and async b/e slices of two categories emitted on random threads."""
    rng = np.random.default_rng(seed)
    ev: list[dict] = []
    for pid in (1, 2):
        ev.append(_m("process_name", pid, 0, f"proc/{pid}"))  # a "/" in a process name too
        for tid in range(1, int(rng.integers(2, 4))):
            for _ in range(int(rng.integers(1, 12))):
                ts = int(rng.integers(0, 5000))
                ev.append(_x("work", pid, tid, ts, int(rng.integers(0, 800))))
        for k in range(int(rng.integers(0, 8))):
            cat = str(rng.choice(["browser", "net"]))
            tid = int(rng.integers(1, 4))
            ts = int(rng.integers(0, 5000))
            ident = f"0x{pid}{k}"
            ev += [{"ph": "b", "cat": cat, "name": f"a{k}", "id": ident, "pid": pid, "tid": tid, "ts": ts},
                   {"ph": "e", "cat": cat, "name": f"a{k}", "id": ident, "pid": pid, "tid": tid,
                    "ts": ts + int(rng.integers(1, 1500))}]
    path.write_text(json.dumps({"traceEvents": ev}))
    return ev


def reference_busy(events: list[dict], window: tuple[int, int] | None) -> dict[tuple, int]:
    """Per Timeline row ((pid, tid) for slices, (pid, category) for async ones): ns covered inside the window."""
    covered: dict[tuple, set[int]] = {}
    opened = {}
    for e in events:
        if e["ph"] == "X":
            key, lo, hi = (e["pid"], e["tid"]), e["ts"], e["ts"] + e["dur"]
        elif e["ph"] == "b":
            opened[(e["pid"], e["id"])] = e["ts"]
            continue
        elif e["ph"] == "e":
            key, lo, hi = (e["pid"], e["cat"]), opened.pop((e["pid"], e["id"])), e["ts"]
        else:
            continue
        if window is not None:
            lo, hi = max(lo, window[0]), min(hi, window[1])
        covered.setdefault(key, set()).update(range(lo, max(hi, lo)))
    return {k: 1000 * len(v) for k, v in covered.items()}


@pytest.mark.parametrize("seed", range(25))
def test_busy_time_per_track_matches_the_reference(seed: int, tmp_path: Path) -> None:
    events = random_async_trace(seed, tmp_path / "t.json")
    p = nw.load_profile(tmp_path / "t.json", cache=False)
    rng = np.random.default_rng(1000 + seed)
    a = int(rng.integers(0, 4000))
    window_us = None if seed % 3 == 0 else (a, a + int(rng.integers(1, 3000)))
    window = None if window_us is None else (1000 * window_us[0], 1000 * window_us[1])  # the reader's ns: ts x 1000
    got = thread_breakdown(p, window)
    assert got["track"].is_unique
    have = {}
    for r in got.to_dict("records"):
        last = r["track"].split("/")[-1]
        key = (int(r["process_id"]), last[:-len(" (async)")]) if last.endswith(" (async)") else \
            (int(r["process_id"]), int(r["thread_id"]))
        have[key] = int(r["busy_time_ns"])
    want = reference_busy(events, window_us)
    assert {k: v for k, v in have.items() if v} == {k: v for k, v in want.items() if v}
