"""A notebook saved with its widget state and reopened without the old kernel still shows the last view."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Browser, Page

from .lab import open_notebook, shot, wait_cells_done

CANVAS_PIXELS = """() => {
  const c = document.querySelector('.nw-timeline .nw-canvas');
  if (!c || !c.width) return 0;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const bg = [d[0], d[1], d[2]]; let n = 0;
  for (let k = 0; k < d.length; k += 4) if (Math.abs(d[k]-bg[0]) + Math.abs(d[k+1]-bg[1]) + Math.abs(d[k+2]-bg[2]) > 30) n++;
  return n; }"""


def saved_snapshot_bytes(path: Path) -> int:
    """Size of the Timeline's `_snapshot` buffer in the widget state saved in the notebook file."""
    nb = json.loads(path.read_text())
    state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    for model in state.get("state", {}).values():
        for buf in model.get("buffers", []):
            if buf.get("path") == ["_snapshot"]:
                return len(buf.get("data", ""))
    return 0


def test_reopened_notebook_shows_the_saved_view(page: Page, browser: Browser, lab: str, lab_root: Path) -> None:
    got = lab_root / "snapshot_in_kernel.txt"
    got.unlink(missing_ok=True)
    cells = [nbf.v4.new_code_cell("import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n"
                                  "tl = Timeline(nw.sample_profile(), height=320)\n"
                                  # What the kernel holds of the browser's snapshot, once it takes it.
                                  f"tl.observe(lambda c: open({str(got)!r}, 'w').write(str(len(c['new']))), "
                                  "names=['_snapshot'])\ntl")]
    nbf.write(nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                          "language": "python"}}),
              lab_root / "snap.ipynb")
    open_notebook(page, lab, "snap.ipynb")
    page.locator(".jp-CodeCell .jp-InputPrompt").first.click()
    page.keyboard.press("Control+Enter")  # in place: Shift+Enter would add an empty cell below
    wait_cells_done(page, 120_000)
    page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=60_000)
    # The view keeps a PNG of itself in the model once it has been still for a moment.
    page.wait_for_function("() => document.querySelector('.nw-timeline').__nwView.model.get('_snapshot')?.byteLength > 0",
                           timeout=30_000)
    drawn = page.evaluate(CANVAS_PIXELS)
    assert drawn > 2000
    # The kernel takes it too (it came as a buffer, which the trait refused with an error at every save).
    deadline = time.monotonic() + 20
    while not (got.exists() and got.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert got.exists() and int(got.read_text()) > 1000
    # Saved with Ctrl+S while the timeline has the focus: the key reaches JupyterLab (S alone zooms out, and
    # the widget kept every key from JupyterLab, Ctrl+S too).
    view = page.evaluate("() => document.querySelector('.nw-timeline').dataset.view")
    page.locator(".nw-timeline .nw-corner").click()
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=20_000)
    assert page.evaluate("() => document.querySelector('.nw-timeline').dataset.view") == view
    assert saved_snapshot_bytes(lab_root / "snap.ipynb") > 1000

    # The kernel that made the widgets is gone; the notebook is opened again in a fresh page.
    with urllib.request.urlopen(f"{lab}/api/sessions") as r:
        sessions = [s for s in json.loads(r.read()) if s["path"].endswith("snap.ipynb")]
    for s in sessions:
        urllib.request.urlopen(urllib.request.Request(f"{lab}/api/sessions/{s['id']}", method="DELETE")).close()
    page.close()
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    again = context.new_page()
    errors: list[str] = []
    again.on("pageerror", lambda e: errors.append(str(e)))
    open_notebook(again, lab, "snap.ipynb")
    again.wait_for_selector(".nw-timeline .nw-canvas", timeout=60_000)
    again.wait_for_function(f"() => ({CANVAS_PIXELS})() > 2000", timeout=30_000)
    # Nothing was drawn from data (no kernel holds the old widget): what shows is the snapshot.
    assert again.evaluate("() => document.querySelector('.nw-timeline').__nwView.items") is None
    again.wait_for_function("() => document.querySelector('.nw-timeline .nw-status').textContent.includes('saved view')",
                            timeout=20_000)
    shot(again, "snapshot-reopened")
    assert not errors, errors
    context.close()
