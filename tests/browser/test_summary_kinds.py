"""The Summary of each trace kind in a real JupyterLab: what is drawn, what is said, and the device table kept."""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .lab import DEEP_TEXT, open_notebook, run_all, shot, through_notebook, wait_cells_done

DEVICE_CELLS = """() => { for (const v of Bokeh.index.all_views()) {
    if (v.model.name !== 'nw-devices-table' || !v.el.isConnected) continue;
    const root = v.shadow_el ?? v.el.shadowRoot ?? v.el;
    return [...root.querySelectorAll('.slick-row')].map(r => [...r.querySelectorAll('.slick-cell')].map(c => c.textContent)); }
  return null; }"""


def notebook(root: Path, name: str, cells: list[str]) -> None:
    nb = nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(c) for c in cells],
                             metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbf.write(nb, root / name)


def wait_summarised(page: Page, what: str = "the whole profile") -> None:
    page.wait_for_function("(w) => (document.querySelector('.nw-summary-widget .widget-html')?.textContent ?? '')"
                           ".includes('Summarised: ' + w) && /events in/.test(document.querySelector("
                           "'.nw-summary-widget .widget-html').textContent)", arg=what, timeout=90_000)


def test_device_table_keeps_its_numbers_after_the_brush(page: Page, lab: str, lab_root: Path) -> None:
    notebook(lab_root, "devices.ipynb", [
        "import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline, Summary\n"
        "tl = Timeline(nw.sample_profile(), height=260)\ntl",
        "s = Summary(tl)\ns"])
    open_notebook(page, lab, "devices.ipynb")
    run_all(page)
    wait_cells_done(page)
    wait_summarised(page)
    page.wait_for_function(f"() => {{ const c = ({DEVICE_CELLS})(); return c && c.length > 0 && "
                           "c.every(r => r.some(x => /MB$/.test(x))); }", timeout=60_000)
    first = page.evaluate(DEVICE_CELLS)
    page.evaluate("""() => { const v = document.querySelector('.nw-timeline').__nwView;
        const t0 = v.view.t0, w = v.view.t1 - v.view.t0; v.model.set('brush', [t0 + 0.2 * w, t0 + 0.6 * w]);
        v.model.save_changes(); }""")
    wait_summarised(page, "")
    page.wait_for_function("() => /brushed range.* events in/.test(document.querySelector("
                           "'.nw-summary-widget .widget-html').textContent)", timeout=60_000)
    page.evaluate("""() => { const v = document.querySelector('.nw-timeline').__nwView;
        v.model.set('brush', []); v.model.save_changes(); }""")
    wait_summarised(page)
    page.locator(".nw-summary-widget").scroll_into_view_if_needed()
    after = page.evaluate(DEVICE_CELLS)
    shot(page, "summary-devices-after-brush")
    assert after == first
    assert not page.errors, page.errors  # type: ignore[attr-defined]


def plain_trace(path: Path) -> Path:
    """A browser-style Chrome trace: nested B/E and X slices on two threads, an unclosed slice, a counter."""
    import json

    events = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": t, "args": {"name": n}}
              for t, n in ((1, "CrRendererMain"), (2, "Compositor"))]
    for i in range(30):
        t0 = i * 1000
        events += [{"ph": "B", "name": "RunTask", "pid": 1, "tid": 1, "ts": t0},
                   {"ph": "X", "name": "Layout", "pid": 1, "tid": 1, "ts": t0 + 50, "dur": 300 + 10 * i},
                   {"ph": "E", "name": "RunTask", "pid": 1, "tid": 1, "ts": t0 + 600},
                   {"ph": "X", "name": "Composite", "pid": 1, "tid": 2, "ts": t0 + 700, "dur": 120},
                   {"ph": "C", "name": "heap", "pid": 1, "ts": t0, "args": {"used": 1000 + i}}]
    events.append({"ph": "B", "name": "NeverEnds", "pid": 1, "tid": 2, "ts": 31_000})
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_summaries_of_kineto_plain_and_device_traces(page: Page, lab: str, lab_root: Path) -> None:
    """Issue 23: each kind of trace gets its own charts and sentence in JupyterLab, and a device layer click fits the viewer."""
    plain_trace(lab_root / "plain.json")
    notebook(lab_root, "kinds.ipynb", [
        "import neuron_widgets as nw\nfrom neuron_widgets.widgets import Summary, DeviceTraceViewer",
        "Summary(nw.sample_profile('kineto'))",
        "Summary(nw.load_profile('plain.json'))",
        "p = nw.sample_profile()\nviewer = DeviceTraceViewer(p.device_trace('neuron_profile_001'), height=300)\nviewer",
        "Summary(viewer)"])
    open_notebook(page, lab, "kinds.ipynb")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function("() => [...document.querySelectorAll('.nw-summary-widget .widget-html')]"
                           ".filter(e => /Summarised: .* in [0-9.]+ s\\./.test(e.textContent)).length === 3",
                           timeout=120_000)
    # Each Summary in the order of its cell, scrolled to (JupyterLab keeps only cells near the view in
    # the page): the charts fill in as their numbers arrive, so wait for what each must show.
    deep = f"(e) => ({DEEP_TEXT.replace('document.querySelector(sel)', 'e')})(e)"
    words = [("arrives last",), ("NeverEnds", "Longest events"), ("Instructions",)]
    found: dict[int, str] = {}

    def collect(pg: Page) -> bool:
        for w in pg.locator(".nw-summary-widget").all():
            cell = int(w.evaluate("e => +(e.closest('.jp-Cell')?.dataset.windowedListIndex ?? -1)"))
            if cell in found:
                continue
            k = len(found)  # the Summaries come in cell order, and are met in it
            w.scroll_into_view_if_needed()
            try:
                pg.wait_for_function(f"([e, ws]) => {{ const t = ({deep})(e); return ws.every(x => t.includes(x)); }}",
                                     arg=[w.element_handle(), list(words[k])], timeout=90_000)
            except PlaywrightTimeout:
                shot(pg, "summary-kinds-stalled")
                raise AssertionError(f"Summary {k + 1} (cell {cell}) did not show {words[k]}: "
                                     f"{pg.evaluate(deep, w.element_handle())[:800]}") from None
            found[cell] = pg.evaluate(deep, w.element_handle())
        return len(found) == 3

    through_notebook(page, collect)
    texts = [found[c] for c in sorted(found)]
    assert len(texts) == 3, sorted(found)
    kineto, plain, device = texts
    # A rank by its GPU's track label, as its findings and the Timeline name it.
    assert "rank0/GPU 0 arrives last at 4 of 5 collectives" in kineto and "NEFF" not in kineto
    assert "plain trace" in plain and "Longest events" in plain and "NeverEnds" in plain
    # Said in the trace's words: threads by their names, no execution or NEFF columns.
    assert "The busiest thread is CrRendererMain 1" in plain and "NEFF code" not in plain and "#2" not in plain
    assert "Compute-bound on TensorMatrix" in device and "Instructions" in device
    # What each Summary draws, by figure name, in the order of the cells.
    titles = page.evaluate("""() => Bokeh.documents.map(d => [...d.all_models].filter(m => m.title && m.title.text)
        .map(m => m.title.text))""")
    assert not any("NEFF" in t for doc in titles for t in doc), titles
    assert any({"Top layers by own engine time (ms)", "DMA per queue and direction (MB)"} <= set(doc) for doc in titles), titles
    assert any(any(t.startswith("Top events by self time") for t in doc) for doc in titles), titles
    assert any(any("kernel" in t.lower() for t in doc) for doc in titles), titles
    for i, name in enumerate(("summary-kineto-lab", "summary-plain-lab", "summary-device-lab")):
        page.locator(".nw-summary-widget").nth(i).scroll_into_view_if_needed()
        shot(page, name)
    # A layer's bar fits the device viewer to that layer.
    before = page.evaluate("() => document.querySelectorAll('.nw-timeline')[0].dataset.view")
    pt = page.evaluate("""() => { for (const v of Bokeh.index.all_views()) {
        if (v.model.name !== 'nw-device-layers-fig' || !v.canvas_view.el.isConnected) continue;
        const d = v.model.renderers[0].data_source.data; v.canvas_view.el.scrollIntoView({block: 'center'});
        const b = v.canvas_view.el.getBoundingClientRect();
        return {x: b.left + v.frame.x_scale.compute(d.ms[0] / 2), y: b.top + v.frame.y_scale.compute(d.label[0]),
                t0: d.t0[0], t1: d.t1[0]}; } }""")
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function("(b) => document.querySelectorAll('.nw-timeline')[0].dataset.view !== b", arg=before,
                           timeout=20_000)
    view = [float(x) for x in page.evaluate("() => document.querySelectorAll('.nw-timeline')[0].dataset.view").split(",")]
    assert abs(view[0] - pt["t0"]) <= 1 and abs(view[1] - pt["t1"]) <= 1, (view, pt)
    # Dark theme: the device charts' text turns light too.
    page.evaluate("() => document.body.setAttribute('data-jp-theme-light', 'false')")
    page.wait_for_function("""() => [...Bokeh.index.all_views()].filter(v => v.model.name === 'nw-device-engines-fig'
        && v.el.isConnected).every(v => v.model.title.text_color === '#e6edf3')""", timeout=20_000)
    page.locator(".nw-summary-widget").nth(2).scroll_into_view_if_needed()
    shot(page, "summary-device-lab-dark")
    assert not page.errors, page.errors  # type: ignore[attr-defined]
