"""A multi-node job: load_job from metadata, across() on Dask, job-wide stragglers, caching, bad parts.

Job-wide answers are checked against the slow references run on the whole job's events in one
profile (tests/reference_neuron.py), on random jobs made by splitting random profiles by node.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import reference_neuron as ref
from random_neuron import random_events, write_profile

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.errors import ProfileError
from neuron_widgets.sample.job import write_job


def core_of(row) -> tuple:
    return (row["instance_id"], int(row["process_id"]), int(row["nc_idx"]))


@pytest.fixture(scope="module")
def job_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_job(tmp_path_factory.mktemp("job") / "run", nodes=3, events=30_000, processes=1, cores=3, seed=4)


@pytest.fixture
def job(job_dir: Path, tmp_path: Path) -> nw.Job:
    return nw.load_job(job_dir, results=tmp_path / "results")


def test_load_job_reads_metadata_only_and_loads_one_part(job: nw.Job, job_dir: Path) -> None:
    parts = job.parts
    assert parts["part"].tolist() == ["node-00", "node-01", "node-02"]
    assert (parts["format"] == "neuron-parquet").all() and (parts["cores"] == 3).all() and (parts["instances"] == 1).all()
    assert not job._loaded, "opening a job must not load any part"
    whole = nw.load_profile(sorted(glob.glob(str(job_dir / "node-*"))))
    assert int(parts["events"].sum()) == len(whole)
    one = job.load("node-01")
    assert len(one) == parts.loc[1, "events"] and job.load(1) is one  # kept for the next call
    assert parts.loc[1, "start_ts"] == one.start_ts
    assert "<Job of 3 parts" in repr(job)
    # A glob and a list give the same parts.
    assert nw.load_job(str(job_dir / "node-0[01]")).parts["part"].tolist() == ["node-00", "node-01"]
    assert len(nw.load_job([job_dir / "node-02", job_dir / "node-00"])) == 2
    with pytest.raises(KeyError, match="no part named 'node-9'"):
        job.load("node-9")


def test_load_job_says_what_is_wrong_with_the_path(tmp_path: Path, job_dir: Path) -> None:
    with pytest.raises(ProfileError, match="no such file"):
        nw.load_job(tmp_path / "nowhere")
    with pytest.raises(ProfileError, match="one node's profile, not a job"):
        nw.load_job(job_dir / "node-00")
    with pytest.raises(ProfileError, match="matches no file"):
        nw.load_job(str(tmp_path / "x-*"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProfileError, match="holds no profiles"):
        nw.load_job(tmp_path / "empty")
    with pytest.raises(ProfileError, match="empty list"):
        nw.load_job([])


def test_across_equals_each_part_and_finds_the_remote_straggler(job: nw.Job, job_dir: Path) -> None:
    got = A.across(job, ["temporal_breakdown", "idle_time_breakdown", "stragglers", "errors_and_hangs"])
    assert got["parts"]["status"].tolist() == ["computed"] * 3
    for i, name in enumerate(job.parts["part"]):
        p = nw.load_profile(job_dir / name)
        for analysis in ("temporal_breakdown", "idle_time_breakdown"):
            mine = got[analysis][got[analysis]["part"] == name].drop(columns="part").reset_index(drop=True)
            pd.testing.assert_frame_equal(mine, getattr(A, analysis)(p).reset_index(drop=True), check_dtype=False)
        if i == 0:
            local = A.stragglers(p).iloc[0]  # inside node 0, an innocent core looks last
    s = got["stragglers"].iloc[0]
    assert (s["part"], int(s["nc_idx"])) == ("node-02", 2)
    assert local["nc_idx"] != 2 or local["instance_id"] != s["instance_id"]
    # The job-wide answer is the one a merged profile of every node gives.
    merged = nw.load_profile(sorted(glob.glob(str(job_dir / "node-*"))))
    pd.testing.assert_frame_equal(got["stragglers"].drop(columns="part"), A.stragglers(merged), check_dtype=False)
    steps = A.stragglers(merged, per_step=True)
    pd.testing.assert_frame_equal(got["straggler_steps"].drop(columns=["part", "id"]), steps.drop(columns="id"),
                                  check_dtype=False)
    lag = got["straggler_lag"]
    assert len(lag) == int(steps["devices"].sum()) and (lag["lag_ns"] >= 0).all()
    problems = got["errors_and_hangs"]
    assert set(zip(problems["part"], problems["kind"], strict=True)) == {("node-02", "error"), ("node-00", "hang")}
    assert problems["start_ts"].is_monotonic_increasing


def test_results_are_kept_by_content_and_only_changed_parts_recompute(job_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(job_dir, run)
    job = nw.load_job(run, results=tmp_path / "results")
    first = A.across(job, ["temporal_breakdown", "stragglers"], scheduler="sync")
    again = A.across(job, ["temporal_breakdown", "stragglers"], scheduler="sync")
    assert again["parts"]["status"].tolist() == ["cached"] * 3
    pd.testing.assert_frame_equal(first["stragglers"], again["stragglers"])
    # Other arguments are other results.
    assert A.across(job, ["temporal_breakdown"], scheduler="sync")["parts"]["status"].tolist() == ["computed"] * 3
    # A node's profile replaced by another node's: only that part is read again.
    shutil.copy(job_dir / "node-00" / "SystemProfileEvents.parquet", run / "node-01" / "SystemProfileEvents.parquet")
    third = A.across(nw.load_job(run, results=tmp_path / "results"), ["temporal_breakdown", "stragglers"],
                     scheduler="sync")
    assert third["parts"]["status"].tolist() == ["cached", "computed", "cached"]
    assert not third["temporal_breakdown"].equals(first["temporal_breakdown"])
    # The same bytes under another path and time: found by content after one hash.
    copy = tmp_path / "copy"
    shutil.copytree(job_dir, copy)
    moved = A.across(nw.load_job(copy, results=tmp_path / "results"), ["temporal_breakdown", "stragglers"],
                     scheduler="sync")
    assert moved["parts"]["status"].tolist() == ["cached"] * 3
    fresh = A.across(nw.load_job(run, results=tmp_path / "results"), ["temporal_breakdown"], scheduler="sync",
                     cache=False)
    assert fresh["parts"]["status"].tolist() == ["computed"] * 3


def test_a_corrupt_node_is_named_and_left_out(job_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(job_dir, run)
    bad = run / "node-01" / "SystemProfileEvents.parquet"
    bad.write_bytes(bad.read_bytes()[: bad.stat().st_size // 3])  # cut short, as a copy that failed
    job = nw.load_job(run, results=tmp_path / "results")
    got = A.across(job, ["temporal_breakdown", "stragglers", "errors_and_hangs"], scheduler="sync")
    parts = got["parts"].set_index("part")
    assert parts["status"].tolist() == ["computed", "left out", "computed"]
    assert "node-01" in parts.loc["node-01", "error"] and "truncated" in parts.loc["node-01", "error"]
    assert set(got["temporal_breakdown"]["part"]) == {"node-00", "node-02"}
    for name in ("temporal_breakdown", "stragglers", "errors_and_hangs", "parts"):
        assert any("node-01" in n and "left out" in n for n in got[name].attrs["notes"]), name
    assert got["stragglers"].iloc[0]["part"] == "node-02"


def test_across_says_what_it_cannot_run(job: nw.Job) -> None:
    with pytest.raises(ValueError, match="unknown analysis 'stragglrs'"):
        A.across(job, ["stragglrs"])
    with pytest.raises(TypeError, match="takes kernel_wait"):
        A.across(job, ["temporal_breakdown"], kernel_wait=3)


def test_compare_two_jobs_sums_their_parts(job: nw.Job, job_dir: Path, tmp_path: Path) -> None:
    other = write_job(tmp_path / "other", nodes=3, events=45_000, processes=1, cores=3, seed=5)
    b = nw.load_job(other, results=tmp_path / "results")
    got = A.compare(job, b)
    want = A.compare(nw.load_profile(sorted(glob.glob(str(job_dir / "node-*")))),
                     nw.load_profile(sorted(glob.glob(str(other / "node-*")))))
    pd.testing.assert_frame_equal(got.sort_values("name", ignore_index=True), want.sort_values("name", ignore_index=True),
                                  check_dtype=False)
    same = A.compare(job, job, by="neff")
    assert (same["delta_total_ns"] == 0).all() and len(same) == 2
    cores = A.compare(job, b, by="core")
    assert len(cores) == 9 and "part" in cores.columns


@pytest.mark.parametrize("seed", range(40), ids=lambda s: f"seed-{s}")
def test_job_stragglers_match_the_reference_on_random_jobs(seed: int, tmp_path: Path) -> None:
    """A random profile cut into one part per instance: the job's answers are the whole profile's."""
    rows = random_events(seed)
    whole = write_profile(tmp_path / "whole", rows)
    nodes = sorted({r["instance_id"] for r in rows})
    for k, inst in enumerate(nodes):
        write_profile(tmp_path / "job" / f"node-{k}", [r for r in rows if r["instance_id"] == inst])
    if not nodes:
        return
    got = A.across(nw.load_job(tmp_path / "job", results=tmp_path / "res"),
                   ["stragglers", "temporal_breakdown", "errors_and_hangs"], scheduler="sync")
    want, want_steps = ref.stragglers(whole)
    have = {core_of(r): r for r in got["stragglers"].to_dict("records")}
    assert set(have) == set(want)
    for core, w in want.items():
        g = have[core]
        assert (g["times_last"], g["steps"], g["max_lag_ns"]) == (w["times_last"], w["steps"], w["max_lag"]), core
        assert g["mean_lag_ns"] == pytest.approx(w["mean_lag"]), core
        assert abs(g["wait_caused_ns"] - w["wait_caused"]) <= 1, core
    steps = got["straggler_steps"]
    assert sorted(zip((core_of(r) for r in steps.to_dict("records")), steps["lag_ns"], steps["devices"], strict=True)) == \
        sorted((s["core"], s["lag"], s["devices"]) for s in want_steps)
    # Per-core analyses are each part's own (an execution that never ends runs to its part's end).
    have_t = {core_of(r): r for r in got["temporal_breakdown"].to_dict("records")}
    t = {}
    for k in range(len(nodes)):
        t.update(ref.temporal(nw.load_profile(tmp_path / "job" / f"node-{k}", cache=False)))
    assert set(have_t) == set(t)
    for core, w in t.items():
        assert (have_t[core]["busy_time_ns"], have_t[core]["idle_time_ns"]) == (w["busy"], w["idle"]), core
    wp = ref.problems(whole)
    gp = got["errors_and_hangs"]
    assert len(gp) == len(A.errors_and_hangs(whole)), wp


def test_across_on_the_local_processes_and_on_a_local_cluster(job: nw.Job) -> None:
    from dask.distributed import Client, LocalCluster

    local = A.across(job, ["temporal_breakdown", "stragglers"], cache=False)  # Dask's process scheduler
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        remote = A.across(job, ["temporal_breakdown", "stragglers"], client, cache=False)
        pids = set(client.run(os.getpid).values())
    assert os.getpid() not in pids
    for name in ("temporal_breakdown", "stragglers", "straggler_steps", "straggler_lag"):
        pd.testing.assert_frame_equal(local[name], remote[name])
    assert remote["parts"]["status"].tolist() == ["computed"] * 3


def test_the_cli_writes_a_job(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "neuron_widgets", "sample", str(tmp_path / "j"), "--nodes", "2",
                          "--events", "8000"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "2-node job" in out.stdout and sorted(p.name for p in (tmp_path / "j").iterdir()) == ["node-00", "node-01"]
    job = nw.load_job(tmp_path / "j")
    assert int(job.parts["events"].sum()) == len(nw.load_profile([tmp_path / "j" / "node-00", tmp_path / "j" / "node-01"]))
    bad = subprocess.run([sys.executable, "-m", "neuron_widgets", "sample", str(tmp_path / "k"), "--nodes", "1"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--nodes must be 2 or more" in bad.stderr
    assert np.all(job.parts["cores"] == 4)


def test_job_summary_names_the_remote_straggler_and_opens_a_part_at_a_step(job: nw.Job) -> None:
    from bokeh.models import ColumnDataSource

    from neuron_widgets.summary.job import lag_matrix
    from neuron_widgets.widgets import Summary, Timeline

    s = Summary(job)
    assert s.done.wait(120), s.status.value
    assert "Could not" not in s.status.value
    c = s.charts
    assert "node-02 (process" in c.sentence.text and "NeuronCore 2" in c.sentence.text
    m = c.matrix
    assert m.values.shape == (9, len(s.results["straggler_steps"]))  # 3 nodes x 3 cores, one column per step
    late = m.rows.index(next(r for r in m.rows if r.startswith("node-02/") and r.endswith("NC:2")))
    assert np.nanargmax(np.nanmean(m.values, axis=1)) == late  # its row is the brightest
    assert c.stragglers.select_one({"type": ColumnDataSource}).data["full"][0] == m.rows[late]  # the axis shows it short
    # A click on its cell at the tenth step opens node-02 at that step, its arrival selected.
    c.cells.selected.image_indices = [{"index": late, "i": 10, "j": 0, "flat_index": 10}]
    tl = s.part_timeline
    assert isinstance(tl, Timeline) and s.part_shown == "node-02" and tl.profile is job.load("node-02")
    t0, t1 = tl.time_range
    assert t0 <= m.col_start[10] and t1 >= m.col_end[10] and t1 - t0 < 50_000_000
    sel = tl.selection
    assert sel is not None and sel["name"] in ("cc_exec_barrier", "cc_running") and int(sel["nc_idx"]) == 2
    # A core's bar opens its part at its worst step; another part replaces the timeline.
    first = s.part_timeline
    c.cells.selected.image_indices = [{"index": 0, "i": 3, "j": 0, "flat_index": 3}]
    assert s.part_shown == "node-00" and s.part_timeline is not first
    src = c.stragglers.select_one({"type": ColumnDataSource})
    src.selected.indices = [0]
    assert s.part_shown == "node-02"
    # Many cores: one row per node; many steps: binned columns.
    lag = s.results["straggler_lag"]
    small = lag_matrix(lag, max_rows=4, max_cols=7)
    assert small.per_node and small.values.shape[0] == 3 and small.values.shape[1] <= 7 and small.binned > 1
    assert np.nanmax(small.values) == pytest.approx(lag["lag_ns"].max() / 1e3)


def test_a_kineto_job_of_ranks_finds_the_late_rank_as_one_profile_does(tmp_path: Path) -> None:
    from test_export import Export

    from neuron_widgets.export import export_html
    from neuron_widgets.sample.kineto import write_kineto
    from neuron_widgets.widgets import Summary

    paths = write_kineto(tmp_path / "ranks", ranks=4, late_rank=2)
    job = nw.load_job(tmp_path / "ranks", results=tmp_path / "results")
    assert job.parts["part"].tolist() == ["rank-0", "rank-1", "rank-2", "rank-3"]
    got = A.across(job, ["stragglers", "temporal_breakdown"])
    # Job-wide: the same answer as the four ranks read as one profile.
    whole = A.stragglers(nw.load_profile(paths))
    pd.testing.assert_frame_equal(got["stragglers"].drop(columns="part").reset_index(drop=True),
                                  whole.reset_index(drop=True), check_dtype=False)
    assert got["stragglers"]["rank"].iat[0] == 2 and got["stragglers"]["part"].iat[0] == "rank-2"
    # Per rank: each part's own breakdown.
    for part, rows in got["temporal_breakdown"].groupby("part"):
        own = A.temporal_breakdown(job.load(part))
        pd.testing.assert_frame_equal(rows.drop(columns="part").reset_index(drop=True), own.reset_index(drop=True),
                                      check_dtype=False)
    # The job's Summary names the late rank, and exports to a page.
    s = Summary(job)
    assert s.done.wait(180), s.status.value
    assert s.charts is not None and s.charts.kind == "kineto" and "rank 2" in s.charts.sentence.text
    export_html(tmp_path / "job.html", s)
    page = Export(tmp_path / "job.html")
    item = json.dumps(page.json("summary0"))
    assert "nw-job-headline" in item and "rank 2" in item


# A script as most are written: no `if __name__ == "__main__":`, work at the top level.
PLAIN_SCRIPT = '''
import sys

import neuron_widgets as nw
from neuron_widgets.analysis import across
from neuron_widgets.widgets import JobTimeline, Summary

print("top of the script", flush=True)  # printed once: the workers must not run the script again
job = nw.load_job(sys.argv[1], results=sys.argv[2])
got = across(job, ["temporal_breakdown", "stragglers"], cache=False)
print("across", ",".join(got["parts"]["status"]), got["stragglers"]["part"].iat[0], flush=True)
s = Summary(job)
assert s.done.wait(300), s.status.value
print("summary", s.charts is not None, "node-02" in s.charts.sentence.text, flush=True)
tl = JobTimeline(job)
assert tl.summarised.wait(300), tl.status
print("timeline", len(tl.density), repr(tl.error), flush=True)
'''


@pytest.mark.parametrize("how", ["file", "module"])
def test_across_summary_and_timeline_run_from_a_plain_script(how: str, job_dir: Path, tmp_path: Path) -> None:
    """Spawned workers used to run the unguarded script again and die while starting (BrokenProcessPool)."""
    (tmp_path / "plain_job_script.py").write_text(PLAIN_SCRIPT)
    first = ["plain_job_script.py"] if how == "file" else ["-m", "plain_job_script"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, *first, str(job_dir), str(tmp_path / "results")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=900, check=False, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "bootstrapping" not in out.stderr and "BrokenProcessPool" not in out.stderr
    lines = out.stdout.splitlines()
    assert lines.count("top of the script") == 1, out.stdout
    assert "across computed,computed,computed node-02" in lines, out.stdout
    assert "summary True True" in lines, out.stdout
    assert "timeline 3 ''" in lines, out.stdout


# -- the result cache: keyed on content, names from the job at hand (issue 36) -----------------
def test_a_renamed_copy_of_a_job_reports_its_own_part_names_and_paths(job_dir: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    first = A.across(nw.load_job(job_dir, results=results), ["stragglers", "errors_and_hangs"], scheduler="sync")
    assert first["stragglers"]["part"].iat[0] == "node-02"
    copy = tmp_path / "ranks"
    copy.mkdir()
    for old, new in (("node-00", "rank-a"), ("node-01", "rank-b"), ("node-02", "rank-c")):
        shutil.copytree(job_dir / old, copy / new)
    job = nw.load_job(copy, results=results)
    got = A.across(job, ["stragglers", "errors_and_hangs"], scheduler="sync")
    assert got["parts"]["status"].tolist() == ["cached"] * 3  # found by content...
    assert got["parts"]["part"].tolist() == ["rank-a", "rank-b", "rank-c"]  # ...named by this job
    assert got["parts"]["path"].tolist() == [str(copy / n) for n in ("rank-a", "rank-b", "rank-c")]
    late = got["stragglers"]["part"].iat[0]
    assert late == "rank-c" and set(got["stragglers"]["part"]) <= {"rank-a", "rank-b", "rank-c"}
    assert set(got["errors_and_hangs"]["part"]) == {"rank-a", "rank-c"}
    assert len(job.load(late)) == int(job.parts.set_index("part").loc[late, "events"])
    # The same from the parts' own tasks (a worker reads the store itself).
    from neuron_widgets.analysis.across import _tag, part_task

    again = [part_task(spec, ["stragglers", "errors_and_hangs"], {}, job.store, _tag(["stragglers", "errors_and_hangs"], {}))
             for spec in job.specs]
    assert [g["status"] for g in again] == ["cached"] * 3
    assert [(g["part"], g["path"]) for g in again] == [(n, str(copy / n)) for n in ("rank-a", "rank-b", "rank-c")]


def _chrome_part(path: Path, dur: int) -> None:
    events = [{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 1000 * i, "dur": dur} for i in range(50)]
    path.write_text(json.dumps({"traceEvents": events}))


@pytest.mark.parametrize("aged", [False, True], ids=["just-written", "stat-trusted"])
def test_a_same_size_edit_with_its_mtime_put_back_is_computed_again(aged: bool, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import neuron_widgets.job.parts as parts_module

    if aged:  # as if the files were written long ago: their stat is trusted and indexed
        monkeypatch.setattr(parts_module, "RACY_NS", 0, raising=False)
    root = tmp_path / "job"
    root.mkdir()
    _chrome_part(root / "a.json", 100)
    _chrome_part(root / "b.json", 100)
    results = tmp_path / "results"
    first = A.across(nw.load_job(root, results=results), ["busy_density"], scheduler="sync")
    assert A.across(nw.load_job(root, results=results), ["busy_density"],
                    scheduler="sync")["parts"]["status"].tolist() == ["cached"] * 2
    before = (root / "b.json").stat()
    _chrome_part(root / "b.json", 900)  # same size: 100 -> 900
    os.utime(root / "b.json", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (root / "b.json").stat().st_size == before.st_size and (root / "b.json").stat().st_mtime_ns == before.st_mtime_ns
    got = A.across(nw.load_job(root, results=results), ["busy_density"], scheduler="sync")
    assert got["parts"]["status"].tolist() == ["cached", "computed"]
    busy = got["busy_density"].groupby("part")["busy_ns"].sum()
    assert busy["b"] == 9 * busy["a"] == 9 * first["busy_density"].groupby("part")["busy_ns"].sum()["b"]


def test_other_filters_are_other_results(job_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import neuron_widgets.job.parts as parts_module

    monkeypatch.setattr(parts_module, "RACY_NS", 0, raising=False)  # the stat index in use
    results = tmp_path / "results"
    whole = A.across(nw.load_job(job_dir, results=results), ["temporal_breakdown"], scheduler="sync")
    one = A.across(nw.load_job(job_dir, results=results, neuron_cores=[0]), ["temporal_breakdown"], scheduler="sync")
    assert one["parts"]["status"].tolist() == ["computed"] * 3
    assert set(one["temporal_breakdown"]["nc_idx"]) == {0} and set(whole["temporal_breakdown"]["nc_idx"]) == {0, 1, 2}


WRITE_ON_A_FULL_DISK = '''
import resource, signal, sys
from pathlib import Path
from neuron_widgets.job.store import ResultStore

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
store = ResultStore(sys.argv[1])
store.put("k0", "t", {"tables": b"x" * 10})  # small: written (and the directories made)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
store.put("k1", "t", {"tables": b"y" * 100_000})  # cut off part-way
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
print(store.get("k0", "t") is not None, store.get("k1", "t") is None)
'''


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_the_result_store_leaves_nothing_behind_when_a_write_fails(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", WRITE_ON_A_FULL_DISK, str(tmp_path / "store")], capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]
    files = [p for p in (tmp_path / "store").rglob("*") if p.is_file()]
    assert len(files) == 1 and not any(p.name.endswith(".tmp") for p in files), files


def test_a_part_given_twice_is_analysed_once(job_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(job_dir / "node-01", target_is_directory=True)
    job = nw.load_job([job_dir / "node-00", job_dir / "node-01", job_dir / "node-00", tmp_path / "link"],
                      results=tmp_path / "results")
    assert job.parts["part"].tolist() == ["node-00", "node-01"]
    assert len(job.notes) == 2 and all("analysed once" in n for n in job.notes)
    assert str(tmp_path / "link") in job.notes[1] and str(job_dir / "node-01") in job.notes[1]
    got = A.across(job, ["temporal_breakdown"], scheduler="sync")
    assert got["parts"]["part"].tolist() == ["node-00", "node-01"]
    assert sum("analysed once" in n for n in got["parts"].attrs["notes"]) == 2
    # A job directory holding a link to one of its own parts: the same.
    root = tmp_path / "job"
    root.mkdir()
    (root / "node-00").symlink_to(job_dir / "node-00", target_is_directory=True)
    (root / "node-00-again").symlink_to(job_dir / "node-00", target_is_directory=True)
    assert nw.load_job(root).parts["part"].tolist() == ["node-00"]


def test_a_missing_part_is_left_out_and_named_and_a_missing_job_is_an_error(job_dir: Path, tmp_path: Path) -> None:
    gone = tmp_path / "node-09"
    job = nw.load_job([job_dir / "node-00", gone, job_dir / "node-02"], results=tmp_path / "results")
    assert job.parts["part"].tolist() == ["node-00", "node-09", "node-02"]
    assert job.parts.set_index("part").loc["node-09", "format"] == "missing"
    assert any(str(gone) in n and "left out" in n for n in job.notes)
    got = A.across(job, ["temporal_breakdown", "stragglers"], scheduler="sync")
    parts = got["parts"].set_index("part")
    assert parts["status"].tolist() == ["computed", "left out", "computed"]
    assert "no such file" in parts.loc["node-09", "error"]
    assert any("node-09" in n and "left out" in n for n in got["stragglers"].attrs["notes"])
    assert set(got["temporal_breakdown"]["part"]) == {"node-00", "node-02"}
    with pytest.raises(ProfileError, match="none of the 2 parts given exists"):
        nw.load_job([gone, tmp_path / "node-10"])
    with pytest.raises(ProfileError, match="no such file") as err:
        nw.load_job(tmp_path / "no-such-run")
    assert "no-such-run" in str(err.value)
