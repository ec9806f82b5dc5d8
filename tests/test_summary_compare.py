"""Summary(after, compare=before): the "Did the fix work" section (headline, change per step, findings gone / new /
changed), in the notebook and in the export; profile text stays text."""

from __future__ import annotations

import json

import pytest
from generated_runs import straggler_runs
from random_neuron import write_profile
from schedule_neuron import simulate, span
from test_export import Export
from test_findings import _clean_job

from neuron_widgets import analysis as A
from neuron_widgets.summary.compare import FixSection, comparison_of
from neuron_widgets.widgets import Summary


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return straggler_runs(tmp_path_factory.mktemp("fix-summary"))


def test_the_section_of_a_fixed_straggler(runs) -> None:
    slow, fixed, before, after = runs
    fix = FixSection(before, after)
    c = A.compare(before, after, by="step")
    assert fix.head.text == c.headline and fix.head.render_as_text
    assert fix.result.saved_ns == span(slow) - span(fixed)
    steps = fix.chart.select_one({"name": "nw-fix-steps"}).data
    matched = c.steps[c.steps["status"] == "matched"]
    assert steps["delta_us"] == [d / 1e3 for d in matched["delta_ns"]]
    assert set(steps["color"]) == {"#2ca02c"}  # every step faster
    table = fix.table.source.data
    assert table["status"] == ["gone"] and table["rule"] == ["straggler"]
    assert table["run_saving"][0] and table["predicted"][0] and "arrives last" in table["title"][0]


def test_summary_after_compared_with_before_shows_it_and_exports_it(runs, tmp_path) -> None:
    _, _, before, after = runs
    s = Summary(after, compare=before)
    assert s.done.wait(120)
    fix = s.charts.fix
    assert fix is not None and fix.layout is not None
    names = {m.name for m in s.charts.layout.references() if getattr(m, "name", None)}
    assert {"nw-fix-headline", "nw-fix-steps", "nw-fix-findings-table"} <= names
    assert fix.chart in s.charts.figures  # themed with the rest
    s.probe.dark = True
    assert fix.chart.xaxis[0].major_label_text_color == "#9da7b3"
    out = tmp_path / "fix.html"
    s.to_html(out)
    page = out.read_text(encoding="utf-8")
    # The exported page carries the section, the same comparison (kept, not run again).
    assert comparison_of(before, after) is fix.result
    items = [json.dumps(Export(out).json(k)) for k in Export(out).sections if "summary" in k]
    assert any("nw-fix-steps" in i and "Did the fix work" in i and json.dumps(fix.result.headline) in i
               for i in items), list(Export(out).sections)
    assert "Bokeh" in page


def test_profile_text_in_the_section_is_text(runs, tmp_path) -> None:
    slow, fixed, _, _ = runs
    evil = "<img src=x onerror=alert(1)>"
    rows_b = [{**r, "instance_id": evil} for r in slow]
    rows_a = [{**r, "instance_id": evil} for r in fixed]
    fix = FixSection(write_profile(tmp_path / "b", rows_b), write_profile(tmp_path / "a", rows_a))
    assert fix.head.render_as_text
    table = fix.table.source.data
    assert any(evil in w for w in table["who"])  # the value as it is, drawn by a text formatter
    assert all(type(c.formatter).__name__ == "StringFormatter" for c in fix.table.columns)


def test_profiles_that_cannot_be_compared_leave_a_sentence(runs, tmp_path, monkeypatch) -> None:
    before = runs[2]
    import neuron_widgets.summary.compare as SC

    def broken(*_a, **_k):
        raise RuntimeError("no steps")

    monkeypatch.setattr(SC, "compare_runs", broken)
    fresh = write_profile(tmp_path / "x", runs[1])
    fix = FixSection(before, fresh)
    assert fix.result is None and not fix.chart.visible and not fix.table.visible
    assert "could not be compared step by step: RuntimeError: no steps" in fix.head.text


def test_a_steps_bar_fits_the_timeline_to_that_step_of_the_after_run(runs) -> None:
    from test_summary import click

    from neuron_widgets.widgets import Timeline

    _, _, before, after = runs
    tl = Timeline(after)
    s = Summary(tl, compare=before)
    assert s.done.wait(120)
    steps = s.charts.fix.result.steps
    i = 4
    src = s.charts.fix.chart.select_one({"name": "nw-fix-steps"})
    click(src, i)
    row = steps[steps["status"] == "matched"].iloc[i]
    assert tuple(tl.time_range) == (int(row["start_after_ts"]), int(row["start_after_ts"] + row["duration_after_ns"]))


def test_the_summary_paints_before_the_comparison_which_comes_last(runs, monkeypatch) -> None:
    """The comparison is the Summary's last analysis: when it starts, every other section is in and the section
    says it is comparing; it fills in when it ends. A stand-in for compare blocks until the test releases it."""
    import threading

    import neuron_widgets.summary.compare as SC

    _, _, before, after = runs
    real = SC.compare_runs
    started, release = threading.Event(), threading.Event()
    seen: dict = {}

    def slow(a, b, **kw):
        s = made.get("summary")
        seen["findings"] = s is not None and s.charts.findings.frame is not None
        seen["temporal"] = s is not None and bool(s.charts.sources[id(s.charts.temporal)].data["device"])
        seen["head"] = s.charts.fix.head.text if s is not None else None
        started.set()
        assert release.wait(120)
        return real(a, b, **kw)

    monkeypatch.setattr(SC, "compare_runs", slow)
    monkeypatch.setattr(SC, "_KEPT", __import__("weakref").WeakKeyDictionary())  # not the module's kept result
    made: dict = {}
    s = Summary(after, compare=before)  # returns at once: nothing compares in the constructor
    made["summary"] = s
    assert s.charts.fix.head.text == SC.PENDING and not s.charts.fix.chart.visible
    assert started.wait(120)
    assert seen == {"findings": True, "temporal": True, "head": SC.PENDING}
    assert not s.done.is_set() and s.charts.fix.result is None
    release.set()
    assert s.done.wait(120)
    fix = s.charts.fix
    assert fix.result is not None and fix.head.text.startswith("The run is") and fix.chart.visible
    assert fix.table.source.data["rule"] == ["straggler"]


def test_summary_of_a_profile_refuses_a_job_to_compare(runs, tmp_path) -> None:
    from test_findings import NODES, _write_job

    job = _write_job(_clean_job(on=NODES), tmp_path)
    with pytest.raises(TypeError, match=r"compare two jobs with Summary\(job, compare=other_job\)"):
        Summary(runs[3], compare=job)
    with pytest.raises(TypeError, match=r"takes another Job .* not Profile"):
        Summary(job, compare=runs[2])


def test_summary_of_a_job_compared_with_another(tmp_path) -> None:
    """Summary(job, compare=other_job): the jobs' steps aligned and the straggler that was fixed gone; the section
    comes after the job's charts and goes into the export."""
    import numpy as np
    from test_findings import NODES, _write_job

    job = _clean_job(on=NODES)
    job.compute[:, 7, :] = 150_000
    fixed = job.__class__(**{**job.__dict__, "compute": np.where(np.arange(len(job.cores))[None, :, None] == 7,
                                                                 100_000, job.compute)})
    before, after = _write_job(job, tmp_path / "b"), _write_job(fixed, tmp_path / "a")
    s = Summary(after, compare=before)
    assert s.done.wait(300), s.status.value
    fix = s.charts.fix
    assert fix is not None and fix.result is not None and fix.result is s.results["compare"]
    c = fix.result
    assert c.saved_ns == span(simulate(job)) - span(simulate(fixed)) > 0
    assert (c.steps["status"] == "matched").all() and fix.chart.visible
    gone = c.findings[c.findings["status"] == "gone"]
    assert "job_straggler" in set(gone["rule"])
    assert "job_straggler" in fix.table.source.data["rule"] and fix.head.text == c.headline
    assert "Did the fix work: this job" in fix.parts[0].text
    names = {m.name for m in s.charts.layout.references() if getattr(m, "name", None)}
    assert {"nw-fix-headline", "nw-fix-steps", "nw-fix-findings-table"} <= names
    # The export rebuilds the job's charts from its results: the section with them.
    from neuron_widgets.export import summary_item

    item = json.dumps(summary_item(s))
    assert "nw-fix-steps" in item and json.dumps(c.headline) in item
    # A step's bar opens the first part running then, fitted to the after-job's step (no margin: the step itself).
    from neuron_widgets.widgets.bokeh_host import source_of

    m = c.steps[c.steps["status"] == "matched"].reset_index(drop=True)
    assert s.part_timeline is None
    source_of(fix.chart).selected.indices = [2]
    t0 = int(m["start_after_ts"][2])
    assert s.part_shown == str(after.parts["part"].iloc[0]) and s.part_timeline is not None
    assert s.part_timeline.time_range == (t0, t0 + int(m["duration_after_ns"][2]))


def test_a_job_step_bar_fits_the_job_timeline_it_follows() -> None:
    """Summary(JobTimeline(job), compare=...): a step's bar fits that timeline (origin + the bar's t0 and t1)."""
    from types import SimpleNamespace

    import pandas as pd

    from neuron_widgets.widgets.job.compare import part_at, step_clicked

    tl = SimpleNamespace(time_range=None)
    src = SimpleNamespace(data={"t0": [0.0, 1_500.0], "t1": [1_000.0, 2_250.0]})
    step_clicked(SimpleNamespace(timeline=tl), SimpleNamespace(origin=10_000), src, [1])
    assert tl.time_range == (11_500, 12_250)
    step_clicked(SimpleNamespace(timeline=tl), SimpleNamespace(origin=0), src, [5])  # no such bar: nothing moves
    assert tl.time_range == (11_500, 12_250)
    parts = pd.DataFrame({"part": ["a", "b", "c"], "status": ["left out", "read", "read"],
                          "start_ts": [0, 0, 500], "end_ts": [0, 400, 900]})
    assert part_at(parts, (600, 700)) == "c" and part_at(parts, (100, 200)) == "b" and part_at(parts, (5_000, 6_000)) == "b"
