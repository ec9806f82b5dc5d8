"""The widgets' kernel side: viewport replies, search, summaries, selection, linking, highlight, errors."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import pytest
from conftest import trace

import neuron_widgets as nw
from neuron_widgets.widgets import EventDetails, GroupingSelector, Timeline, link, wire


class Recorder:
    """Stands in for the comm: what the widget sends back to the browser."""

    def __init__(self, tl: Timeline) -> None:
        self.sent: list[tuple[dict[str, Any], list[bytes]]] = []
        tl.send = lambda content, buffers=None: self.sent.append((content, buffers or []))  # type: ignore[method-assign]
        self.tl = tl

    def ask(self, **content: Any) -> tuple[dict[str, Any], list[bytes]]:
        self.tl._on_msg(self.tl, {"uuid": "u", **content}, [])
        return self.sent[-1]


def columns(meta: dict[str, Any], buffers: list[bytes]) -> dict[str, np.ndarray]:
    types = {"start": np.float64, "end": np.float64, "track": np.int32, "lane": np.int32, "name": np.int32,
             "row": np.int32, "count": np.uint32, "flags": np.uint8, "color": np.int32, "node": np.int32}
    return {c: np.frombuffer(b, dtype=types[c]) for c, b in zip(meta["columns"], buffers, strict=True)}


@pytest.fixture()
def tl(sample: nw.Profile) -> Timeline:
    t = Timeline(sample)
    t._arg_scan.join(60)  # its late revision bump would be counted as a test's own
    return t


def test_viewport_reply_is_binary_bounded_and_exact(tl: Timeline, sample: nw.Profile) -> None:
    rec = Recorder(tl)
    tracks = list(range(len(tl.tracks)))
    meta, buffers = rec.ask(type="viewport", t0=0, t1=tl.span[1], width=800, tracks=tracks, grouping="default")
    assert meta["type"] == "viewport" and meta["uuid"] == "u"
    cols = columns(meta, buffers)
    n = meta["n"]
    assert all(len(c) == n for c in cols.values())
    lanes = sum(t["lanes"] for t in tl.tracks)
    assert n - meta["markers"] <= 2 * 800 * lanes + lanes
    assert sum(len(b) for b in buffers) < 4 << 20
    exact = cols["count"] == 1
    rows = cols["row"][exact].astype(np.int64)
    origin = sample.origin_ts
    # Offsets from the profile start are exact nanoseconds.
    assert np.array_equal(cols["start"][exact].astype(np.int64) + origin, sample.array("start_ts")[rows])
    assert np.array_equal(cols["name"], sample.name_codes()[cols["row"]])


def test_viewport_narrow_window_at_nanoscale(tl: Timeline, sample: nw.Profile) -> None:
    rec = Recorder(tl)
    row = int(np.argmax(sample.array("duration_ns")))
    t = float(sample.array("start_ts")[row] - sample.origin_ts)
    meta, buffers = rec.ask(type="viewport", t0=t - 5, t1=t + 15, width=1000, tracks=None, grouping="default")
    cols = columns(meta, buffers)
    assert meta["px_ns"] == 1 and row in cols["row"]
    assert cols["start"][list(cols["row"]).index(row)] == t


def test_errors_and_hangs_are_flagged_even_when_merged(tl: Timeline, sample: nw.Profile) -> None:
    names = sample.name_dictionary()
    err = sample.events.index[sample.events["name"] == "numerical_err"]
    assert len(err) == 1
    tl._scan_args_in_background()  # also finds the nrt_execute that returned 1003
    for _ in range(100):
        if tl._marked["error"].size >= 2:
            break
        time.sleep(0.05)
    errs = tl._marked["error"]
    assert {names[c] for c in sample.name_codes()[errs]} == {"numerical_err", "nrt_execute"}
    rec = Recorder(tl)
    meta, buffers = rec.ask(type="viewport", t0=0, t1=tl.span[1], width=100, tracks=None, grouping="default")
    cols = columns(meta, buffers)
    flagged = cols["row"][(cols["flags"] & wire.FLAG_ERROR) > 0]
    assert set(errs) <= set(flagged.tolist())
    hung = cols["row"][(cols["flags"] & wire.FLAG_INCOMPLETE) > 0]
    assert set(tl._marked["incomplete"]) <= set(hung.tolist()) and len(hung)


def test_find_next_and_previous(tl: Timeline, sample: nw.Profile) -> None:
    rec = Recorder(tl)
    code = sample.name_dictionary().index("nc_exec_running")
    first, _ = rec.ask(type="find", codes=[code], after=-1, direction=1)
    second, _ = rec.ask(type="find", codes=[code], after=first["start"], direction=1)
    back, _ = rec.ask(type="find", codes=[code], after=second["start"], direction=-1)
    hits = np.flatnonzero(sample.name_codes() == code)
    assert first["total"] == hits.size and first["row"] == hits[0] and second["row"] == hits[1]
    assert back["row"] == first["row"] and first["name"] == "nc_exec_running"
    wrap, _ = rec.ask(type="find", codes=[code], after=-1, direction=-1)
    assert wrap["row"] == hits[-1]


def test_selection_detail_and_dependencies(tl: Timeline, sample: nw.Profile) -> None:
    hw = sample.events.index[sample.events["name"] == "nc_exec_running"][0]
    tl.selected_row = int(hw)
    d = tl.selection_detail
    assert d["name"] == "nc_exec_running" and d["row"] == hw
    assert {u["name"] for u in d["upstream"]} >= {"nrt_execute"}
    assert tl.selection["name"] == "nc_exec_running"
    details = EventDetails(tl)
    assert details.event["title"] == "nc_exec_running"
    assert any(k == "track" for k, _ in details.event["fields"])
    up = details.event["upstream"][0]
    details._on_msg(details, {"type": "focus", "row": up["row"]}, [])
    assert tl.selected_row == up["row"]
    a, b = tl.view
    assert a <= tl._place_row(up["row"])["start"] <= b


def test_on_select_runs_before_the_details(tl: Timeline, sample: nw.Profile) -> None:
    seen: list[tuple[int, object]] = []

    def callback(row: int) -> None:
        seen.append((row, tl.selection_detail.get("row")))  # the details are not there yet

    tl.selected_row = -1
    tl.on_select(callback)
    tl.on_select(callback)  # once only
    tl.selected_row = 7
    tl.selected_row = 9
    assert seen == [(7, None), (9, 7)]
    tl.grouping = "thread"  # the selection is placed anew on the new tracks, but it is no new selection
    assert seen == [(7, None), (9, 7)] and tl.selection_detail["row"] == 9
    tl.grouping = "default"
    tl.on_select(callback, remove=True)
    tl.selected_row = 11
    assert len(seen) == 2 and tl.selection_detail["row"] == 11


def test_brush_summary_and_selected_events(tl: Timeline, sample: nw.Profile) -> None:
    tl.brush_range = ("10ms", "20ms")
    s = tl.brush_summary
    df = tl.selected_events()
    assert s["events"] == len(df) > 0
    by_name = {r["key"]: r["count"] for r in s["by_name"]}
    counts = df["name"].astype(str).value_counts()
    assert by_name == counts[counts > 0].to_dict()
    a, b = tl.brush_range
    assert ((df["start_ts"] < b) & (df["end_ts"] >= a)).all()
    tl.brush_range = None
    assert tl.brush_summary == {}


def test_time_range_grouping_and_selector(tl: Timeline, sample: nw.Profile) -> None:
    tl.time_range = ("5ms", "6ms")
    assert tl.time_range == (sample.origin_ts + 5_000_000, sample.origin_ts + 6_000_000)
    with pytest.raises(ValueError):
        tl.time_range = ("6ms", "5ms")
    sel = GroupingSelector(tl)
    sel.value = "instance"
    assert tl.grouping == "instance" and [t["label"] for t in tl.tracks] == sample.tracks("instance")["label"].tolist()
    tl.grouping = "thread"
    assert sel.value == "thread"
    with pytest.raises(ValueError):
        tl.grouping = "nonsense"


def test_link_without_echo_and_across_profiles(sample: nw.Profile) -> None:
    a, b = Timeline(sample), Timeline(sample.filter(neuron_cores="0"))
    calls = {"a": 0, "b": 0}
    a.observe(lambda _c: calls.__setitem__("a", calls["a"] + 1), names=["view"])
    b.observe(lambda _c: calls.__setitem__("b", calls["b"] + 1), names=["view"])
    ln = link(a, b)
    calls.update(a=0, b=0)
    a.view = [1000.0, 2_000_000.0]
    assert b.view == [1000.0, 2_000_000.0] and calls == {"a": 1, "b": 1}
    row = int(np.flatnonzero(sample.name_codes() == sample.name_dictionary().index("nc_exec_running"))[0])
    a.selected_row = row
    assert b.profile.array("id")[b.selected_row] == sample.array("id")[row]
    ln.unlink()
    a.view = [0.0, 10.0]
    assert b.view == [1000.0, 2_000_000.0]


def test_link_aligns_at_once(sample: nw.Profile) -> None:
    # Issue 14, bug 4: b takes a's range and selection when linked, not at a's next change.
    a, b = Timeline(sample), Timeline(sample)
    a.view = [2_000_000.0, 3_000_000.0]
    row = int(np.flatnonzero(sample.name_codes() == sample.name_dictionary().index("nc_exec_running"))[3])
    a.selected_row = row
    assert b.view != a.view and b.selected_row == -1
    link(a, b)
    assert b.view == [2_000_000.0, 3_000_000.0] and b.selected_row == row
    assert a.view == [2_000_000.0, 3_000_000.0]  # a does not move to b


def test_details_show_times_as_the_axis_does(tl: Timeline, sample: nw.Profile) -> None:
    # Issue 14, bug 9: relative times in readable units first, the raw nanoseconds kept.
    row = int(np.flatnonzero(sample.name_codes() == sample.name_dictionary().index("nc_exec_running"))[0])
    tl.select(row=row)
    fields = dict(EventDetails(tl).event["fields"])
    start = int(sample.array("start_ts")[row])
    rel = start - sample.origin_ts
    assert fields["start"].endswith("from the profile start") and fields["start"].split()[1] in ("ns", "µs", "ms", "s")
    assert abs(float(fields["start"].split()[0]) * {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}[fields["start"].split()[1]]
               - rel) <= 1e-4 * max(rel, 1000)
    assert fields["start_ts (raw ns)"] == str(start)
    assert fields["duration"].split()[1] in ("ns", "µs", "ms", "s")


def test_device_details_name_each_key_once() -> None:
    # Issue 14, bug 9: a device table's own `id` was listed beside the event's id.
    from neuron_widgets.widgets import DeviceTraceViewer

    p = nw.sample_profile()
    v = DeviceTraceViewer(p.device_trace(str(p.device_profiles["device_profile_name"].iloc[0])))
    v.select(row=0)
    ev = EventDetails(v).event
    keys = [k for k, _ in ev["fields"]] + [k for k, _ in ev["args"]]
    assert len(keys) == len(set(keys)), keys


def test_highlight_and_color_by(tl: Timeline, sample: nw.Profile) -> None:
    ev = sample.events
    longest = ev.nlargest(3, "duration_ns")
    rev = tl.revision
    tl.highlight(longest)
    assert tl.revision == rev + 1
    rec = Recorder(tl)
    meta, buffers = rec.ask(type="viewport", t0=0, t1=tl.span[1], width=50, tracks=None, grouping="default")
    cols = columns(meta, buffers)
    assert set(cols["row"][(cols["flags"] & wire.FLAG_HIGHLIGHT) > 0].tolist()) == set(longest.index.tolist())
    tl.color_by = "trace_event_source"
    meta, buffers = rec.ask(type="viewport", t0=0, t1=tl.span[1], width=50, tracks=None, grouping="default")
    cols = columns(meta, buffers)
    keys = meta["color_keys"]
    src = sample.column("trace_event_source").to_pylist()
    assert all(keys[c] == src[r] for c, r in zip(cols["color"], cols["row"], strict=True))
    tl.color_by = "model_id"  # an argument key, not a column
    assert tl._color is not None


def test_counters_replies_are_bounded(tl: Timeline) -> None:
    kinds = {s["kind"] for s in tl.counters}
    assert {"memory", "hbm", "cpu"} <= kinds
    rec = Recorder(tl)
    keys = [s["key"] for s in tl.counters]
    meta, buffers = rec.ask(type="counters", keys=keys, t0=0, t1=tl.span[1], width=4)
    assert len(buffers) == 2 * len(keys)
    assert all(s["n"] <= 2 * 4 + 2 for s in meta["series"])
    hbm = next(s["key"] for s in tl.counters if s["kind"] == "hbm")
    at, _ = rec.ask(type="counter_at", key=hbm, t=tl.span[1] / 2)
    assert at["value"] > 0 and at["breakdown"] and all(v > 0 for v in at["breakdown"].values())


def test_bad_requests_answer_with_an_error_not_a_crash(tl: Timeline) -> None:
    rec = Recorder(tl)
    meta, _ = rec.ask(type="viewport", t0=10, t1=5, width=100, tracks=[10_000], grouping="default")
    assert meta["type"] == "error" and "track" in meta["message"]
    assert "IndexError" in tl.error


def test_markup_in_names_stays_text(tmp_path) -> None:
    evil = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>'
    path = tmp_path / "evil.json"
    event = {"ph": "X", "name": evil, "ts": 1, "dur": 5, "pid": 1, "tid": 1, "args": {"k": evil}}
    path.write_text(json.dumps({"traceEvents": [event]}))
    p = nw.load_profile(path)
    tl = Timeline(p)
    tl.selected_row = 0
    d = EventDetails(tl)
    assert d.event["title"] == evil and ["k", evil] in d.event["args"]


def test_kineto_trace_in_a_timeline() -> None:
    p = nw.load_profile(trace("hta/trace_diff_control_rank3of8.json.gz"))
    tl = Timeline(p, grouping="thread")
    rec = Recorder(tl)
    meta, buffers = rec.ask(type="viewport", t0=0, t1=tl.span[1], width=1920, tracks=list(range(len(tl.tracks))),
                            grouping="thread")
    cols = columns(meta, buffers)
    lanes = sum(t["lanes"] for t in tl.tracks)
    assert 0 < meta["n"] <= 2 * 1920 * lanes + lanes + wire.MAX_MARKERS
    assert cols["count"].sum() <= len(p) + meta["markers"]


def test_the_browsers_snapshot_comes_as_a_buffer_and_is_kept() -> None:
    """ipywidgets hands a binary state back as a memoryview: the Timeline keeps it as bytes (a Bytes trait alone
    refused it, and every snapshot the view saved raised a TraitError in the kernel)."""
    import neuron_widgets as nw
    from neuron_widgets.widgets import Timeline

    tl = Timeline(nw.sample_profile())
    tl.set_state({"_snapshot": memoryview(b"\x89PNG pixels")})
    assert tl._snapshot == b"\x89PNG pixels"
