"""The critical path and what-if of a Job, part by part on Dask, against the parts loaded as one profile."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.sample.job import write_job

EVENTS = "SystemProfileEvents.parquet"


def shift_node(node: Path, ns: int) -> None:
    """Every event of a node `ns` later: a node that starts late (its releases before the others' arrivals are
    dependencies the times contradict, dropped in both graphs)."""
    path = node / EVENTS
    t = pq.read_table(path)
    for c in ("start_ts", "end_ts"):
        t = t.set_column(t.schema.get_field_index(c), c, pa.array(t.column(c).to_numpy() + ns))
    pq.write_table(t, path)


def as_one(job: nw.Job) -> nw.Profile:
    return nw.load_profile(job.parts["path"].tolist())


def merged_path(job: nw.Job, whole: nw.Profile) -> pd.DataFrame:
    """The merged profile's path with its event ids as each part numbers them (a merge renumbers colliding ids)."""
    df = A.critical_path(whole).drop(columns="part")
    if "source_id" in whole.column_names:
        ids, src = whole.array("id"), whole.array("source_id")
        order = np.argsort(ids)
        e = df["event_id"].to_numpy()
        at = order[np.searchsorted(ids[order], np.maximum(e, 0))]
        df["event_id"] = np.where(e >= 0, src[at], -1)
    return df.reset_index(drop=True)


def worker_of_part(path: pd.DataFrame, part: str) -> str:
    return str(path.loc[path["part"] == part, "instance_id"].iloc[0])


CASES = [  # seed, nodes, processes, cores, shift of the last node (ns)
    (1, 2, 1, 1, 0), (2, 3, 1, 3, 0), (3, 4, 2, 2, 0), (4, 3, 2, 1, 250_000), (5, 2, 1, 4, 3_000_000),
]


@pytest.mark.parametrize(("seed", "nodes", "processes", "cores", "late"), CASES)
def test_a_jobs_path_and_what_if_equal_its_parts_as_one_profile(seed: int, nodes: int, processes: int, cores: int,
                                                                late: int, tmp_path: Path) -> None:
    run = write_job(tmp_path / "run", nodes=nodes, events=6_000 * nodes, processes=processes, cores=cores, seed=seed)
    if late:
        shift_node(sorted(run.iterdir())[-1], late)
    job = nw.load_job(run, results=tmp_path / "results")
    whole = as_one(job)
    got = A.critical_path(job, scheduler="sync")
    assert got["part"].notna().all() and set(got["part"]) <= set(job.parts["part"])
    want = merged_path(job, whole)
    pd.testing.assert_frame_equal(got.drop(columns="part").reset_index(drop=True), want)
    assert got["duration_ns"].sum() == got["end_ts"].iat[-1] - got["start_ts"].iat[0]
    # Each segment's part is the part its worker is in.
    for part, rows in got.groupby("part"):
        own = set(job.load(part)._combo_codes().table["instance_id"].dropna())
        assert set(rows["instance_id"]) <= own
    pd.testing.assert_frame_equal(A.critical_path_breakdown(job, scheduler="threads"),
                                  A.critical_path_breakdown(whole))
    # What-if: halving one part's compute, and two changes at once, as on the merged profile.
    for part in (job.parts["part"].iat[0], job.parts["part"].iat[-1]):
        w_job = A.what_if(job, {"part": part, "kind": "compute"}, 0.5, scheduler="sync")
        inst = worker_of_part(got, part) if (got["part"] == part).any() else \
            str(job.load(part)._combo_codes().table["instance_id"].dropna().iat[0])
        w_one = A.what_if(whole, {"instance_id": inst, "kind": "compute"}, 0.5)
        assert (w_job.span_ns, w_job.predicted_span_ns, w_job.selected) == \
               (w_one.span_ns, w_one.predicted_span_ns, w_one.selected)
        pd.testing.assert_frame_equal(w_job.steps, w_one.steps)
    both = [({"kind": "compute", "nc_idx": 0}, 0.5), ({"kind": "gap"}, 0.0)]
    w_job, w_one = A.what_if(job, both, scheduler="sync"), A.what_if(whole, both)
    assert (w_job.predicted_span_ns, w_job.selected) == (w_one.predicted_span_ns, w_one.selected)
    pd.testing.assert_frame_equal(w_job.steps, w_one.steps)


def test_a_job_runs_on_dask_processes_and_says_what_it_cannot_do(tmp_path: Path) -> None:
    run = write_job(tmp_path / "run", nodes=2, events=6_000, processes=1, cores=2, seed=7)
    job = nw.load_job(run, results=tmp_path / "results")
    got = A.critical_path(job, cache=False)  # Dask's local processes: the part task is found in the workers
    pd.testing.assert_frame_equal(got.drop(columns="part").reset_index(drop=True), merged_path(job, as_one(job)))
    assert A.critical_path(job, scheduler="sync")["part"].tolist() == got["part"].tolist()  # from the store
    with pytest.raises(TypeError, match="mask over events"):
        A.what_if(job, np.ones(3, bool), 0.5, scheduler="sync")
    with pytest.raises(ValueError, match="columns are"):
        A.what_if(job, {"node": 1}, 0.5, scheduler="sync")
    with pytest.warns(UserWarning, match="no-such-part"):
        none = A.what_if(job, {"part": "no-such-part"}, 0.5, scheduler="sync")
    assert none.saved_ns == 0 and any("nothing changes" in n for n in none.notes)


def test_a_part_that_cannot_be_read_is_left_out_and_named(tmp_path: Path) -> None:
    run = write_job(tmp_path / "run", nodes=3, events=9_000, processes=1, cores=2, seed=8)
    bad = sorted(run.iterdir())[1]
    (bad / EVENTS).write_bytes(b"not parquet")
    job = nw.load_job(run, results=tmp_path / "results")
    got = A.critical_path(job, scheduler="sync")
    assert len(got) and bad.name not in set(got["part"])
    assert any(bad.name in n and "left out" in n for n in got.attrs["notes"])


def test_a_job_mixing_neuron_and_kineto_parts_is_refused(tmp_path: Path) -> None:
    from neuron_widgets.sample.kineto import write_kineto

    run = write_job(tmp_path / "run", nodes=2, events=3_000, processes=1, cores=1, seed=9)
    write_kineto(tmp_path / "ranks", ranks=1)
    job = nw.load_job([*sorted(run.iterdir()), *sorted((tmp_path / "ranks").iterdir())], results=tmp_path / "results")
    with pytest.raises(TypeError, match="mixes Neuron parts with Kineto"):
        A.critical_path(job, scheduler="sync")
    with pytest.raises(TypeError, match="mixes Neuron parts with Kineto"):
        A.what_if(job, {"kind": "compute"}, 0.5, scheduler="sync")
