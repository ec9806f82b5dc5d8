"""The "Did the fix work" section of two runs on other machines, exported and opened offline: the worse straggler
is one finding, `changed`, named by both runs' labels, with the evidence that moved. Screenshots light and dark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from neuron_widgets.widgets import Summary

from .lab import DEEP_TEXT, scripts_had_their_chance, shot

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from generated_runs import exported_fix
from random_neuron import write_profile
from schedule_neuron import simulate
from test_findings import _clean_job


@pytest.fixture(scope="module")
def page_path(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Summary]:
    where = tmp_path_factory.mktemp("roles-page")
    job = _clean_job()
    job.compute[:, 1, :] = 130_000
    before = write_profile(where / "before", simulate(job))
    job.compute[:, 1, :] = 200_000  # the same core, slower still, in a run on other instances and pids
    rename = {i: f"i-0e{n:015x}" for n, i in enumerate(sorted({c[0] for c in job.cores}))}
    after = write_profile(where / "after", [{**r, "instance_id": rename[r["instance_id"]],
                                              "process_id": r["process_id"] + 5000} for r in simulate(job)])
    return exported_fix(before, after, where / "roles.html")


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_a_changed_finding_across_machines_offline(open_file, page_path: tuple[Path, Summary], dark: bool) -> None:
    path, s = page_path
    f = s.charts.fix.result.findings
    st = f[f["rule"] == "straggler"].iloc[0]
    assert st["status"] == "changed" and st["who"] != st["who_after"] and st["figures_changed"]
    opened = open_file(path, timeline=False, dark=dark)  # a Summary of its own: no Timeline on the page
    page = opened.page
    page.wait_for_selector(".nw-view-summary[data-ready='1']", timeout=30_000)
    scripts_had_their_chance(page)
    row = page.locator(".nw-view-summary .nw-fix-findings-table .slick-row", has_text="arrives last")
    expect(row).to_have_count(1, timeout=20_000)
    expect(row.first).to_contain_text("changed")
    expect(row.first).to_contain_text(f"{st['who']} → {st['who_after']}")
    expect(row.first).to_contain_text("compute_ns")  # the evidence that moved, before → after
    text = page.evaluate(DEEP_TEXT, ".nw-view-summary")
    assert "evidence moved" in text and "1 changed" in text
    row.first.scroll_into_view_if_needed()
    page.mouse.wheel(0, 200)
    shot(page, f"summary-fix-roles-{'dark' if dark else 'light'}")
    assert not opened.errors, opened.errors
