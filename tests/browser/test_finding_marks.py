"""Issue 38: the findings' marks on the Timeline's overview strip, from the toolbar toggle, in JupyterLab (light
and dark) and in the export opened offline: drawn at their times, named as text on hover, a click fits the view."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat as nbf
import pytest
from playwright.sync_api import Browser, Page

import neuron_widgets as nw
from neuron_widgets.export import export_html
from neuron_widgets.model.timefmt import duration
from neuron_widgets.widgets import Timeline

from .lab import open_notebook, run_all, settle, shot, theme, wait_cells_done

EVIL = "<img src=x onerror=alert(1)>"
# [light, dark] per severity, as js/src/timeline/findings.ts draws them.
COLORS = {"high": ("#d62728", "#ff6b6b"), "medium": ("#e67e00", "#ffa94d"), "low": ("#9e9d24", "#d4e157")}

# What the strip shows: the marks as drawn (css px), the colour at each one's middle, the tip, the view.
STATE = """(i) => { const root = document.querySelectorAll('.nw-timeline')[i];
  const v = root && root.__nwView;
  if (!v) return null;
  const o = v.overview, c = o.el, r = c.getBoundingClientRect(), dpr = c.width / Math.max(r.width, 1);
  const info = v.model.get('findings_info') || {}, ov = v.model.get('overview') || {};
  const ctx = c.getContext('2d');
  const drawn = o.drawnMarks.map((d) => {
    const p = ctx.getImageData(Math.round((d.x0 + d.x1) / 2 * dpr), Math.round((d.y0 + d.y1) / 2 * dpr), 1, 1).data;
    return { x0: d.x0, x1: d.x1, y0: d.y0, y1: d.y1, index: d.index, rgb: [p[0], p[1], p[2]] };
  });
  return { state: root.dataset.findings, info: root.querySelector('.nw-findings-info').textContent,
           marks: info.marks || [], drawn, range: ov.range, outliers: (ov.outliers || []).length,
           width: r.width, left: r.left, top: r.top, view: [v.view.t0, v.view.t1], home: v.home(), dark: v.theme.dark,
           tip: o.tip.style.display === 'block' ? o.tip.textContent : null, tipElements: o.tip.children.length,
           pressed: [...root.querySelectorAll('.nw-btn.nw-on')].map((b) => b.textContent),
           injected: document.querySelectorAll('img[src="x"]').length }; }"""


def state(page: Page) -> dict[str, Any]:
    return page.evaluate(STATE, 0)


def evil_trace(path: Path) -> Path:
    """A plain Chrome trace with two errors, one named to run script if it were ever read as HTML."""
    ev: list[dict[str, Any]] = [{"name": "work", "ph": "X", "ts": i * 100, "dur": 50, "pid": 1, "tid": 1}
                                for i in range(400)]
    ev.append({"name": EVIL, "ph": "X", "ts": 12_000, "dur": 3000, "pid": 1, "tid": 2, "args": {"error": "boom"}})
    ev.append({"name": "late", "ph": "X", "ts": 30_000, "dur": 500, "pid": 1, "tid": 3, "args": {"error": "late"}})
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def mark_text(m: dict[str, Any]) -> str:
    gain = f"gain {duration(m['gain_ns'])}" if m["gain_ns"] is not None else "no predicted gain"
    part = f" [{m['part']}]" if m["part"] else ""
    return f"{m['severity']} · {m['rule']}{part} ({gain}): {m['title']}. Click to fit the view to it."


def rgb(hex_color: str) -> list[int]:
    return [int(hex_color[k:k + 2], 16) for k in (1, 3, 5)]


def wait_marks(page: Page, n: int) -> dict[str, Any]:
    """The marks drawn (the kernel's, or the page's, answer on the strip) and the view settled."""
    page.wait_for_function(f"() => {{ const s = ({STATE})(0); return s && s.state === 'shown' && s.drawn.length === {n}; }}",
                           timeout=90_000)
    settle(page, 0)
    return state(page)


def check_drawn(s: dict[str, Any]) -> None:
    """Each mark where its time falls on the strip (the dense part spans it: no far-clock pieces), in its colour."""
    assert s["outliers"] == 0 and s["marks"], s
    lo, hi = s["range"]
    for d in s["drawn"]:
        m = s["marks"][d["index"]]
        x0 = (m["t0"] - lo) / (hi - lo) * s["width"]
        x1 = (m["t1"] - lo) / (hi - lo) * s["width"]
        if x1 - x0 >= 5:
            assert abs(d["x0"] - max(x0, 0)) < 1 and abs(d["x1"] - min(x1, s["width"])) < 1, (d, m, x0, x1)
        else:  # an instant: 5 px about its time
            assert abs((d["x0"] + d["x1"]) / 2 - (x0 + x1) / 2) < 1 and d["x1"] - d["x0"] == pytest.approx(5), (d, m)
        want = rgb(COLORS[m["severity"]][1 if s["dark"] else 0])
        assert all(abs(a - b) <= 8 for a, b in zip(d["rgb"], want, strict=True)), (d, m, want)


def hover(page: Page, s: dict[str, Any], index: int) -> str:
    """Point at a mark's middle as a user does; the tip's text once it shows that mark."""
    d = next(d for d in s["drawn"] if d["index"] == index)
    want = mark_text(s["marks"][index])
    page.mouse.move(s["left"] + (d["x0"] + d["x1"]) / 2, s["top"] + (d["y0"] + d["y1"]) / 2)
    page.wait_for_function(f"(w) => ({STATE})(0).tip === w", arg=want, timeout=10_000)
    return want


def click_fits(page: Page, s: dict[str, Any], index: int) -> None:
    d = next(d for d in s["drawn"] if d["index"] == index)
    m = s["marks"][index]
    page.mouse.click(s["left"] + (d["x0"] + d["x1"]) / 2, s["top"] + (d["y0"] + d["y1"]) / 2)
    # Its range with 5% room either side; an instant gets 1% of the whole (the events around it).
    width = max(m["t1"] - m["t0"], (s["home"][1] - s["home"][0]) / 100, 1000) * 1.1
    page.wait_for_function(f"([a, b, w]) => {{ const s = ({STATE})(0); return s.view[0] <= a && s.view[1] >= b "
                           "&& s.view[1] - s.view[0] <= w + 1; }", arg=[m["t0"], m["t1"], width], timeout=10_000)
    settle(page, 0)


@pytest.fixture()
def notebook(browser: Browser, lab: str, lab_root: Path) -> Iterator[tuple[Page, list[str]]]:
    evil_trace(lab_root / "evil_findings.json")
    cell = ("import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n"
            "tl = Timeline(nw.load_profile('evil_findings.json'), height=420)\ntl")
    nbf.write(nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(cell)], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}),
        lab_root / "findings.ipynb")
    context = browser.new_context(viewport={"width": 1500, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_notebook(page, lab, "findings.ipynb")
    try:
        yield page, dialogs
    finally:
        if page.evaluate("() => document.body.dataset.jpThemeName") != "JupyterLab Light":
            theme(page, "JupyterLab Light")  # the theme is saved in settings the other tests share
        context.close()
    assert not errors, errors


def test_the_toggle_marks_the_findings_names_them_as_text_and_a_click_fits_the_view(notebook) -> None:
    page, dialogs = notebook
    run_all(page)
    wait_cells_done(page, 180_000)
    page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=60_000)
    settle(page, 0)
    before = state(page)
    assert before["state"] == "off" and before["drawn"] == [] and before["info"] == ""
    page.locator(".nw-timeline .nw-btn", has_text="Findings").click()
    s = wait_marks(page, 2)
    assert s["pressed"] == ["Findings"] and s["info"] == "2 findings marked (2 high)"
    check_drawn(s)
    evil = next(i for i, m in enumerate(s["marks"]) if EVIL in m["title"])
    want = hover(page, s, evil)
    assert EVIL in want and state(page)["tipElements"] == 0 and state(page)["injected"] == 0
    shot(page, "finding-marks-01-light-hover")
    theme(page, "JupyterLab Dark")
    page.wait_for_function("() => document.querySelector('.nw-timeline').__nwView.theme.dark === true", timeout=30_000)
    settle(page, 0)
    s = wait_marks(page, 2)
    check_drawn(s)
    hover(page, s, evil)
    shot(page, "finding-marks-02-dark-hover")
    theme(page, "JupyterLab Light")
    s = wait_marks(page, 2)
    click_fits(page, s, evil)
    # The kernel hears the fitted view (its own clock: ns from the origin).
    m = s["marks"][evil]
    page.wait_for_function("([a, b]) => { const v = document.querySelector('.nw-timeline').__nwView.model.get('view');"
                           " return v[0] <= a && v[1] >= b; }", arg=[m["t0"], m["t1"]], timeout=10_000)
    shot(page, "finding-marks-03-fitted")
    # Off: the marks go, and the strip moves the window again.
    page.mouse.move(s["left"] + 5, s["top"] - 100)
    page.locator(".nw-timeline .nw-btn", has_text="Findings").click()
    page.wait_for_function(f"() => {{ const s = ({STATE})(0); return s.state === 'off' && s.drawn.length === 0; }}",
                           timeout=30_000)
    assert not dialogs and state(page)["injected"] == 0


def _shown(tl: Timeline) -> dict[str, Any]:
    tl.findings = True
    end = time.monotonic() + 120
    while tl.findings_info.get("state") in (None, "computing") and time.monotonic() < end:  # the kernel's thread, polled
        time.sleep(0.02)
    assert tl.findings_info["state"] == "shown", tl.findings_info
    return tl.findings_info


@pytest.mark.parametrize("which", ["sample-light", "evil-dark"])
def test_the_export_shows_the_marks_offline(open_file, tmp_path: Path, sample: nw.Profile, which: str) -> None:
    dark = which.endswith("dark")
    profile = sample if which.startswith("sample") else nw.load_profile(evil_trace(tmp_path / "evil.json"))
    tl = Timeline(profile, height=460)
    info = _shown(tl)
    export_html(tmp_path / "findings.html", tl, time_range="all")
    o = open_file(tmp_path / "findings.html", dark=dark)
    dialogs: list[str] = []
    o.page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    s = wait_marks(o.page, len(info["marks"]))
    assert s["info"] == info["text"] and s["pressed"] == ["Findings"] and s["marks"] == info["marks"]
    check_drawn(s)
    # The mark of most gain (the sample's host wait), or the one named to inject: named as text.
    index = next((i for i, m in enumerate(s["marks"]) if EVIL in m["title"]), 0)
    want = hover(o.page, s, index)
    if not which.startswith("sample"):
        assert EVIL in want
    assert state(o.page)["tipElements"] == 0 and state(o.page)["injected"] == 0
    shot(o.page, f"finding-marks-export-{which}")
    click_fits(o.page, s, index)
    # The page's toggle takes the marks off, and back on (the page holds them).
    btn = o.page.locator(".nw-timeline .nw-btn", has_text="Findings")
    btn.click()
    o.page.wait_for_function(f"() => ({STATE})(0).drawn.length === 0", timeout=10_000)
    btn.click()
    wait_marks(o.page, len(info["marks"]))
    assert not o.errors and not dialogs and not [r for r in o.requests if not r.startswith("file:")]
