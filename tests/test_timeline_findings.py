"""Issue 38: the Timeline's findings toggle marks each finding's range on the overview strip, in the export too."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from random_neuron import random_profile
from test_export import Export

import neuron_widgets as nw
from neuron_widgets.analysis import findings
from neuron_widgets.export import export_html
from neuron_widgets.sample.job import write_job
from neuron_widgets.widgets import Timeline
from neuron_widgets.widgets.finding_marks import MAX_MARKS

EVIL = "<img src=x onerror=alert(1)>"
KINETO = Path(__file__).parent / "data" / "traces" / "hta" / "nccl_data.json.gz"  # GPU idle, low overlap


def wait_findings(tl: Timeline, timeout: float = 120) -> str:
    """The toggle's state once the background computation has answered (polled, never a guessed delay)."""
    end = time.monotonic() + timeout
    while tl.findings_info.get("state") == "computing" and time.monotonic() < end:
        time.sleep(0.02)
    return str(tl.findings_info.get("state", ""))


def reference_marks(found: pd.DataFrame, origin: int, spans: dict[str, tuple[int, int]] | None = None) -> list[dict]:
    """Slowly, row by row: a finding's range from the origin, cut to its part's span, or all of it where it has none."""
    out = []
    for i in range(len(found)):
        r = found.iloc[i]
        a, b = r["start_ts"], r["end_ts"]
        missing = a is None or b is None or (isinstance(a, float) and math.isnan(a)) or \
            (isinstance(b, float) and math.isnan(b))
        if missing and spans and r["part"] in spans:
            a, b = spans[r["part"]]
        elif missing:
            continue
        a, b = int(a), max(int(b), int(a))
        if spans and r["part"] in spans:
            lo, hi = spans[r["part"]]
            if a <= hi and b >= lo:
                a, b = max(a, lo), min(b, hi)
        gain = None if pd.isna(r["gain_ns"]) else float(r["gain_ns"])
        out.append({"t0": float(a - origin), "t1": float(b - origin),
                    "severity": r["severity"], "rule": r["rule"], "title": r["title"], "gain_ns": gain,
                    "part": r["part"] if isinstance(r["part"], str) else None})
    return out


def evil_trace(path: Path) -> Path:
    """A plain Chrome trace with two errors, one named to run script if it were ever read as HTML."""
    ev: list[dict[str, Any]] = [{"name": "work", "ph": "X", "ts": i * 100, "dur": 50, "pid": 1, "tid": 1}
                                for i in range(400)]
    ev.append({"name": EVIL, "ph": "X", "ts": 12_000, "dur": 3000, "pid": 1, "tid": 2, "args": {"error": "boom"}})
    ev.append({"name": "late", "ph": "X", "ts": 30_000, "dur": 500, "pid": 1, "tid": 3, "args": {"error": "late"}})
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def shown(tl: Timeline) -> list[dict]:
    tl.findings = True
    assert wait_findings(tl) == "shown", tl.findings_info
    return tl.findings_info["marks"]


def test_marks_are_the_findings_ranges_on_the_sample(sample: nw.Profile) -> None:
    tl = Timeline(sample)
    assert tl.findings_available and tl.findings_info == {}
    marks = shown(tl)
    found = findings(sample)
    assert len(found) >= 3 and {"high", "low"} <= set(found["severity"])
    assert marks == reference_marks(found, sample.origin_ts)
    assert [m["rule"] for m in marks] == found["rule"].tolist()  # in the findings' order: by gain
    assert tl.findings_info["text"].startswith(f"{len(marks)} findings marked (")
    # Off: the marks go, and the user's own highlight and the critical path are not touched.
    tl.findings = False
    assert tl.findings_info == {}


@pytest.mark.parametrize("seed", range(4))
def test_marks_are_the_findings_ranges_on_random_neuron_profiles(seed: int, tmp_path: Path) -> None:
    p = random_profile(seed, tmp_path)
    tl = Timeline(p)
    marks = shown(tl)
    want = reference_marks(findings(p), p.origin_ts)
    assert marks == want[:MAX_MARKS]
    for m in marks:
        assert m["t1"] >= m["t0"] and m["severity"] in ("high", "medium", "low")


def test_a_plain_chrome_traces_errors_are_marked_with_their_names_as_given(tmp_path: Path) -> None:
    p = nw.load_profile(evil_trace(tmp_path / "evil.json"))
    tl = Timeline(p)
    marks = shown(tl)
    assert marks == reference_marks(findings(p), p.origin_ts)
    evil = [m for m in marks if EVIL in m["title"]]
    # The error's own time (12 ms into the trace, its ts in µs), from the timeline's origin.
    assert len(evil) == 1 and evil[0]["t0"] == 12_000_000 - p.origin_ts
    assert evil[0]["severity"] == "high" and evil[0]["gain_ns"] is None


def test_a_kineto_trace_gets_its_findings_marked() -> None:
    if not KINETO.exists():
        pytest.fail(f"{KINETO} is missing: see tests/data/traces/README.md", pytrace=False)
    p = nw.load_profile(KINETO)
    marks = shown(Timeline(p))
    found = findings(p)
    assert len(found) > 0
    assert marks == reference_marks(found, p.origin_ts)


def test_a_job_timeline_marks_the_jobs_findings_each_on_its_part(tmp_path: Path) -> None:
    job = nw.load_job(write_job(tmp_path / "job", nodes=3, events=6_000, processes=1, cores=2, seed=11),
                      results=tmp_path / "results")
    tl = nw.JobTimeline(job)
    assert tl.summarised.wait(120), tl.status
    marks = shown(tl)
    found = findings(job)
    want = reference_marks(found, tl.profile.origin_ts, tl._spans)
    assert marks == want
    for m in marks:
        if m["part"] is not None:  # on its part's span
            a, b = tl._spans[m["part"]]
            assert a - tl.profile.origin_ts <= m["t0"] <= m["t1"] <= b - tl.profile.origin_ts
    # Opening a part redraws the view on a new clock: the same findings (not computed again), placed anew.
    tl._findings_cache = (tl._findings_cache[0], found)  # what a second computation would have to match
    tl.open_part(tl._order[0])
    assert wait_findings(tl) == "shown"
    assert tl.findings_info["marks"] == reference_marks(found, tl.profile.origin_ts, tl._spans)
    # Its export carries them, on the page's clock (the job view's).
    tl.to_html(tmp_path / "job.html", time_range="all")
    assert Export(tmp_path / "job.html").json("t0:meta")["state"]["findings"]["marks"] == tl.findings_info["marks"]


def test_a_failed_computation_turns_the_toggle_off_and_says_why(sample: nw.Profile) -> None:
    tl = Timeline(sample)

    def broken() -> Any:
        raise RuntimeError("no rules today")

    tl._findings_subject = lambda: (object(), broken, {})  # type: ignore[method-assign]
    tl.findings = True
    end = time.monotonic() + 60
    while tl.findings and time.monotonic() < end:
        time.sleep(0.02)
    assert not tl.findings
    assert tl.findings_info["state"] == "none" and "RuntimeError: no rules today" in tl.findings_info["text"]


def test_the_export_carries_the_marks_and_leaves_them_out_when_off(sample: nw.Profile, tmp_path: Path) -> None:
    tl = Timeline(sample)
    export_html(tmp_path / "off.html", tl, time_range="all")
    state = Export(tmp_path / "off.html").json("t0:meta")["state"]
    assert "findings" not in state and state["findings_available"] is True
    marks = shown(tl)
    export_html(tmp_path / "on.html", tl, time_range="all")
    state = Export(tmp_path / "on.html").json("t0:meta")["state"]
    # The page's clock is the timeline's (ns from the profile's first timestamp): the marks go as they are.
    assert state["findings"] == {"text": tl.findings_info["text"], "marks": marks}


def test_a_device_trace_viewer_does_not_offer_the_toggle_but_marks_its_traces_findings_when_asked(
        tmp_path: Path) -> None:
    from test_device_panel import random_device_trace

    from neuron_widgets.widgets import DeviceTraceViewer

    for seed in (0, 2):
        trace = random_device_trace(seed)
        viewer = DeviceTraceViewer(trace)
        assert viewer.findings_available is False and Timeline(nw.sample_profile()).findings_available is True
        export_html(tmp_path / "device.html", viewer, time_range="all")
        assert Export(tmp_path / "device.html").json("t0:meta")["state"]["findings_available"] is False
        found = findings(trace)
        assert len(found) > 0
        # The viewer's clock is the trace's: its marks are the device rules' ranges from its origin.
        assert shown(viewer) == reference_marks(found, viewer.profile.origin_ts)


def test_findings_asked_at_construction_wait_for_the_first_view(sample: nw.Profile,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The computation starts once the first viewport request is answered, not before (the first paint goes first)."""
    import threading

    from neuron_widgets.widgets import finding_marks

    monkeypatch.setattr(finding_marks, "PAINT_WAIT_S", 600.0)  # no give-up under load: the order is what is tested
    started = threading.Event()
    seen: list[bool] = []

    class Watched(Timeline):
        def _findings_subject(self) -> Any:
            key, compute, spans = super()._findings_subject()

            def recorded() -> pd.DataFrame:
                seen.append(self._painted.is_set())
                started.set()
                return compute()
            return key, recorded, spans

    tl = Watched(sample, findings=True)
    assert tl.findings_info["state"] == "computing"
    tl.send = lambda content, buffers=None: None  # type: ignore[method-assign]
    tl._on_msg(tl, {"type": "viewport", "uuid": "u", "t0": tl.span[0], "t1": tl.span[1], "width": 300}, [])
    assert started.wait(60) and wait_findings(tl) == "shown"
    assert seen == [True]  # computed once, after the view was answered
