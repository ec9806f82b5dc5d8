"""The Summary in a real JupyterLab and in exported pages: charts drawn, clicks reach the timeline, text stays text."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat as nbf
import pytest
from playwright.sync_api import Page

import neuron_widgets as nw
from neuron_widgets.export import export_html
from neuron_widgets.widgets import EventDetails, Summary, Timeline

from .lab import DEEP_TEXT, bokeh_point, deep_text, open_notebook, run_all, scripts_had_their_chance, shot, wait_cells_done

EVIL = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script><b>bold</b>'


def evil_trace(path: Path) -> Path:
    """NDET-style events whose NEFF, host and error names are markup."""
    events = []
    for i in range(40):
        for nc in (0, 1):
            events.append({"ph": "X", "name": "nc_exec_running", "ts": 100 * i + 3 * nc, "dur": 60, "pid": 1, "tid": nc,
                           "args": {"nc": nc, "exec_id": i, "model_name": EVIL}})
            events.append({"ph": "X", "name": "cc_exec_barrier", "ts": 100 * i + 40 + 5 * nc, "dur": 10 - 5 * nc,
                           "pid": 1, "tid": nc, "args": {"nc": nc, "exec_id": i}})
    events.append({"ph": "i", "name": f"{EVIL} error", "ts": 555, "pid": 1, "tid": 0, "args": {"nc": 0, "ret": 1003}})
    path.write_text(json.dumps({"traceEvents": events, "hostname": EVIL}))
    return path


def test_exported_summary_offline_and_linked(open_file, tmp_path: Path) -> None:
    p = nw.sample_profile()
    tl = Timeline(p)
    s = Summary(tl)
    assert s.done.wait(60)
    path = tmp_path / "summary.html"
    export_html(path, tl, EventDetails(tl), s, time_range="all")
    opened = open_file(path)
    page, requests, errors = opened.page, opened.requests, opened.errors
    assert requests == [path.as_uri()] and not errors, (requests, errors)
    # Every chart is drawn on its canvas; the headline says what the analyses found.
    assert page.locator(".nw-view-summary canvas").count() >= 6
    head = deep_text(page, ".nw-view-summary")
    assert "NeuronCores" in head and "arrives last at" in head
    shot(page, "summary-export")
    # A straggler's bar selects its latest barrier in the page's timeline and shows it.
    pt = bokeh_point(page, "nw-stragglers-fig", 0, 1)
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function("() => document.querySelector('.nw-details-title')?.textContent === 'cc_exec_barrier'")
    # A step of the lag chart moves the view to that step.
    before = page.evaluate("() => document.querySelector('.nw-timeline').dataset.view")
    steps = page.evaluate("""() => { for (const v of Bokeh.index.all_views()) if (v.model.name === 'nw-straggler-steps-fig')
        { const d = v.model.renderers[1].data_source.data; v.canvas_view.el.scrollIntoView({block: 'center'});
          const b = v.canvas_view.el.getBoundingClientRect();
          return {x: b.left + v.frame.x_scale.compute(d.t_ms[5]), y: b.top + v.frame.y_scale.compute(d.lag_us[5]),
                  t0: d.t0[5], t1: d.t1[5]}; } }""")
    page.mouse.click(steps["x"], steps["y"])
    page.wait_for_function("(b) => document.querySelector('.nw-timeline').dataset.view !== b", arg=before)
    view = [float(x) for x in page.evaluate("() => document.querySelector('.nw-timeline').dataset.view").split(",")]
    assert view[0] == pytest.approx(steps["t0"], abs=1) and view[1] == pytest.approx(steps["t1"], abs=1)
    # An error row selects the error.
    page.locator(".nw-view-summary .nw-problems-table .slick-row").first.locator(".slick-cell").nth(1).click()
    page.wait_for_function("() => document.querySelector('.nw-details-title')?.textContent === 'nrt_execute'")
    assert not errors


def test_exported_summary_keeps_markup_as_text(open_file, tmp_path: Path) -> None:
    p = nw.load_profile(evil_trace(tmp_path / "evil.json"))
    tl = Timeline(p)
    s = Summary(tl)
    assert s.done.wait(60)
    path = tmp_path / "evil.html"
    html = export_html(path, tl, s, time_range="all", title=EVIL)
    assert html["bytes"] > 0
    assert "<img" not in path.read_text(encoding="utf-8").split("</head>")[1].split('id="nw-data"')[0]
    opened = open_file(path, dark=True)
    page, requests, errors = opened.page, opened.requests, opened.errors
    page.wait_for_selector(".nw-view-summary[data-ready='1']", timeout=30_000)
    scripts_had_their_chance(page)
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator(".nw-view-summary img, .nw-view-summary b").count() == 0
    # The markup shows as text: the host in the headline sentence, the NEFF in a table cell.
    assert EVIL in deep_text(page, ".nw-view-summary")
    # A dark page gets light axis text.
    color = page.evaluate("""() => { for (const m of Bokeh.documents[0].all_models)
        if ('major_label_text_color' in m.properties) return m.major_label_text_color; }""")
    assert color == "#9da7b3"
    shot(page, "summary-export-markup-dark")
    assert not errors and requests == [path.as_uri()]


def write_notebook(root: Path) -> None:
    cells = [
        nbf.v4.new_code_cell("import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline, EventDetails, "
                             "Summary\np = nw.sample_profile()\ntl = Timeline(p, height=300)\ntl"),
        nbf.v4.new_code_cell("EventDetails(tl)"),
        nbf.v4.new_code_cell("summary = Summary(tl)\nsummary"),
    ]
    nbf.write(nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                          "language": "python"}}), root / "summary.ipynb")


def details_title(page: Page) -> str:
    return page.evaluate("() => document.querySelector('.nw-details-title')?.textContent ?? ''")


def test_summary_in_jupyterlab(page: Page, lab: str, lab_root: Path) -> None:
    write_notebook(lab_root)
    open_notebook(page, lab, "summary.ipynb")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function("() => window.Bokeh && [...Bokeh.index.all_views()].filter(v => "
                           "(v.model.name ?? '').endsWith('-fig')).length >= 6", timeout=60_000)
    # Done when the status line (not the headline's note, which comes with the first stage) says so.
    page.wait_for_function("() => /Summarised: the whole profile\\. [0-9,]+ events in/"
                           ".test(document.querySelector('.nw-summary-widget .widget-html')?.textContent ?? '')",
                           timeout=60_000)
    page.wait_for_function(f"() => ({DEEP_TEXT})('.nw-summary-widget').includes('arrives last at')", timeout=20_000)
    page.locator(".nw-summary-widget").scroll_into_view_if_needed()
    shot(page, "summary-lab")
    # An error row selects the event in the timeline: the details in another cell follow. The view
    # may still be drawing its final state, replacing the table under the click: click again then.
    for _ in range(3):
        page.locator(".nw-summary-widget .nw-problems-table .slick-row").first.locator(".slick-cell").nth(1).click()
        try:
            page.wait_for_function("() => document.querySelector('.nw-details-title')?.textContent === 'nrt_execute'",
                                   timeout=8_000)
            break
        except Exception:
            continue
    assert details_title(page) == "nrt_execute"
    # A core's bar selects its longest execution and marks all of that core's executions.
    before = page.evaluate("() => document.querySelector('.nw-timeline').dataset.view")
    for _ in range(3):  # the point is computed from the chart's own scales just before each click
        pt = bokeh_point(page, "nw-temporal-fig", 0, 5)
        page.mouse.click(pt["x"], pt["y"])
        try:
            page.wait_for_function("() => document.querySelector('.nw-details-title')?.textContent === "
                                   "'nc_exec_running'", timeout=8_000)
            break
        except Exception:
            continue
    assert details_title(page) == "nc_exec_running"
    page.wait_for_function("(b) => document.querySelector('.nw-timeline').dataset.view !== b", arg=before)
    # ...and the timeline scrolls to that core's track (it sits far below the first rows at height 300).
    page.wait_for_function("""() => { const v = document.querySelector('.nw-timeline').__nwView;
        const d = v.model.get('selection_detail'); const r = v.rows.find(x => x.kind === 'track' && x.track === d.track);
        const top = v.scroll.scrollTop; return r && top > 0 && r.y >= top && r.y + r.h <= top + v.scroll.clientHeight; }""",
                           timeout=10_000)
    # Brushing a range in the timeline summarises that range (the note says which).
    page.evaluate("""() => { const v = document.querySelector('.nw-timeline').__nwView;
        const t0 = v.view.t0, w = v.view.t1 - v.view.t0; v.model.set('brush', [t0 + 0.2 * w, t0 + 0.6 * w]);
        v.model.save_changes(); }""")
    page.wait_for_function("() => /Summarised: .*brushed range.* events in/"
                           ".test(document.querySelector('.nw-summary-widget .widget-html')?.textContent ?? '')",
                           timeout=30_000)
    assert "brushed range" in deep_text(page, ".nw-summary-widget")
    # Dark theme: the charts' canvas text turns light.
    page.evaluate("() => document.body.setAttribute('data-jp-theme-light', 'false')")
    page.wait_for_function("""() => Bokeh.documents.flatMap(d => [...d.all_models]).some(m =>
        'major_label_text_color' in m.properties && m.major_label_text_color === '#9da7b3')""", timeout=20_000)
    shot(page, "summary-lab-dark")
    assert not page.errors, page.errors  # type: ignore[attr-defined]


def test_summary_on_a_second_page_of_the_same_kernel(browser, lab: str, lab_root: Path) -> None:
    # The kernel loads BokehJS once, into the first page's output. A second page (a reload, another
    # tab) on the same kernel had no BokehJS: "Could not create a view" where the charts go.
    cells = ["import neuron_widgets as nw\nfrom neuron_widgets.widgets import Summary",
             "Summary(nw.sample_profile())"]
    nbf.write(nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(c) for c in cells],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}}), lab_root / "twice.ipynb")
    drawn = ("() => { const w = document.querySelector('.nw-summary-widget'); return !!w && "
             "/Summarised/.test(w.textContent) && !!w.querySelector('[data-root-id]') && !!window.Bokeh; }")
    for visit in (1, 2):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
        open_notebook(page, lab, "twice.ipynb")
        run_all(page)
        wait_cells_done(page)
        page.wait_for_function(drawn, timeout=120_000)
        # The charts are drawn, not only their box: a figure's canvas is on the page.
        page.wait_for_function("() => [...Bokeh.index.all_views()].some(v => v.model.name === 'nw-temporal-fig' "
                               "&& v.el.isConnected)", timeout=60_000)
        shot(page, f"summary-page-{visit}")
        assert not errors, (visit, errors)
        context.close()


def test_exported_job_summary_offline(open_file, tmp_path: Path) -> None:
    # Summary(job) in export_html: the heat map, the breakdown per node and the straggler headline
    # drawn offline (opening a part at a step needs the kernel, so the page keeps the charts).
    from neuron_widgets.sample.job import write_job

    job = nw.load_job(write_job(tmp_path / "run", nodes=3, events=20_000, processes=1, cores=2, seed=4),
                      results=tmp_path / "results")
    s = Summary(job)
    assert s.done.wait(180) and s.charts is not None, s.status.value
    path = tmp_path / "job.html"
    export_html(path, s, title="A job of three nodes")
    opened = open_file(path, timeline=False)
    page = opened.page
    assert opened.requests == [path.as_uri()] and not opened.errors, (opened.requests, opened.errors)
    page.wait_for_function("() => document.querySelector('.nw-view-summary')?.dataset.ready === '1'", timeout=30_000)
    assert page.locator(".nw-view-summary canvas").count() >= 3
    head = deep_text(page, ".nw-view-summary")
    assert "node-02" in head, head[:400]
    shot(page, "summary-export-job")
