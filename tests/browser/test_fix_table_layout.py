"""The findings tables in an exported page (the Summary's own and "Did the fix work"'s), light and dark, on a wide
and a 1,600 px page: the header's rule and the table end with its last column, no column is cut off at 1,600 px,
and a new finding's note (where it stood against its bar in the before-run) is on the page as text. Screenshots
looked at."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .lab import DEEP_TEXT, scripts_had_their_chance, shot

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from generated_runs import exported_fix, straggler_job
from random_neuron import write_profile
from schedule_neuron import simulate

# A table's geometry (`name`: its css class): its box, the header strip's and the header cells' bottom rules, the columns' right
# edge, and whether its viewport scrolls sideways (bokeh draws the table in shadow roots).
GEOMETRY = """(name) => {
  const deep = (root) => { const out = []; const walk = (n) => { if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.children || []) { out.push(c); walk(c); } }; walk(root); return out; };
  const host = deep(document).find((e) => e.classList?.contains(name));
  if (!host) return null;
  const all = deep(host);
  const strip = all.find((e) => e.classList?.contains('slick-header-columns'));
  const cells = all.filter((e) => e.classList?.contains('slick-header-column'));
  const view = all.find((e) => e.classList?.contains('slick-viewport'));
  if (!strip || !cells.length || !view) return null;
  const box = host.getBoundingClientRect();
  return {left: box.left, right: box.right, stripRule: parseFloat(getComputedStyle(strip).borderBottomWidth),
          cellRules: cells.map((c) => getComputedStyle(c).boxShadow),
          columnsRight: Math.max(...cells.map((c) => c.getBoundingClientRect().right)),
          scrollsSideways: view.scrollWidth > view.clientWidth + 1};
}"""


@pytest.fixture(scope="module")
def fix_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("fix-table")
    job = straggler_job()
    job.compute[:, 1, :] = 180_000
    job.host_gap[:, :] = 30_000  # a host wait under its bar before; over it once the straggler is fixed
    before = write_profile(where / "before", simulate(job))
    after = write_profile(where / "after", simulate(job, compute_scale={1: 100 / 180}))
    page, s = exported_fix(before, after, where / "fix.html")
    f = s.charts.fix.result.findings.set_index("rule")
    assert f.at["host_wait", "status"] == "new" and f.at["host_wait", "note"].startswith("under its bar in the before")
    return page


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [2100, 1600])
def test_the_table_ends_with_its_last_column(open_file, fix_page: Path, dark: bool, width: int) -> None:
    opened = open_file(fix_page, dark=dark, timeline=False, width=width)
    page = opened.page
    page.wait_for_selector(".nw-view-summary[data-ready='1']", timeout=30_000)
    for name in ("nw-fix-findings-table", "nw-findings-table"):  # the comparison's and the Summary's own findings
        page.wait_for_function(f"() => ({GEOMETRY})({name!r}) !== null", timeout=30_000)
    scripts_had_their_chance(page)
    for name in ("nw-fix-findings-table", "nw-findings-table"):
        g = page.evaluate(GEOMETRY, name)
        # The rule is drawn under each header cell (a 1 px inset shadow), none under the header strip past them.
        assert g["stripRule"] == 0 and all("inset" in r and "-1px" in r for r in g["cellRules"]), (name, g)
        assert g["right"] <= g["columnsRight"] + 4, (name, g)  # the table (its background too) ends with its columns
        assert not g["scrollsSideways"], (name, g)  # every column shown at 1,600 px
    text = page.evaluate(DEEP_TEXT, ".nw-view-summary")
    assert "under its bar in the before-run: share of the NeuronCores' time idle waiting on the host" in text
    assert "it crossed its bar because the run got" in text
    page.locator(".nw-fix-findings-table").first.scroll_into_view_if_needed()
    shot(page, f"fix-table-{width}-{'dark' if dark else 'light'}")
    assert not opened.errors, opened.errors
