"""Timeline in a real JupyterLab and headless Chromium: first paint, and draw time per frame while panning.

    python bench/bench_frontend.py --events 10000000

First paint: from the `Timeline(profile)` call in the kernel to the first frame with events on
the canvas (the kernel's and the browser's wall clocks are the same machine's), once right
after `load_profile` returns (its background preparation still running: the view draws the
profile's preview, then every event) and once after it. A running cell holds the kernel's widget
messages, so the second timeline's cell is added and run only once the first has painted.
Frames: 1920 px of plot, dense data (the whole profile, then a 1/50 window), 120 pan steps of
2% each, each frame's paint time as the widget measures it. The machine renders in software.
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
from bench.common import OUT, machine  # noqa: E402
from tests.browser.lab import jupyter_lab, launch, open_notebook, run_all, wait_cells_done  # noqa: E402

PLOT_PX = 1920

PAN = """async ([index, steps]) => {
  const v = document.querySelectorAll('.nw-timeline')[index].__nwView;
  const start = v.frameTimes.length;
  for (let i = 0; i < steps; i++) {
    const w = v.view.t1 - v.view.t0;
    v.setView({t0: v.view.t0 + 0.02 * w, t1: v.view.t1 + 0.02 * w});
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  }
  return v.frameTimes.slice(start);
}"""


def notebook(path: Path) -> nbf.NotebookNode:
    cells = [
        nbf.v4.new_code_cell(f"import time\nimport neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n"
                             f"t = time.time(); p = nw.load_profile({str(path)!r}); print('load', time.time() - t)"),
        nbf.v4.new_code_cell("T0 = time.time(); tl = Timeline(p, height=700); print('T0', repr(T0)); tl"),
    ]
    return nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                       "language": "python"}})


SECOND = ("p.lod('default')  # preparation done\nT1 = time.time(); tl2 = Timeline(p, height=700); "
          "print('T1', repr(T1)); tl2")


def add_cell(page: Page, code: str) -> None:
    """A new code cell at the end of the notebook, typed and run as a user does."""
    page.locator(".jp-Notebook .jp-Cell").last.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    editor = page.locator(".jp-Notebook .jp-Cell").last.locator(".cm-content")
    editor.click()
    editor.fill(code)
    page.keyboard.press("Control+Enter")


def stats(ms: list[float]) -> dict[str, float]:
    s = sorted(ms)
    return {"frames": len(s), "p50_ms": round(statistics.median(s), 2), "p95_ms": round(s[int(0.95 * (len(s) - 1))], 2),
            "max_ms": round(s[-1], 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    args = ap.parse_args()
    path = OUT / f"sample_{args.events}"
    if not path.exists():
        sys.exit(f"{path} is missing: write it with `neuron-widgets sample {path} --events {args.events}`")
    root = Path(tempfile.mkdtemp())
    nbf.write(notebook(path.resolve()), root / "bench.ipynb")
    with jupyter_lab(root) as url, sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 2600, "height": 1300})
        open_notebook(page, url, "bench.ipynb")
        run_all(page)
        wait_cells_done(page, timeout_ms=600_000)
        # The kernel answers a widget only between cells: the second timeline's cell (which
        # waits for the preparation) is added and run once the first one has painted.
        page.wait_for_function("() => document.querySelector('.nw-timeline')?.dataset.firstPaint", timeout=120_000)
        add_cell(page, SECOND)
        wait_cells_done(page, timeout_ms=600_000)
        outputs = page.locator(".jp-OutputArea-output pre").all_inner_texts()
        stamp = {m[1]: float(m[2]) for m in re.finditer(r"^(T0|T1|load) (\S+)$", "\n".join(outputs), re.M)}
        result: dict[str, object] = {"events": args.events, "machine": machine(), "load_s": stamp.get("load")}
        for index, key in ((0, "T0"), (1, "T1")):
            page.locator(".nw-timeline").nth(index).scroll_into_view_if_needed()
            page.wait_for_function("(i) => document.querySelectorAll('.nw-timeline')[i].dataset.firstPaint", arg=index,
                                   timeout=120_000)
            first = int(page.evaluate("(i) => document.querySelectorAll('.nw-timeline')[i].dataset.firstPaint", index))
            result[f"first_paint_s_{'right_after_load' if index == 0 else 'prepared'}"] = round(first / 1000 - stamp[key], 3)
        # Size the second timeline's plot to 1920 px, then pan over dense data.
        width = page.evaluate("() => document.querySelectorAll('.nw-timeline')[1].__nwView.plotWidth()")
        page.set_viewport_size({"width": 2600 + PLOT_PX - int(width), "height": 1300})
        page.wait_for_timeout(1500)
        result["plot_px"] = page.evaluate("() => document.querySelectorAll('.nw-timeline')[1].__nwView.plotWidth()")
        for label, zoom in (("whole", 1.0), ("1/50", 0.02)):
            page.evaluate("""([z]) => { const v = document.querySelectorAll('.nw-timeline')[1].__nwView;
                const s = v.span(); const w = (s[1] - s[0]) * z; v.setView({t0: s[0] + w, t1: s[0] + 2 * w}); }""", [zoom])
            page.wait_for_function("() => !document.querySelectorAll('.nw-timeline')[1].__nwView.viewport.busy",
                                   timeout=60_000)
            page.wait_for_timeout(500)
            items = page.evaluate("() => document.querySelectorAll('.nw-timeline')[1].__nwView.items.n")
            before = page.evaluate("() => document.querySelectorAll('.nw-timeline')[1].__nwView.replyBytes.length")
            ms = page.evaluate(PAN, [1, 120])
            page.wait_for_timeout(1000)
            sizes = page.evaluate("(k) => document.querySelectorAll('.nw-timeline')[1].__nwView.replyBytes.slice(k - 1)",
                                  before)
            result[f"pan_{label}"] = {**stats(ms), "items_held": items, "replies": len(sizes),
                                      "reply_mb_max": round(max(sizes) / 1e6, 2) if sizes else None,
                                      "drawn": int(page.evaluate("() => document.querySelectorAll('.nw-timeline')[1]"
                                                                 ".dataset.drawn"))}
        browser.close()
    print(json.dumps(result, indent=1))
    OUT.mkdir(exist_ok=True)
    (OUT / f"frontend_{args.events}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
