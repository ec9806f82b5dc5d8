"""A grouping switch on a large profile in the browser: the preview in the new grouping at once, said to be one,
then every event, with the selection, the brush and the row at the top of the tracks kept and no blank frame."""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Page

from .lab import open_notebook, shot
from .test_safety_and_busy import run_cell

# The sample is small; previews are made to start at 1,000 events. The default grouping is built as
# load_profile's thread builds it; any other grouping's build waits for the second cell, as a
# 10M-event profile's would take seconds.
SETUP = """import threading
import neuron_widgets as nw
from neuron_widgets.model import profile as mp
from neuron_widgets.widgets import Timeline
mp.PREVIEW_MIN_EVENTS, mp.PREVIEW_EVENTS, mp.PREVIEW_PX = 1000, 2000, 64
p = nw.load_profile(nw.write_sample('switch_sample', events=20_000, seed=5), prepare=False)
p.prepare('default', background=False)
gate, real_lod = threading.Event(), mp.Profile.lod
mp.Profile.lod = lambda self, g='default': (gate.wait(300) if self is p and not self.ready(g) else None, real_lod(self, g))[1]
tl = Timeline(p, height=420)
tl"""


def write_notebook(root: Path) -> None:
    cells = [nbf.v4.new_code_cell(SETUP), nbf.v4.new_code_cell("gate.set()")]
    nbf.write(nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                          "language": "python"}}), root / "switch.ipynb")


VIEW = "document.querySelector('.nw-timeline').__nwView"
# Events drawn (merged runs count each of their events; markers drawn on top do not), the tracks' lanes,
# the row at the top of the scroll area and how far into it the top is.
STATE = f"""() => {{ const v = {VIEW};
    let n = 0; for (let i = 0; i < v.items.n; i++) if (!(v.items.flags[i] & 8)) n += v.items.count[i];
    const top = v.scroll.scrollTop;
    const row = v.rows.find((r) => r.y + r.h > top);
    return {{events: n, lanes: v.model.get('tracks').map((t) => t.lanes), labels: v.model.get('tracks').map((t) => t.label),
             revision: v.model.get('revision'), top: row.kind === 'track' ? 't' + row.track : row.kind + row.label,
             into: top - row.y, selected: v.model.get('selected_row'), detail: v.model.get('selection_detail'),
             brush: v.brushLocal}}; }}"""


def test_a_switch_draws_the_preview_at_once_then_every_event(page: Page, lab: str, lab_root: Path) -> None:
    write_notebook(lab_root)
    open_notebook(page, lab, "switch.ipynb")
    run_cell(page, 0)
    page.wait_for_function(f"() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0 && {VIEW}.items",
                           timeout=90_000)
    assert page.locator(".nw-timeline .nw-spinner").count() == 0  # the default grouping is built: no preview
    # A selection (an event drawn; a merged run stands for its longest) and a brush,
    # both to be kept through the switch.
    row = page.evaluate(f"""() => {{ const v = {VIEW}; const it = v.items;
        for (let i = 0; i < it.n; i++) if (!(it.flags[i] & 8)) return it.row[i]; return -1; }}""")
    assert row >= 0
    page.evaluate(f"(r) => {{ const v = {VIEW}; v.select(r); const s = v.span(); v.setBrush([s[1] * 0.3, s[1] * 0.5]); }}",
                  row)
    page.wait_for_function(f"(r) => {VIEW}.model.get('selection_detail').row === r", arg=row, timeout=30_000)

    page.locator(".nw-timeline select[title='Grouping']").select_option("thread")
    # The preview state: the thread grouping's tracks at once, drawn from the sample, said so with a spinner.
    page.wait_for_function(f"""() => {{ const v = {VIEW}; return v.model.get('grouping') === 'thread' &&
        v.model.get('loading') && v.model.get('status').startsWith('preview:') && v.items &&
        v.items.grouping === 'thread' && +v.root.dataset.drawn > 0; }}""", timeout=60_000)
    head = page.locator(".nw-timeline .nw-head")
    assert "preview:" in head.inner_text() and "of 20,0" in head.inner_text()
    assert page.locator(".nw-timeline .nw-spinner").count() == 1
    assert "nw-head-float" in (head.get_attribute("class") or "")  # over the plot: the tracks do not move
    # Scrolled down a little in the preview; then watched, frame by frame, for a frame with nothing held.
    page.evaluate(f"() => {{ const v = {VIEW}; v.scroll.scrollTop = 150; }}")
    page.wait_for_function(f"() => {VIEW}.settled", timeout=30_000)
    preview = page.evaluate(STATE)
    assert 0 < preview["events"] < 8_000  # about one event in ten of the rows asked for
    assert preview["selected"] == row and preview["detail"]["row"] == row and preview["detail"]["track"] >= 0
    assert preview["brush"] is not None and preview["into"] >= 0
    shot(page, "grouping-switch-01-preview")
    page.evaluate(f"""() => {{ const v = {VIEW}; window.__nwBlank = 0; window.__nwWatch = true;
        const tick = () => {{ if (!v.items) window.__nwBlank++; if (window.__nwWatch) requestAnimationFrame(tick); }};
        requestAnimationFrame(tick); }}""")

    run_cell(page, 1)  # the thread grouping's build may finish
    page.wait_for_function(f"() => !{VIEW}.model.get('loading') && {VIEW}.model.get('status') === ''",
                           timeout=60_000)
    page.wait_for_function(f"(r) => {VIEW}.items && {VIEW}.items.revision > r && {VIEW}.settled",
                           arg=preview["revision"], timeout=30_000)
    full = page.evaluate(STATE)
    assert page.evaluate("() => { window.__nwWatch = false; return window.__nwBlank; }") == 0  # never blank
    assert full["labels"] == preview["labels"] and sum(full["lanes"]) > sum(preview["lanes"])
    assert full["events"] > 3 * preview["events"]  # every event of the rows on screen
    # The same row at the top, the same distance into it; the selection and the brush as they were.
    assert (full["top"], full["into"]) == (preview["top"], preview["into"])
    assert full["selected"] == row and full["detail"]["track"] == preview["detail"]["track"]
    assert full["detail"]["lane"] >= 0 and full["brush"] == preview["brush"]
    assert page.locator(".nw-timeline .nw-spinner").count() == 0
    assert "preview" not in page.locator(".nw-timeline").first.inner_text()
    shot(page, "grouping-switch-02-every-event")
    assert not page.errors, page.errors  # type: ignore[attr-defined]
