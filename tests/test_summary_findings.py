"""The Summary's findings lines and critical path: what each shows on generated profiles of each kind (Neuron,
Kineto, plain Chrome, device trace, job), in what order, as text; clicks show where a finding happens."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import numpy as np
import pytest
from bokeh.models import DataTable, Div, StringFormatter
from summary_traces import renderers

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.export import summary_item
from neuron_widgets.summary.findings import TOP, gain_text
from neuron_widgets.widgets import DeviceTraceViewer, JobTimeline, Summary, Timeline

EVIL = "<img src=x onerror=alert(1)>"


def click(src, i: int) -> None:
    """What jupyter_bokeh does when the browser selects a row: set the indices and run the callbacks."""
    old = list(src.selected.indices)
    src.selected.indices = [i]
    for cb in src.selected._callbacks.get("indices", []):
        cb("indices", old, [i])


def toggle(model, active: bool) -> None:
    old = model.active
    model.active = active
    for cb in model._callbacks.get("active", []):
        cb("active", old, active)


def many_findings(path: Path, codes: int = 7, name: str = EVIL) -> Path:
    """Two cores, NC1 late at every collective (a straggler), and `codes` errors of different codes named `name`."""
    ev = []
    for i in range(40):
        for nc in (0, 1):
            ev.append({"ph": "X", "name": "nc_exec_running", "ts": 100 * i + 3 * nc, "dur": 60, "pid": 1, "tid": nc,
                       "args": {"nc": nc, "exec_id": i, "model_name": "neff_a"}})
            ev.append({"ph": "X", "name": "cc_exec_barrier", "ts": 100 * i + 40 + 5 * nc, "dur": 10 - 5 * nc,
                       "pid": 1, "tid": nc, "args": {"nc": nc, "exec_id": i}})
    for k in range(codes):
        ev.append({"ph": "i", "name": name, "ts": 555 + 300 * k, "pid": 1, "tid": 0,
                   "args": {"nc": 0, "error": f"assert {k}", "ret": 1001 + k}})
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def shown(s: Summary) -> dict[str, list]:
    return dict(s.charts.findings.source.data)


def check_lines(s: Summary, expected) -> None:
    """The lines are the findings, in their order; each gain as its title says it; no gain out of order."""
    data = shown(s)
    assert data["finding"] == expected["title"].tolist()
    assert data["severity"] == expected["severity"].tolist()
    gains = expected["gain_ns"].to_numpy(float)
    known = np.isfinite(gains)
    # Largest gain first, the findings without one after (a slow check: pairwise, by hand).
    for a in range(len(gains)):
        for b in range(a + 1, len(gains)):
            assert not (known[b] and not known[a]), "a finding without a gain came before one with it"
            if known[a] and known[b]:
                assert gains[a] >= gains[b]
    for title, gain, text in zip(data["finding"], gains, data["gain"], strict=True):
        if not math.isfinite(gain):
            assert text == "gain not modelled"
            continue
        # The title says what the fix saves ("would save 80.7 ms (61.3% of the run)"): the line says the same.
        said = re.search(r"save (\S+ \S+) \((\d+\.\d)% of the run\)", title)
        assert said, title
        assert text == f"saves ~{said.group(1)} ({said.group(2)}%)", (text, title)


@pytest.fixture(scope="module")
def neuron():
    p = nw.sample_profile()
    tl = Timeline(p)
    s = Summary(tl)
    assert s.done.wait(120), s.status.value
    return p, tl, s


def test_findings_lead_a_neuron_summary_and_clicks_fit_the_timeline(neuron) -> None:
    p, tl, s = neuron
    c = s.charts
    # Findings first under the headline, the critical path next.
    assert c.layout.children[1] is c.findings.layout and c.layout.children[2] is c.critical.layout
    f = A.findings(p)
    check_lines(s, f)
    assert shown(s)["rule"][:2] == ["host_wait", "straggler"]
    assert shown(s)["gain"][0] == "saves ~80.6 ms (61.3%)"  # the hung execution is not scaled (D15)
    assert not c.findings.more.visible and c.findings.filter.indices == list(range(len(f)))
    for i in range(len(f)):
        click(c.findings.source, i)
        a, b = int(f["start_ts"].iloc[i]), int(f["end_ts"].iloc[i])
        assert tl.time_range == ((a, b) if b > a else (a - 10_000, a + 10_000))
    # Times in the page's columns are from the timeline's origin.
    assert shown(s)["t0"][0] == float(int(f["start_ts"].iloc[0]) - p.origin_ts)


def test_the_critical_path_section_holds_the_breakdown_and_the_headline(neuron) -> None:
    p, _, s = neuron
    c = s.charts.critical
    assert c.layout.visible
    head = A.critical_path_headline(p)
    assert c.sentence.text == head["sentence"] + "."
    assert "on the critical path in 117 of 132 steps" in c.sentence.text
    b = A.critical_path_breakdown(p)
    data = c.source.data
    kinds = [k for k in ("compute", "collective", "host", "launch", "gap", "kernel", "memcpy")]
    per_bar = [sum(data[k][i] for k in kinds) for i in range(len(data["worker"]))]
    # Every worker's time is on some bar (the 13th and later share one): the bars add up to the whole path.
    assert sum(per_bar) == pytest.approx(100.0, abs=0.01)
    firsts = b.drop_duplicates(["instance_id", "process_id", "nc_idx", "thread_id"])
    assert per_bar[0] == pytest.approx(float(firsts["worker_share_pct"].iloc[0]))
    assert data["worker"][:2] == ["i-0a88e4da06d80cbd2/PID:2624383/TID:2624400",
                                 "i-0a88e4da06d80cbd2/PID:2624383/neuron_rt/NC:1"]
    # A core is named as its Timeline track (and as findings name it), a host thread as the Thread grouping's
    # track: the track filter finds both.
    assert data["worker"][1] in set(p.tracks("default")["label"])
    assert data["worker"][0] in set(p.tracks("thread")["label"])
    assert data["steps"][1] == "on it in 117 of 132 steps"
    assert data["worker"][-1] == f"{len(firsts) - 12} other workers"
    assert {it.label.value for it in c.legend.items} == {"compute", "collective", "host", "launch", "gap"}


def test_titles_are_text_and_show_all_shows_them_all(tmp_path: Path) -> None:
    p = nw.load_profile(many_findings(tmp_path / "evil.json"))
    tl = Timeline(p)
    s = Summary(tl)
    assert s.done.wait(60), s.status.value
    f = A.findings(p)
    assert len(f) == 8 and f["rule"].tolist() == ["straggler"] + ["error"] * 7
    check_lines(s, f)
    c = s.charts.findings
    assert sum(EVIL in t for t in shown(s)["finding"]) == 7  # the name as written: text, never markup
    assert isinstance(c.table, DataTable) and all(isinstance(col.formatter, StringFormatter) for col in c.table.columns)
    assert all(d.render_as_text for d in s.charts.layout.select({"type": Div}))
    # The top five, and a toggle for the rest (in the notebook; the exported page reads its tags).
    assert c.filter.indices == list(range(TOP)) and c.more.visible and c.more.label == "Show all 8 findings"
    toggle(c.more, True)
    assert c.filter.indices == list(range(8)) and c.more.label == f"Show the top {TOP}"
    assert c.more.tags[0]["true"]["rows"] == 8 and c.more.tags[0]["false"]["rows"] == TOP
    # The seventh finding (an error, an instant) fits the view around its moment.
    click(c.source, 6)
    at = int(f["start_ts"].iloc[6])
    assert tl.time_range == (at - 10_000, at + 10_000)
    toggle(c.more, False)
    assert c.filter.indices == list(range(TOP))
    # The export carries the lines as data, never as markup in the page.
    out = tmp_path / "evil.html"
    s.to_html(out)
    page = out.read_text(encoding="utf-8")
    assert EVIL not in re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)
    item = json.dumps(summary_item(s))
    assert "nw-findings-table" in item and "nw-critical-fig" in item and "Show all 8 findings" in item


def test_each_kind_gets_its_findings_and_a_path_only_where_one_exists(tmp_path: Path) -> None:
    kineto = nw.sample_profile("kineto")
    plain = nw.load_profile(renderers(tmp_path / "renderers.json"))
    instants = tmp_path / "instants.json"
    instants.write_text(json.dumps({"traceEvents": [{"ph": "i", "name": "mark", "ts": 10 * i, "pid": 1, "tid": 1}
                                                    for i in range(20)]}))
    for p, rules in ((kineto, None), (plain, []), (nw.load_profile(instants), [])):
        s = Summary(Timeline(p))
        assert s.done.wait(60), s.status.value
        f = A.findings(p)
        if rules is not None:
            assert f["rule"].tolist() == rules
        if len(f):
            check_lines(s, f)
        else:
            assert shown(s)["finding"] == ["no finding: no rule's threshold was crossed in what is summarised"]
        b = A.critical_path_breakdown(p)
        # A chart only where the path has work to show; never an empty one.
        assert s.charts.critical.layout.visible == (not b.empty)
        assert s.charts.critical.layout.visible == bool(s.charts.critical.source.data["worker"])
    assert {"gpu_idle", "straggler"} <= set(A.findings(kineto)["rule"])


def test_findings_follow_the_brush(neuron) -> None:
    p, tl, s = neuron
    tl.brush_range = ("20ms", "60ms")
    time.sleep(0.5)  # past the debounce: the range's summary has started
    assert s.done.wait(60)
    f = A.findings(p.filter(time_range=tl.brush_range))
    check_lines(s, f)
    assert shown(s)["finding"] != A.findings(p)["title"].tolist()
    tl.brush_range = None
    time.sleep(0.5)
    assert s.done.wait(60)
    check_lines(s, A.findings(p))


def test_device_findings_fit_the_viewer() -> None:
    sample = nw.sample_profile()
    viewer = DeviceTraceViewer(sample.device_trace(sample.device_profiles.iloc[0]["device_profile_name"]))
    s = Summary(viewer)
    assert s.done.wait(60), s.status.value
    f = A.findings(viewer.device_trace)
    assert f["rule"].tolist() == ["transpose", "semaphore_waits"]
    check_lines(s, f)
    click(s.charts.findings.source, 0)
    # The execution, as far as the viewer has instructions and DMA to show (its recorded end may pass them).
    a, b = (max(int(f["start_ts"].iloc[0]), viewer.device_trace.span[0]),
            min(int(f["end_ts"].iloc[0]), viewer.device_trace.span[1]))
    assert viewer.time_range == (a, b) and b > a
    assert shown(s)["t1"][0] == b - viewer.profile.origin_ts
    # A device trace has no critical path: no section for it, not an empty chart.
    assert not any((m.name or "").startswith("nw-critical") for m in s.charts.layout.references())


def test_job_findings_open_their_part(tmp_path: Path) -> None:
    from neuron_widgets.sample.job import write_job

    job = nw.load_job(write_job(tmp_path / "run", nodes=3, events=20_000, processes=1, cores=2, seed=4),
                      results=tmp_path / "results")
    s = Summary(job)
    assert s.done.wait(300) and s.charts is not None, s.status.value
    f = A.findings(job)
    # The parts' own rules lead (host_wait, with the job's what-if gain); the job's straggler follows, in its part.
    assert f["rule"].iloc[0] == "host_wait" and f["gain_ns"].iloc[0] > 0
    i = f["rule"].tolist().index("job_straggler")
    assert f["part"].iloc[i] == "node-02"
    check_lines(s, f)
    assert shown(s)["part"] == [str(x) for x in f["part"]]
    c = s.charts.critical
    assert c.layout.visible and c.sentence.text == A.critical_path_headline(job)["sentence"] + "."
    who = c.source.data["worker"][1]
    assert who.startswith("node-02/i-0bf9e92794b6f3a12/PID:") and who.endswith("/neuron_rt/NC:1")
    assert who.removeprefix("node-02/") in set(job.load("node-02").tracks("default")["label"])
    click(s.charts.findings.source, i)
    for _ in range(300):  # the part loads in a thread
        if s.part_shown == "node-02" and s.part_timeline is not None:
            break
        time.sleep(0.1)
    assert s.part_shown == "node-02"
    assert s.part_timeline.time_range == (int(f["start_ts"].iloc[i]), int(f["end_ts"].iloc[i]))
    item = json.dumps(summary_item(s))
    assert "nw-findings-table" in item and "nw-critical-fig" in item
    # Following a JobTimeline(job), the finding opens its part in that timeline, at its range.
    jt = JobTimeline(job)
    s2 = Summary(jt)
    assert s2.done.wait(300) and s2.timeline is jt, s2.status.value
    click(s2.charts.findings.source, 0)
    for _ in range(300):
        if "node-02" in jt.opened and jt.time_range == (int(f["start_ts"].iloc[0]), int(f["end_ts"].iloc[0])):
            break
        time.sleep(0.1)
    assert "node-02" in jt.opened and s2.part_timeline is None
    assert jt.time_range == (int(f["start_ts"].iloc[0]), int(f["end_ts"].iloc[0]))


@pytest.mark.parametrize("seed", range(6))
def test_random_profiles_and_device_traces_get_their_findings(seed: int, tmp_path: Path) -> None:
    """On random profiles (tests/random_neuron.py) and device traces the sections are what the analyses say."""
    from random_device import random_device_trace
    from random_neuron import random_profile

    from neuron_widgets.summary import SummaryCharts
    from neuron_widgets.summary.critical import critical_columns
    from neuron_widgets.summary.device_charts import DeviceSummaryCharts
    from neuron_widgets.widgets.summary_findings import critical_of, profile_findings

    p = random_profile(seed, tmp_path)
    r = {**A.all_analyses(p), **profile_findings(p), "critical": critical_of(p)}
    c = SummaryCharts(p, r)
    f = A.findings(p)
    assert c.findings.source.data["finding"] == (f["title"].tolist() or
                                                 ["no finding: no rule's threshold was crossed in what is summarised"])
    assert c.critical.layout.visible == (r["critical"] is not None)
    if r["critical"] is not None:  # the bars hold the whole path
        cols = critical_columns(r["critical"])
        total = sum(sum(cols[k]) for k in ("compute", "collective", "host", "launch", "gap", "kernel", "memcpy"))
        assert total == pytest.approx(100.0, abs=0.01)
    trace = random_device_trace(seed)
    from neuron_widgets.analysis.device_breakdown import device_breakdown

    d = DeviceSummaryCharts(trace, {**device_breakdown(trace), "findings": A.findings(trace)})
    assert d.findings.source.data["finding"] == (A.findings(trace)["title"].tolist() or
                                                 ["no finding: no rule's threshold was crossed in what is summarised"])


def test_gain_text() -> None:
    assert gain_text(float("nan"), 100) == "gain not modelled"
    assert gain_text(400_000_000, 6_500_000_000) == "saves ~400 ms (6.2%)"
    assert gain_text(0.0, 100) == "saves nothing (off the critical path)"
