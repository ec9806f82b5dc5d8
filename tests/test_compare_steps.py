"""Did the fix work: compare(before, after, by="step") on a simulated run and the same run with the fix applied
(the measured saving equals the simulated difference, the predicted gain is close, findings gone and new are
right), and the step alignment against a slow reference on random profiles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from random_neuron import random_events, write_profile
from schedule_neuron import simulate, span
from test_findings import NODES, _clean_job, _write_job

from neuron_widgets import analysis as A
from neuron_widgets.analysis.compare_steps import FINDING_COLUMNS, STEP_COLUMNS, Comparison


def _step_truth(rows: list[dict[str, Any]]) -> dict[int, int]:
    """Per exec_id: the last execution's end less the first one's start over the cores."""
    out: dict[int, tuple[int, int]] = {}
    for r in rows:
        if r["name"] != "nc_exec_running":
            continue
        s = json.loads(r["extra_attributes_json"])["exec_id"]
        a, b = out.get(s, (r["start_ts"], r["end_ts"]))
        out[s] = (min(a, r["start_ts"]), max(b, r["end_ts"]))
    return {s: b - a for s, (a, b) in out.items()}


@pytest.fixture(scope="module")
def straggler_runs(tmp_path_factory) -> tuple[Any, ...]:
    tmp = tmp_path_factory.mktemp("fix")
    job = _clean_job()
    k = 2
    job.compute[:, k, :] = 160_000  # one core 60% slower: the straggler
    slow, fixed = simulate(job), simulate(job, compute_scale={k: 100 / 160})
    return job, k, slow, fixed, write_profile(tmp / "before", slow), write_profile(tmp / "after", fixed)


def test_the_fix_of_a_straggler_measured_against_its_prediction(straggler_runs) -> None:
    job, k, slow, fixed, before, after = straggler_runs
    c = A.compare(before, after, by="step")
    assert isinstance(c, Comparison)
    assert list(c.steps.columns) == STEP_COLUMNS and list(c.findings.columns) == FINDING_COLUMNS
    # The measured saving is the simulated difference, to the nanosecond.
    assert c.saved_ns == span(slow) - span(fixed) > 0
    assert (c.span_before_ns, c.span_after_ns) == (span(slow), span(fixed))
    # Every step matched, each step's change the simulated one.
    steps = len(job.neff_of_step)
    assert len(c.steps) == steps and (c.steps["status"] == "matched").all()
    tb, ta = _step_truth(slow), _step_truth(fixed)
    for r in c.steps.itertuples():
        assert r.step_before == r.step_after
        assert r.duration_before_ns == tb[r.step_before] and r.duration_after_ns == ta[r.step_after]
        assert r.delta_ns == ta[r.step_after] - tb[r.step_before] < 0
    # The straggler is gone; what it predicted is within 2% of what was measured; nothing new.
    gone = c.findings[c.findings["status"] == "gone"]
    assert list(gone["rule"]) == ["straggler"]
    inst, _pid, nc = job.cores[k]
    assert gone.iloc[0]["who"] == f"{inst}/PID:{_pid}/neuron_rt/NC:{nc}"
    assert gone.iloc[0]["predicted_gain_ns"] == pytest.approx(c.saved_ns, rel=0.02)
    assert gone.iloc[0]["run_saving_ns"] == c.saved_ns
    assert c.predicted_ns == gone.iloc[0]["predicted_gain_ns"]
    assert not (c.findings["status"] == "new").any()
    assert "shorter" in c.headline and "Gone: straggler" in c.headline and "Nothing new" in c.headline
    assert f"{steps} steps matched" in c.headline


def test_a_regression_is_new_and_longer(straggler_runs) -> None:
    _, _, slow, fixed, before, after = straggler_runs
    c = A.compare(after, before, by="step")  # the other way round: the straggler appears
    assert c.saved_ns == span(fixed) - span(slow) < 0
    new = c.findings[c.findings["status"] == "new"]
    assert list(new["rule"]) == ["straggler"] and new["predicted_gain_ns"].isna().all()
    assert (c.steps["delta_ns"] > 0).all()
    assert "longer" in c.headline and "New: straggler" in c.headline and "No finding is gone" in c.headline


def test_runs_align_by_each_neffs_kth_step_not_by_exec_id(straggler_runs, tmp_path) -> None:
    job, _, _slow, fixed, before, _ = straggler_runs
    shifted = []
    last = max(json.loads(r["extra_attributes_json"]).get("exec_id", 0) for r in fixed if r["extra_attributes_json"])
    for r in fixed:
        args = json.loads(r["extra_attributes_json"]) if r["extra_attributes_json"] else {}
        if args.get("exec_id") in (last - 1, last):
            continue  # the after-run's capture stops two steps early
        if "exec_id" in args:
            args["exec_id"] += 100  # and its exec_ids count on from another start
        shifted.append({**r, "extra_attributes_json": json.dumps(args) if args else None})
    after = write_profile(tmp_path / "shifted", shifted)
    c = A.compare(before, after, by="step")
    matched = c.steps[c.steps["status"] == "matched"]
    assert len(matched) == len(job.neff_of_step) - 2
    assert (matched["step_after"] == matched["step_before"] + 100).all()
    only = c.steps[c.steps["status"] == "before only"]
    assert len(only) == 2 and only["duration_after_ns"].isna().all() and only["delta_ns"].isna().all()
    assert "2 before only" in c.headline


def test_html_escapes_the_profiles_text(straggler_runs) -> None:
    c = A.compare(straggler_runs[4], straggler_runs[5], by="step")
    c.notes.append("<script>alert(1)</script>")
    c.findings.loc[0, "title_before"] = "<img src=x onerror=alert(1)>"
    page = c._repr_html_()
    assert "<script>" not in page and "<img" not in page and "&lt;img" in page and "&lt;script&gt;" in page


def test_a_job_against_its_fixed_self(tmp_path) -> None:
    job = _clean_job(on=NODES)
    job.compute[:, 7, :] = 150_000
    before = _write_job(job, tmp_path / "b")
    fixed = job.__class__(**{**job.__dict__, "compute": np.where(np.arange(len(job.cores))[None, :, None] == 7,
                                                                 100_000, job.compute)})
    after = _write_job(fixed, tmp_path / "a")
    c = A.compare(before, after, by="step", scheduler="sync")
    assert c.saved_ns == span(simulate(job)) - span(simulate(fixed)) > 0
    assert (c.steps["status"] == "matched").all() and (c.steps["delta_ns"] < 0).all()
    assert "job_straggler" in set(c.findings.loc[c.findings["status"] == "gone", "rule"])


def test_other_by_values_keep_their_frames_and_refuse_job_arguments(straggler_runs) -> None:
    d = A.compare(straggler_runs[4], straggler_runs[5])
    assert isinstance(d, pd.DataFrame) and "delta_total_ns" in d
    with pytest.raises(TypeError, match="takes no scheduler"):
        A.compare(straggler_runs[4], straggler_runs[5], scheduler="sync")
    with pytest.raises(ValueError, match="by must be one of name, neff, core, step"):
        A.compare(straggler_runs[4], straggler_runs[5], by="steps")


# ---- the alignment against a slow reference ----------------------------------------------------------------

def _reference_steps(rows: list[dict[str, Any]]) -> list[tuple[Any, int, int, int]]:
    """(NEFF, step, start, duration) per step, in time order, from the events one by one: a step is an
    execution's exec_id, else its ordinal among its core's executions of that NEFF (by start, then id)."""
    end_all = max(r["end_ts"] if r["end_ts"] is not None else r["start_ts"] for r in rows)
    runs = sorted((r for r in rows if r["name"] == "nc_exec_running"), key=lambda r: (r["start_ts"], r["id"]))
    seen: dict[tuple, int] = {}
    steps: dict[tuple, list[int]] = {}
    for r in runs:
        args = json.loads(r["extra_attributes_json"]) if r["extra_attributes_json"] else {}
        neff = args.get("model_name")
        core = (r["instance_id"], r["process_id"], r["nc_idx"])
        n = seen.get((core, neff), 0)
        seen[(core, neff)] = n + 1
        step = args.get("exec_id", n)
        end = r["end_ts"] if r["end_ts"] is not None else end_all
        s = steps.setdefault((neff, step), [r["start_ts"], end])
        s[0], s[1] = min(s[0], r["start_ts"]), max(s[1], end)
    return sorted(((k[0], k[1], v[0], v[1] - v[0]) for k, v in steps.items()), key=lambda t: (t[2], t[1]))


def _reference_align(b: list[tuple], a: list[tuple]) -> list[tuple]:
    """Pairs of (NEFF, k) -> (before's step, start and duration, after's), k counting each NEFF's steps in time
    order."""
    def kth(steps: list[tuple]) -> dict[tuple, tuple]:
        count: dict[Any, int] = {}
        out = {}
        for neff, step, start, dur in steps:
            k = count.get(neff, 0)
            count[neff] = k + 1
            out[(neff, k)] = (step, start, dur)
        return out

    kb, ka = kth(b), kth(a)
    return sorted(((key, kb.get(key), ka.get(key)) for key in set(kb) | set(ka)), key=_by_key)


def _by_key(t: tuple) -> tuple:
    return (str(t[0][0]), t[0][1])


@pytest.mark.parametrize("seed", range(15))
def test_step_alignment_matches_the_reference_on_random_profiles(seed: int, tmp_path: Path) -> None:
    rb, ra = random_events(seed), random_events(seed + 500)
    c = A.compare(write_profile(tmp_path / "b", rb), write_profile(tmp_path / "a", ra), by="step")
    want = _reference_align(_reference_steps(rb), _reference_steps(ra))

    def val(v: Any) -> Any:
        return None if pd.isna(v) else int(v)

    got = sorted((((r.model_name, r.ordinal),
                   None if pd.isna(r.step_before) else (val(r.step_before), val(r.start_before_ts),
                                                        val(r.duration_before_ns)),
                   None if pd.isna(r.step_after) else (val(r.step_after), val(r.start_after_ts),
                                                       val(r.duration_after_ns)))
                  for r in c.steps.itertuples()), key=_by_key)
    assert got == want
    d = c.steps.dropna(subset=["delta_ns"])
    assert (d["delta_ns"] == d["duration_after_ns"] - d["duration_before_ns"]).all()
    # Like for like (step counts within a tenth, or one step): the spans' difference; else the matched steps' windows'.
    nb, na = sum(1 for _, x, _ in want if x), sum(1 for _, _, y in want if y)
    pairs = [(x, y) for _, x, y in want if x and y]
    alike = not pairs or abs(nb - na) <= max(1.0, 0.1 * max(nb, na))
    assert c.like_for_like == alike
    if alike:
        assert c.saved_ns == c.span_before_ns - c.span_after_ns
    else:
        def window(i: int) -> int:
            return max(p[i][1] + p[i][2] for p in pairs) - min(p[i][1] for p in pairs)
        assert c.saved_ns == window(0) - window(1) and "different numbers of steps" in c.headline
    assert set(c.findings["status"]) <= {"gone", "new", "changed", "same", "not comparable"}
    assert isinstance(c.headline, str) and c.headline


def test_kineto_runs_align_by_profiler_step(tmp_path: Path) -> None:
    from neuron_widgets.sample import sample_profile

    k = sample_profile("kineto")
    c = A.compare(k, k.filter(time_range=(k.start_ts, k.start_ts + (k.end_ts - k.start_ts) // 2)), by="step")
    ev = k.core.to_pandas() if hasattr(k, "core") else None
    marks = ev[ev["name"].str.match(r"ProfilerStep#\d+")]
    n = marks["name"].nunique()
    assert len(c.steps) == n and (c.steps["model_name"] == "ProfilerStep").all()
    first = marks[marks["name"] == "ProfilerStep#0"]
    row = c.steps.iloc[0]
    # A step over both ranks: the first start to the last end.
    assert row["start_before_ts"] == first["start_ts"].min()
    assert row["duration_before_ns"] == (first["start_ts"] + first["duration_ns"]).max() - first["start_ts"].min()
    assert (c.steps["status"] == "before only").any() and (c.steps["status"] == "matched").any()
    assert (c.steps.loc[c.steps["status"] == "matched", "step_before"]
            == c.steps.loc[c.steps["status"] == "matched", "step_after"]).all()


def test_step_starts_stay_exact_epoch_nanoseconds_where_one_run_lacks_steps() -> None:
    """A float64 merge rounds epoch ns past 2^53 to a multiple of 256: every start here is odd, one run is shorter."""
    from neuron_widgets.analysis.compare_steps import align

    base = 1_700_000_000_000_000_001
    sb = [base + 1, base + 1_003, base + 2_007, base + 3_011]
    sa = [base + 77, base + 1_079]
    before = pd.DataFrame({"model_name": ["f"] * 4, "step": np.arange(4), "start_ts": np.array(sb, np.int64),
                           "duration_ns": np.array([999, 1_001, 5, 7], np.int64)})
    after = pd.DataFrame({"model_name": ["f"] * 2, "step": np.array([5, 6]), "start_ts": np.array(sa, np.int64),
                          "duration_ns": np.array([901, 803], np.int64)})
    got = align(before, after)
    assert str(got["start_before_ts"].dtype) == "Int64" and str(got["start_after_ts"].dtype) == "Int64"
    assert [int(v) for v in got["start_before_ts"]] == sb
    assert [int(v) for v in got["start_after_ts"].dropna()] == sa
    assert got["start_after_ts"].isna().tolist() == [False, False, True, True]
    assert got["status"].tolist() == ["matched", "matched", "before only", "before only"]
