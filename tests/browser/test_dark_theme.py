"""Issue 35 item 9: a Timeline made while JupyterLab is already dark (or drawn after a page load with
Dark saved) drew its track area white while its labels and head were dark. Each order of theme and
widget: the canvas's track area takes the theme's background."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat as nbf
import pytest
from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .lab import open_notebook, run_all, settle, shot, theme, wait_cells_done

CELL = ("import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n"
        "tl = Timeline(nw.sample_profile(), height=360)\ntl")

# The brightness (0 black .. 1 white) of the track area's background: the median over the pixel line
# just above each on-screen track's first lane (always background, never an event), sampled across
# the plot; with the page's background (the widget's, from JupyterLab's theme) to compare.
TRACK_AREA = """(i) => { const root = document.querySelectorAll('.nw-timeline')[i];
  const v = root && root.__nwView;
  if (!v) return null;
  const c = root.querySelector('.nw-canvas'), top = root.querySelector('.nw-scroll').scrollTop;
  if (!c.width || !c.height) return null;
  const dpr = c.width / c.getBoundingClientRect().width, data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const luma = (k) => (0.299 * data[k] + 0.587 * data[k + 1] + 0.114 * data[k + 2]) / 255, lum = [];
  for (const r of v.rows.filter((r) => r.kind === 'track')) {
    const y = Math.round((r.y - top + 1) * dpr);
    if (y < 60 * dpr || y >= c.height - 2) continue;  // under the pinned headers, or off the plot
    for (let x = 3; x < c.width - 3; x += 11) lum.push(luma((y * c.width + x) * 4));
  }
  if (!lum.length) return null;
  lum.sort((a, b) => a - b);
  const bg = getComputedStyle(root).backgroundColor.match(/\\d+/g).map(Number);
  return { track: lum[lum.length >> 1], page: (0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2]) / 255,
           samples: lum.length, dark: v.theme.dark }; }"""


def track_area(page: Page, i: int = 0) -> dict:
    return page.evaluate(TRACK_AREA, i)


def wait_track_area(page: Page, dark: bool, what: str, i: int = 0) -> dict:
    """The track area once its background is the theme's (dark: below 0.3, light: above 0.7, and
    within 0.1 of the page's); fail with what it shows when it never is."""
    test = "v.track < 0.3 && v.page < 0.3" if dark else "v.track > 0.7 && v.page > 0.7"
    test += " && Math.abs(v.track - v.page) < 0.1"
    try:
        page.wait_for_function(f"(i) => {{ const v = ({TRACK_AREA})(i); return v && ({test}); }}", arg=i, timeout=20_000)
    except PlaywrightTimeout:
        raise AssertionError(f"{what}: the track area is not {'dark' if dark else 'light'}: {track_area(page, i)}") from None
    settle(page, i)
    return track_area(page, i)


@pytest.fixture()
def dark_lab(browser: Browser, lab: str, lab_root: Path) -> Iterator[Page]:
    """A page of JupyterLab with the Dark theme chosen before any widget exists, and Light restored
    afterwards (the theme is saved in the settings the other browser tests share)."""
    nbf.write(nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(CELL)], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}), lab_root / "dark.ipynb")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    open_notebook(page, lab, "dark.ipynb")
    theme(page, "JupyterLab Dark")
    try:
        yield page
    finally:
        theme(page, "JupyterLab Light")
        context.close()
    assert not errors, errors


def test_a_timeline_made_in_the_dark_theme_is_dark_and_turns_light_with_it(dark_lab: Page) -> None:
    page = dark_lab
    assert page.evaluate("() => document.querySelectorAll('.nw-timeline').length") == 0
    run_all(page)
    wait_cells_done(page, 180_000)
    page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=60_000)
    settle(page, 0)
    made_dark = wait_track_area(page, True, "made while dark")
    assert made_dark["dark"], made_dark
    shot(page, "dark-theme-01-made-while-dark")
    # The other order: this timeline, made dark, follows the switch to Light ...
    theme(page, "JupyterLab Light")
    light = wait_track_area(page, False, "made dark, switched to Light")
    assert not light["dark"], light
    shot(page, "dark-theme-02-then-light")
    # ... and back to Dark.
    theme(page, "JupyterLab Dark")
    wait_track_area(page, True, "switched back to Dark")


def test_a_timeline_drawn_after_a_page_load_with_dark_saved_is_dark(dark_lab: Page) -> None:
    page = dark_lab
    run_all(page)
    wait_cells_done(page, 180_000)
    page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=60_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Save Notebook").first.click()
    try:
        page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=20_000)
    except PlaywrightTimeout:
        shot(page, "dark-theme-not-saved")
        raise
    # A reload: JupyterLab starts with Dark from its settings, and the widget's view is made again
    # from the kernel's model (the kernel lives on) while the page and its theme load.
    page.reload()
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false' && "
                           "!document.querySelector('#jupyterlab-splash')", timeout=60_000)
    page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=60_000)
    settle(page, 0)
    after_load = wait_track_area(page, True, "drawn after a page load with Dark saved")
    assert after_load["dark"], after_load
    shot(page, "dark-theme-03-after-reload")
