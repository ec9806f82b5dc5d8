"""Two runs' Timelines aligned on a step (nw.align), in a real JupyterLab and in an exported page: a zoom or pan of
one is followed by the other, whose window from its own step start becomes the same; the step picker re-aligns
both; Unlink ends it. Screenshots light and dark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page

from .lab import open_notebook, run_all, settle, shot, theme, wait_cells_done, wait_item
from .test_summary_kinds import notebook

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from random_neuron import write_profile
from schedule_neuron import simulate
from test_findings import _clean_job
from test_timeline_align import SHIFT, _shifted

VIEWS = "[...document.querySelectorAll('.nw-timeline')].map(e => e.__nwView)"
# Each timeline's window from its aligned step's start, its step, its view, and whether the kernel has its view.
STATE = f"""() => {{
  const vs = {VIEWS};
  return vs.map(v => {{
    const a = v.model.get('aligned') || {{}};
    const i = (a.steps || []).indexOf(a.step);
    const at = i >= 0 ? a.starts[i] : null;
    const m = v.model.get('view');
    return {{step: a.group ? a.step : null, at, rel: at === null ? null : [v.view.t0 - at, v.view.t1 - at],
             view: [v.view.t0, v.view.t1], told: m[0] === v.view.t0 && m[1] === v.view.t1,
             bar: getComputedStyle(v.root.querySelector('.nw-align')).display !== 'none'}};
  }});
}}"""
# Both aligned on one step, showing the same window from it (as computed on the page: equal to the last bit).
SAME_WINDOW = f"""(wantStep) => {{
  const s = ({STATE})();
  if (s.length !== 2 || s.some(x => x.step === null || x.rel === null)) return false;
  if (wantStep !== null && (s[0].step !== wantStep || s[1].step !== wantStep)) return false;
  return Math.abs(s[0].rel[0] - s[1].rel[0]) < 1e-6 && Math.abs(s[0].rel[1] - s[1].rel[1]) < 1e-6;
}}"""


def _round_trip(page: Page, index: int) -> None:
    """Timeline `index` asks the kernel for its window again and has the answer: every message the kernel sent
    before it (an echo of a view, were there one) has been handled by the page."""
    page.evaluate(f"(i) => {{ const v = {VIEWS}[i]; v.replies.invalidate(); v.request(); }}", index)
    settle(page, index)


def _write_runs(where: Path) -> None:
    job = _clean_job()
    job.compute[:, 2, :] = 160_000
    write_profile(where / "align_before", simulate(job))
    write_profile(where / "align_after", _shifted(simulate(job, compute_scale={2: 100 / 160}), SHIFT))


def _zoom(page: Page, index: int, dy: float) -> None:
    box = page.locator(".nw-timeline .nw-canvas").nth(index).bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.4, box["y"] + 30)
    page.keyboard.down("Control")
    page.mouse.wheel(0, dy)
    page.keyboard.up("Control")


def _pan(page: Page, index: int, dx: float) -> None:
    box = page.locator(".nw-timeline .nw-canvas").nth(index).bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + 20)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5 + dx, box["y"] + 20, steps=5)
    page.mouse.up()


def _check_follow(page: Page, leader: int, move: str) -> None:
    """Zoom (or pan) timeline `leader`: the other shows the same window from its own step start."""
    before = page.evaluate(STATE)
    if move == "zoom":
        _zoom(page, leader, -400)
    else:
        _pan(page, leader, -120)
    page.wait_for_function(f"(old) => {{ const s = ({STATE})()[{leader}]; "
                           "return s.view[0] !== old[0] || s.view[1] !== old[1]; }", arg=before[leader]["view"],
                           timeout=10_000)
    page.wait_for_function(SAME_WINDOW, arg=None, timeout=10_000)
    after = page.evaluate(STATE)
    if move == "zoom":
        w0, w1 = (b["view"][1] - b["view"][0] for b in before), (a["view"][1] - a["view"][0] for a in after)
        assert all(x < y for x, y in zip(w1, w0, strict=True)), (before, after)  # both zoomed in
    # The clocks differ, the windows from the step do not.
    assert after[0]["view"][0] != after[1]["view"][0]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_two_aligned_timelines_in_the_lab(page: Page, lab: str, lab_root: Path, dark: bool) -> None:
    _write_runs(lab_root)
    name = f"align_{'dark' if dark else 'light'}.ipynb"
    notebook(lab_root, name, [
        "import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n"
        "b = Timeline(nw.load_profile('align_before'), height=300)\n"
        "a = Timeline(nw.load_profile('align_after'), height=300)\n"
        "pair = nw.align(b, a, step=3)\npair",
        "print('kernel', pair.step, b.view, a.view)"])
    open_notebook(page, lab, name)
    if dark:
        theme(page, "JupyterLab Dark")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function(f"() => {VIEWS}.length === 2", timeout=60_000)
    settle(page, 0)
    settle(page, 1)
    page.wait_for_function(SAME_WINDOW, arg=3, timeout=30_000)
    assert all(s["bar"] for s in page.evaluate(STATE))
    _check_follow(page, 0, "zoom")
    _check_follow(page, 1, "pan")
    # The kernel hears each view (150 ms after the last change) and sends nothing back that moves them.
    page.wait_for_function(f"() => ({STATE})().every(s => s.told)", timeout=10_000)
    held = page.evaluate(STATE)
    _round_trip(page, 0)
    _round_trip(page, 1)
    assert [s["view"] for s in page.evaluate(STATE)] == [s["view"] for s in held]
    # The picker of the lower one re-aligns both on step 5.
    page.locator(".nw-timeline").nth(1).locator("select.nw-align-step").select_option("5")
    page.wait_for_function(SAME_WINDOW, arg=5, timeout=10_000)
    page.wait_for_function(f"() => ({STATE})().every(s => s.told)", timeout=10_000)
    settle(page, 0)
    settle(page, 1)
    page.locator(".nw-timeline").first.scroll_into_view_if_needed()
    shot(page, f"align-lab-{'dark' if dark else 'light'}")
    # Unlink in the upper one: both bars go, and a zoom of one leaves the other.
    page.locator(".nw-timeline").first.locator(".nw-align button", has_text="Unlink").click()
    page.wait_for_function(f"() => ({STATE})().every(s => !s.bar && s.step === null)", timeout=10_000)
    lower = page.evaluate(STATE)[1]["view"]
    _zoom(page, 0, -300)
    settle(page, 0)
    _round_trip(page, 1)
    assert page.evaluate(STATE)[1]["view"] == lower
    assert not page.errors  # type: ignore[attr-defined]


def test_an_exported_aligned_pair_stays_linked(open_file, tmp_path: Path) -> None:
    import neuron_widgets as nw
    from neuron_widgets.export import export_html
    from neuron_widgets.widgets import Timeline

    _write_runs(tmp_path)
    b = Timeline(nw.load_profile(tmp_path / "align_before"), height=300)
    a = Timeline(nw.load_profile(tmp_path / "align_after"), height=300)
    pair = nw.align(b, a, step=4)
    sb, sa = pair.anchors()
    nine = pair.anchors(9)
    # As the README says, without a time_range (D7: that exported only step 4's window, and step 9 came up empty).
    export_html(tmp_path / "pair.html", b, a)
    opened = open_file(tmp_path / "pair.html")
    page = opened.page
    page.wait_for_function(f"() => {VIEWS}.length === 2", timeout=30_000)
    state = page.evaluate(STATE)
    assert [s["step"] for s in state] == [4, 4] and [s["at"] for s in state] == [sb, sa]
    assert state[0]["view"] == list(b.view) and state[1]["view"] == list(a.view)
    _check_follow(page, 1, "zoom")
    _check_follow(page, 0, "pan")
    page.locator(".nw-timeline").first.locator("select.nw-align-step").select_option("9")
    page.wait_for_function(SAME_WINDOW, arg=9, timeout=10_000)
    assert [s["at"] for s in page.evaluate(STATE)] == list(nine)
    # Step 9's window lies past the one shown at export, in both runs: their tracks draw events there all the same.
    assert all(x + pair.window(9)[0] > y + pair.window(4)[1] for x, y in zip(nine, (sb, sa), strict=True))
    for i in (0, 1):
        settle(page, i)
        wait_item(page, i, 1.0, timeout=20_000)
    shot(page, "align-export-light")
    assert not opened.errors, opened.errors
