"""Traces from other tools in a real JupyterLab: named tracks, a far clock, the overview strip."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Page

from .lab import open_notebook, real_trace, shot, wait_cells_done

VIEW = "document.querySelectorAll('.nw-timeline')[{i}].__nwView"


def far_clock_trace(path: Path) -> None:
    ev = [{"ph": "X", "name": f"boot_{i % 3}", "pid": 1, "tid": 1, "ts": 100 + i * 10, "dur": 5} for i in range(300)]
    late = 1e12  # a million seconds later, in microseconds
    ev += [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "trainer"}},
           {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}}]
    ev += [{"ph": "X", "name": f"step_{i // 500}", "pid": 1, "tid": 2, "ts": late + i * 20, "dur": 15} for i in range(5_000)]
    path.write_text(json.dumps({"traceEvents": ev}))


def test_named_tracks_far_clock_and_overview(page: Page, lab: str, lab_root: Path) -> None:
    far_clock_trace(lab_root / "two_clocks.json")
    kineto = real_trace("hta/nccl_data.json.gz")
    code = ("import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n"
            "far = Timeline(nw.load_profile('two_clocks.json'), height=300)\n"
            f"kin = Timeline(nw.load_profile({str(kineto)!r}), height=420)\n"
            "from IPython.display import display\ndisplay(far, kin)")
    cells = [nbf.v4.new_code_cell(code)]
    nbf.write(nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                          "language": "python"}}),
              lab_root / "other_tools.ipynb")
    open_notebook(page, lab, "other_tools.ipynb")
    page.locator(".jp-CodeCell .jp-InputPrompt").first.click()
    page.keyboard.press("Control+Enter")
    wait_cells_done(page, 180_000)
    page.wait_for_function("() => document.querySelectorAll('.nw-timeline').length === 2 && "
                           "[...document.querySelectorAll('.nw-timeline')].every(t => +t.dataset.drawn > 0)",
                           timeout=90_000)

    # The far clock: the view opens on the dense part (100 ms of steps), not a million seconds of nothing,
    # and times read as that part's own: from 0 ms, not "18706.975 min".
    far = VIEW.format(i=0)
    view = page.evaluate(f"() => [{far}.view.t0, {far}.view.t1, {far}.model.get('span')[0]]")
    assert view[0] == 0 and view[1] < 1e9 and view[2] < -1e14  # the early clock lies a million seconds before
    assert page.evaluate(f"() => {far}.model.get('home')[0]") == view[0]
    axis = page.evaluate(f"() => {far}.axisLabels()")
    assert axis and all(re.fullmatch(r"-?[\d.]+ (ms|µs)", t) for t in axis), axis
    labels = page.locator(".nw-timeline").nth(0).locator(".nw-labels").inner_text()
    assert "worker 2" in labels and "trainer 1" in labels

    # The overview strip: the dense part over most of its width, the early clock's 300 events as a
    # piece of their own across a break; a click there goes to them, Reset comes back.
    strip = page.locator(".nw-timeline").nth(0).locator(".nw-overview")
    assert strip.is_visible()
    box = strip.bounding_box()
    assert box and box["height"] >= 20
    dense_x = page.evaluate(f"() => {far}.overview.xOf(0)")
    assert 20 < dense_x < 60, dense_x  # the dense part starts right after the first piece and its break
    assert page.evaluate(f"() => {far}.overview.xOf(5e7)") > box["width"] / 2  # 50 ms: mid-strip, not a sliver
    page.mouse.move(box["x"] + 6, box["y"] + box["height"] / 2)
    assert "300 events on a far clock" in (strip.get_attribute("title") or "")
    page.mouse.click(box["x"] + 6, box["y"] + box["height"] / 2)
    page.wait_for_function(f"() => {far}.view.t1 < -1e14", timeout=10_000)
    moved = page.evaluate(f"() => [{far}.view.t0, {far}.view.t1]")
    assert abs((moved[1] - moved[0]) - (view[1] - view[0])) < 1  # the window keeps its width
    # Reset goes home, the dense part.
    page.locator(".nw-timeline").nth(0).get_by_role("button", name="Reset").click()
    page.wait_for_function(f"() => Math.abs({far}.view.t0 - {view[0]}) < 1", timeout=10_000)
    shot(page, "other-tools-01-far-clock")

    # Kineto: its own names, CPU first, GPU streams, bookkeeping rows last.
    kin_labels = page.locator(".nw-timeline").nth(1).locator(".nw-labels").inner_text()
    assert "python3.10 2910249" in kin_labels and "GPU 0" in kin_labels and "stream 7" in kin_labels
    assert "PID:-" not in kin_labels
    order = page.evaluate(f"() => {VIEW.format(i=1)}.model.get('tracks').map(t => t.label)")
    assert order[0].startswith("rank0/python3.10") and order[-1] == "rank0/Traces/Trace PyTorch Profiler"
    page.locator(".nw-timeline").nth(1).scroll_into_view_if_needed()
    shot(page, "other-tools-02-kineto-names")
    assert not page.errors  # type: ignore[attr-defined]
