"""Our patches to BokehJS (js/src/common/bokehtables.ts).

A BokehJS table drawn into an element that is not on the page yet, as jupyter_bokeh draws a
Summary's charts before ipywidgets attaches them: without our patch SlickGrid throws "Cannot find
stylesheet"; with it the grid is built once the element is on the page, sized and clickable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bokeh.embed import json_item
from bokeh.models import ColumnDataSource, DataTable, TableColumn
from bokeh.resources import Resources
from playwright.sync_api import Page

STATIC = Path(__file__).resolve().parents[2] / "neuron_widgets" / "static"

# As jupyter_bokeh draws (widgets.ts): add_document_standalone into the widget's element, here one
# that reaches the page only after the draw has finished.
DRAW_DETACHED = """async () => {
  const {Document} = Bokeh.require('document');
  const {add_document_standalone} = Bokeh.require('embed/standalone');
  const el = document.createElement('div');
  const doc = Document.from_json(window.ITEM.doc);
  window.DOC = doc;
  const out = await add_document_standalone(doc, el, {[window.ITEM.root_id]: el}).then(() => 'drawn', e => String(e));
  window.EL = el;
  return out;
}"""
CELLS = """() => { const found = [];
  const walk = (n) => { for (const e of n.querySelectorAll('*')) {
    if (e.classList.contains('slick-cell')) found.push({text: e.textContent, width: e.getBoundingClientRect().width});
    if (e.shadowRoot) walk(e.shadowRoot); } };
  walk(document); return found; }"""


def _page(tmp_path: Path, patched: bool) -> Path:
    table = DataTable(source=ColumnDataSource({"name": ["<b>bold?</b>", "nc_exec_running"], "n": [1, 2]}),
                      columns=[TableColumn(field="name", title="name"), TableColumn(field="n", title="n")],
                      height=120, width=360, index_position=None)
    js = Resources(mode="inline", components=["bokeh", "bokeh-widgets", "bokeh-tables"]).render_js()
    theme = f'<script type="module">{(STATIC / "theme.js").read_text()}</script>' if patched else ""
    page = tmp_path / f"table-{int(patched)}.html"
    page.write_text(f"<!doctype html><html><head>{js}</head><body>"
                    f"<script>window.ITEM = {json.dumps(json_item(table))};</script>{theme}</body></html>")
    return page


def _draw(page: Page, tmp_path: Path, patched: bool) -> str:
    page.goto(_page(tmp_path, patched).as_uri())
    page.wait_for_function("() => window.Bokeh && window.Bokeh.Tables")
    if patched:  # the module patches as soon as it runs; wait for it, not for a guessed delay
        page.wait_for_function("() => Bokeh.Tables.DataTable.prototype.default_view.prototype.__nwDeferredWhenDetached")
    return page.evaluate(DRAW_DETACHED)


def test_without_the_patch_the_detached_table_throws(page: Page, tmp_path: Path) -> None:
    # The race this guards against, shown to be real with the BokehJS the package installs.
    assert "SlickGrid Cannot find stylesheet" in _draw(page, tmp_path, patched=False)


@pytest.mark.parametrize("late_ms", [0, 400])
def test_patched_table_waits_for_the_page_then_draws_sized_and_clickable(page: Page, tmp_path: Path,
                                                                        late_ms: int) -> None:
    assert _draw(page, tmp_path, patched=True) == "drawn"
    assert page.evaluate(CELLS) == []  # nothing built off the page
    page.evaluate(f"() => new Promise(r => setTimeout(() => {{ document.body.appendChild(window.EL); r(); }}, {late_ms}))")
    page.wait_for_function(f"() => ({CELLS})().length === 4")
    cells = page.evaluate(CELLS)
    assert [c["text"] for c in cells] == ["<b>bold?</b>", "1", "nc_exec_running", "2"]  # text, not HTML
    assert all(c["width"] > 40 for c in cells), cells  # the columns were sized on the page
    # A click selects the row in the model, as the Summary's clicks need.
    page.evaluate("""() => { const walk = (n) => { for (const e of n.querySelectorAll('*')) {
        if (e.classList.contains('slick-cell') && e.textContent === 'nc_exec_running') { e.click(); return true; }
        if (e.shadowRoot && walk(e.shadowRoot)) return true; } return false; }; walk(document); }""")
    page.wait_for_function("() => window.DOC.roots()[0].source.selected.indices.join() === '1'")
    assert not page.errors, page.errors  # type: ignore[attr-defined]


def test_a_table_removed_before_it_reaches_the_page_leaves_no_error(page: Page, tmp_path: Path) -> None:
    assert _draw(page, tmp_path, patched=True) == "drawn"
    page.evaluate("() => window.DOC.clear()")  # jupyter_bokeh clears the document when it redraws
    page.evaluate("() => document.body.appendChild(window.EL)")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert page.evaluate(CELLS) == []
    assert not page.errors, page.errors  # type: ignore[attr-defined]


def test_our_empty_charts_do_not_warn_but_other_plots_still_do(page: Page, tmp_path: Path) -> None:
    # Issue 26 item 6: 55 "could not set initial ranges" warnings per Run All, from Summary charts drawn
    # before their numbers (or left empty where an analysis does not apply).
    from bokeh.layouts import column
    from bokeh.plotting import figure

    def empty(name: str) -> figure:
        f = figure(height=120, width=300, name=name)
        f.scatter(x=[], y=[])
        return f

    item = json.dumps(json_item(column(empty("nw-temporal-fig"), empty("nw-steps-fig"), empty("someone-elses"))))
    js = Resources(mode="inline", components=["bokeh", "bokeh-widgets", "bokeh-tables"]).render_js()
    theme = (STATIC / "theme.js").read_text()
    html = tmp_path / "ranges.html"
    html.write_text(f"<!doctype html><html><head>{js}</head><body><div id='t'></div>"
                    f"<script>window.ITEM = {item};</script><script type='module'>{theme}</script></body></html>")
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if "initial ranges" in m.text else None)
    page.goto(html.as_uri())
    page.wait_for_function("() => window.Bokeh && Bokeh.require('models/plots/plot').PlotView.prototype.__nwQuietEmptyRanges")
    page.evaluate("() => Bokeh.embed.embed_item(window.ITEM, document.getElementById('t'))")
    page.wait_for_function("() => [...Bokeh.index.all_views()].filter(v => v._range_manager).length === 3")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    # Only the plot that is not ours warned (once or more); ours said nothing.
    assert warnings and page.evaluate("() => [...Bokeh.index.all_views()].some(v => v.model.name === 'someone-elses')")
    views = page.evaluate("""() => [...Bokeh.index.all_views()].filter(v => v._range_manager)
        .map(v => [v.model.name, v._range_manager.warn_initial_ranges])""")
    assert dict(views) == {"nw-temporal-fig": False, "nw-steps-fig": False, "someone-elses": True}
    assert not page.errors, page.errors  # type: ignore[attr-defined]
