"""Did the fix work reads one way (D8, D9): `Summary(after, compare=before)` gives every change as after - before
(below zero: faster) with before/after headers; the run's saving sits beside gone findings only, and a new finding
judged on a share of a shorter run says what it measured before against its bar, and that it crossed it because the
run got shorter (compare_bars)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from generated_runs import straggler_runs

from neuron_widgets import analysis as A
from neuron_widgets.analysis.compare_bars import keyed_measures, note_maker
from neuron_widgets.analysis.compare_findings import FINDING_COLUMNS, Roles, match_findings
from neuron_widgets.analysis.findings_rows import check
from neuron_widgets.summary import compare as CMP
from neuron_widgets.widgets import Summary


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return straggler_runs(tmp_path_factory.mktemp("fix-signs"))


def _ns(text: str) -> float:
    """'-8.06 ms' back to ns (the table's cells are text)."""
    num, unit = text.split()
    return float(num) * {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}[unit]


def test_the_compare_table_and_the_step_chart_give_a_fix_the_same_sign(runs) -> None:
    slow, fixed, before, after = runs
    s = Summary(after, compare=before)
    assert s.done.wait(120)
    table = s.charts.compare
    titles = [c.title for c in table.columns]
    assert "total before" in titles and "total after" in titles
    assert "change in total (after - before)" in titles
    assert not any(t.endswith((" a", " b")) for t in titles)  # no a / b left to guess at
    heads = [getattr(m, "text", "") for m in s.charts.layout.references() if type(m).__name__ == "Div"]
    assert any("after - before" in h and "(b - a)" not in h for h in heads if h.startswith("Compared with"))
    # The reference: each name's time summed by hand over the simulated events, after less before.
    def by_name(rows: list[dict]) -> dict[str, float]:
        out: dict[str, float] = {}
        for r in rows:
            out[r["name"]] = out.get(r["name"], 0.0) + (r["end_ts"] - r["start_ts"])
        return out

    if any(r.get("end_ts") is None for r in (*slow, *fixed)):
        pytest.skip("the simulated runs hold events that never end")
    tb, ta = by_name(slow), by_name(fixed)
    data = table.source.data
    assert data["key"]
    for k, total in zip(data["key"], data["delta_total_ns"], strict=True):
        assert _ns(total) == pytest.approx(ta.get(k, 0.0) - tb.get(k, 0.0), rel=0.01, abs=1.0), k
    direct = A.compare(before, after)  # direct calls keep their documented b - a: here after - before
    assert list(direct["delta_total_ns"].head(len(data["key"]))) == pytest.approx(
        [ta.get(k, 0.0) - tb.get(k, 0.0) for k in direct[direct.columns[0]].head(len(data["key"]))])
    assert any(_ns(t) < 0 for t in data["delta_total_ns"])  # the slowed compute got faster: below zero, as the bars
    bars = s.charts.fix.chart.select_one({"name": "nw-fix-steps"}).data["delta_us"]
    assert bars and all(d < 0 for d in bars)


def _findings(rows: list[tuple[str, str, float, dict]]) -> pd.DataFrame:
    """Findings as `findings()` gives them: (rule, severity, gain_ns, evidence) each."""
    return pd.DataFrame({"rule": [r[0] for r in rows], "severity": [r[1] for r in rows],
                         "gain_ns": [r[2] for r in rows], "evidence": [r[3] for r in rows],
                         "part": [None] * len(rows), "title": [f"{r[0]} title" for r in rows],
                         "start_ts": [0] * len(rows), "end_ts": [10] * len(rows)})


BEFORE = [("straggler", "high", 2e6, {"core": "c1", "late_ns": 5e6}),
          ("launch_overhead", "medium", 4e5, {"launches": 20, "overhead_ns": 4e5}),
          ("host_wait", "high", 3e6, {"host_wait_ns": 3e6, "share": 0.30})]
AFTER = [("launch_overhead", "medium", 2e5, {"launches": 20, "overhead_ns": 2e5}),
         ("host_wait", "high", 3e6, {"host_wait_ns": 3e6, "share": 0.33}),
         ("exposed_collectives", "medium", 1e5, {"exposed_ns": 1e6, "busy_ns": 9e6, "share": 0.11})]


def _reference(table: pd.DataFrame, measured: int) -> list[float]:
    """The run's saving beside a gone finding's prediction, on no other row."""
    return [float(measured) if s == "gone" else np.nan for s in table["status"]]


@pytest.mark.parametrize("measured", [2_052_894, -1_000, 0])
def test_the_runs_saving_sits_beside_gone_findings_only(measured: int) -> None:
    t = match_findings(_findings(BEFORE), _findings(AFTER), measured)
    assert list(t.columns) == FINDING_COLUMNS and "measured_saving_ns" not in t
    status = dict(zip(t["rule"], t["status"], strict=True))
    assert status == {"straggler": "gone", "launch_overhead": "changed", "host_wait": "same",
                      "exposed_collectives": "new"}
    np.testing.assert_array_equal(t["run_saving_ns"].to_numpy(float), _reference(t, measured))
    changed = t[t["status"] == "changed"].iloc[0]
    assert np.isnan(changed["run_saving_ns"]) and changed["predicted_gain_ns"] == 4e5


def _bars(measured: int) -> Any:
    """The rules' measures beside BEFORE and AFTER: exposed collectives under its bar before (8%), over it after
    (11%) with the same exposed time (the run got shorter); compare_bars' notes from them."""
    def m(share: float) -> dict[str, Any]:
        return {"rule": "exposed_collectives", "evidence": {}, "part": None, "reported": share >= 0.1,
                "checks": [check("collective time not under compute, as a share of busy time", share, 0.1)],
                "why_not": None, "amount": ["exposed collective time", 1e6], "unmeasured": None}

    return note_maker(keyed_measures([m(0.08)], Roles()), keyed_measures([m(0.11)], Roles()), measured)


def test_a_new_finding_on_a_share_of_a_shorter_run_says_it_crossed_its_bar_and_why() -> None:
    t = match_findings(_findings(BEFORE), _findings(AFTER), 2_000_000, note=_bars(2_000_000)).set_index("rule")
    assert t.at["exposed_collectives", "note"] == (
        "under its bar in the before-run: collective time not under compute, as a share of busy time 8.0% (bar: at "
        "least 10.0%; after: 11.0%); exposed collective time 1 ms → 1 ms, not grown: it crossed its bar because the "
        "run got 2 ms shorter")
    assert t.at["launch_overhead", "note"] == ""  # changed, but no measure of it in either run
    # A run that got longer: its own time did not grow, the run did not shrink: only the figures.
    longer = match_findings(_findings(BEFORE), _findings(AFTER), -5, note=_bars(-5)).set_index("rule")
    assert longer.at["exposed_collectives", "note"].endswith("1 ms → 1 ms, not grown: it crossed its bar because the "
                                                             "run got 5 ns longer")
    # Without the rules' measures (match_findings alone) there is no note.
    plain = match_findings(_findings([]), _findings([("straggler", "high", 1e6, {"core": "c2"})]), 10**6)
    assert list(plain["note"]) == [""]


def test_the_summary_table_names_the_runs_saving_and_shows_the_note() -> None:
    t = match_findings(_findings(BEFORE), _findings(AFTER), 2_052_894, note=_bars(2_052_894))
    cols, _ = CMP.findings_data(t)
    titles = {k: v[0] for k, v in CMP.FINDING_COLUMNS.items()}
    assert "measured" not in cols and titles["run_saving"] == "run saved (whole run)"
    row = {r: i for i, r in enumerate(cols["rule"])}
    assert cols["run_saving"][row["straggler"]] == "2.05 ms"
    assert cols["run_saving"][row["launch_overhead"]] == ""  # the run's saving is not this finding's
    assert "it crossed its bar because the run got 2.05 ms shorter" in cols["change"][row["exposed_collectives"]]
    assert "overhead_ns" in cols["change"][row["launch_overhead"]]  # a changed one still says what moved


def test_a_real_comparison_gives_the_runs_saving_on_gone_rows_only(runs) -> None:
    _, _, before, after = runs
    c = A.compare(before, after, by="step")
    t = c.findings
    assert (t["status"] == "gone").any()
    np.testing.assert_array_equal(t["run_saving_ns"].to_numpy(float), _reference(t, c.saved_ns))
