"""An export taken while the timeline still computes its findings or critical path waits for them."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_export import Export

import neuron_widgets as nw
from neuron_widgets import export as export_mod
from neuron_widgets.export import export_html
from neuron_widgets.widgets import Timeline


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
