"""Summary(job) in a real JupyterLab: the heat map drawn, the remote straggler named, a click opens that part."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page

from .lab import DEEP_TEXT, open_notebook, run_all, shot, wait_cells_done
from .test_summary_kinds import notebook

CELL = """(a) => { for (const v of Bokeh.index.all_views()) {
    if (v.model.name !== 'nw-job-lag-fig' || !v.canvas_view.el.isConnected) continue;
    v.canvas_view.el.scrollIntoView({block: 'center'});
    const b = v.canvas_view.el.getBoundingClientRect();
    return {x: b.left + v.frame.x_scale.compute(a.col + 0.5), y: b.top + v.frame.y_scale.compute(a.row + 0.5)}; } }"""


# The job's charts on the page: whether each title (measured as the canvas draws it) and legend fits.
FITS = """() => [...Bokeh.index.all_views()].filter(v => v.model.type === 'Figure' && v.el.isConnected
    && (v.model.name ?? '').startsWith('nw-job-')).map(v => {
  const t = v.model.title, ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${t.text_font_style} ${t.text_font_size} ${t.text_font}`;
  const legends = [...v.computed_renderer_views ?? []].filter(r => r.model.type === 'Legend');
  const w = Math.max(0, ...t.text.split('\\n').map(line => ctx.measureText(line).width));
  // Placed by its alignment over the frame: aligned right, a title ends at the frame's right edge.
  const left = t.align === 'right' ? v.frame.bbox.right - w : v.frame.bbox.left;
  const fits = left >= -1 && left + w <= v.bbox.width + 1
    && legends.every(l => l.bbox.x0 >= -1 && l.bbox.x1 <= v.bbox.width + 1);
  return {name: v.model.name, fits}; })"""


def test_job_summary_heat_map_and_a_click_into_a_part(page: Page, lab: str, lab_root: Path) -> None:
    notebook(lab_root, "job.ipynb", [
        "import neuron_widgets as nw\nfrom neuron_widgets.sample.job import write_job\n"
        "from neuron_widgets.widgets import Summary\n"
        "job = nw.load_job(write_job('job', nodes=3, events=30_000, processes=1, cores=3, seed=4), results='results')",
        "s = Summary(job)\ns"])
    open_notebook(page, lab, "job.ipynb")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function("() => /Summarised 3 parts in/.test(document.querySelector('.nw-summary-widget .widget-html')"
                           "?.textContent ?? '')", timeout=120_000)
    page.wait_for_function("() => window.Bokeh && [...Bokeh.index.all_views()].some(v => v.model.name === 'nw-job-lag-fig'"
                           " && v.el.isConnected)", timeout=60_000)
    text = page.evaluate(f"() => ({DEEP_TEXT})('.nw-summary-widget')")
    assert "the job waits most on node-02" in text and "NeuronCore 2" in text
    # The late core's row: node-02's third core (rows in node order, 3 cores per node).
    rows = page.evaluate("""() => { const v = [...Bokeh.index.all_views()].find(v => v.model.name === 'nw-job-lag-fig'
        && v.el.isConnected); return v.model.y_range.start; }""")
    assert rows == 9
    # The map is painted: most of its frame holds coloured cells (every core took part in every step).
    # BokehJS paints on its own frame after the view connects: wait for the paint, then check it.
    painted = """() => { const v = [...Bokeh.index.all_views()].find(v => v.model.name === 'nw-job-lag-fig'
        && v.el.isConnected); const f = v.frame.bbox, r = window.devicePixelRatio || 1;
        const d = v.canvas_view.primary.ctx.getImageData(f.left * r, f.top * r, f.width * r, f.height * r).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n / (d.length / 4); }"""
    try:
        page.wait_for_function(f"() => ({painted})() > 0.8", timeout=30_000)
    except Exception:
        raise AssertionError(f"the heat map's frame is {page.evaluate(painted):.0%} painted") from None
    shot(page, "job-summary-lab")
    # Issue 35 item 6: at 1150 px every title and legend fits its chart, and the parts' errors and hang are listed.
    page.set_viewport_size({"width": 1150, "height": 1000})
    page.wait_for_function(f"() => ({FITS})().length === 4 && ({FITS})().every(c => c.fits)", timeout=30_000)
    text = page.evaluate(f"() => ({DEEP_TEXT})('.nw-summary-widget')")
    assert "Found 2 errors (node-02) and 1 hang (node-00)" in text and "NRT_EXEC_COMPLETED_WITH_NUM_ERR" in text
    page.locator(".nw-summary-widget").scroll_into_view_if_needed()
    shot(page, "job-summary-lab-1150")
    lag_width = """() => { const v = [...Bokeh.index.all_views()].find(v => v.model.name === 'nw-job-lag-fig'
        && v.el.isConnected); return [v.bbox.width, v.canvas_view.el.getBoundingClientRect().width]; }"""
    narrow = page.evaluate(lag_width)[0]
    page.set_viewport_size({"width": 1600, "height": 1000})
    # BokehJS lays the figure out again after the resize, on its own frame: a cell's place is read once
    # its scales follow the wider canvas, or the click lands where the cell was.
    page.wait_for_function(f"() => {{ const [laid, shown] = ({lag_width})(); return laid > {narrow} + 1"
                           " && Math.abs(laid - shown) < 1; }", timeout=30_000)
    pt = page.evaluate(CELL, {"row": 8, "col": 10})
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function("() => { const w = document.querySelector('.nw-summary-widget'); const t = w.querySelector("
                           "'.nw-timeline'); return t && t.dataset.view && w.textContent.includes('node-02'); }",
                           timeout=60_000)
    page.wait_for_function("() => { const [a, b] = document.querySelector('.nw-summary-widget .nw-timeline').dataset.view"
                           ".split(',').map(Number); return b - a < 10e6; }", timeout=30_000)
    page.locator(".nw-summary-widget .nw-timeline").scroll_into_view_if_needed()
    shot(page, "job-summary-part-opened")
    page.evaluate("() => document.body.setAttribute('data-jp-theme-light', 'false')")
    page.wait_for_function("""() => [...Bokeh.index.all_views()].filter(v => v.model.name === 'nw-job-lag-fig'
        && v.el.isConnected).every(v => v.model.title.text_color === '#e6edf3')""", timeout=20_000)
    page.locator(".nw-summary-widget").scroll_into_view_if_needed()
    shot(page, "job-summary-lab-dark")
    assert not page.errors, page.errors  # type: ignore[attr-defined]
