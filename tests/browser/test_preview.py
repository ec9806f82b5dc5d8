"""A large profile's first view in the browser: its preview, said to be one, then every event."""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Page

from .lab import open_notebook, shot
from .test_safety_and_busy import run_cell

# The sample is small; previews are made to start at 1,000 events, and the whole profile's
# index waits for the second cell, as a 10M-event profile's would for its background build.
SETUP = """import threading
import neuron_widgets as nw
from neuron_widgets.model import profile as mp
from neuron_widgets.widgets import Timeline
mp.PREVIEW_MIN_EVENTS, mp.PREVIEW_EVENTS, mp.PREVIEW_PX = 1000, 2000, 64
p = nw.load_profile(nw.write_sample('preview_sample', events=20_000, seed=3), prepare=False)
gate, real_lod = threading.Event(), mp.Profile.lod
mp.Profile.lod = lambda self, g='default': (gate.wait(120) if self is p else None, real_lod(self, g))[1]
tl = Timeline(p, height=420)
tl"""


def write_notebook(root: Path) -> None:
    cells = [nbf.v4.new_code_cell(SETUP), nbf.v4.new_code_cell("gate.set()")]
    nbf.write(nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                          "language": "python"}}), root / "preview.ipynb")


VIEW = "document.querySelector('.nw-timeline').__nwView"


def test_preview_first_then_every_event(page: Page, lab: str, lab_root: Path) -> None:
    write_notebook(lab_root)
    open_notebook(page, lab, "preview.ipynb")
    run_cell(page, 0)
    page.wait_for_function(f"() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0 && {VIEW}.items",
                           timeout=90_000)
    head = page.locator(".nw-timeline .nw-head")
    assert "preview:" in head.inner_text() and "of 20,0" in head.inner_text()
    assert page.locator(".nw-timeline .nw-spinner").count() == 1
    preview = page.evaluate(f"""() => {{ const v = {VIEW};
        let n = 0; for (let i = 0; i < v.items.n; i++) if (!(v.items.flags[i] & 8)) n += v.items.count[i];
        return {{events: n, lanes: v.model.get('tracks').map(t => t.lanes), revision: v.model.get('revision')}}; }}""")
    assert 0 < preview["events"] < 10_000  # of the rows on screen, about one event in ten
    shot(page, "preview-01-sample")

    run_cell(page, 1)
    page.wait_for_function(f"() => !{VIEW}.model.get('loading') && {VIEW}.model.get('status') === ''",
                           timeout=60_000)
    page.wait_for_function(f"(r) => {VIEW}.items && {VIEW}.items.revision > r", arg=preview["revision"],
                           timeout=30_000)
    full = page.evaluate(f"""() => {{ const v = {VIEW};
        let n = 0; for (let i = 0; i < v.items.n; i++) if (!(v.items.flags[i] & 8)) n += v.items.count[i];
        return {{events: n, lanes: v.model.get('tracks').map(t => t.lanes)}}; }}""")
    assert full["events"] > 3 * preview["events"]  # every event of the rows on screen
    assert sum(full["lanes"]) >= sum(preview["lanes"])
    assert page.locator(".nw-timeline .nw-spinner").count() == 0
    assert "preview" not in page.locator(".nw-timeline").first.inner_text()
    shot(page, "preview-02-every-event")
    assert not page.errors, page.errors  # type: ignore[attr-defined]
