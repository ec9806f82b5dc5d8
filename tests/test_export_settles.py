"""An export taken while the widgets still compute something in their threads waits for it.

The findings and critical path a timeline computes; the bandwidth tracks (they wait for a first view);
a Summary's results for a range brushed a moment ago; a drill-down still loading. And a critical path
computing when the grouping changed is drawn on the new grouping's tracks, not the old one's."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_export import Export

import neuron_widgets as nw
import neuron_widgets.widgets.device_viewer as viewer_module
import neuron_widgets.widgets.timeline as timeline_module
from neuron_widgets import export as export_mod
from neuron_widgets.export import export_html
from neuron_widgets.model.counter_series import counter_series
from neuron_widgets.widgets import DeviceTraceViewer, Summary, Timeline


def test_an_export_right_after_asking_for_findings_carries_their_marks(tmp_path: Path) -> None:
    tl = Timeline(nw.sample_profile("kineto"), findings=True, critical_path=True)
    assert tl.findings_info.get("state") in {"computing", None, ""} or tl.findings_info == {}
    export_html(tmp_path / "now.html", tl, time_range="all")
    state = Export(tmp_path / "now.html").json("t0:meta")["state"]
    assert tl.findings_info["state"] == "shown"
    assert state["findings"]["marks"] and state["findings"]["marks"] == tl.findings_info["marks"]
    assert state["critical"]["text"] == tl.critical_info["text"]


def test_an_export_that_cannot_wait_says_what_it_leaves_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neuron_widgets import analysis

    release = threading.Event()

    def stuck(x: object) -> object:  # findings that take longer than the export will wait
        release.wait(60)
        raise RuntimeError("released")

    monkeypatch.setattr(analysis, "findings", stuck)
    monkeypatch.setattr(export_mod, "SETTLE_S", 0.3)
    tl = Timeline(nw.sample_profile("kineto"))
    tl.findings = True
    try:
        with pytest.warns(UserWarning, match="findings still computing"):
            export_html(tmp_path / "late.html", tl, time_range="all")
        assert "findings" not in Export(tmp_path / "late.html").json("t0:meta")["state"]
    finally:
        release.set()


def test_an_export_right_after_the_timeline_has_the_bandwidth_tracks(tmp_path: Path, sample: nw.Profile) -> None:
    want = [s["key"] for s in counter_series(sample).series]
    assert any(s["kind"] == "bandwidth" for s in counter_series(sample).series)
    Timeline(sample).to_html(tmp_path / "t.html", time_range="all")
    got = [c["key"] for c in Export(tmp_path / "t.html").json("t0:meta")["counters"]]
    assert got == want


def test_a_summary_exported_right_after_a_brush_is_the_brushed_ranges(tmp_path: Path, sample: nw.Profile) -> None:
    tl = Timeline(sample)
    s = Summary(tl)
    assert s.done.wait(120)
    a = sample.start_ts + (sample.end_ts - sample.start_ts) // 4
    window = (a, a + (sample.end_ts - sample.start_ts) // 10)
    tl.brush_range = window
    s.to_html(tmp_path / "s.html")  # before the debounce has even started the range's analyses
    assert s.done.is_set() and s.results["window"] == window
    item = json.dumps(Export(tmp_path / "s.html").json("summary0"))
    assert "(the timeline&#x27;s brushed range)" in item or "(the timeline's brushed range)" in item


def test_a_viewer_exported_right_after_a_click_shows_the_trace_loaded(tmp_path: Path, sample: nw.Profile,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    real = viewer_module._fetch

    def slow(*args: Any) -> Any:
        time.sleep(0.5)  # a large device profile takes this long to read
        return real(*args)

    monkeypatch.setattr(viewer_module, "_fetch", slow)
    tl = Timeline(sample)
    v = DeviceTraceViewer(tl)
    rows = np.flatnonzero(sample.name_codes() == sample.name_dictionary().index("nc_exec_running"))
    tl.select(row=int(rows[0]))
    v.to_html(tmp_path / "d.html", time_range="all")
    state = Export(tmp_path / "d.html").json("t0:meta")["state"]
    assert state["title"].startswith("Device trace ") and state["strip"] and state["hierarchy"]["rows"]
    assert state["title"] == v.title and not v.loading


def test_a_grouping_changed_while_the_path_computes_shows_that_groupings_path(sample: nw.Profile,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    real = timeline_module.critical_shown
    started: list[str] = []

    def slow(profile: nw.Profile, grouping: str) -> Any:
        started.append(grouping)
        time.sleep(0.5 if len(started) == 1 else 0.0)  # the first (old grouping's) ends last
        return real(profile, grouping)

    monkeypatch.setattr(timeline_module, "critical_shown", slow)
    tl = Timeline(sample)
    tl.critical_path = True
    other = next(g for g in sample.groupings if g != tl.grouping and
                 real(sample, g).jumps != real(sample, tl.grouping).jumps)
    tl.grouping = other
    deadline = time.monotonic() + 60
    while (len(started) < 2 or tl.critical_info.get("state") == "computing") and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.6)  # the old grouping's computation has ended too: its result must not replace this one
    assert started == [started[0], other]
    assert tl.critical_info["jumps"] == real(sample, other).jumps
