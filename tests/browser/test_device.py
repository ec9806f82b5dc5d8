"""Drill-down in a real JupyterLab: a click on nc_exec_running fills the Device Trace Viewer; the picker's modal."""

from __future__ import annotations

import contextlib
import time

from playwright.sync_api import Page

from .lab import find_item, open_notebook, run_all, settle, shot, wait_cells_done

# Timelines by what they show: the device viewers are those whose groupings are the device ones.
DEVICE_INDEX = """(n) => { const all = [...document.querySelectorAll('.nw-timeline')];
  const dev = all.map((r, i) => [r, i]).filter(([r]) => 'engines' in r.__nwView.model.get('groupings'));
  return dev.length > n ? dev[n][1] : -1; }"""

# What a click that filled no details met: the element under the point, the selection, the titles shown.
CLICK_STATE = """([i, x, y]) => { const root = document.querySelectorAll('.nw-timeline')[i], el = document.elementFromPoint(x, y);
  return {under: el ? el.tagName + '.' + el.className : null, selected: root.__nwView.model.get('selected_row'),
          titles: [...document.querySelectorAll('.nw-details-title')].map(e => e.textContent),
          canvas: root.querySelector('.nw-canvas').getBoundingClientRect().toJSON(), window: window.innerHeight,
          details: [...document.querySelectorAll('.nw-details')].map(d => d.textContent.slice(0, 60)),
          detail_row: root.__nwView.model.get('selection_detail').row, busy: !!document.querySelector('.nw-spin')}; }"""


class Received:
    """When kernel messages holding all of `words` reached the page's websocket (a failure then says
    whether the kernel's reply was lost on the way or arrived and was not drawn)."""

    def __init__(self, page: Page) -> None:
        self.words: tuple[bytes, ...] = (b"\0",)
        self.times: list[float] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload: str | bytes) -> None:
        data = payload if isinstance(payload, bytes) else payload.encode()
        if all(w in data for w in self.words):
            self.times.append(time.monotonic())

    def since(self, t0: float) -> list[float]:
        return [round(t - t0, 2) for t in self.times if t >= t0]


def model_get(page: Page, index: int, key: str) -> object:
    return page.evaluate("([i, k]) => document.querySelectorAll('.nw-timeline')[i].__nwView.model.get(k)", [index, key])


def test_click_nc_exec_running_opens_its_device_trace(page: Page, lab: str) -> None:
    received = Received(page)
    open_notebook(page, lab, "tour.ipynb")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function(DEVICE_INDEX, arg=0, timeout=60_000)
    dev = page.evaluate(DEVICE_INDEX, 0)
    # The tour selected an execution from Python before the viewer was made: it shows that one.
    page.wait_for_function("(i) => { const m = document.querySelectorAll('.nw-timeline')[i].__nwView.model;"
                           " return m.get('title').startsWith('Device trace ') && !m.get('loading'); }", arg=dev,
                           timeout=30_000)

    # Bring executions into view with the search box (it selects the first match, which may load another).
    tl = page.locator(".nw-timeline").first
    tl.scroll_into_view_if_needed()
    page.wait_for_function("() => +document.querySelector('.nw-timeline').dataset.drawn > 0", timeout=60_000)
    search = tl.locator("input[type=search]").first
    search.fill("^nc_exec_running$")
    search.press("Enter")
    page.wait_for_function("() => document.querySelector('.nw-timeline .nw-note')?.textContent.includes('/')",
                           timeout=30_000)
    page.wait_for_function("(i) => !document.querySelectorAll('.nw-timeline')[i].__nwView.model.get('loading')",
                           arg=dev, timeout=30_000)
    gen = model_get(page, dev, "generation")
    selected = page.evaluate("() => document.querySelector('.nw-timeline').__nwView.model.get('selected_row')")

    # Now a real click on another execution: zoom out until one is drawn wide enough to hit.
    item = None
    for _ in range(8):
        settle(page, 0)
        item = find_item(page, 0, 6, name="nc_exec_running", skip=selected)
        if item:
            break
        tl.locator(".nw-corner").click()
        page.keyboard.press("s")
    assert item is not None, "no nc_exec_running drawn wide enough to click"
    # What the viewer's view tells the kernel, recorded: once it has drawn the new trace, a PaintedNotice of its
    # generation (the kernel reads the rest of the trace's tables after it).
    page.evaluate("(i) => { const m = document.querySelectorAll('.nw-timeline')[i].__nwView.model, send = m.send;"
                  " window.__nwSent = []; m.send = function (c, ...rest) { window.__nwSent.push(c);"
                  " return send.call(this, c, ...rest); }; }", dev)
    page.mouse.click(item["x"], item["y"])
    page.wait_for_function("([i, g]) => { const m = document.querySelectorAll('.nw-timeline')[i].__nwView.model;"
                           " return m.get('generation') > g && !m.get('loading'); }", arg=[dev, gen], timeout=30_000)
    page.wait_for_function("([i, g]) => window.__nwSent.some(c => c.type === 'painted' && c.generation > g"
                           " && c.generation === document.querySelectorAll('.nw-timeline')[i].__nwView.model"
                           ".get('generation'))", arg=[dev, gen], timeout=30_000)
    assert model_get(page, dev, "error") == ""
    viewer = page.locator(".nw-timeline").nth(dev)
    viewer.scroll_into_view_if_needed()
    page.wait_for_function("(i) => +document.querySelectorAll('.nw-timeline')[i].dataset.drawn > 0", arg=dev,
                           timeout=30_000)
    settle(page, dev)
    shot(page, "device-01-drill-down")
    labels = [t.strip() for t in viewer.locator(".nw-label-text").all_text_contents()]
    assert "Engines" in labels and "Tensor" in labels and "DMA" in labels, labels
    # Text content, not rendered text: a cell above that lays its output out late can push the viewer off screen
    # again, and JupyterLab skips rendering cells off screen (content-visibility), whose inner text is then empty.
    chips = [t.strip() for t in viewer.locator(".nw-chip-label").all_text_contents()]
    assert chips[0] == "Execution" and "Tensor" in chips, chips
    assert "timestamp_sync_point" in (viewer.locator(".nw-head").text_content() or "")

    # An instruction clicked in the device viewer fills the EventDetails bound to it.
    # The summary below computes in the kernel's threads after Run All; its spinner gone, the click
    # does not share the kernel with it.
    # Still busy after a minute: the click must work meanwhile too, which the loop below checks.
    with contextlib.suppress(Exception):
        page.wait_for_function("() => !document.querySelector('.nw-spin')", timeout=60_000)
    # The view may still be settling (rows laid out again when late replies arrive): a click that
    # landed before it settled is retried on the item's new place.
    # Cells below may still grow (charts drawn late) and move the viewer: it is brought back into
    # the window before each try.
    tried: list[dict] = []
    for attempt in range(3):
        viewer.scroll_into_view_if_needed()
        if attempt:
            # A retry must be a new selection: Esc clears the one the last click made, and another
            # instruction is clicked where one is drawn, so that the kernel sends details again.
            viewer.locator(".nw-corner").click()
            page.keyboard.press("Escape")
        settle(page, dev)
        ins = (find_item(page, dev, 4, name=tried[0]["name"], skip=tried[-1]["row"]) if tried else None) \
            or find_item(page, dev, 4)
        assert ins is not None
        tried.append(ins)
        received.words = (b'"event"', f'"{ins["name"]}"'.encode())  # an EventDetails update naming it
        clicked = time.monotonic()
        page.mouse.click(ins["x"], ins["y"])
        try:
            page.wait_for_function("(name) => [...document.querySelectorAll('.nw-details-title')]"
                                   ".some(e => e.textContent === name)", arg=ins["name"], timeout=15_000)
            break
        except Exception:
            if attempt == 2:
                state = page.evaluate(CLICK_STATE, [dev, ins["x"], ins["y"]])
                raise AssertionError(f"clicking {tried} filled no details: {state}; the kernel's details for the "
                                     f"last click reached the page {received.since(clicked)} s after it") from None
    details = page.locator(".nw-details", has=page.locator(".nw-details-title", has_text=ins["name"])).first
    text = details.text_content() or ""
    assert "operands" in text and "hlo_name" in text
    details.scroll_into_view_if_needed()
    shot(page, "device-02-instruction")
    assert not page.errors, page.errors  # type: ignore[attr-defined]


def test_picker_modal_submit_opens_a_viewer_below(page: Page, lab: str) -> None:
    open_notebook(page, lab, "tour.ipynb")
    run_all(page)
    wait_cells_done(page)
    opener = page.locator(".nw-open-list").first
    opener.scroll_into_view_if_needed()
    opener.click()
    dialog = page.locator("dialog.nw-dialog[open]")
    dialog.wait_for(timeout=10_000)
    rows = dialog.locator(".nw-pick-row")
    total = rows.count()
    assert total >= 8
    submit = dialog.locator("button", has_text="Submit")
    assert submit.is_disabled()
    # The filter narrows the list; typing in it must not reach JupyterLab's shortcuts.
    cells = page.locator(".jp-Notebook .jp-Cell").count()
    search = dialog.locator("input[type=search]")
    # The placeholder is read whole (it was cut off), and says how to name a column.
    assert page.evaluate("""(el) => { const c = document.createElement('canvas').getContext('2d');
        c.font = getComputedStyle(el).font; return c.measureText(el.placeholder).width < el.clientWidth - 8; }""",
                         search.element_handle()), search.get_attribute("placeholder")
    assert "nc 3" in (search.get_attribute("placeholder") or "")
    # As a user names columns (NeuronCore 1, model 2), and whole numbers as whole values: "1 2" is
    # core 1's model 2, not every row with a 1 and a 2 somewhere in its ids.
    for typed, names in (("nc 1 model 2", ["004", "008", "012", "016"]), ("nc:1 model:2", ["004", "008", "012", "016"]),
                         ("1 2", ["004", "008", "012", "016"]), ("nc 3", [])):
        search.fill(typed)
        assert [t[-3:] for t in rows.locator("td:first-child").all_inner_texts()] == names, typed
    assert "0 of" in dialog.locator(".nw-note").first.inner_text()
    search.fill("neuron_profile_003")
    assert rows.count() == 1
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells
    rows.first.click()
    assert not submit.is_disabled()
    shot(page, "device-03-picker")
    submit.click()
    assert page.locator("dialog.nw-dialog[open]").count() == 0
    # Found by its title, not by its place: JupyterLab takes cells far from the view out of the page
    # (and puts them back), so the timelines' order in the DOM shifts while the page settles.
    picked = ("() => [...document.querySelectorAll('.nw-timeline')].find(r => r.__nwView && "
              "String(r.__nwView.model.get('title')).includes('neuron_profile_003'))")
    page.wait_for_function(f"() => !!({picked})()", timeout=30_000)
    viewer = page.locator(".nw-timeline", has=page.locator(".nw-head", has_text="neuron_profile_003")).first
    viewer.scroll_into_view_if_needed()
    page.wait_for_function(f"() => {{ const r = ({picked})(); return !!r && +r.dataset.drawn > 0; }}", timeout=30_000)
    assert "device clock" in (viewer.locator(".nw-head").text_content() or "")
    shot(page, "device-04-picked")
    assert not page.errors, page.errors  # type: ignore[attr-defined]
