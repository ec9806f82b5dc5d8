from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from .lab import KERNEL_ERRORS, ROOT, TRACES, jupyter_lab, launch


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "notebooks" / "tour.ipynb", root / "tour.ipynb")
    return root


@pytest.fixture(scope="session")
def lab(lab_root: Path) -> Iterator[str]:
    with jupyter_lab(lab_root, env={"NEURON_WIDGETS_TRACES": str(TRACES)}) as url:
        yield url


@pytest.fixture(autouse=True)
def no_widget_message_raises_in_the_kernel(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test in the shared JupyterLab leaves no exception raised by a widget message in its kernels (ipywidgets
    shows them in no cell; see lab.record_widget_errors)."""
    if "lab" not in request.fixturenames:
        yield
        return
    log = request.getfixturevalue("lab_root") / KERNEL_ERRORS
    before = log.stat().st_size if log.exists() else 0
    yield
    raised = ""
    if log.exists():
        with log.open() as f:
            f.seek(before)
            raised = f.read()
    assert not raised, f"a widget message raised in the kernel:\n{raised}"


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


@pytest.fixture()
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.errors = errors  # type: ignore[attr-defined]
    yield pg
    context.close()


class Opened:
    """An exported page opened offline: the page, every request it made, its errors."""

    def __init__(self, page: Page, requests: list[str], errors: list[str]) -> None:
        self.page, self.requests, self.errors = page, requests, errors


@pytest.fixture()
def open_file(browser: Browser) -> Iterator:
    """Open an exported file offline; every request that is not the file itself is refused and recorded."""
    contexts = []

    def go(path: Path, *, dark: bool = False, timeline: bool = True, width: int = 1600) -> Opened:
        context = browser.new_context(viewport={"width": width, "height": 1000}, offline=True,
                                      color_scheme="dark" if dark else "light")
        contexts.append(context)
        requests: list[str] = []
        errors: list[str] = []
        context.on("request", lambda r: requests.append(r.url))
        context.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else
                      route.continue_())
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_function("() => document.getElementById('nw-export').dataset.ready", timeout=60_000)
        assert page.evaluate("() => document.getElementById('nw-export').dataset.ready") == "1", \
            page.inner_text("#nw-export")
        if timeline:
            page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=30_000)
        return Opened(page, requests, errors)

    yield go
    for c in contexts:
        c.close()
