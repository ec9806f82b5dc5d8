"""D13: a JobTimeline offers no Critical path toggle (it would draw a placeholder's or one part's path, not the
job's); the toolbar line and the refusal say where the job's path is: analysis.critical_path(job)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_export import Export

import neuron_widgets as nw
from neuron_widgets.analysis import critical_path
from neuron_widgets.export import export_html
from neuron_widgets.sample.job import write_job
from neuron_widgets.widgets.job.timeline import JOB_PATH, JOB_PATH_NOTE, JobTimeline

SENTENCE = "the job's critical path: analysis.critical_path(job)"


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> nw.Job:
    root = tmp_path_factory.mktemp("jobcp")
    return nw.load_job(write_job(root / "job", nodes=3, events=6_000, processes=1, cores=2, seed=11),
                       results=root / "results")


def test_the_toggle_is_not_offered_and_a_note_says_where_the_jobs_path_is(job: nw.Job) -> None:
    jt = JobTimeline(job)
    assert jt.critical_available is False and nw.Timeline(job.load(0)).critical_available is True
    assert JOB_PATH == SENTENCE and SENTENCE in JOB_PATH_NOTE
    assert jt.notes == [JOB_PATH_NOTE] and jt.critical_info == {}
    assert jt.summarised.wait(120), jt.status
    assert jt.notes[-1] == JOB_PATH_NOTE  # after the parts' notes, once summarised


@pytest.mark.parametrize("opened", [False, True], ids=["overview", "one part open"])
def test_turning_it_on_is_refused_with_that_sentence_and_nothing_is_outlined(job: nw.Job, opened: bool) -> None:
    jt = JobTimeline(job)
    assert jt.summarised.wait(120), jt.status
    if opened:
        jt.open_part("node-01")
    with pytest.raises(ValueError, match=r"the job's critical path: analysis\.critical_path\(job\)"):
        jt.critical_path = True
    assert jt.critical_path is False and jt._critical is None
    assert "highlight" not in jt._marked and jt.critical_info == {}
    jt.critical_path = False  # off stays allowed


def test_the_export_hides_the_toggle_too(job: nw.Job, tmp_path: Path) -> None:
    jt = JobTimeline(job)
    assert jt.summarised.wait(120), jt.status
    export_html(tmp_path / "job.html", jt, time_range="all")
    state = Export(tmp_path / "job.html").json("t0:meta")["state"]
    assert state["critical_available"] is False and "critical" not in state
    assert JOB_PATH_NOTE in state["notes"]


def test_the_sentences_call_gives_the_jobs_path_across_its_parts(job: nw.Job) -> None:
    path = critical_path(job, scheduler="sync")
    assert len(path) > 0 and "part" in path.columns
    parts = set(path["part"].dropna().astype(str))
    assert parts and parts <= {"node-00", "node-01", "node-02"}
