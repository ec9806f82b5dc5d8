"""The Summary's findings in a real JupyterLab and in an exported page opened offline: a click on a finding fits the
Timeline to its range, "show all" shows them all, titles from the profile stay text. Screenshots light and dark."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat as nbf
import pytest
from playwright.sync_api import Page, expect

import neuron_widgets as nw
from neuron_widgets.export import export_html
from neuron_widgets.widgets import Summary, Timeline

from .lab import DEEP_TEXT, open_notebook, run_all, scripts_had_their_chance, shot, theme, wait_cells_done
from .test_summary_fit import TABLE, charts

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_summary_findings import EVIL, many_findings

# The findings table drawn on the page (not a view jupyter_bokeh replaced): its source's columns.
FINDINGS = """() => { for (const v of Bokeh.index.all_views())
    if (v.model.name === 'nw-findings-table' && v.el.isConnected) return v.model.source.data;
  return null; }"""
VIEW = "() => document.querySelector('.nw-timeline').dataset.view"
# The timeline shows [t0, t1] (ns from its origin), to a nanosecond.
VIEW_IS = """([t0, t1]) => { const v = (document.querySelector('.nw-timeline').dataset.view ?? '').split(',').map(Number);
  return Math.abs(v[0] - t0) < 1 && Math.abs(v[1] - t1) < 1; }"""


def finding_cell(page: Page, scope: str, words: str):
    """The finding's own cell (its title), by the words it holds."""
    return page.locator(f"{scope} .nw-findings-table .slick-cell", has_text=words).first


def test_a_finding_fits_the_timeline_in_jupyterlab(page: Page, lab: str, lab_root: Path) -> None:
    cells = ["import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline, Summary\n"
             "tl = Timeline(nw.sample_profile(), height=260)\ntl",
             "s = Summary(tl)\ns"]
    nbf.write(nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(c) for c in cells],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}}), lab_root / "findings.ipynb")
    open_notebook(page, lab, "findings.ipynb")
    run_all(page)
    wait_cells_done(page)
    # Findings come after the other analyses: wait for the drawn table to hold them.
    page.wait_for_function(f"() => (({FINDINGS})()?.rule ?? []).includes('launch_overhead')", timeout=120_000)
    page.wait_for_function(f"() => ({DEEP_TEXT})('.nw-summary-widget').includes('is on the critical path in')",
                           timeout=60_000)
    data = page.evaluate(FINDINGS)
    i = data["rule"].index("launch_overhead")
    window = [data["t0"][i], data["t1"][i]]
    assert not page.evaluate(VIEW_IS, window)  # not where the view already is
    finding_cell(page, ".nw-summary-widget", "nrt_execute takes").scroll_into_view_if_needed()
    shot(page, "summary-findings-lab")
    for _ in range(3):  # a view jupyter_bokeh replaces under the click gets the click again
        finding_cell(page, ".nw-summary-widget", "nrt_execute takes").click()
        try:
            page.wait_for_function(VIEW_IS, arg=window, timeout=10_000)
            break
        except Exception:
            continue
    assert page.evaluate(VIEW_IS, window), (page.evaluate(VIEW), window)
    # The critical path chart is drawn (a figure on the page), beside the findings.
    page.wait_for_function("() => [...Bokeh.index.all_views()].some(v => v.model.name === 'nw-critical-fig' && "
                           "v.el.isConnected && v.el.getBoundingClientRect().height > 100)", timeout=30_000)
    page.evaluate("() => { for (const v of Bokeh.index.all_views()) if (v.model.name === 'nw-critical-fig' && "
                  "v.el.isConnected) v.el.scrollIntoView({block: 'center'}); }")
    shot(page, "summary-findings-lab-critical")
    theme(page, "JupyterLab Dark")
    page.wait_for_function("""() => [...Bokeh.index.all_views()].some(v => v.model.name === 'nw-critical-fig' &&
        v.el.isConnected && v.model.title.text_color === '#e6edf3')""", timeout=30_000)
    finding_cell(page, ".nw-summary-widget", "nrt_execute takes").scroll_into_view_if_needed()
    shot(page, "summary-findings-lab-dark")
    theme(page, "JupyterLab Light")
    assert not page.errors, page.errors  # type: ignore[attr-defined]


def test_exported_findings_offline_show_all_and_fit_the_timeline(open_file, tmp_path: Path) -> None:
    p = nw.load_profile(many_findings(tmp_path / "evil.json"))
    tl = Timeline(p)
    s = Summary(tl)
    assert s.done.wait(60), s.status.value
    path = tmp_path / "findings.html"
    export_html(path, tl, s, time_range="all")
    for dark in (False, True):
        opened = open_file(path, dark=dark)
        page = opened.page
        dialogs: list[str] = []
        page.on("dialog", lambda d, dialogs=dialogs: (dialogs.append(d.message), d.dismiss()))
        page.wait_for_selector(".nw-view-summary[data-ready='1']", timeout=30_000)
        page.wait_for_function(f"() => ({FINDINGS})() !== null", timeout=30_000)
        scripts_had_their_chance(page)
        # The profile's markup is text in the table: no element made of it, no script run.
        assert EVIL in page.evaluate(DEEP_TEXT, ".nw-view-summary")
        assert page.locator(".nw-view-summary img").count() == 0 and not dialogs
        # The top five drawn; "show all" draws the other three.
        rows = page.locator(".nw-view-summary .nw-findings-table .slick-row")
        expect(rows).to_have_count(5, timeout=30_000)
        page.get_by_text("Show all 8 findings").click()
        page.wait_for_function("(n) => document.querySelectorAll('.nw-view-summary').length && "
                               "Bokeh.documents[0].get_model_by_name('nw-findings-filter').indices.length === n", arg=8)
        page.get_by_text("Show the top 5").wait_for(timeout=10_000)
        expect(rows).to_have_count(8, timeout=10_000)
        data = page.evaluate(FINDINGS)
        i = next(k for k, t in enumerate(data["finding"]) if "returned 1007" in t)
        assert i == 7
        window = [data["t0"][i], data["t1"][i]]
        assert not page.evaluate(VIEW_IS, window)
        finding_cell(page, ".nw-view-summary", "returned 1007").click()
        page.wait_for_function(VIEW_IS, arg=window, timeout=10_000)
        table = page.evaluate(TABLE, "nw-findings-table")  # every line whole, none cut
        assert table["rows"] == 8 == table["whole"] and not table["cut"], table
        finding_cell(page, ".nw-view-summary", "returned 1007").scroll_into_view_if_needed()
        shot(page, f"summary-findings-export-{'dark' if dark else 'light'}")
        assert opened.requests == [path.as_uri()] and not opened.errors, (opened.requests, opened.errors)
        assert not dialogs


@pytest.fixture(scope="module")
def job_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from neuron_widgets.sample.job import write_job

    where = tmp_path_factory.mktemp("job-findings")
    job = nw.load_job(write_job(where / "run", nodes=3, events=20_000, processes=1, cores=2, seed=4),
                      results=where / "results")
    s = Summary(job)
    assert s.done.wait(300) and s.charts is not None, s.status.value
    s.to_html(where / "job.html")
    return where / "job.html"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_exported_job_findings_and_critical_path_fit_a_narrow_page(open_file, job_page: Path, dark: bool) -> None:
    o = open_file(job_page, timeline=False, width=1000, dark=dark)
    page = o.page
    page.wait_for_function(f"() => ({FINDINGS})() !== null", timeout=30_000)
    table = page.evaluate(TABLE, "nw-findings-table")
    # 3 job-wide findings and 2 from the parts' own rules (findings(job) runs them in each part)
    assert table["rows"] == 5 == table["whole"] and not table["cut"], table
    assert "node-02" in page.evaluate(DEEP_TEXT, ".nw-view-summary")
    c = charts(page)["nw-critical-fig"]  # drawn, with bars, its title and legend inside it
    assert c["shown"] and c["rows"] > 0 and c["titleEnd"] <= c["width"] + 1 and c["legendEnd"] <= c["width"] + 1, c
    page.evaluate("() => { for (const v of Bokeh.index.all_views()) if (v.model.name === 'nw-findings-table') "
                  "v.el.scrollIntoView({block: 'start'}); }")
    shot(page, f"summary-findings-job-export-{'dark' if dark else 'light'}")
    assert o.requests == [job_page.as_uri()] and not o.errors, (o.requests, o.errors)


def test_exported_device_finding_fits_the_device_viewer(open_file, tmp_path: Path) -> None:
    from neuron_widgets.widgets import DeviceTraceViewer

    sample = nw.sample_profile()
    viewer = DeviceTraceViewer(sample.device_trace(sample.device_profiles.iloc[0]["device_profile_name"]))
    viewer.time_range = (viewer.profile.origin_ts, viewer.profile.origin_ts + 20_000)  # away from the execution
    s = Summary(viewer)
    assert s.done.wait(60), s.status.value
    path = tmp_path / "device.html"
    export_html(path, viewer, s, time_range="all")  # every event in the page, the view where the viewer is
    o = open_file(path)
    page = o.page
    page.wait_for_function(f"() => (({FINDINGS})()?.rule ?? []).includes('transpose')", timeout=30_000)
    data = page.evaluate(FINDINGS)
    window = [data["t0"][0], data["t1"][0]]
    assert not page.evaluate(VIEW_IS, window)
    finding_cell(page, ".nw-view-summary", "Transposes are").click()
    page.wait_for_function(VIEW_IS, arg=window, timeout=10_000)
    finding_cell(page, ".nw-view-summary", "Transposes are").scroll_into_view_if_needed()
    shot(page, "summary-findings-device-export")
    assert o.requests == [path.as_uri()] and not o.errors, (o.requests, o.errors)
