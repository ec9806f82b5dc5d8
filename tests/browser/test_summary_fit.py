"""Exported Summaries as a reader sees them (issue 35 items 5, 6, 8; issue 36 item 8): no empty chart, the job
Summary fits 1150 px and lists the parts' errors and hangs, tables of wrapped text show eight rows, and the job
heat map's hover works under the page's content security policy. Screenshots in light and dark."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import neuron_widgets as nw
from neuron_widgets.sample.job import write_job
from neuron_widgets.widgets import Summary

from .lab import DEEP_TEXT, real_trace, shot

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import summary_traces as T

# Every drawn chart of the page: its name, whether it is shown, how many rows its renderers' sources hold, and
# whether its title and legends fit inside it (the title measured as the canvas draws it).
CHARTS = """() => [...Bokeh.index.all_views()].filter(v => v.model.type === 'Figure' && v.el.isConnected).map(v => {
  const shown = v.model.visible && v.el.getBoundingClientRect().height > 0 && v.el.offsetParent !== null;
  const rows = v.model.renderers.map(r => r.data_source ? r.data_source.get_length() ?? 0 : 0);
  const t = v.model.title, ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${t.text_font_style} ${t.text_font_size} ${t.text_font}`;
  const width = v.bbox.width, w = Math.max(0, ...t.text.split('\\n').map(line => ctx.measureText(line).width));
  // Placed by its alignment over the frame: aligned right, a title ends at the frame's right edge.
  const titleEnd = t.align === 'right' ? v.frame.bbox.right : v.frame.bbox.left + w;
  const titleStart = t.align === 'right' ? v.frame.bbox.right - w : v.frame.bbox.left;
  const legends = [...v.computed_renderer_views ?? []].filter(r => r.model.type === 'Legend').map(l => l.bbox.x1);
  return {name: v.model.name, shown, rows: Math.max(0, ...rows), width, titleStart, titleEnd,
          legendEnd: Math.max(0, ...legends)};
})"""

# The cells of a named table: per row, whether each cell's text fits its cell (wrapped, not cut), and how many
# rows show whole in the table's viewport.
TABLE = """(name) => { for (const v of Bokeh.index.all_views()) {
    if (v.model.name !== name || !v.el.isConnected) continue;
    const root = v.shadow_el ?? v.el.shadowRoot ?? v.el;
    const port = root.querySelector('.slick-viewport').getBoundingClientRect();
    const rows = [...root.querySelectorAll('.slick-row')];
    const whole = rows.filter(r => { const b = r.getBoundingClientRect();
      return b.top >= port.top - 1 && b.bottom <= port.bottom + 1; });
    const cut = [...root.querySelectorAll('.slick-cell')].filter(c => c.scrollHeight > c.clientHeight + 1
      || c.scrollWidth > c.clientWidth + 1).map(c => c.textContent);
    return {rows: rows.length, whole: whole.length, cut}; }
  return null; }"""


def charts(page) -> dict[str, dict]:
    return {c["name"]: c for c in page.evaluate(CHARTS)}


@pytest.fixture(scope="module")
def job_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("job")
    job = nw.load_job(write_job(where / "job", nodes=3, events=30_000, processes=1, cores=3, seed=4),
                      results=where / "results")
    s = Summary(job)
    assert s.done.wait(180), s.status.value
    s.to_html(where / "job.html")
    return where / "job.html"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_exported_job_summary_fits_lists_problems_and_hovers(open_file, job_page: Path, dark: bool) -> None:
    o = open_file(job_page, timeline=False, width=1150, dark=dark)
    page = o.page
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    found = charts(page)
    for name in ("nw-job-stragglers-fig", "nw-job-nodes-fig", "nw-job-cores-fig", "nw-job-lag-fig"):
        c = found[name]
        assert c["shown"] and c["titleEnd"] <= c["width"] + 1 and c["titleStart"] >= -1, c
        assert c["legendEnd"] <= c["width"] + 1, c
    text = page.evaluate(DEEP_TEXT, "#nw-export")
    assert "Found 2 errors (node-02) and 1 hang (node-00)" in text
    table = page.evaluate(TABLE, "nw-job-problems-table")
    assert table["rows"] == 3 == table["whole"] and not table["cut"], table
    # A core as the job's Timeline labels its track once its part is open: <part>/<instance>/PID:<pid>/neuron_rt/NC:<n>.
    assert "NRT_EXEC_COMPLETED_WITH_NUM_ERR" in text and re.search(r"node-00/\S+/PID:2563698/neuron_rt/NC:0", text)
    # Hover the late core's cells: bokeh's tooltip names the core, the step and the lag, with no code compiled.
    page.evaluate("""() => { const v = [...Bokeh.index.all_views()].find(v => v.model.name === 'nw-job-lag-fig');
        v.canvas_view.el.scrollIntoView({block: 'center'}); }""")
    box = page.evaluate("""() => { const v = [...Bokeh.index.all_views()].find(v => v.model.name === 'nw-job-lag-fig');
        const b = v.canvas_view.el.getBoundingClientRect();
        return {x: b.left + v.frame.x_scale.compute(10.5), y: b.top + v.frame.y_scale.compute(8.5)}; }""")
    for dx in (0, 3, 6):
        page.mouse.move(box["x"] + dx, box["y"])
    core = r"/core\s*:?\s*node-02\/\S+\/PID:2495392\/neuron_rt\/NC:2/"
    page.wait_for_function(f"() => {core}.test(({DEEP_TEXT})('body'))"
                           f" && /step\\s*:?\\s*\\d+/.test(({DEEP_TEXT})('body'))", timeout=20_000)
    shot(page, f"job-summary-export-{'dark' if dark else 'light'}")
    assert not [c for c in console if "EvalError" in c or "Content Security Policy" in c or c.startswith("error")], console
    assert not o.errors, o.errors


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("which", ["one-rank-kineto", "kineto-without-launches", "fuchsia"])
def test_exported_summaries_draw_no_empty_chart(open_file, tmp_path: Path, which: str, dark: bool) -> None:
    path = {"one-rank-kineto": lambda: real_trace("hta/nccl_data.json.gz"),
            "kineto-without-launches": lambda: T.kineto_without_launches(tmp_path / "mtia.json"),
            "fuchsia": lambda: T.fuchsia(tmp_path / "fuchsia.json")}[which]()
    s = Summary(nw.load_profile(path, cache=False))
    assert s.done.wait(120), s.status.value
    s.to_html(tmp_path / "s.html")
    o = open_file(tmp_path / "s.html", timeline=False, width=1150, dark=dark)
    found = charts(o.page)
    shown = {n: c for n, c in found.items() if c["shown"]}
    assert shown and all(c["rows"] > 0 for c in shown.values()), {n: c["rows"] for n, c in shown.items()}
    assert "nw-stragglers-fig" not in shown and "nw-straggler-steps-fig" not in shown
    assert ("nw-launches-fig" in shown) == (which == "one-rank-kineto")
    if which == "fuchsia":
        assert "CoreFlipWaitThread 5260" in o.page.evaluate(DEEP_TEXT, "#nw-export")
    shot(o.page, f"summary-export-{which}-{'dark' if dark else 'light'}")
    assert not o.errors, o.errors


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_tables_show_eight_rows_of_wrapped_text(open_file, tmp_path: Path, sample: nw.Profile, dark: bool) -> None:
    s = Summary(sample)
    assert s.done.wait(120)
    s.to_html(tmp_path / "s.html")
    o = open_file(tmp_path / "s.html", timeline=False, width=1150, dark=dark)
    problems = o.page.evaluate(TABLE, "nw-problems-table")
    assert problems["rows"] == problems["whole"] == 3 and not problems["cut"], problems
    devices = o.page.evaluate(TABLE, "nw-devices-table")
    assert devices["whole"] >= 8 and not devices["cut"], devices
    o.page.evaluate("() => [...Bokeh.index.all_views()].find(v => v.model.name === 'nw-problems-table')"
                    ".el.scrollIntoView({block: 'start'})")
    shot(o.page, f"summary-export-tables-{'dark' if dark else 'light'}")
    assert not o.errors, o.errors


# Every chart drawn in a Summary widget of the notebook: whether it lies inside its widget, and whether its title
# (each line as the canvas draws it, placed by its alignment over the frame) and legends lie inside the chart.
IN_WIDGETS = """() => { const widgetOf = (el) => { for (let e = el; e; e = e.getRootNode().host) {
    const w = e.closest('.nw-summary-widget'); if (w) return w; } return null; };
  return [...Bokeh.index.all_views()].filter(v => v.model.type === 'Figure' && v.el.isConnected
    && v.model.visible && v.el.getBoundingClientRect().height > 0 && widgetOf(v.el)).map(v => {
  const t = v.model.title, ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${t.text_font_style} ${t.text_font_size} ${t.text_font}`;
  const w = Math.max(0, ...t.text.split('\\n').map(line => ctx.measureText(line).width));
  const f = v.frame.bbox, left = t.align === 'right' ? f.right - w : t.align === 'center' ? f.hcenter - w / 2 : f.left;
  const legends = [...v.computed_renderer_views ?? []].filter(r => r.model.type === 'Legend')
    .map(l => [l.bbox.x0, l.bbox.x1]);
  const box = v.el.getBoundingClientRect(), widget = widgetOf(v.el).getBoundingClientRect();
  const bars = v.model.y_range.factors?.length ?? 0;
  return {name: v.model.name, title: t.text, width: v.bbox.width, titleLeft: left, titleRight: left + w, legends,
          inWidget: box.left >= widget.left - 1 && box.right <= widget.right + 1, widget: widget.width,
          barPx: bars ? f.height / bars : null}; }); }"""


def _check_fits(found: dict[str, dict]) -> list[str]:
    bad = []
    for name, c in found.items():
        if not c["inWidget"]:
            bad.append(f"{name} runs past its widget ({c['widget']:.0f} px)")
        if c["titleLeft"] < -1 or c["titleRight"] > c["width"] + 1:
            bad.append(f"{name}: title {c['title']!r} spans {c['titleLeft']:.0f}..{c['titleRight']:.0f} of "
                       f"{c['width']:.0f} px")
        for x0, x1 in c["legends"]:
            if x0 < -1 or x1 > c["width"] + 1:
                bad.append(f"{name}: legend spans {x0:.0f}..{x1:.0f} of {c['width']:.0f} px")
        if c["barPx"] is not None and c["barPx"] < 16:  # a wrapped title and legend left the bars no room
            bad.append(f"{name}: {c['barPx']:.0f} px a bar")
    return bad


def test_job_and_device_summaries_fit_the_notebook_with_the_sidebar_open_and_closed(page, lab: str,
                                                                                   lab_root: Path) -> None:
    """Issue 35.6: at 1150 px with the file browser open (a ~720 px widget) the critical path's title was cut at
    "(% o" and its legend's "gap"; with it closed "Last to arrive at collectives (steps" lost its ")"; the device
    Summary's "Engines: active and waiting share of the execution (%" too. Every chart's title and legends fit
    inside it, and every chart inside its widget, at both widths; screenshots in light and dark."""
    from .lab import open_notebook, run_all, theme, through_notebook, wait_cells_done
    from .test_summary_kinds import notebook

    notebook(lab_root, "fit.ipynb", [
        "import neuron_widgets as nw\nfrom neuron_widgets.sample.job import write_job\n"
        "from neuron_widgets.widgets import Summary\n"
        "job = nw.load_job(write_job('fitjob', nodes=3, events=30_000, processes=1, cores=3, seed=4), results='fitres')",
        "s = Summary(job)\ns",
        "p = nw.sample_profile()\nd = Summary(p.device_trace(p.device_profiles.iloc[0]['device_profile_name']))\nd"])
    page.set_viewport_size({"width": 1150, "height": 1000})
    open_notebook(page, lab, "fit.ipynb")
    run_all(page)
    wait_cells_done(page)
    # Findings and the critical path come last: the status says so when they are drawn.
    page.wait_for_function("() => /Summarised 3 parts in.*Click a finding/.test(document.querySelector("
                           "'.nw-summary-widget .widget-html')?.textContent ?? '')", timeout=300_000)
    wanted = {"nw-job-lag-fig", "nw-job-stragglers-fig", "nw-job-nodes-fig", "nw-job-cores-fig", "nw-critical-fig",
              "nw-device-engines-fig", "nw-device-layers-fig", "nw-device-operators-fig", "nw-device-opcodes-fig",
              "nw-device-dma-fig"}

    def collect(tag: str, dark: bool = False) -> dict[str, dict]:
        found: dict[str, dict] = {}
        shots = iter(range(99))

        def visit(pg) -> bool:  # every screen of the notebook, top to bottom, each looked at in its screenshot
            found.update({c["name"]: c for c in pg.evaluate(IN_WIDGETS)})
            shot(pg, f"summary-fit-lab-{tag}-{'dark' if dark else 'light'}-{next(shots)}")
            return False

        through_notebook(page, visit)
        state = page.evaluate("""() => [...Bokeh.index.all_views()].filter(v => (v.model.name ?? '').startsWith('nw-critical'))
            .map(v => [v.model.name, v.model.visible, v.el.isConnected, v.el.getBoundingClientRect().height])""")
        assert wanted <= set(found), (sorted(wanted - set(found)), state)
        return found

    open_width = collect("sidebar-open")
    assert 600 < min(c["widget"] for c in open_width.values()) < 800, {n: c["widget"] for n, c in open_width.items()}
    assert not _check_fits(open_width), _check_fits(open_width)
    page.keyboard.press("Control+b")  # the file browser closed: a ~1100 px widget
    page.wait_for_function("() => document.querySelector('.nw-summary-widget').getBoundingClientRect().width > 950",
                           timeout=20_000)
    closed = collect("sidebar-closed")
    assert min(c["widget"] for c in closed.values()) > 950
    assert not _check_fits(closed), _check_fits(closed)
    theme(page, "JupyterLab Dark")
    dark = collect("sidebar-closed", dark=True)
    assert not _check_fits(dark), _check_fits(dark)
    page.keyboard.press("Control+b")
    page.wait_for_function("() => document.querySelector('.nw-summary-widget').getBoundingClientRect().width < 800",
                           timeout=20_000)
    dark_open = collect("sidebar-open", dark=True)
    assert not _check_fits(dark_open), _check_fits(dark_open)
    theme(page, "JupyterLab Light")
    assert not page.errors, page.errors  # type: ignore[attr-defined]
