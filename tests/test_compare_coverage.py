"""Did the fix work when the runs are not like for like: a Profile beside a Job is refused, two Kineto-rank Jobs
compare by their ProfilerStep markers, a shorter capture or a missing job part is not reported as a faster run,
and findings only outside the after-run's capture or in its missing part are "not comparable", not "gone"."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from test_findings import NODES, _clean_job, _write_job

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.sample.kineto import write_kineto


def test_a_profile_beside_a_job_is_refused(tmp_path: Path) -> None:
    write_kineto(tmp_path / "ranks", ranks=2)
    job = nw.load_job(tmp_path / "ranks", results=tmp_path / "results")
    p = nw.sample_profile()
    for a, b in ((p, job), (job, p), (p, "after.json")):
        with pytest.raises(TypeError, match="two Profiles or two Jobs"):
            A.compare(a, b, by="step", scheduler="sync") if not isinstance(a, nw.Profile) else A.compare(a, b, by="step")


def _reference_steps(folder: Path) -> dict[int, int]:
    """Per ProfilerStep#N over every rank's file: last end less first start, in ns, read from the JSON itself."""
    out: dict[int, tuple[float, float]] = {}
    for f in sorted(folder.glob("*.json.gz")):
        for e in json.loads(gzip.decompress(f.read_bytes()))["traceEvents"]:
            name = e.get("name", "")
            if e.get("ph") == "X" and name.startswith("ProfilerStep#"):
                n = int(name.split("#")[1])
                lo, hi = out.get(n, (e["ts"], e["ts"] + e["dur"]))
                out[n] = (min(lo, e["ts"]), max(hi, e["ts"] + e["dur"]))
    return {n: round(1000 * (hi - lo)) for n, (lo, hi) in out.items()}


def test_two_kineto_rank_jobs_compare_by_their_profiler_steps(tmp_path: Path) -> None:
    write_kineto(tmp_path / "a", ranks=3, late_rank=1)
    write_kineto(tmp_path / "b", ranks=3, seed=1)
    ja, jb = (nw.load_job(tmp_path / x, results=tmp_path / "results") for x in ("a", "b"))
    c = A.compare(ja, jb, by="step", scheduler="sync")
    ref_a, ref_b = _reference_steps(tmp_path / "a"), _reference_steps(tmp_path / "b")
    assert len(c.steps) == len(ref_a) == len(ref_b) and (c.steps["status"] == "matched").all()
    assert set(c.steps["model_name"]) == {"ProfilerStep"}
    for r in c.steps.itertuples():
        assert abs(r.duration_before_ns - ref_a[r.step_before]) <= 1
        assert abs(r.duration_after_ns - ref_b[r.step_after]) <= 1
    # what_if(job) replays a Kineto job part by part: its steps are the ProfilerStep#N markers over the ranks.
    assert c.like_for_like and not any("Neuron-only" in n for n in c.notes)
    assert c.saved_ns == A.what_if(ja, None, 1.0, scheduler="sync").span_ns - A.what_if(jb, None, 1.0,
                                                                                       scheduler="sync").span_ns
    assert "job_straggler" in set(c.findings["rule"])


@pytest.fixture(scope="module")
def sample() -> nw.Profile:
    return nw.sample_profile()


def test_a_shorter_capture_is_not_a_faster_run(sample: nw.Profile) -> None:
    after = sample.filter(time_range=("20ms", "40ms"))
    c = A.compare(sample, after, by="step")
    assert not c.like_for_like
    assert "different numbers of steps" in c.headline and "% shorter" not in c.headline.split(";")[0].split(". ")[0]
    m = c.steps[c.steps["status"] == "matched"]
    assert 0 < len(m) < (c.steps["step_before"].notna()).sum()
    # Slow reference: the matched steps' window in each run, first start to last end, step by step.
    def window(side: str) -> int:
        lo, hi = None, None
        for r in m.itertuples():
            s = int(getattr(r, f"start_{side}_ts"))
            e = s + int(getattr(r, f"duration_{side}_ns"))
            lo, hi = (s, e) if lo is None else (min(lo, s), max(hi, e))
        return hi - lo
    assert c.saved_ns == window("before") - window("after")
    assert f"Over the {len(m)} matched steps" in c.headline
    # The sample's errors and hang lie after the capture: not comparable, and not counted as gone.
    off = c.findings[c.findings["rule"].isin(["error", "hang"])]
    assert len(off) and (off["status"] == "not comparable").all()
    assert off["note"].str.contains("outside the after-run's capture").all()
    assert "Gone: error" not in c.headline and "Not comparable: error" in c.headline
    assert not c.findings.loc[c.findings["status"] == "not comparable", "run_saving_ns"].notna().any()
    # Like for like stays as it was.
    same = A.compare(sample, sample, by="step")
    assert same.like_for_like and same.headline.startswith("The run takes as long as before")


def test_a_job_part_missing_in_the_after_run_is_left_out(tmp_path: Path) -> None:
    job = _clean_job(on=NODES)
    job.compute[:, 3:6, :] = 130_000  # the second node slow: a slow_node finding there in the before-run
    before = _write_job(job, tmp_path / "a")
    after = _write_job(job, tmp_path / "b", cut=NODES[3][0])
    c = A.compare(before, after, by="step", scheduler="sync")
    missing = NODES[3][0]
    assert not c.like_for_like and f"{missing} is missing in the after-run" in c.headline
    # Steps over the parts both have: the same simulated rows in both, so no step is faster; the reference is the
    # after-run (which has only those parts) against itself.
    ref = A.compare(after, after, by="step", scheduler="sync").steps
    assert (c.steps["status"] == "matched").all() and (c.steps["delta_ns"] == 0).all()
    assert c.steps["duration_before_ns"].tolist() == ref["duration_after_ns"].tolist()
    assert c.span_before_ns == c.span_after_ns
    slow = c.findings[(c.findings["rule"] == "slow_node")]
    assert len(slow) and (slow["status"] == "not comparable").all()
    assert slow["note"].str.contains(f"in {missing}, which the after-run lacks").all()
    assert "unread_part" in set(c.findings.loc[c.findings["status"] == "new", "rule"])
    assert np.isnan(c.predicted_ns) or "slow_node" not in set(c.findings.loc[c.findings["status"] == "gone", "rule"])
