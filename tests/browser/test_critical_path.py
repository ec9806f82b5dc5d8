"""Issue 37: the critical path on the Timeline, from its toolbar toggle, in light and dark, and in the export."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat as nbf
import pytest
from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import neuron_widgets as nw
from neuron_widgets.export import export_html
from neuron_widgets.widgets import Timeline

from .lab import open_notebook, run_all, settle, shot, theme, wait_cells_done

CELL = ("import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n"
        "tl = Timeline(nw.sample_profile(), height=460)\ntl")

# What the canvas shows of the path: highlighted (outlined) items drawn, the rest dimmed, the jumps
# drawn, and the outline's colour found in the canvas's pixels (the path's events are drawn with it).
STATE = """(i) => { const root = document.querySelectorAll('.nw-timeline')[i];
  const v = root && root.__nwView;
  if (!v || !v.items) return null;
  let outlined = 0;
  for (let k = 0; k < v.items.n; k++) if (v.items.flags[k] & 4) outlined++;
  const c = root.querySelector('.nw-canvas'), data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const want = v.theme.dark ? [0xff, 0xd5, 0x4f] : [0xf5, 0x7f, 0x17];
  let outlinePx = 0;
  for (let k = 0; k < data.length; k += 4)
    if (Math.abs(data[k] - want[0]) < 30 && Math.abs(data[k + 1] - want[1]) < 30
        && Math.abs(data[k + 2] - want[2]) < 30) outlinePx++;
  return { critical: root.dataset.critical, dimmed: +root.dataset.dimmed, jumps: +root.dataset.jumps, outlined, outlinePx,
           info: root.querySelector('.nw-critical-info').textContent,
           pressed: root.querySelector('.nw-btn.nw-on') !== null && root.querySelector('.nw-btn.nw-on').textContent }; }"""


def state(page: Page) -> dict:
    return page.evaluate(STATE, 0)


def wait_shown(page: Page) -> dict:
    """The path drawn: the view has settled on the kernel's (or the page's) answer with the path in it.

    The sample's path runs between tracks below the first screenful (a jump is drawn where both its
    tracks are on screen): the tracks are scrolled with the wheel, as a user does, until jumps show.
    """
    page.wait_for_function("() => document.querySelector('.nw-timeline').dataset.critical === 'shown'", timeout=60_000)
    settle(page, 0)
    box = page.locator(".nw-canvas").first.bounding_box()
    assert box
    for _ in range(20):
        if state(page)["jumps"] > 0:
            break
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, 120)
        settle(page, 0)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] - 200)  # no tooltip over the screenshot
    try:
        page.wait_for_function(f"() => {{ const s = ({STATE})(0); return s && s.outlined > 0 && s.dimmed > 0 "
                               "&& s.jumps > 0 && s.outlinePx > 20; }", timeout=30_000)
    except PlaywrightTimeout:
        before = state(page)
        extra = page.evaluate("() => ({light: document.body.dataset.jpThemeLight, "
                              "w: document.querySelector('.nw-scroll').clientWidth})")
        page.evaluate("() => document.querySelector('.nw-timeline').__nwView.request()")
        settle(page, 0)
        raise AssertionError(f"the path is not drawn: {before} {extra} after a redraw: {state(page)}") from None
    settle(page, 0)
    s = state(page)
    if s["outlinePx"] <= 20:
        shot(page, "critical-path-failed")
    assert s["outlined"] > 0 and s["dimmed"] > 0 and s["jumps"] > 0 and s["outlinePx"] > 20, s
    return s


@pytest.fixture()
def notebook(browser: Browser, lab: str, lab_root: Path) -> Iterator[Page]:
    nbf.write(nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(CELL)], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}),
        lab_root / "critical.ipynb")
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    open_notebook(page, lab, "critical.ipynb")
    try:
        yield page
    finally:
        if page.evaluate("() => document.body.dataset.jpThemeName") != "JupyterLab Light":
            theme(page, "JupyterLab Light")  # the theme is saved in settings the other tests share
        context.close()
    assert not errors, errors


def test_the_toolbar_toggle_outlines_the_path_dims_the_rest_and_draws_its_jumps(notebook: Page) -> None:
    page = notebook
    run_all(page)
    wait_cells_done(page, 180_000)
    page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=60_000)
    settle(page, 0)
    before = state(page)
    assert before["critical"] == "off" and before["dimmed"] == 0 and before["jumps"] == 0 and before["outlined"] == 0
    page.locator(".nw-timeline .nw-btn", has_text="Critical path").click()
    s = wait_shown(page)
    assert s["pressed"] == "Critical path" and s["info"].startswith("critical path: ")
    shot(page, "critical-path-01-light")
    theme(page, "JupyterLab Dark")
    page.wait_for_function("() => document.querySelector('.nw-timeline').__nwView.theme.dark === true", timeout=30_000)
    wait_shown(page)
    shot(page, "critical-path-02-dark")
    theme(page, "JupyterLab Light")
    # Off: the outlines, the dimming and the jumps go.
    page.locator(".nw-timeline .nw-btn", has_text="Critical path").click()
    page.wait_for_function(f"() => {{ const s = ({STATE})(0); return s && s.critical === 'off' && s.outlined === 0 "
                           "&& s.dimmed === 0 && s.jumps === 0; }", timeout=30_000)


@pytest.mark.parametrize("dark", [False, True])
def test_the_export_shows_the_path_offline(open_file, tmp_path: Path, sample: nw.Profile, dark: bool) -> None:
    import time

    tl = Timeline(sample, height=460)
    tl.critical_path = True
    end = time.monotonic() + 60
    while tl.critical_info.get("state") == "computing" and time.monotonic() < end:  # the kernel's thread, polled
        time.sleep(0.02)
    assert tl.critical_info["state"] == "shown"
    export_html(tmp_path / "critical.html", tl, time_range="all")
    o = open_file(tmp_path / "critical.html", dark=dark)
    s = wait_shown(o.page)
    assert s["info"] == tl.critical_info["text"] and s["pressed"] == "Critical path"
    shot(o.page, f"critical-path-export-{'dark' if dark else 'light'}")
    # The page's toggle turns the dimming and the jumps off (the outlines are the export's highlight set).
    o.page.locator(".nw-timeline .nw-btn", has_text="Critical path").click()
    o.page.wait_for_function(f"() => {{ const s = ({STATE})(0); return s && s.critical !== 'shown' && s.dimmed === 0 "
                             "&& s.jumps === 0; }", timeout=30_000)
    assert not o.errors and not [r for r in o.requests if not r.startswith("file:")]
