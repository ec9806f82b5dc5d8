"""A real JupyterLab and a real Chromium (Debian's package), driven by Playwright, for the browser tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Without these, Chromium keeps calling Google's hosts, which this closed network refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "tests" / "data" / "traces"  # copied into the project: a bare clone runs every test
ARTIFACTS = ROOT / "tests" / "artifacts"


def real_trace(rel: str) -> Path:
    """A real trace from tests/data/traces, checked before a notebook waits on it: a missing one fails at once."""
    import pytest

    path = TRACES / rel
    if not path.exists():
        pytest.fail(f"{path} is missing: the browser tests read real traces from tests/data/traces (see its README)",
                    pytrace=False)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Where the Lab's kernels write what a widget message raised (see record_widget_errors).
KERNEL_ERRORS = "kernel-widget-errors.log"

_RECORD = """
import sys, traceback
from IPython import get_ipython

_shell = get_ipython()
_shown = _shell.showtraceback


def _recorded(*args, **kwargs):
    tb = sys.exc_info()[2]
    frames = [frame.f_code.co_name for frame, _ in traceback.walk_tb(tb)] if tb else []
    if "_handle_msg" in frames:
        with open({path!r}, "a") as out:
            out.write("".join(traceback.format_exception(*sys.exc_info())) + "\\n")
    return _shown(*args, **kwargs)


_shell.showtraceback = _recorded
"""


def record_widget_errors(root: Path, env: dict[str, str]) -> None:
    """The Lab's kernels write each exception a widget message raised to root/KERNEL_ERRORS (an IPython startup
    file). ipywidgets shows such a traceback in no cell: a state the browser sends that the kernel refuses goes
    unseen otherwise (the Timeline's snapshot did, at every save)."""
    startup = root / ".ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-record-widget-errors.py").write_text(_RECORD.format(path=str(root / KERNEL_ERRORS)))
    env["IPYTHONDIR"] = str(root / ".ipython")


@contextmanager
def jupyter_lab(root: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start JupyterLab on a free port serving `root`; yield its base URL."""
    port = free_port()
    log = open(root / "jupyter.log", "w")  # noqa: SIM115 - closed below, after the server
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
           "--IdentityProvider.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True", "--allow-root",
           f"--ServerApp.root_dir={root}", "--LabApp.news_url=", "--ServerApp.open_browser=False",
           "--LabServerApp.extension_manager=readonly"]
    full_env = {**os.environ, "NEURON_WIDGETS_PROGRESS": "0", "JUPYTER_CONFIG_DIR": str(root / ".jupyter"),
                "JUPYTERLAB_SETTINGS_DIR": str(root / ".lab-settings"), "JUPYTERLAB_WORKSPACES_DIR": str(root / ".lab-ws"),
                **(env or {})}
    settings = root / ".lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    # No "check for updates" and news prompts: they ask the network and cover the page.
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    # Widget state saved with the notebook, as users turn on to share outputs (Settings menu).
    widgets = root / ".lab-settings" / "@jupyter-widgets" / "jupyterlab-manager"
    widgets.mkdir(parents=True, exist_ok=True)
    (widgets / "plugin.jupyterlab-settings").write_text('{"saveState": true}')
    record_widget_errors(root, full_env)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=full_env, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"JupyterLab did not start; see {root / 'jupyter.log'}:\n"
                                   + (root / "jupyter.log").read_text()[-3000:])
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def launch(pw: Playwright) -> Browser:
    return pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def open_notebook(page: Page, url: str, name: str) -> None:
    # A workspace of its own, so tabs another test left open are not restored beside this one.
    page.goto(f"{url}/lab/workspaces/{Path(name).stem}-{uuid.uuid4().hex[:8]}/tree/{name}?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    # A fresh JupyterLab may ask which kernel to start: accept the notebook's own (python3).
    with contextlib.suppress(PlaywrightTimeout):
        page.locator(".jp-Dialog .jp-mod-accept").click(timeout=8_000)
    # The kernel is up when the toolbar's status says Idle.
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-Notebook-ExecutionIndicator, .jp-Toolbar-kernelStatus')]"
        ".some(e => (e.getAttribute('data-status') || e.title || e.textContent || '').toLowerCase().includes('idle'))",
        timeout=60_000)


def run_all(page: Page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


# Each code cell's prompt and first line, the kernel's status, errors shown in outputs: what a
# stalled Run All left behind.
CELL_STATE = """() => ({
  cells: [...document.querySelectorAll('.jp-CodeCell')].map(c => [
    (c.querySelector('.jp-InputPrompt') || {}).textContent,
    (c.querySelector('.cm-line') || {}).textContent]),
  kernel: [...document.querySelectorAll('.jp-Notebook-ExecutionIndicator, .jp-Toolbar-kernelStatus')]
    .map(e => e.getAttribute('data-status') || e.title || e.textContent),
  errors: [...document.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
    .map(e => e.textContent.slice(0, 300))})"""


def wait_cells_done(page: Page, timeout_ms: int = 240_000) -> None:
    """Every code cell has an execution count (none pending as `[*]`); if not, fail saying which wait."""
    try:
        page.wait_for_function(
            "() => { const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent);"
            " return p.length > 0 && p.every(t => /\\[\\d+\\]/.test(t)); }", timeout=timeout_ms)
    except PlaywrightTimeout:
        state = page.evaluate(CELL_STATE)
        shot(page, "cells-not-done")
        pending = [c for c in state["cells"] if not (c[0] or "").strip("[]: ").isdigit()]
        raise AssertionError(f"Run All did not finish in {timeout_ms / 1000:.0f} s; kernel {state['kernel']}; "
                             f"pending {pending}; stderr {state['errors']}") from None


NEXT_SCREEN = """() => { const s = document.querySelector('.jp-WindowedPanel-outer') ||
    document.querySelector('.jp-NotebookPanel-notebook'); const before = s.scrollTop;
  s.scrollTop = before + s.clientHeight * 0.7; return s.scrollTop !== before; }"""
FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def scripts_had_their_chance(page: Page) -> None:
    """Every image on the page has loaded or failed (so an `onerror` handler would have run) and two
    frames have been drawn: a check that injected markup did nothing can be made now."""
    page.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=10_000)
    page.evaluate(FRAMES)


def through_notebook(page: Page, visit) -> None:
    """Scroll the notebook from its top a screen at a time, calling `visit(page)` at each stop until
    it says done: JupyterLab keeps only the cells near the viewport in the page (its windowing), so
    widgets far from where Run All left the view are not in the DOM until scrolled to."""
    page.evaluate("() => { const s = document.querySelector('.jp-WindowedPanel-outer') || "
                  "document.querySelector('.jp-NotebookPanel-notebook'); s.scrollTop = 0; }")
    while True:
        page.evaluate(FRAMES)
        if visit(page):
            return
        if not page.evaluate(NEXT_SCREEN):
            return


def brush(page: Page, box: dict, x0: float, x1: float, y: float = 40) -> None:
    """Shift+drag across the plot from x0 to x1 (px from the canvas's left): a brushed range."""
    page.keyboard.down("Shift")
    page.mouse.move(box["x"] + x0, box["y"] + y)
    page.mouse.down()
    page.mouse.move(box["x"] + x1, box["y"] + y, steps=6)
    page.mouse.up()
    page.keyboard.up("Shift")


def theme(page: Page, name: str) -> None:
    """Pick a JupyterLab theme ("JupyterLab Dark", "JupyterLab Light") from the Settings menu, as a user does."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Theme").first.hover()
    page.locator(".lm-Menu-itemLabel", has_text=name).first.click()
    # JupyterLab covers the page with its splash while the theme loads: screenshots wait for it to go.
    page.wait_for_function("(n) => document.body.dataset.jpThemeName === n && "
                           "!document.querySelector('#jupyterlab-splash')", arg=name, timeout=30_000)


def shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


# A drawn, unmerged item of timeline `index`, in page coordinates (the view object is on the
# timeline's root element): named `name` (any if null), not row `skip`, at least `minPx` wide,
# with no error / hang / highlight flag when `plain`, and a device instruction (in a hierarchy node) when `instruction`.
FIND_ITEM = """(args) => {
  const [index, name, skip, minPx, plain, instruction] = args;
  const root = document.querySelectorAll('.nw-timeline')[index];
  const v = root.__nwView, it = v.items, names = v.model.get('names');
  if (!it) return null;
  const canvas = root.querySelector('.nw-canvas').getBoundingClientRect();
  const scroll = root.querySelector('.nw-scroll');
  const rows = v.rows.filter(r => r.kind === 'track');
  const w = canvas.width, span = v.view.t1 - v.view.t0;
  for (let i = 0; i < it.n; i++) {
    if (it.count[i] !== 1 || it.row[i] === skip || (plain && it.flags[i] !== 0)) continue;
    if (name !== null && names[it.name[i]] !== name) continue;
    if (instruction && !(it.node && it.node[i] >= 0)) continue;
    const row = rows.find(r => r.track === it.track[i]);
    if (!row) continue;
    const y = row.y + it.lane[i] * 18 + 10 - scroll.scrollTop;
    // Inside the plot and inside the window: a click past the window's edge reaches nothing.
    if (y < 5 || y > canvas.height - 5 || canvas.top + y < 5 || canvas.top + y > window.innerHeight - 5) continue;
    const x0 = Math.max((it.start[i] - v.view.t0) / span * w, 0), x1 = Math.min((it.end[i] - v.view.t0) / span * w, w);
    if (x1 - x0 < minPx) continue;
    return {x: canvas.left + (x0 + x1) / 2, y: canvas.top + y, name: names[it.name[i]], row: it.row[i]};
  }
  return null;
}"""


def find_item(page: Page, index: int, min_px: float, name: str | None = None, skip: int = -1,
              plain: bool = False, instruction: bool = False) -> dict | None:
    return page.evaluate(FIND_ITEM, [index, name, skip, min_px, plain, instruction])


def wait_item(page: Page, index: int, min_px: float, name: str | None = None, skip: int = -1,
              plain: bool = False, instruction: bool = False, timeout: int = 30_000) -> dict:
    """Like `find_item`, waiting until such an item is drawn (the viewport's reply may be on its way)."""
    try:
        found = page.wait_for_function(FIND_ITEM, arg=[index, name, skip, min_px, plain, instruction], timeout=timeout)
    except PlaywrightTimeout:
        raise AssertionError(f"timeline {index} drew no {name or 'event'} {min_px} px wide to click "
                             f"in {timeout / 1000:.0f} s") from None
    return found.json_value()


def settle(page: Page, index: int = 0, timeout: int = 30_000) -> None:
    """Timeline `index` shows its current view, with no frame to draw and no request to the kernel
    outstanding: what a zoom, a key or a click asked for is on screen. Two frames pass first, so that
    events the page has queued (a scroll, a resize) have reached the view."""
    page.evaluate(FRAMES)
    page.wait_for_function("(i) => document.querySelectorAll('.nw-timeline')[i]?.__nwView?.settled === true",
                           arg=index, timeout=timeout)


BOKEH_POINT = """([name, i, x]) => {
  for (const v of window.Bokeh.index.all_views()) {
    if (!v.model || v.model.name !== name || !v.canvas_view.el.isConnected) continue;  // not a replaced view
    const r = v.model.renderers.find((r) => r.data_source && r.glyph && r.glyph.y !== undefined);
    const factor = r.data_source.data[r.glyph.y.field ?? "y"][i];
    v.canvas_view.el.scrollIntoView({ block: "center" });
    const box = v.canvas_view.el.getBoundingClientRect();
    return { x: box.left + v.frame.x_scale.compute(x), y: box.top + v.frame.y_scale.compute(factor), factor };
  }
  return null;
}"""


def bokeh_point(page: Page, figure: str, index: int, x: float) -> dict:
    """Where on the page bar `index` of a named bokeh figure is, at data value x (scrolled into view)."""
    pt = page.evaluate(BOKEH_POINT, [figure, index, x])
    assert pt is not None, f"no bokeh figure named {figure}"
    return pt


DEEP_TEXT = """(sel) => { const out = [];
  const walk = (n) => { if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) { if (c.nodeType === 3) out.push(c.textContent);
      else if (c.nodeType === 1 && !['STYLE', 'SCRIPT'].includes(c.tagName)) walk(c); else if (c.nodeType === 11) walk(c); } };
  const root = document.querySelector(sel); if (root) walk(root); return out.join(' '); }"""


def deep_text(page: Page, selector: str) -> str:
    """The text under an element, shadow roots included (bokeh draws its DOM in them)."""
    return page.evaluate(DEEP_TEXT, selector)
