"""The tour notebook in a real JupyterLab: draw, click, details in another cell, grouping, zoom, pan, brush."""

from __future__ import annotations

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .lab import DEEP_TEXT, find_item, open_notebook, run_all, settle, shot, theme, through_notebook, wait_cells_done


def drawn_pixels(page: Page, index: int) -> int:
    """Pixels of the timeline canvas that differ from its background."""
    return page.evaluate("""(i) => {
      const c = document.querySelectorAll('.nw-timeline .nw-canvas')[i];
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const bg = [d[0], d[1], d[2]]; let n = 0;
      for (let k = 0; k < d.length; k += 4) if (Math.abs(d[k]-bg[0]) + Math.abs(d[k+1]-bg[1]) + Math.abs(d[k+2]-bg[2]) > 30) n++;
      return n; }""", index)


def view_of(page: Page, index: int) -> tuple[float, float]:
    t0, t1 = page.evaluate("(i) => document.querySelectorAll('.nw-timeline')[i].dataset.view", index).split(",")
    return float(t0), float(t1)


def test_tour_notebook(page: Page, lab: str) -> None:
    console: list[tuple[str, str]] = []
    page.on("console", lambda m: console.append((m.type, m.text)) if m.type in ("error", "warning") else None)
    open_notebook(page, lab, "tour.ipynb")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function("() => document.querySelectorAll('.nw-timeline').length >= 3", timeout=60_000)
    tl = page.locator(".nw-timeline").first
    tl.scroll_into_view_if_needed()
    # Timelines draw when on screen (JupyterLab detaches cells far off screen).
    page.wait_for_function("() => +document.querySelector('.nw-timeline').dataset.drawn > 0", timeout=60_000)
    settle(page, 0)
    assert drawn_pixels(page, 0) > 5000
    assert not page.errors, page.errors  # type: ignore[attr-defined]
    shot(page, "tour-01-timeline")

    # Hover shows a tooltip with the event's name (as text).
    item = find_item(page, 0, 8, plain=True)
    assert item is not None
    page.mouse.move(item["x"], item["y"])
    page.wait_for_selector(".nw-tooltip", state="visible")
    assert page.locator(".nw-tooltip .nw-tt-name").inner_text() == item["name"]

    # Click: EventDetails in another cell shows it; its row is the clicked one.
    page.mouse.click(item["x"], item["y"])
    page.wait_for_function("(row) => document.querySelector('.nw-details')?.dataset.row === String(row)", arg=item["row"],
                           timeout=20_000)
    details = page.locator(".nw-details").first
    assert details.locator(".nw-details-title").inner_text() == item["name"]
    details.scroll_into_view_if_needed()
    shot(page, "tour-02-details")

    # Grouping: the selector in its own cell changes the timeline's track labels.
    tl.scroll_into_view_if_needed()
    before = tl.locator(".nw-label-text").all_inner_texts()
    page.locator(".widget-toggle-buttons button", has_text="NeuronCore").first.click()
    page.wait_for_function("(b) => { const t = [...document.querySelectorAll('.nw-timeline')[0]"
                           ".querySelectorAll('.nw-label-text')].map(e => e.textContent); return t.join('|') !== b; }",
                           arg="|".join(before), timeout=20_000)
    after = tl.locator(".nw-label-text").all_inner_texts()
    assert any(t.startswith("NC:") for t in after)
    shot(page, "tour-03-neuron-core")

    # Zoom with Ctrl+wheel at the cursor, then keys (only while focused), then drag to pan.
    canvas = tl.locator(".nw-canvas")
    box = canvas.bounding_box()
    assert box
    cx, cy = box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 150)
    t0, t1 = view_of(page, 0)
    page.mouse.move(cx, cy)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -400)
    page.keyboard.up("Control")
    settle(page, 0)
    z0, z1 = view_of(page, 0)
    assert z1 - z0 < 0.8 * (t1 - t0)
    cells = page.locator(".jp-Notebook .jp-Cell").count()
    tl.locator(".nw-corner").click()  # focus the widget, not one of its inputs
    page.keyboard.press("w")
    settle(page, 0)
    w0, w1 = view_of(page, 0)
    assert w1 - w0 < z1 - z0
    page.keyboard.press("a")  # pans left; JupyterLab must not insert a cell above
    settle(page, 0)
    k0, k1 = view_of(page, 0)
    assert k0 < w0 and abs((k1 - k0) - (w1 - w0)) < 1e-6 * (w1 - w0)
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx - 300, cy, steps=5)
    page.mouse.up()
    settle(page, 0)
    p0, p1 = view_of(page, 0)
    assert p0 > k0 and abs((p1 - p0) - (k1 - k0)) < 1e-3 * (k1 - k0)
    page.wait_for_function("() => +document.querySelectorAll('.nw-timeline')[0].dataset.drawn > 0")
    shot(page, "tour-04-zoomed")

    # Brush on the time axis: the summary table of the range appears.
    axis = tl.locator(".nw-axis").bounding_box()
    assert axis
    page.mouse.move(axis["x"] + 100, axis["y"] + 10)
    page.mouse.down()
    page.mouse.move(axis["x"] + 500, axis["y"] + 10, steps=5)
    page.mouse.up()
    page.wait_for_selector(".nw-summary .nw-table tbody tr", timeout=20_000)
    assert "Selected range" in tl.locator(".nw-summary-title").inner_text()
    shot(page, "tour-05-brush")
    assert not page.errors, page.errors  # type: ignore[attr-defined]

    # The Summary (far down the notebook: scrolled to, as JupyterLab keeps only cells near the view
    # in the page) reported its numbers, and its chart view is drawn.
    drawn: list[bool] = []

    def summary_drawn(pg: Page) -> bool:
        if not pg.locator(".nw-summary-widget").count():
            return False
        pg.locator(".nw-summary-widget").first.scroll_into_view_if_needed()
        try:
            pg.wait_for_function("() => { const w = document.querySelector('.nw-summary-widget'); "
                                 "return w && /Summarised/.test(w.textContent) && w.querySelector('[data-root-id]'); }",
                                 timeout=120_000)
        except PlaywrightTimeout:
            state = pg.evaluate("""() => [...document.querySelectorAll('.nw-summary-widget')].map(w => ({
                text: w.textContent.slice(0, 200), root: !!w.querySelector('[data-root-id]'),
                children: [...w.children].map(c => c.className).join(' | '),
                bokeh: !!window.Bokeh, tables: !!(window.Bokeh && window.Bokeh.Tables)}))""")
            shot(pg, "tour-summary-stalled")
            raise AssertionError(f"the Summary did not draw its charts: {state}; console {console}") from None
        drawn.append(True)
        return True

    through_notebook(page, summary_drawn)
    assert drawn, "no Summary in the tour's outputs"
    # Issue 35 item 7: the timeline has a brushed range, so the Summary says it shows that range, what the whole
    # profile holds (2 errors, 1 hang) and how to see it; its cards give the whole's counts beside the range's.
    page.wait_for_function(f"() => /brushed range .*which has 2 errors and 1 hang\\. Clear the brush/"
                           f".test(({DEEP_TEXT})('.nw-summary-widget'))", timeout=60_000)
    page.locator(".nw-summary-widget").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    shot(page, "tour-06-summary")
    theme(page, "JupyterLab Dark")  # the same note in the dark theme, then back for the next tests
    page.wait_for_function("() => !document.querySelector('#jupyterlab-splash')", timeout=30_000)
    page.locator(".nw-summary-widget").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    shot(page, "tour-06-summary-dark")
    theme(page, "JupyterLab Light")
    # Issue 26: a fresh Run All leaves the console clean (SlickGrid errors, bokeh's range and
    # jquery-ui warnings came from our charts and tables).
    assert not [m for m in console if m[0] == "error"], console
    assert not [m for m in console if "bokeh" in m[1].lower() or "slickgrid" in m[1].lower()], console
    assert not page.errors, page.errors  # type: ignore[attr-defined]
