from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from .lab import ROOT, TRACES, jupyter_lab, launch


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "notebooks" / "tour.ipynb", root / "tour.ipynb")
    return root


@pytest.fixture(scope="session")
def lab(lab_root: Path) -> Iterator[str]:
    with jupyter_lab(lab_root, env={"NEURON_WIDGETS_TRACES": str(TRACES)}) as url:
        yield url


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
