"""Runs the tests generate and share: a sample job opened with a results folder of its own, and a straggler before
and after its fix (two Neuron profiles of one generated job, and the fix's Summary exported)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from random_neuron import write_profile
from schedule_neuron import Job, simulate
from test_findings import _clean_job

import neuron_widgets as nw
from neuron_widgets.sample.job import write_job
from neuron_widgets.widgets import Summary, Timeline


def sample_job(where: Path, **kw: Any) -> nw.Job:
    """`write_job(where / "job", **kw)` opened with its results kept apart, in `where / "results"`."""
    return nw.load_job(write_job(where / "job", **kw), results=where / "results")


def straggler_job() -> Job:
    """A job without problems but one: core 1 computes 150 µs a step where every other core takes 100."""
    job = _clean_job()
    job.compute[:, 1, :] = 150_000
    return job


def straggler_runs(where: Path, job: Job | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                                 nw.Profile, nw.Profile]:
    """The straggler's run (`job`, by default `straggler_job()`) and the run with its fix (core 1 at 100 µs like the
    rest): both runs' events, and their profiles written to `where / "before"` and `where / "after"`."""
    job = straggler_job() if job is None else job
    slow, fixed = simulate(job), simulate(job, compute_scale={1: 100 / 150})
    return slow, fixed, write_profile(where / "before", slow), write_profile(where / "after", fixed)


def exported_fix(before: nw.Profile, after: nw.Profile, page: Path, *, timeline: bool = False,
                 wait: float = 180) -> tuple[Path, Summary]:
    """`Summary(after, compare=before)` (on a Timeline of the after-run when `timeline`), finished and exported to
    `page`."""
    s = Summary(Timeline(after) if timeline else after, compare=before)
    assert s.done.wait(wait), s.status.value
    s.to_html(page)
    return page, s
