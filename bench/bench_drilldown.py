"""Drill-down in a real JupyterLab and headless Chromium: a click on nc_exec_running to the device trace painted.

    python bench/bench_drilldown.py [--instructions 1000000] [--repeat 3]

The notebook shows the system Timeline and a DeviceTraceViewer that follows it, as the tour
does. Each run selects the execution in the Timeline from the browser (what a click does: the
view sets `selected_row` and syncs it), 3 s after the timeline first painted, and stops the
clock at the first frame of the viewer that paints the new trace's events. Each run is a fresh
kernel, so the device profile is read from disk every time; then a second click on the same
execution is served from the cache.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import OUT, device_sample, machine  # noqa: E402
from tests.browser.lab import jupyter_lab, launch, open_notebook, run_all, wait_cells_done  # noqa: E402

SETTLE_MS = 3000

# Select `row` in the system timeline (view 0) and resolve with the ms until the device viewer
# (view 1) has painted events of a trace it had not shown before the selection.
CLICK = """async ([row]) => {
  const [tl, dv] = [...document.querySelectorAll('.nw-timeline')].map(r => r.__nwView);
  const gen = dv.model.get('generation');
  const t0 = performance.now();
  tl.model.set('selected_row', row);
  tl.model.save_changes();
  for (;;) {
    await new Promise(r => requestAnimationFrame(r));
    if (dv.model.get('generation') !== gen && dv.items && +dv.root.dataset.drawn > 0) return performance.now() - t0;
    if (performance.now() - t0 > 60000) return -1;
  }
}"""


def notebook(path: Path) -> nbf.NotebookNode:
    cells = [
        nbf.v4.new_code_cell("import neuron_widgets as nw\nfrom neuron_widgets.widgets import DeviceTraceViewer, Timeline\n"
                             f"p = nw.load_profile({str(path)!r}); p.lod('default')\n"
                             "ev = p.core.to_pandas()\n"
                             "hw = ev.index[ev['name'] == 'nc_exec_running']\n"
                             "print('ROW', int(hw[0]), 'OTHER', int(ev.index[ev['name'] != 'nc_exec_running'][0]))"),
        nbf.v4.new_code_cell("tl = Timeline(p, height=300); tl"),
        nbf.v4.new_code_cell("dv = DeviceTraceViewer(height=400); dv.follow(tl); dv"),
    ]
    return nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                       "language": "python"}})


def one_run(page: Page, url: str) -> dict[str, float]:
    open_notebook(page, url, "bench.ipynb")
    run_all(page)
    wait_cells_done(page, timeout_ms=300_000)
    text = "\n".join(page.locator(".jp-OutputArea-output pre").all_inner_texts())
    m = re.search(r"ROW (\d+) OTHER (\d+)", text)
    assert m, text
    row, other = int(m[1]), int(m[2])
    page.wait_for_function("() => document.querySelectorAll('.nw-timeline').length === 2 && "
                           "+document.querySelector('.nw-timeline').dataset.drawn > 0", timeout=120_000)
    # A user takes a moment to find the execution to click; the timeline's background work
    # started with it (error scan of the arguments, counters) is done by then.
    page.wait_for_timeout(SETTLE_MS)
    first = page.evaluate(CLICK, [row])
    page.wait_for_function("() => !document.querySelectorAll('.nw-timeline')[1].__nwView.model.get('loading')",
                           timeout=60_000)
    page.evaluate("([r]) => { const m = document.querySelector('.nw-timeline').__nwView.model;"
                  " m.set('selected_row', r); m.save_changes(); }", [other])
    page.wait_for_timeout(500)
    second = page.evaluate(CLICK, [row])
    errors = page.evaluate("() => document.querySelectorAll('.nw-timeline')[1].__nwView.model.get('error')")
    assert first > 0 and second > 0 and not errors, (first, second, errors)
    return {"click_to_paint_s": round(first / 1000, 3), "second_click_to_paint_ms": round(second, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instructions", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = device_sample(args.instructions)
    runs = []
    for _ in range(args.repeat):
        root = Path(tempfile.mkdtemp())
        nbf.write(notebook(path.resolve()), root / "bench.ipynb")
        with jupyter_lab(root) as url, sync_playwright() as pw:
            browser = launch(pw)
            page = browser.new_page(viewport={"width": 2200, "height": 1400})
            runs.append(one_run(page, url))
            browser.close()
    result = {"machine": machine(), "instructions": args.instructions, "runs": runs,
              "click_to_paint_s_median": statistics.median(r["click_to_paint_s"] for r in runs),
              "second_click_to_paint_ms_median": statistics.median(r["second_click_to_paint_ms"] for r in runs)}
    print(json.dumps(result, indent=1))
    OUT.mkdir(exist_ok=True)
    (OUT / f"drilldown_{args.instructions}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
