"""findings(job) runs each part's own rules in its task: host wait, launch overhead, a Kineto rank's idle GPU, named by part."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.findings_job import clip
from neuron_widgets.sample.job import write_job


def _parts(job: nw.Job) -> list[str]:
    return [s.name for s in job.specs]


def _alone(job: nw.Job, part: str, rule: str) -> float:
    """The reference: that part loaded alone in this process, its own findings' gain for the rule."""
    spec = next(s for s in job.specs if s.name == part)
    f = A.findings(spec.load())
    got = f[f["rule"] == rule]
    return float(got.iloc[0]["gain_ns"]) if len(got) else math.nan


def test_host_wait_of_a_generated_job_names_its_parts(tmp_path: Path) -> None:
    job = nw.load_job(write_job(tmp_path / "job", nodes=2, events=12_000, seed=3), results=tmp_path / "results")
    f = A.findings(job, scheduler="sync")
    hw = f[f["rule"] == "host_wait"]
    assert len(hw) == 1, f[["rule", "part", "title"]]
    r = hw.iloc[0]
    parts = _parts(job)
    assert sorted(r["evidence"]["parts"]) == parts and r["part"] in parts
    assert r["title"].startswith("host_wait on 2 of 2 parts") and "what_if(job)" in r["title"]
    # Each part's own figure is what that part alone predicts; the job's gain is the job's what-if of all the fixes.
    changes = []
    for part, ev in r["evidence"]["by_part"].items():
        assert ev["part_alone_gain_ns"] == pytest.approx(_alone(job, part, "host_wait"))
        assert ev["part"] == part and ev["worst_core"].startswith("i-")
        changes.append(({"part": part, "kind": "gap", "thread_id": ev["runtime_threads"]}, 0.0))
    assert f"most {r['part']}/{r['evidence']['by_part'][r['part']]['worst_core']}," in r["title"]
    w = A.what_if(job, changes, scheduler="sync")
    assert r["gain_ns"] == pytest.approx(w.saved_ns) and 0 < r["gain_ns"] <= w.span_ns
    json.dumps(f["evidence"].tolist())
    # The job's own rows are still there, and a part's errors are not listed twice.
    assert (f["rule"] == "job_straggler").sum() <= 1
    assert not f.duplicated(["rule", "title"]).any()


@pytest.mark.parametrize("seed", [0, 1])
def test_no_rule_fails_on_a_random_small_job_and_no_gain_exceeds_the_span(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    root = write_job(tmp_path / "job", nodes=int(rng.integers(2, 4)), events=int(rng.integers(4_000, 10_000)),
                     seed=int(rng.integers(0, 1000)), processes=int(rng.integers(1, 3)), cores=int(rng.integers(1, 4)))
    job = nw.load_job(root, results=tmp_path / "results")
    f = A.findings(job, scheduler="sync")
    span = A.what_if(job, None, 1.0, scheduler="sync").span_ns
    gains = f["gain_ns"].dropna()
    assert ((gains >= 0) & (gains <= span)).all()
    parts = set(_parts(job))
    assert f["part"].dropna().isin(parts).all()
    per_part = f[~f["rule"].isin(["job_straggler", "slow_node", "unread_part", "hang", "error"])]
    assert per_part["part"].notna().all()
    for _, r in per_part.iterrows():  # a part-alone figure stays in the evidence, the title says which gain it is
        ev = r["evidence"]
        assert "by_part" in ev or "part_alone_gain_ns" in ev
        assert "what_if(job)" in r["title"] or "alone" in r["title"] or "not known" in r["title"]


def test_a_kineto_job_finds_the_idle_gpu_of_its_part(tmp_path: Path) -> None:
    from neuron_widgets.sample.kineto import write_kineto

    write_kineto(tmp_path / "ranks", seed=1, ranks=3, steps=8, late_rank=2)
    job = nw.load_job(tmp_path / "ranks", results=tmp_path / "results")
    f = A.findings(job, scheduler="sync")
    idle = f[f["rule"] == "gpu_idle"]
    assert len(idle) >= 1, f[["rule", "part", "title"]]
    r = idle.iloc[0]
    assert r["part"] in _parts(job)
    ev = r["evidence"]["by_part"][r["part"]] if "by_part" in r["evidence"] else r["evidence"]
    assert f"{r['part']}/{ev['gpu']}" in r["title"]  # as the job's Timeline names that GPU's tracks
    # A Kineto job's what-if cannot be replayed: the job's gain is not known, the part's alone is said as such.
    assert math.isnan(r["gain_ns"]) and "alone" in r["title"] and "not known" in r["title"]
    assert ev["part_alone_gain_ns"] == pytest.approx(_alone(job, r["part"], "gpu_idle"))


def test_titles_are_cut_at_a_word_with_an_ellipsis() -> None:
    text = "Either the file is corrupted or this is not a parquet file"
    got = clip(text, 48)
    assert got == "Either the file is corrupted or this is not a…"
    assert text.startswith(got[:-1]) and len(got) <= 48
    assert clip(text, len(text)) == text
    assert clip("x" * 30, 10) == "x" * 10 + "…"  # one word longer than the room: cut, and said so
