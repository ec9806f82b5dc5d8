"""Summary(after, compare=before) exported and opened offline: the "Did the fix work" section draws its headline,
its bar per step and its findings table; profile text stays text. Screenshots light and dark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from neuron_widgets.widgets import Summary

from .lab import DEEP_TEXT, scripts_had_their_chance, shot

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from generated_runs import exported_fix, straggler_job, straggler_runs

EVIL = "i-<img src=x onerror=alert(1)>"
# The step chart drawn on the page: its bars' data, once BokehJS has a view of it.
STEPS = """() => { for (const v of Bokeh.index.all_views())
    if (v.model.name === 'nw-fix-steps-fig' && v.el.isConnected) {
      const r = v.model.renderers.find((x) => x.data_source?.name === 'nw-fix-steps');
      return r ? r.data_source.data.delta_us.length : null; }
  return null; }"""


@pytest.fixture(scope="module")
def fix_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Summary]:
    where = tmp_path_factory.mktemp("fix-page")
    job = straggler_job()
    # One instance named with markup: the straggler's who, the headline and the table carry it as text.
    job.cores = [(EVIL if i == job.cores[1][0] else i, p, n) for i, p, n in job.cores]
    _, _, before, after = straggler_runs(where, job)
    return exported_fix(before, after, where / "fix.html", timeline=True, wait=120)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_fix_section_offline(open_file, fix_page: tuple[Path, Summary], dark: bool) -> None:
    path, s = fix_page
    opened = open_file(path, dark=dark)
    page = opened.page
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.wait_for_selector(".nw-view-summary[data-ready='1']", timeout=30_000)
    page.wait_for_function(f"() => ({STEPS})() !== null", timeout=30_000)
    scripts_had_their_chance(page)
    assert page.evaluate(STEPS) == len(s.charts.fix.result.steps)
    text = page.evaluate(DEEP_TEXT, ".nw-view-summary")
    assert "Did the fix work" in text and s.charts.fix.result.headline in text and EVIL in text
    # One sign on the page (D8): the name table is after - before, as the step bars; its columns say before / after.
    assert "after - before, below zero: faster" in text and "(b - a)" not in text
    assert "change in total (after - before)" in text and "run saved (whole run)" in text
    assert page.locator(".nw-view-summary img").count() == 0 and not dialogs
    gone = page.locator(".nw-view-summary .slick-row", has_text="arrives last")
    expect(gone).to_have_count(1, timeout=10_000)
    expect(gone.first).to_contain_text("gone")
    gone.first.scroll_into_view_if_needed()
    page.mouse.wheel(0, 200)  # the section whole: its title, headline, chart and table
    shot(page, f"summary-fix-export-{'dark' if dark else 'light'}")
    assert opened.requests == [path.as_uri()] and not opened.errors, (opened.requests, opened.errors)
