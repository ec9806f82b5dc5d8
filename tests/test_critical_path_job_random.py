"""A job's critical path over its parts' stretches, against the parts loaded as one profile, on random jobs.

Each job is a random profile of tests/random_neuron.py (1-64 cores, 0-3 collectives a step, barriers present,
absent or zero-length, cc_running missing, several NEFFs, exec_id or not) split into one part per instance,
sometimes with one part's clock early or late (releases that did not wait for the last arrival, as the
times say), so the walk crosses parts at the collectives and, where a part did not ship a stretch, asks
that part again.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from random_neuron import random_events, write_profile
from test_critical_path_job import merged_path

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis import critical_path_parts as P
from neuron_widgets.analysis import critical_path_stretches as S
from neuron_widgets.analysis import what_if_job as W


def _seeds(n: int) -> list[int]:
    """Seeds whose profile has cores on two or more instances (a job of two or more parts)."""
    out, seed = [], 0
    while len(out) < n:
        rows = random_events(seed)
        if len({r["instance_id"] for r in rows if r["nc_idx"] is not None}) > 1:
            out.append(seed)
        seed += 1
    return out


def write_random_job(seed: int, directory: Path) -> Path:
    rng = np.random.default_rng(seed + 50_000)
    rows = random_events(seed)
    for r in rows:  # an unended event ends at its part's end, not the job's: the two would differ by design
        if r["end_ts"] is None:
            r["end_ts"] = r["start_ts"] + 700
            r["duration_ns"] = 700
    instances = sorted({r["instance_id"] for r in rows})
    skew = {inst: 0 for inst in instances}
    pick = rng.random()
    if pick < .5:  # one part's clock off by up to a few collectives' waits, either way
        skew[instances[int(rng.integers(0, len(instances)))]] = int(rng.integers(-6_000, 6_000))
    for k, inst in enumerate(instances):
        own = [dict(r, start_ts=r["start_ts"] + skew[inst], end_ts=r["end_ts"] + skew[inst])
               for r in rows if r["instance_id"] == inst]
        write_profile(directory / f"node-{k:02d}", own)
    return directory


@pytest.mark.parametrize("seed", _seeds(40))
def test_a_random_jobs_path_equals_its_parts_as_one_profile(seed: int, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    job = nw.load_job(write_random_job(seed, tmp_path / "run"), results=tmp_path / "results")
    whole = nw.load_profile(job.parts["path"].tolist())
    asked: list[str] = []
    run = P.run_parts

    def counting(j, wanted, *a, **kw):  # type: ignore[no-untyped-def]
        asked.extend(wanted)
        return run(j, wanted, *a, **kw)

    monkeypatch.setattr(P, "run_parts", counting)
    got = A.critical_path(job, scheduler="sync", cache=False)
    pd.testing.assert_frame_equal(got.drop(columns="part").reset_index(drop=True), merged_path(job, whole))
    assert asked[0] == S.TASK and set(asked[1:]) <= {S.TASK_FULL, W.TASK}
    if len(got):
        assert got["duration_ns"].sum() == got["end_ts"].iat[-1] - got["start_ts"].iat[0]
    # What-if, part by part (each part's replay reduced to what the others depend on), as on the merged profile:
    # a kind scaled everywhere and one core's compute, by factors whose sums are exact in float64.
    rng = np.random.default_rng(seed)
    changes = [({"kind": str(rng.choice(["compute", "collective", "gap", "host", "launch"]))},
                float(rng.choice([0.0, 0.25, 0.5, 2.0])))]
    if len(got) and got["nc_idx"].notna().any():
        core = got[got["nc_idx"].notna() & got["thread_id"].isna()].iloc[0]
        changes.append(({"part": core["part"], "process_id": int(core["process_id"]), "nc_idx": int(core["nc_idx"]),
                         "kind": "compute"}, 0.5))
        inst = {"instance_id": core["instance_id"], "process_id": int(core["process_id"]), "nc_idx": int(core["nc_idx"]),
                "kind": "compute"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a kind the job has none of
        w_job = A.what_if(job, changes, scheduler="sync", cache=False)
        w_one = A.what_if(whole, changes[:1] + ([(inst, 0.5)] if len(changes) > 1 else []))
    assert (w_job.span_ns, w_job.predicted_span_ns, w_job.selected) == \
           (w_one.span_ns, w_one.predicted_span_ns, w_one.selected), (seed, changes)
    pd.testing.assert_frame_equal(w_job.steps, w_one.steps)


def test_every_stretch_gives_the_same_path_as_the_candidates_only(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A part asked for every stretch (the fallback) gives the same path: the candidates lose nothing."""
    for seed in _seeds(6):
        job = nw.load_job(write_random_job(seed, tmp_path / f"run{seed}"), results=tmp_path / f"results{seed}")
        few = A.critical_path(job, scheduler="sync", cache=False)
        monkeypatch.setattr(S, "TASK", S.TASK_FULL)
        every = A.critical_path(job, scheduler="sync", cache=False)
        monkeypatch.undo()
        pd.testing.assert_frame_equal(few, every)
