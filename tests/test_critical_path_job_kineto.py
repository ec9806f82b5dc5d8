"""A job of Kineto ranks (each rank's trace a part), part by part, against the ranks loaded as one profile.

Random Kineto-like jobs (tests/kineto_random.py: 2-3 ranks in lock-step, launches, stream/event/device syncs,
stream waits, NCCL kernels per process group, flows on some ranks and not others, syncs that return early):
`critical_path(job)`, `critical_path_breakdown(job)` and `what_if(job)` must equal the merged profile's.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from kineto_random import random_job
from test_critical_path_job import merged_path

import neuron_widgets as nw
from neuron_widgets import analysis as A


def _seeds(n: int) -> list[int]:
    """Seeds of random jobs with two or more ranks."""
    out, seed = [], 0
    while len(out) < n:
        if len(random_job(seed)) > 1:
            out.append(seed)
        seed += 1
    return out


def write_ranks(seed: int, directory: Path) -> Path:
    directory.mkdir(parents=True)
    for k, trace in enumerate(random_job(seed)):
        (directory / f"rank{k}.json").write_text(json.dumps(trace))
    return directory


@pytest.mark.parametrize("chunk", range(2))
def test_a_kineto_jobs_path_breakdown_and_what_if_equal_its_ranks_as_one_profile(chunk: int, tmp_path: Path) -> None:
    crossed = 0
    for seed in _seeds(24)[chunk * 12:(chunk + 1) * 12]:
        job = nw.load_job(write_ranks(seed, tmp_path / f"job{seed}"), results=tmp_path / f"results{seed}")
        whole = nw.load_profile(job.parts["path"].tolist(), cache=False)
        got = A.critical_path(job, scheduler="sync")
        pd.testing.assert_frame_equal(got.drop(columns="part").reset_index(drop=True), merged_path(job, whole),
                                      obj=f"seed {seed}")
        assert got["duration_ns"].sum() == got["end_ts"].iat[-1] - got["start_ts"].iat[0]
        crossed += got["part"].nunique() > 1
        pd.testing.assert_frame_equal(A.critical_path_breakdown(job, scheduler="sync"), A.critical_path_breakdown(whole))
        rng = np.random.default_rng(seed)
        changes = [({"kind": str(rng.choice(["kernel", "host", "gap", "collective", "launch"]))},
                    float(rng.choice([0.0, 0.5, 2.0])))]
        seg = got.iloc[int(rng.integers(0, len(got)))]
        changes.append(({"part": seg["part"], "thread_id": int(seg["thread_id"])}, 0.25))
        w_job = A.what_if(job, changes, scheduler="sync")
        inst = {p: str(job.load(p)._combo_codes().table["instance_id"].dropna().iat[0]) for p in job.parts["part"]}
        w_one = A.what_if(whole, [changes[0], ({"instance_id": inst[seg["part"]], "thread_id": int(seg["thread_id"])},
                                               0.25)])
        assert (w_job.span_ns, w_job.predicted_span_ns, w_job.selected) == \
               (w_one.span_ns, w_one.predicted_span_ns, w_one.selected), seed
        pd.testing.assert_frame_equal(w_job.steps, w_one.steps, obj=f"seed {seed}")
    assert crossed >= 3  # paths that jump between ranks at their collectives


def test_a_late_ranks_finding_points_to_a_what_if_that_replays_the_job(tmp_path: Path) -> None:
    """The Kineto job_straggler says which what_if(job) to try; that call runs and selects the rank's work."""
    from neuron_widgets.sample.kineto import write_kineto

    write_kineto(tmp_path / "ranks", ranks=3, late_rank=1, steps=6)
    job = nw.load_job(tmp_path / "ranks", results=tmp_path / "results")
    f = A.findings(job, scheduler="sync")
    late = f[f["rule"] == "job_straggler"]
    assert len(late) == 1, f[["rule", "title"]]
    m = re.search(r"analysis\.what_if\(job, (\{.*?\}), ([\d.]+)\)", late.iloc[0]["title"])
    assert m is not None, late.iloc[0]["title"]
    where, scale = ast.literal_eval(m.group(1)), float(m.group(2))
    assert where["part"] == late.iloc[0]["part"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # it selects work: no "selects nothing" warning
        w = A.what_if(job, where, scale, scheduler="sync")
    assert w.selected > 0 and w.saved_ns > 0  # the late rank's work holds the job: halving it saves time
    # The job's path runs through the late rank, as the ranks loaded as one profile say.
    path = A.critical_path(job, scheduler="sync")
    assert (path["part"] == where["part"]).any()
    assert path["duration_ns"].sum() == w.span_ns
