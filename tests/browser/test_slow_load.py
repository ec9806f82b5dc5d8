"""Widgets whose front-end code loads slowly still hear the kernel (anywidget gives up on a model after 2 s).

Every widget module's load is made to take 2.5 s here, as on a busy page (Run All of many
widgets on a slow machine). anywidget then drops every kernel message to those models; the
timeline would never draw and the details never fill. Our front end takes the messages itself
and asks the kernel for the state it missed.
"""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Browser

from .lab import open_notebook, run_all, wait_cells_done, wait_item

# Each module anywidget loads (from a JavaScript blob) costs the page 2.5 s of its main thread.
SLOW_MODULES = """(() => {
  const make = URL.createObjectURL.bind(URL);
  URL.createObjectURL = (obj) => {
    if (obj instanceof Blob && obj.type === 'text/javascript') {
      const t = performance.now();
      while (performance.now() - t < 2500) { /* the page is busy */ }
    }
    return make(obj);
  };
})();"""

CELLS = [
    "import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline, EventDetails\n"
    "p = nw.sample_profile()\ntl = Timeline(p, height=400)\ntl",
    "EventDetails(tl)",
    # Sent while the modules are still loading: the details must show it once they are.
    "import time\ntime.sleep(1)\nrow = int(p.events.index[p.events['name'] == 'nc_exec_running'][0])\ntl.select(row=row)\n"
    "print(tl.selection['name'])",
]


def test_widgets_loaded_slowly_still_draw_and_follow_the_kernel(browser: Browser, lab: str, lab_root: Path) -> None:
    nb = nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(c) for c in CELLS], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbf.write(nb, lab_root / "slow.ipynb")
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    context.add_init_script(SLOW_MODULES)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        open_notebook(page, lab, "slow.ipynb")
        run_all(page)
        wait_cells_done(page, 180_000)
        # The timeline draws: its viewport replies (kernel messages) reach it.
        page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=60_000)
        # The selection made from Python while the modules loaded reaches the details.
        page.wait_for_function("() => document.querySelector('.nw-details-title')?.textContent === 'nc_exec_running'",
                               timeout=30_000)
        # And a click afterwards fills them anew.
        page.locator(".nw-timeline").first.scroll_into_view_if_needed()
        selected = page.evaluate("() => document.querySelector('.nw-timeline').__nwView.model.get('selected_row')")
        item = wait_item(page, 0, 4, skip=selected)
        page.mouse.click(item["x"], item["y"])
        page.wait_for_function("(row) => document.querySelector('.nw-details')?.dataset.row === String(row)",
                               arg=item["row"], timeout=20_000)
        assert page.locator(".nw-details-title").first.inner_text() == item["name"]
        assert not errors, errors
    finally:
        context.close()
