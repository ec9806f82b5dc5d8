"""The Summary: charts built from the analyses, the widget's progressive compute, brush, clicks, export, safety."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from bokeh.models import ColumnDataSource, DataTable, Div
from conftest import trace as real_trace
from conftest import trace_files

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.summary import SummaryCharts, apply_theme
from neuron_widgets.summary import data as D
from neuron_widgets.summary.data import duration, short_label, unique_labels
from neuron_widgets.widgets import Summary, Timeline

EVIL = '<img src=x onerror="window.__pwned=1"><b>bold</b>'


def source(fig) -> ColumnDataSource:
    return fig.select_one({"type": ColumnDataSource})


def click(src: ColumnDataSource, i: int) -> None:
    """What jupyter_bokeh does when the browser selects: set the indices and run the on_change callbacks."""
    old = list(src.selected.indices)
    src.selected.indices = [i]
    for cb in src.selected._callbacks.get("indices", []):
        cb("indices", old, [i])


@pytest.fixture()
def summary(sample: nw.Profile):
    tl = Timeline(sample)
    s = Summary(tl)
    assert s.done.wait(60)
    return tl, s


def test_charts_hold_the_analyses(sample: nw.Profile) -> None:
    r = A.all_analyses(sample)
    c = SummaryCharts(sample, r)
    t = source(c.temporal).data
    # Worst first: the least compute share on top of the list.
    assert len(t["device"]) == 8 and t["compute_pctg"] == sorted(t["compute_pctg"])
    assert {round(sum(x), 1) for x in zip(t["compute_pctg"], t["collective_pctg"], t["barrier_pctg"], t["idle_pctg"],
                                          strict=True)} == {100.0}
    st = source(c.stragglers).data
    assert st["times_last"][0] == r["stragglers"]["times_last"].iloc[0]
    assert st["device"][0] in c.head.children[1].text  # the bottleneck sentence names the straggler
    assert len(c.problems.source.data["kind"]) == len(r["problems"]) == 3
    assert source(c.top_a).data["full"] == ["neff_fwd_5c1f9a77", "neff_bwd_9e02d4b1"]
    # Each clickable row knows its event, and it is an event of this profile.
    for ids in (t["event_id"], st["event_id"], c.problems.source.data["event_id"]):
        assert all(sample.event(int(i))["id"] == int(i) for i in ids if i)
    cards = [d.text for d in c.head.children[0].children]
    assert cards[0] == f"Span\n{duration(sample.duration_ns)}" and cards[4] == "Errors\n2" and cards[5] == "Hangs\n1"


def test_kineto_charts_and_labels() -> None:
    p = nw.load_profile(trace_files("param-dlrm-8rank"))
    c = SummaryCharts(p, A.all_analyses(p))
    t = source(c.temporal).data
    assert sorted(t["device"]) == sorted(f"rank{i}/GPU {i}" for i in range(8))  # each rank's GPU as the Timeline has it
    top = source(c.top_a).data
    assert all(len(lab) <= 40 for lab in top["label"]) and len(set(top["label"])) == len(top["label"])
    assert any("ncclKernel" in f for f in top["full"])
    assert short_label("void at::native::vectorized_elementwise_kernel<4, at::native::Foo<float> >(int, float)", 60) == \
        "at::native::vectorized_elementwise_kernel"
    assert short_label("x" * 80) == "x" * 23 + "…" + "x" * 16  # the middle goes: head and tail both read
    assert unique_labels(["f(int)", "f(float)"]) == ["f", "f #2"]
    types = source(c.top_b).data["label"]
    assert "COMPUTATION overlapping COMMUNICATION" in types


def test_widget_fills_in_and_clicks_reach_the_timeline(summary) -> None:
    tl, s = summary
    assert "Summarised: the whole profile" in s.status.value
    assert s.results["problems"].shape[0] == 3
    # An error row selects its event.
    click(s.charts.problems.source, 0)
    assert tl.selection["name"] == "nrt_execute" and tl.selection["args"]["ret"] == 1003
    # A core's bar highlights all its executions and selects its longest.
    click(source(s.charts.temporal), 0)
    assert tl.selection["name"] == "nc_exec_running"
    assert tl._marked["highlight"].size == 132
    # A straggler's bar selects its barrier at its worst step.
    click(source(s.charts.stragglers), 0)
    assert tl.selection["name"] == "cc_exec_barrier"
    # A NEFF's bar highlights its executions.
    top = source(s.charts.top_a)
    click(top, top.data["full"].index("neff_fwd_5c1f9a77"))
    assert tl._marked["highlight"].size == 528 and tl.selection["args"]["model_name"] == "neff_fwd_5c1f9a77"
    # A step moves the view to it.
    steps = source(s.charts.steps)
    click(steps, 4)
    origin = tl.profile.origin_ts
    assert tl.time_range == (origin + int(steps.data["t0"][4]), origin + int(steps.data["t1"][4]))
    # An empty selection (the widget resets it on update) does nothing.
    before = tl.selected_row
    s.charts.problems.source.selected.indices = []
    for cb in s.charts.problems.source.selected._callbacks["indices"]:
        cb("indices", [0], [])
    assert tl.selected_row == before


def test_brush_summarises_the_range_newest_wins(summary) -> None:
    tl, s = summary
    for a, b in (("1ms", "20ms"), ("5ms", "30ms"), ("20ms", "60ms")):
        tl.brush_range = (a, b)
    time.sleep(0.5)
    assert s.done.wait(30)
    assert "20 ms to 60 ms" in s.status.value and "brushed range" in s.status.value
    # Said under the headline too, with how to see the whole (issue 35 item 7: the cards alone read as the whole).
    assert "brushed range (20 ms to 60 ms)" in s.charts.head.children[2].text
    t = s.results["temporal"]
    assert (t["span_ns"] < 41_000_000).all()  # the range, not the whole profile
    assert s.charts.head.children[0].children[1].text != f"Events\n{len(tl.profile):,}"
    tl.brush_range = None
    time.sleep(0.5)
    assert s.done.wait(30)
    assert "the whole profile" in s.status.value


def test_summary_of_a_profile_alone_and_compared(sample: nw.Profile, tmp_path: Path) -> None:
    s = Summary(sample, compare=sample.filter(time_range=("0ms", "40ms")))
    assert s.done.wait(60) and s.timeline is None
    click(s.charts.problems.source, 0)  # no timeline: nothing to select, no error
    table = s.charts.compare.source.data
    assert table["key"][0] == "train_step" or table["key"]
    assert s.charts.compare_temporal is not None
    got = s.to_html(tmp_path / "alone.html")
    html = (tmp_path / "alone.html").read_text(encoding="utf-8")
    assert got["timelines"] == [] and "Bokeh" in html


def test_theme_probe_recolours_the_canvas_text(summary) -> None:
    _, s = summary
    axis = s.charts.temporal.xaxis[0]
    assert axis.major_label_text_color == "#57606a"
    s.probe.dark = True
    assert axis.major_label_text_color == "#9da7b3" and s.charts.temporal.title.text_color == "#e6edf3"
    s.probe.dark = False
    assert axis.major_label_text_color == "#57606a"
    apply_theme(s.charts.layout, True)  # usable alone on any chart
    assert s.charts.steps.yaxis[0].major_label_text_color == "#9da7b3"


def test_profile_text_stays_text(tmp_path: Path) -> None:
    events = []
    for i in range(20):
        for nc in (0, 1):
            events.append({"ph": "X", "name": "nc_exec_running", "ts": 100 * i + 3 * nc, "dur": 60, "pid": 1, "tid": nc,
                           "args": {"nc": nc, "exec_id": i, "model_name": EVIL}})
    # An error by its own word (an error argument), with hostile text in its name.
    events.append({"ph": "i", "name": f"{EVIL} error", "ts": 55, "pid": 1, "tid": 0, "args": {"nc": 0, "error": "assert"}})
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"traceEvents": events, "hostname": EVIL}))
    p = nw.load_profile(path)
    c = SummaryCharts(p, A.all_analyses(p))
    for div in c.layout.select({"type": Div}):
        assert div.render_as_text, div.name
    for table in c.layout.select({"type": DataTable}):
        assert all(type(col.formatter).__name__ in ("StringFormatter", "NumberFormatter") for col in table.columns)
    assert any(EVIL in n for n in c.problems.source.data["name"])
    assert any(EVIL in d for d in c.problems.source.data["device"])  # the host name, as text
    tl = Timeline(p)
    s = Summary(tl)
    assert s.done.wait(60)
    out = tmp_path / "evil.html"
    s.to_html(out)
    page = out.read_text(encoding="utf-8")
    # The profile's markup is nowhere in the file as such: only inside the compressed data.
    assert EVIL not in page and "<b>bold" not in page
    visible = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)
    assert "<img" not in visible


def test_export_carries_the_summary_and_its_size(sample: nw.Profile, tmp_path: Path) -> None:
    from neuron_widgets.export import export_html

    tl = Timeline(sample)
    plain = export_html(tmp_path / "plain.html", tl, time_range="all")
    s = Summary(tl)
    assert s.done.wait(60)
    both = export_html(tmp_path / "both.html", tl, s, time_range="all")
    html = (tmp_path / "both.html").read_text(encoding="utf-8")
    assert "Bokeh" in html and html.count("<script>") >= 4
    assert 1.5e6 < both["bytes"] - plain["bytes"] < 3.0e6  # BokehJS and the charts' data
    assert both["bytes"] <= 25e6
    with pytest.raises(TypeError, match="Summary takes"):
        Summary(42)


@pytest.mark.parametrize("trace, kind, hidden", [
    ("hta/nccl_data.json.gz", "kineto", {"stragglers"}),
    ("catapult/big_trace.json", "chrome", {"idle", "stragglers"}),
])
def test_the_summary_draws_what_the_trace_holds(trace: str, kind: str, hidden: set[str]) -> None:
    """Issue 23 item 2: a Kineto trace no longer crashes; a plain trace gets thread and event charts, no NEFFs."""
    path = real_trace(trace)
    s = Summary(nw.load_profile(path))
    assert s.done.wait(60)
    assert "Could not summarise" not in s.status.value and s.kind == kind
    c = s.charts
    assert {n for n, f in (("idle", c.idle), ("stragglers", c.stragglers)) if not f.visible} == hidden
    sentence = c.head.children[1].text
    assert ("Stragglers need the traces of several ranks" in sentence) == (kind == "kineto")
    assert ("plain trace" in sentence) == (kind == "chrome")
    assert "NEFF" not in c.top_a.title.text and len(source(c.top_a).data["label"]) > 0
    assert len(source(c.temporal).data["device"]) > 0
    if kind == "chrome":
        assert c.top_b.title.text.startswith("Top events by self time")
        assert c.longest is not None and len(c.longest.source.data["name"]) == 20
        assert c.head.children[0].children[2].text.startswith("Threads")
    assert (c.launches is not None) == (kind == "kineto")


def test_a_summary_never_waits_for_a_view_in_a_kernel(sample: nw.Profile, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 item 6: inside a kernel, a Summary nobody displays (an export's) is done at once, not after 10 s a step."""
    import IPython

    class Shell:
        kernel = object()

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    started = time.perf_counter()
    s = Summary(sample)
    assert s.done.wait(30)
    assert time.perf_counter() - started < 8, "the Summary waited for a browser view"


def test_device_traces_get_their_own_summary(sample: nw.Profile, tmp_path) -> None:
    """Issue 23 items 2 and 5: a device trace's Summary shows engines, DMA queues, layers; analyses say what to use."""
    from neuron_widgets.analysis import device_breakdown as DA
    from neuron_widgets.export import export_html
    from neuron_widgets.widgets import DeviceTraceViewer

    viewer = DeviceTraceViewer(sample.device_trace(sample.device_profiles.iloc[0]["device_profile_name"]))
    s = Summary(viewer)
    assert s.done.wait(30) and s.kind == "device"
    c = s.charts
    engines = source(c.engines).data
    assert engines["engine"][:2] == ["Tensor", "TensorMatrix"] and len(engines["engine"]) == 6
    # Running is each engine's active share and waiting its semaphore waits, as engine_time says.
    et = DA.engine_time(viewer.device_trace).set_index("engine")
    for e, run, wait in zip(engines["engine"], engines["running"], engines["waiting"], strict=True):
        assert (run, wait) == (pytest.approx(100 * et.loc[e, "share"]), pytest.approx(100 * et.loc[e, "wait_share"]))
    assert source(c.engines).data["waiting"][-1] > 0  # the Sync engine's semaphore waits
    layers = source(c.layers).data
    # A layer by its path in the hierarchy (one name for one node: issue 35.2), its own engine time on the bar.
    assert layers["label"][0] == "/model/layers.0/mlp" and all(b > a for a, b in zip(layers["t0"], layers["t1"],
                                                                                 strict=True))
    assert len(source(c.dma).data["queue"]) == 15 and "Compute-bound" in c.sentence.text
    # A click on a layer fits the viewer to it.
    source(c.layers).selected.indices = [0]
    origin = viewer.profile.origin_ts
    assert viewer.time_range == (origin + layers["t0"][0], origin + layers["t1"][0])
    # The viewer shows another trace: the Summary follows it.
    viewer.show(sample.device_trace(sample.device_profiles.iloc[1]["device_profile_name"]))
    assert s.device_trace is viewer.device_trace and "neuron_profile_002" in s.status.value
    html = export_html(tmp_path / "device.html", viewer, s)
    assert html["bytes"] > 0 and "nw-device-layers" in (tmp_path / "device.html").read_text()
    with pytest.raises(TypeError, match="is a device trace"):
        A.temporal_breakdown(viewer.profile)


def test_a_device_summary_told_of_two_traces_out_of_order_shows_the_newer(sample: nw.Profile,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Two drill-downs' loads tell the Summary in turn; the older one's charts, done later, must not win."""
    import threading

    import neuron_widgets.widgets.summary as summary_module
    from neuron_widgets.widgets import DeviceTraceViewer

    names = sample.device_profiles["device_profile_name"]
    a, b = sample.device_trace(names.iloc[0]), sample.device_trace(names.iloc[1])
    viewer = DeviceTraceViewer(sample.device_trace(names.iloc[2]))
    s = Summary(viewer)
    assert s.done.wait(30)
    real, started = summary_module.device_breakdown, threading.Event()

    def slow(trace: nw.DeviceTrace) -> dict:
        if trace is a:
            started.set()
            time.sleep(0.8)
        return real(trace)

    monkeypatch.setattr(summary_module, "device_breakdown", slow)
    older = threading.Thread(target=s._show_device, args=(a,))
    older.start()
    assert started.wait(30)
    s._show_device(b)
    older.join(30)
    assert s.done.wait(30) and s.device_trace is b and "neuron_profile_002" in s.status.value


def test_the_kineto_sample_summary_names_the_late_rank() -> None:
    """The packaged Kineto sample (no trace files needed): two ranks, rank 0 late at the all-reduce."""
    p = nw.sample_profile("kineto")
    s = Summary(p)
    assert s.done.wait(60) and s.kind == "kineto" and s.ranks == 2
    c = s.charts
    # A rank named as the Timeline labels its GPU (and a stream as its track), as findings name it.
    tracks = set(p.tracks("default")["label"])
    assert c.stragglers.visible and source(c.stragglers).data["device"][0] == "rank0/GPU 0"
    assert "rank0/GPU 0 arrives last at 4 of 5 collectives" in c.head.children[1].text
    assert sorted(source(c.temporal).data["device"]) == ["rank0/GPU 0", "rank1/GPU 1"]
    assert set(source(c.idle).data["device"]) <= tracks
    assert any("ncclDevKernel_AllReduce" in f for f in source(c.top_a).data["full"])
    # Launch delays per rank and stream, as HTA's launch statistics give them.
    launches = source(c.launches).data
    assert sorted(launches["device"]) == ["rank0/GPU 0/stream 20", "rank0/GPU 0/stream 7", "rank1/GPU 1/stream 20",
                                          "rank1/GPU 1/stream 7"]
    assert set(launches["device"]) <= tracks
    ls = A.launch_stats(p)
    mine = ls[(ls["rank"] == 1) & (ls["stream"] == 7)]["launch_delay_ns"]
    i = launches["device"].index("rank1/GPU 1/stream 7")
    assert launches["median_us"][i] == pytest.approx(mine.median() / 1e3) and launches["launches"][i] == len(mine)
    assert all(a <= b for a, b in zip(launches["median_us"], launches["max_us"], strict=True))
    # Idle is said in the trace's words: kernels, not executions.
    import pandas as pd

    idle = {"temporal": pd.DataFrame({"span_ns": [100], "idle_time_ns": [50]}),
            "idle": pd.DataFrame({"idle_category": ["host_wait"], "idle_time_ns": [50]})}
    sentence = D.bottleneck({"kind": "kineto", **idle}, stragglers=False)
    assert "launch the next kernel" in sentence and "execution" not in sentence
    assert "launch the next execution" in D.bottleneck({"kind": "neuron", **idle})
    # No problem: the table says so; what was summarised is said once (the status line), not twice.
    assert c.problems.source.data["kind"] == ["none found"] and c.problems.source.data["event_id"] == [""]
    assert "Summarised" in s.status.value and c.head.children[2].text == ""
    # Before the search has run, the table does not claim there is nothing (it said "none found").
    from neuron_widgets.summary import SummaryCharts

    early = SummaryCharts(s.profile, None)
    assert early.problems.source.data["kind"] == ["looking…"]
    early.update({"problems": pd.DataFrame()}, parts=("problems",))
    assert early.problems.source.data["kind"] == ["none found"]
    with pytest.raises(ValueError, match="kind must be"):
        nw.sample_profile("gpu")


def test_memory_chart_names_each_line_in_a_legend() -> None:
    from bokeh.models import GlyphRenderer

    from neuron_widgets.summary.charts import counters_chart

    p = nw.sample_profile()
    f = counters_chart(p)
    labels = [item.label.value for item in f.legend[0].items]
    instances = sorted(p.host_memory["instance_id"].astype(str).unique())
    hbm = p.hbm_usage[["instance_id", "device_idx"]].drop_duplicates()
    assert labels[:len(instances)] == [f"host memory {i}" for i in instances]
    assert sorted(labels[len(instances):]) == sorted(f"HBM {i} device {d}" for i, d in hbm.itertuples(index=False))
    lines = f.select({"type": GlyphRenderer})
    assert len(lines) == len(labels) and f.legend[0].click_policy == "hide"
    # Every line has its own colour, so the legend tells them apart.
    assert len({r.glyph.line_color for r in lines}) == len(lines)


def test_tables_do_not_ask_for_jquery_ui() -> None:
    # Column reordering needs jquery-ui, which the page does not have: BokehJS warned on every table.
    from neuron_widgets.summary import build

    c = build.SummaryCharts(nw.sample_profile(), A.all_analyses(nw.sample_profile()))
    tables = list(c.layout.select({"type": DataTable}))
    assert tables and all(t.reorderable is False for t in tables)


def test_no_empty_charts(tmp_path: Path) -> None:
    """Issue 35 item 5: a Kineto trace without launch calls gets no launch chart; a one-rank Kineto Summary
    rebuilt for an export (from its results) hides the straggler charts as the widget does."""
    import summary_traces as T

    s = Summary(nw.load_profile(T.kineto_without_launches(tmp_path / "mtia.json"), cache=False))
    assert s.done.wait(60) and s.kind == "kineto"
    assert not s.charts.launches.visible and not s.charts._rows[id(s.charts.launches)].visible
    one = Summary(nw.load_profile(real_trace("hta/nccl_data.json.gz")))
    assert one.done.wait(60) and one.ranks == 1
    assert one.charts.launches.visible
    exported = SummaryCharts(one.profile, one.results)  # as export_html rebuilds it
    assert not exported.stragglers.visible and not exported.steps.visible and exported.launches.visible
    assert exported.stragglers not in [c for r in exported.layout.children for c in getattr(r, "children", [])]


def test_tables_hold_eight_rows_of_wrapped_text(summary) -> None:
    """Issue 35 item 8: rows of three wrapped lines, eight of them before a table scrolls."""
    from neuron_widgets.summary import charts as C

    _, s = summary
    t = s.charts.problems
    assert t.row_height >= 45 and t.height == C.table_height(3) == C.HEADER_PX + 3 * t.row_height + 4
    assert C.table_height(40) == C.HEADER_PX + 8 * C.ROW_PX + 4
    css = t.stylesheets[0].css
    assert "white-space: normal" in css and "overflow-wrap: anywhere" in css


def test_a_brushed_range_says_so_and_what_the_whole_holds(sample: nw.Profile) -> None:
    """Issue 35 item 7: a Summary made after a brush (the tour's order) never reads as the whole profile."""
    tl = Timeline(sample)
    tl.time_range = ("20ms", "45ms")
    tl.brush_range = ("25ms", "30ms")
    s = Summary(tl)
    assert s.done.wait(60)
    cards = {d.text.split("\n")[0]: d.text.split("\n")[1] for d in s.charts.head.children[0].children}
    whole = A.errors_and_hangs(sample)
    errors, hangs = int((whole["kind"] == "error").sum()), int((whole["kind"] == "hang").sum())
    assert (errors, hangs) == (2, 1)
    ranged = A.errors_and_hangs(sample.filter(time_range=tl.brush_range))
    in_range = int((ranged["kind"] == "error").sum())
    assert cards["Errors"] == (f"{in_range} of 2" if in_range != 2 else "2")
    note = s.charts.head.children[2].text
    assert "brushed range" in note and "which has 2 errors and 1 hang." in note and "tl.brush_range = None" in note
    tl.brush_range = None  # the whole again: no note, plain counts
    deadline = time.time() + 30
    while time.time() < deadline and s.charts.head.children[2].text:
        time.sleep(0.1)
    assert s.done.wait(60)
    cards = {d.text.split("\n")[0]: d.text.split("\n")[1] for d in s.charts.head.children[0].children}
    assert (cards["Errors"], cards["Hangs"]) == ("2", "1") and s.charts.head.children[2].text == ""


def test_charts_with_nothing_in_a_brushed_range_are_left_out(summary) -> None:
    """Issue 35 item 5: a brushed range without collectives shows no empty straggler frames; the whole again
    shows them."""
    tl, s = summary
    assert s.charts.stragglers.visible and s.charts._rows[id(s.charts.stragglers)].visible
    tl.brush_range = ("0ms", "0.2ms")
    deadline = time.time() + 30
    while time.time() < deadline and not ("brushed range" in s.status.value and "Summarised" in s.status.value):
        time.sleep(0.1)
    assert s.done.wait(30) and s.results["straggler_steps"].empty
    assert not s.charts.stragglers.visible and not s.charts.steps.visible
    assert not s.charts._rows[id(s.charts.stragglers)].visible
    idle = s.results["idle"]
    assert s.charts.idle.visible == bool(len(idle) and idle["idle_time_ns"].sum() > 0)  # no bars of zero
    tl.brush_range = None
    deadline = time.time() + 30
    while time.time() < deadline and not s.charts.stragglers.visible:
        time.sleep(0.1)
    assert s.done.wait(30) and s.charts.stragglers.visible and s.charts.steps.visible
