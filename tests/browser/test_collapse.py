"""Collapse all / Expand all in a real JupyterLab: counter groups follow the tracks (issue 14, bug 3)."""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Page

from .lab import open_notebook, shot, wait_cells_done

VIEW = "document.querySelector('.nw-timeline').__nwView"


def test_collapse_all_collapses_counter_groups(page: Page, lab: str, lab_root: Path) -> None:
    cells = [nbf.v4.new_code_cell("import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n"
                                  "Timeline(nw.sample_profile(), height=520)")]
    nbf.write(nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                          "language": "python"}}),
              lab_root / "collapse.ipynb")
    open_notebook(page, lab, "collapse.ipynb")
    page.locator(".jp-CodeCell .jp-InputPrompt").first.click()
    page.keyboard.press("Control+Enter")
    wait_cells_done(page, 120_000)
    page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=60_000)
    tl = page.locator(".nw-timeline").first
    tl.get_by_role("button", name="Expand all").click()
    page.wait_for_function(f"() => {VIEW}.rows.filter(r => r.kind === 'counter').length > 4", timeout=10_000)
    tl.get_by_role("button", name="Collapse all").click()
    # Every group closed, counters included.
    page.wait_for_function(f"() => {VIEW}.rows.every(r => r.kind !== 'counter' && r.kind !== 'track')", timeout=10_000)
    shot(page, "collapse-01-all-collapsed")
