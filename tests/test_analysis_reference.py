"""The fast Neuron analyses against slow, obviously right references on randomly generated profiles.

Each seed makes a profile of a different shape (tests/random_neuron.py); the references
(tests/reference_neuron.py) loop over its events one by one. A failure names the seed: rerun
with `pytest tests/test_analysis_reference.py -k "seed-N"`.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import reference_neuron as ref
from random_neuron import random_events, random_profile, write_profile

from neuron_widgets import analysis as A

SEEDS = range(240)


def core_of(row) -> tuple:
    return (row["instance_id"], int(row["process_id"]), int(row["nc_idx"]))


@pytest.fixture(params=SEEDS, ids=lambda s: f"seed-{s}")
def profile(request: pytest.FixtureRequest, tmp_path: Path):
    return random_profile(request.param, tmp_path / "p")


def test_stragglers_match_the_reference(profile) -> None:
    want, want_steps = ref.stragglers(profile)
    got = A.stragglers(profile)
    have = {core_of(r): r for r in got.to_dict("records")}
    assert set(have) == set(want)
    for core, w in want.items():
        g = have[core]
        assert (g["times_last"], g["steps"], g["max_lag_ns"]) == (w["times_last"], w["steps"], w["max_lag"]), core
        assert g["mean_lag_ns"] == pytest.approx(w["mean_lag"]), core
        assert g["wait_caused_ns"] == round(w["wait_caused"]) or abs(g["wait_caused_ns"] - w["wait_caused"]) <= 1, core
    # Worst first: by times last, then mean lag.
    order = list(zip(got["times_last"], got["mean_lag_ns"], strict=True))
    assert order == sorted(order, key=lambda x: (-x[0], -x[1])) or not order
    steps = A.stragglers(profile, per_step=True)
    assert len(steps) == len(want_steps)
    assert sorted(zip((core_of(r) for r in steps.to_dict("records")), steps["lag_ns"], steps["devices"], strict=True)) == \
        sorted((s["core"], s["lag"], s["devices"]) for s in want_steps)
    assert sorted(steps["mean_wait_ns"]) == pytest.approx(sorted(s["mean_wait"] for s in want_steps))


def test_temporal_and_overlap_match_the_reference(profile) -> None:
    want = ref.temporal(profile)
    t = A.temporal_breakdown(profile)
    have = {core_of(r): r for r in t.to_dict("records")}
    assert set(have) == set(want)
    for core, w in want.items():
        g = have[core]
        assert (g["executions"], g["span_ns"], g["busy_time_ns"], g["compute_time_ns"], g["collective_time_ns"],
                g["barrier_time_ns"], g["idle_time_ns"]) == \
            (w["executions"], w["span"], w["busy"], w["compute"], w["collective"], w["barrier"], w["idle"]), core
        parts = sum(g[f"{p}_time_pctg"] for p in ("compute", "collective", "barrier", "idle"))
        assert parts == pytest.approx(100.0 if w["span"] else 0.0)
    o = A.comm_comp_overlap(profile)
    have = {core_of(r): r for r in o.to_dict("records")}
    assert set(have) == set(want)
    for core, w in want.items():
        assert (have[core]["comm_time_ns"], have[core]["overlap_time_ns"]) == (w["comm"], w["overlap"]), core


def test_neff_breakdown_matches_the_reference(profile) -> None:
    want = ref.by_neff(profile)
    got, _ = A.kernel_breakdown(profile)
    have = {r["model_name"]: r for r in got.to_dict("records")}
    assert set(have) == set(want)
    for name, w in want.items():
        g = have[name]
        assert (g["count"], g["sum_ns"], g["min_ns"], g["max_ns"]) == (w["count"], w["sum"], w["min"], w["max"])
        assert (g["mean_ns"], g["std_ns"], g["percentage"]) == pytest.approx((w["mean"], w["std"], w["percentage"]),
                                                                              rel=1e-6, abs=1e-6)


def test_idle_causes_match_the_reference(profile) -> None:
    want = ref.idle(profile)
    got = A.idle_time_breakdown(profile)
    have: dict = {}
    for r in got.to_dict("records"):
        have.setdefault(core_of(r), {})[r["idle_category"]] = (r["idle_time_ns"], r["gaps"])
    assert have == want


def test_errors_hangs_and_incomplete_match_the_reference(profile) -> None:
    want = ref.problems(profile)
    got = A.errors_and_hangs(profile)
    assert set(got.loc[got["kind"] == "error", "row"]) == want["errors"]
    assert set(got.loc[got["kind"] == "incomplete", "row"]) == want["incomplete"]
    assert (got["kind"] == "hang").sum() == len(want["hangs"])
    # A framework function whose name says "error" is never an error.
    names = set(got.loc[got["kind"] == "error", "name"])
    assert "<built-in function set_fullgraph_error_on_nested_compile>" not in names


def test_the_generator_makes_the_shapes_it_promises() -> None:
    """The seeds cover what the references are meant to be tested on (a generator that lost a shape fails here)."""
    seen = {"cores>=32": False, "no barrier for a participant": False, "zero-length barrier": False,
            "no exec_id": False, "never ends": False, "overlap": False, "several neffs": False, "several instances": False}
    for seed in SEEDS:
        rows = random_events(seed)
        cores = {(r["instance_id"], r["process_id"], r["nc_idx"]) for r in rows if r["nc_idx"] is not None}
        seen["cores>=32"] |= len(cores) >= 32
        seen["several instances"] |= len({c[0] for c in cores}) > 1
        bars = [r for r in rows if r["name"] == "cc_exec_barrier"]
        ccs = [r for r in rows if r["name"] == "cc_running"]
        seen["zero-length barrier"] |= any(r["start_ts"] == r["end_ts"] for r in bars)
        seen["no barrier for a participant"] |= len(ccs) > len(bars)
        ex = [r for r in rows if r["name"] == "nc_exec_running"]
        seen["no exec_id"] |= any('"exec_id"' not in (r["extra_attributes_json"] or "") for r in ex)
        seen["never ends"] |= any(r["end_ts"] is None for r in ex)
        seen["several neffs"] |= len({r["extra_attributes_json"].split('"model_name": ')[-1][:9] for r in ex
                                      if "model_name" in (r["extra_attributes_json"] or "")}) > 1
        starts = sorted((r["nc_idx"], r["instance_id"], r["process_id"], r["start_ts"], r["end_ts"] or 0) for r in ex)
        seen["overlap"] |= any(a[:3] == b[:3] and b[3] < a[4] for a, b in itertools.pairwise(starts))
    assert all(seen.values()), seen


def test_the_late_core_without_barriers_is_named(tmp_path: Path) -> None:
    """Issue 23's case: the last core never records a barrier (it waits 0); it is the straggler, by the right lag."""
    rows = []

    def add(name, nc, s, e, args):
        rows.append({"id": len(rows) + 1, "name": name, "start_ts": s, "end_ts": e, "duration_ns": e - s,
                     "trace_event_source": "neuron_hw", "instance_id": "i-0", "process_id": 1, "thread_id": nc,
                     "nc_idx": nc, "pcore_idx": nc, "worker_gid": None, "flow_id": None,
                     "extra_attributes_json": json.dumps(args)})

    for step in range(40):
        t = step * 10_000
        for nc, arrive in ((0, 1_000), (1, 1_500), (2, 4_000)):
            add("nc_exec_running", nc, t, t + 6_000, {"exec_id": step, "model_name": "neff_a"})
            if nc != 2:
                add("cc_exec_barrier", nc, t + arrive, t + 4_000, {"exec_id": step})
            add("cc_running", nc, t + 4_000, t + 5_000, {"exec_id": step})
    p = write_profile(tmp_path / "p", rows)
    s = A.stragglers(p)
    top = s.iloc[0]
    assert (int(top["nc_idx"]), int(top["times_last"]), int(top["steps"])) == (2, 40, 40)
    assert top["max_lag_ns"] == 3_000 and top["mean_lag_ns"] == 3_000
    assert top["wait_caused_ns"] == 40 * (3_000 + 2_500) / 2
    assert s.set_index("nc_idx").loc[0, "times_last"] == 0
    steps = A.stragglers(p, per_step=True)
    assert len(steps) == 40 and (steps["nc_idx"] == 2).all() and (steps["devices"] == 3).all()
    assert (steps["model_name"] == "neff_a").all() and steps["step"].tolist() == list(range(40))


def test_reference_helpers_read_nothing_of_the_package() -> None:
    """The references must not be the fast code by another name."""
    src = Path(ref.__file__).read_text()
    assert "neuron_widgets.analysis" not in src and "from neuron_widgets import" not in src
