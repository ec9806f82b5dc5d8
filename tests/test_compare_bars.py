"""Did the fix work, against the rules' bars: a new finding says what its rule measured in the before-run (under its
bar, and whether its own time grew or the run shrank), a gone one what it measures after; every rule's measures
agree with its findings on random profiles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from random_neuron import random_profile, write_profile
from schedule_neuron import simulate
from test_findings import NODES, _clean_job, _write_job

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.compare_bars import STALE, bar_note, keyed_measures
from neuron_widgets.analysis.compare_findings import Roles, keyed
from neuron_widgets.analysis.findings_rows import check
from neuron_widgets.model.timefmt import duration


def _runs(tmp: Path, gap_before: int, gap_after: int, fix_straggler: bool) -> tuple[nw.Profile, nw.Profile]:
    """A run whose core 1 computes 80% longer (the straggler) and whose host waits `gap_before` between calls; the
    after-run with that core fixed (`fix_straggler`) and a host gap of `gap_after`."""
    job = _clean_job()
    job.compute[:, 1, :] = 180_000
    job.host_gap[:, :] = gap_before
    before = write_profile(tmp / "before", simulate(job))
    job.host_gap[:, :] = gap_after
    after = write_profile(tmp / "after", simulate(job, compute_scale={1: 100 / 180} if fix_straggler else None))
    return before, after


def _host_wait(p: nw.Profile) -> tuple[float, float]:
    """The reference: the cores' host wait and its share of their summed span, from the analyses themselves."""
    idle, temporal = A.idle_time_breakdown(p), A.temporal_breakdown(p)
    waited = float(idle.loc[idle["idle_category"] == "host_wait", "idle_time_ns"].sum())
    return waited, waited / float(temporal["span_ns"].sum())


def test_a_new_finding_that_crossed_its_bar_because_the_run_got_shorter(tmp_path: Path) -> None:
    before, after = _runs(tmp_path, 30_000, 30_000, fix_straggler=True)
    c = A.compare(before, after, by="step")
    row = c.findings.set_index("rule").loc["host_wait"]
    assert row["status"] == "new" and "New: host_wait (its own time did not grow)." in c.headline
    waited_b, share_b = _host_wait(before)
    waited_a, share_a = _host_wait(after)
    assert share_b < 0.10 <= share_a and waited_a == pytest.approx(waited_b, rel=0.01)
    note = row["note"]
    assert note.startswith("under its bar in the before-run: share of the NeuronCores' time idle waiting on the host "
                           f"{100 * share_b:.1f}% (bar: at least 10.0%; after: {100 * share_a:.1f}%)"), note
    assert (f"host wait {duration(waited_b)} → {duration(waited_a)}, not grown: it crossed its bar because the run got "
            f"{duration(c.saved_ns)} shorter") in note
    # The straggler, gone: what it measures in the after-run, under its bar.
    gone = c.findings.set_index("rule").loc["straggler"]
    assert gone["status"] == "gone"
    assert gone["note"].startswith("under its bar in the after-run: share of its collective steps it is last at ")
    assert "(bar: at least 50.0%; before: 100.0%)" in gone["note"]


def test_a_new_finding_whose_own_time_grew(tmp_path: Path) -> None:
    before, after = _runs(tmp_path, 20_000, 60_000, fix_straggler=False)
    row = A.compare(before, after, by="step").findings.set_index("rule").loc["host_wait"]
    (waited_b, share_b), (waited_a, _) = _host_wait(before), _host_wait(after)
    assert row["status"] == "new" and share_b < 0.10
    assert f"{100 * share_b:.1f}% (bar: at least 10.0%" in row["note"]
    assert f"host wait {duration(waited_b)} → {duration(waited_a)} ({waited_a / waited_b:.2f}x)" in row["note"]
    assert "not grown" not in row["note"]


def _m(rule: str, checks: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {"rule": rule, "evidence": {}, "part": None, "checks": checks, "reported": False, "why_not": None,
            "amount": None, "unmeasured": None, **kw}


def test_the_notes_of_each_case() -> None:
    over = check("share of the idlest GPU's span it is idle", 0.4, 0.1)
    assert bar_note("new", "error", None, None, 5) == "none in the before-run (no bar: any one is a finding)"
    assert bar_note("new", "host_wait", None, _m("host_wait", [over]), 5).startswith("nothing of it measured in the "
                                                                                     "before-run")
    cap = _m("hbm_capacity", [], unmeasured="the profile's metadata has no hbm_capacity_bytes")
    assert bar_note("new", "hbm_capacity", cap, None, 5) == ("not measurable in the before-run: the profile's "
                                                              "metadata has no hbm_capacity_bytes")
    off = _m("gpu_idle", [over], why_not="that time is not on the critical path (the what-if saves nothing)")
    said = bar_note("gone", "gpu_idle", None, off, 5)
    assert said == ("still over its bar in the after-run (share of the idlest GPU's span it is idle 40.0% (bar: at "
                    "least 10.0%)) but not reported: that time is not on the critical path (the what-if saves nothing)")
    low = check("the least overlapped rank's communication under computation", 62.0, 50.0, unit="percent", below=True,
                strict=True)
    assert "62.0% (bar: under 50.0%" in bar_note("new", "low_overlap", _m("low_overlap", [low]), None, 0)
    upper = check("saving without launch latency, as a share of the run", 0.01, 0.02, upper=True)
    assert "at most 1.0% (bar: at least 2.0%)" in bar_note("new", "launch_overhead", _m("x", [upper]), None, 0)
    # A job part whose findings were stored before the rules kept their measures: not known, not absent.
    kept = keyed_measures([{"rule": STALE, "evidence": {}, "part": None, "parts": ["node-01"]}], Roles())
    assert bar_note("new", "host_wait", None, None, 5, kept[(STALE, "", "")]) == (
        "its figures in the before-run are not known: the stored findings of node-01 predate the rules' kept measures "
        "(clear the job's results to compute them again)")
    same = bar_note("changed", "host_wait", _m("host_wait", [], amount=["host wait", 1e6]),
                    _m("host_wait", [], amount=["host wait", 1.05e6]), 2_000_000)
    assert same == "host wait 1 ms → 1.05 ms, not moved: its shares moved because the run got 2 ms shorter"


BARRED = {"straggler", "host_wait", "launch_overhead", "exposed_collectives", "compute_imbalance", "hbm_capacity",
          "idle_transfers", "gpu_idle", "launch_delay", "low_overlap", "sync_memcpy", "device_sync", "fusion"}


def _keys(rules: list[str], evidence: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(rule, key) as compare keys a finding or a measure (the worker's label, a rank, or the rule alone)."""
    k = keyed(pd.DataFrame({"rule": rules, "evidence": evidence, "part": pd.Series([None] * len(rules), dtype=object)}),
              Roles())
    return sorted(zip(k["rule"], k["key"], strict=True))


def _agree(f: pd.DataFrame) -> None:
    """A rule with a bar fires exactly where its measure says it is reported, and a reported measure meets all its
    checks; each measure is plain data (JSON, as a part's stored result keeps it)."""
    measures = f.attrs["measures"]
    shown = [m for m in measures if m["reported"]]
    fired = f[f["rule"].isin(BARRED)]
    assert _keys([m["rule"] for m in shown], [m["evidence"] for m in shown]) == \
        _keys(fired["rule"].tolist(), fired["evidence"].tolist())
    json.dumps(measures)
    for m in measures:
        assert not m["reported"] or all(c["met"] for c in m["checks"]), m
        assert m["unmeasured"] or m["checks"], m
        for c in m["checks"]:
            assert np.isnan(c["value"]) or not c["met"] or (c["value"] <= c["bar"] if c["below"] else
                                                             c["value"] >= c["bar"])


@pytest.mark.parametrize("seed", range(0, 40, 5))
def test_measures_agree_with_findings_on_random_profiles(seed: int, tmp_path: Path) -> None:
    _agree(A.findings(random_profile(seed, tmp_path / "r")))


@pytest.mark.parametrize("seed", range(0, 12, 3))
def test_measures_agree_with_findings_on_random_kineto_traces(seed: int, tmp_path: Path) -> None:
    from neuron_widgets.sample.kineto import write_kineto

    paths = write_kineto(tmp_path / "k", seed=seed, ranks=2 + seed % 3, late_rank=seed % 2)
    _agree(A.findings(nw.load_profile(paths, cache=False, prepare=False)))


def test_a_slow_node_fixed_in_a_job_is_gone_under_its_bar(tmp_path: Path) -> None:
    slow = _clean_job(on=NODES)
    slow.compute[:, 6:, :] = 130_000  # every core of the third node 30% slower
    fixed = _clean_job(on=NODES)
    c = A.compare(_write_job(slow, tmp_path / "a"), _write_job(fixed, tmp_path / "b"), by="step", scheduler="sync")
    row = c.findings.set_index("rule").loc["slow_node"]
    assert row["status"] == "gone" and row["part"] == NODES[6][0]
    assert row["note"].startswith("under its bar in the after-run: its fastest core's compute against the other parts' "
                                  "median core 1.00x (bar: at least 1.10x; before: 1.30x); fastest core's compute ")
    assert row["note"].endswith("(0.77x)"), row["note"]  # its compute 100/130 of before's
