"""The Summary of each trace kind in a real JupyterLab: what is drawn, what is said, and the device table kept."""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Page

from .lab import open_notebook, run_all, shot, wait_cells_done

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
