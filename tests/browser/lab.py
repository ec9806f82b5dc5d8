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
TRACES = ROOT.parent / "shared" / "data" / "traces"
ARTIFACTS = ROOT / "tests" / "artifacts"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def wait_cells_done(page: Page, timeout_ms: int = 240_000) -> None:
    """Every code cell has an execution count (none pending as `[*]`)."""
    page.wait_for_function(
        "() => { const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent);"
        " return p.length > 0 && p.every(t => /\\[\\d+\\]/.test(t)); }", timeout=timeout_ms)


def shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
