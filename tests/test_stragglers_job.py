"""A job's stragglers from narrow per-part arrivals, joined a part at a time (issue 35.11), give exactly what
the old job-wide concatenation gave (tests/reference_job_stragglers.py) on random Neuron and Kineto jobs,
and a profile's own stragglers are what the old one-table computation gave."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import reference_job_stragglers as old
from kineto_random import write_job as write_kineto_job
from random_neuron import random_events, write_profile

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.collectives import with_absent
from neuron_widgets.analysis.frame import frame_of
from neuron_widgets.analysis.stragglers import _arrivals
from neuron_widgets.analysis.stragglers_job import job_stragglers, narrow, part_arrivals
from neuron_widgets.sample.job import write_job


def same_join(parts: list[tuple[str, nw.Profile]]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Both joins on the same parts: every frame equal, with its notes; the new one's frames returned."""
    new = job_stragglers([(name, part_arrivals(p)) for name, p in parts])
    want = old.job_stragglers([(name, old.part_arrivals(p)) for name, p in parts])
    for got, ref in zip(new, want, strict=True):
        pd.testing.assert_frame_equal(got, ref)
        assert got.attrs.get("notes") == ref.attrs.get("notes")
    return new


def neuron_parts(seed: int, tmp_path: Path) -> list[tuple[str, nw.Profile]]:
    rows = random_events(seed)
    nodes = sorted({r["instance_id"] for r in rows})
    return [(f"node-{k}", write_profile(tmp_path / f"node-{k}", [r for r in rows if r["instance_id"] == inst]))
            for k, inst in enumerate(nodes)]


@pytest.mark.parametrize("seed", range(30), ids=lambda s: f"seed-{s}")
def test_the_narrow_join_equals_the_old_one_on_random_neuron_jobs(seed: int, tmp_path: Path) -> None:
    parts = neuron_parts(seed, tmp_path)
    if not parts:
        return
    same_join(parts)
    # Parts in another order are other device and step numbers in the parts: the same job.
    same_join(parts[::-1])


def test_absent_cores_are_found_across_parts(tmp_path: Path) -> None:
    """Seeds whose jobs have a core that ran a step's NEFF without a collective: the note and the rows
    agree with the old join (so the test above covers the absent path, not only jobs without one)."""
    found = 0
    for seed in range(30):
        parts = neuron_parts(seed, tmp_path / str(seed))
        if parts:
            _, _, lag = same_join(parts)
            found += any("recorded no barrier" in n for n in lag.attrs["notes"]) and bool((lag["id"] == -1).any())
    assert found > 0


@pytest.mark.parametrize("seed", range(12), ids=lambda s: f"seed-{s}")
def test_the_narrow_join_equals_the_old_one_on_random_kineto_jobs(seed: int, tmp_path: Path) -> None:
    files = write_kineto_job(tmp_path, seed)
    same_join([(f.stem, nw.load_profile(f, cache=False)) for f in files])


def test_a_steps_job_and_a_mixed_job(tmp_path: Path) -> None:
    job = write_job(tmp_path / "j", nodes=3, processes=2, cores=2, steps=40, seed=3)
    parts = [(p.name, nw.load_profile(p, cache=False)) for p in sorted(job.iterdir())]
    cores, steps, lag = same_join(parts)
    assert len(lag) == int(steps["devices"].sum()) and cores["steps"].max() > 0
    assert isinstance(lag["part"].dtype, pd.CategoricalDtype) and lag["lag_ns"].dtype == np.int64
    kineto = write_kineto_job(tmp_path, 1)
    same_join([*parts, *((f.stem, nw.load_profile(f, cache=False)) for f in kineto)])
    same_join([])
    same_join(parts[:1])


@pytest.mark.parametrize("seed", range(20), ids=lambda s: f"seed-{s}")
def test_a_profiles_stragglers_are_the_old_computation(seed: int, tmp_path: Path) -> None:
    p = write_profile(tmp_path / "p", random_events(seed))
    if not len(p):
        return
    fr = frame_of(p)
    arr, keys, labels = _arrivals(fr, "neuron")
    arr = with_absent(arr)
    steps, cores = old._steps(arr.table, arr.labels[labels], keys)
    pd.testing.assert_frame_equal(A.stragglers(p, kind="neuron"), cores)
    pd.testing.assert_frame_equal(A.stragglers(p, kind="neuron", per_step=True), steps)


def test_narrow_keeps_every_value() -> None:
    for lo, hi, t in [(-128, 127, np.int8), (-129, 0, np.int16), (0, 32768, np.int32), (-2**31, 2**31 - 1, np.int32),
                      (0, 2**31, np.int64), (-2**63, 2**63 - 1, np.int64)]:
        a = np.array([lo, hi, 0], np.int64)
        got = narrow(a)
        assert got.dtype == t and (got.astype(np.int64) == a).all(), (lo, hi)
    assert narrow(np.zeros(0, np.int64)).size == 0
