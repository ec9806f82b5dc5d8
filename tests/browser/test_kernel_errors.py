"""The browser tests' JupyterLab records what a widget message raised in its kernels (lab.record_widget_errors): the
recorder itself sees such an error, which ipywidgets shows in no cell."""

from __future__ import annotations

import time
from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Browser

from .lab import KERNEL_ERRORS, jupyter_lab, open_notebook, run_all, wait_cells_done


def test_a_state_the_kernel_refuses_is_recorded(browser: Browser, tmp_path: Path) -> None:
    cells = [nbf.v4.new_code_cell("import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n"
                                  "tl = Timeline(nw.sample_profile(), height=200)\ntl")]
    nbf.write(nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                          "language": "python"}}), tmp_path / "bad.ipynb")
    log = tmp_path / KERNEL_ERRORS
    with jupyter_lab(tmp_path) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        open_notebook(page, url, "bad.ipynb")
        run_all(page)
        wait_cells_done(page, 120_000)
        page.wait_for_function("() => document.querySelector('.nw-timeline')?.__nwView", timeout=60_000)
        assert not log.exists() or not log.read_text()
        # A height that is no number: the Int trait's validation raises in the kernel.
        page.evaluate("() => { const m = document.querySelector('.nw-timeline').__nwView.model;"
                      " m.set('height', 'tall'); m.save_changes(); }")
        deadline = time.monotonic() + 30
        while not (log.exists() and log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        page.close()
    text = log.read_text() if log.exists() else ""
    assert "TraitError" in text and "height" in text, text
