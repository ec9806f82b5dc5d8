"""Timeline(job): busy density against a slow reference, the overview's tracks, opening and closing parts."""

from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from generated_runs import sample_job
from random_neuron import random_profile

import neuron_widgets as nw
from neuron_widgets.analysis import across, busy_density
from neuron_widgets.job.view import LEVELS, density_runs, job_view, level_of, overview_profile, under
from neuron_widgets.sample.job import write_job
from neuron_widgets.widgets.job.timeline import JobTimeline


# -- the slow, obviously right reference -------------------------------------------------
def ref_union(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        e = max(e, s)
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def ref_density(by_device: dict, bins: int) -> tuple[list[int], list[int]]:
    """Per bin, the busy time of every device inside it, measured interval by interval."""
    merged = {d: ref_union(v) for d, v in by_device.items() if v}
    lo = min(s for v in merged.values() for s, _ in v)
    hi = max(e for v in merged.values() for _, e in v)
    n = max(1, min(bins, hi - lo))
    edges = sorted({lo + round(k * (hi - lo) / n) for k in range(n + 1)})
    busy = []
    for a, b in itertools.pairwise(edges):
        busy.append(sum(max(0, min(e, b) - max(s, a)) for v in merged.values() for s, e in v))
    return edges, busy


def neuron_devices(p: nw.Profile) -> dict:
    df = p.events
    ex = df[(df["name"] == "nc_exec_running") & df["nc_idx"].notna()]
    out: dict = {}
    for r in ex.itertuples():
        out.setdefault((r.instance_id, r.process_id, r.nc_idx), []).append((int(r.start_ts), int(r.end_ts)))
    return out


@pytest.mark.parametrize("seed", range(24))
def test_busy_density_matches_the_reference_on_random_neuron_profiles(seed: int, tmp_path: Path) -> None:
    p = random_profile(seed, tmp_path / "p")
    bins = [1, 7, 64, 1024][seed % 4]
    got = busy_density(p, bins=bins)
    devices = neuron_devices(p)
    if not devices:
        assert got.empty and "nothing ran" in " ".join(got.attrs["notes"])
        return
    edges, busy = ref_density(devices, bins)
    assert got["start_ts"].tolist() == edges[:-1] and got["end_ts"].tolist() == edges[1:]
    assert got["busy_ns"].tolist() == busy
    assert (got["devices"] == len(devices)).all() and (got["device_kind"] == "NeuronCores").all()
    width = np.diff(edges)
    assert np.allclose(got["busy_share"], np.clip(np.array(busy) / (len(devices) * width), 0, 1))


def _chrome(path: Path, rng: np.random.Generator, kineto: bool) -> Path:
    events = []
    for _ in range(int(rng.integers(1, 300))):
        pid, tid = int(rng.integers(0, 3)), int(rng.integers(0, 4))
        ts = float(rng.integers(0, 50_000)) + float(rng.integers(0, 1000)) / 1000
        ev = {"ph": "X", "name": f"op{int(rng.integers(0, 5))}", "pid": pid, "tid": tid, "ts": ts,
              "dur": float(rng.integers(0, 3000)) + float(rng.integers(0, 1000)) / 1000}
        if kineto and rng.random() < .6:
            ev.update(cat="kernel", name=f"volta_sgemm_{int(rng.integers(0, 3))}", pid=1, tid=7)
        events.append(ev)
    doc = {"traceEvents": events}
    if kineto:
        doc["deviceProperties"] = [{"id": 0, "name": "GPU"}]
        events.append({"ph": "X", "cat": "kernel", "name": "volta_sgemm_9", "pid": 1, "tid": 7, "ts": 1.0, "dur": 2.0})
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("seed", range(12))
def test_busy_density_matches_the_reference_on_random_chrome_and_kineto_traces(seed: int, tmp_path: Path) -> None:
    rng = np.random.default_rng(seed)
    kineto = seed % 2 == 1
    p = nw.load_profile(_chrome(tmp_path / "trace.json", rng, kineto), cache=False)
    got = busy_density(p, bins=int(rng.choice([3, 50, 1024])))
    df = p.events
    if kineto:
        assert (got["device_kind"] == "ranks").all()
        kernels = df[df["category"] == "kernel"]
        devices = {0: [(int(r.start_ts), int(r.end_ts)) for r in kernels.itertuples()]}
    else:
        assert (got["device_kind"] == "threads").all()
        devices = {}
        for r in df.itertuples():
            devices.setdefault((r.instance_id, r.process_id, r.thread_id), []).append((int(r.start_ts), int(r.end_ts)))
    edges, busy = ref_density(devices, len(got))
    assert got["start_ts"].tolist() == edges[:-1]
    assert got["busy_ns"].tolist() == busy
    assert int(got["devices"].iloc[0]) == len(devices)


def test_density_runs_keep_every_busy_nanosecond_and_level(tmp_path: Path) -> None:
    for seed in range(10):
        p = random_profile(seed, tmp_path / f"p{seed}")
        d = busy_density(p, bins=200)
        if d.empty:
            continue
        runs = density_runs(d)
        assert runs["level"].between(0, len(LEVELS) - 1).all()
        # Every busy bin lies in exactly one run of its own level; idle bins in none.
        lv = level_of(d["busy_share"].to_numpy())
        for b in d.assign(level=lv).itertuples():
            inside = runs[(runs.start_ts <= b.start_ts) & (runs.end_ts >= b.end_ts)]
            assert len(inside) == (1 if b.level >= 0 else 0)
            if b.level >= 0:
                assert int(inside["level"].iloc[0]) == b.level
        # A run's share is its bins' busy time over its devices and length.
        total = sum(float(r.busy_share) * r.devices * (r.end_ts - r.start_ts) for r in runs.itertuples())
        assert total == pytest.approx(float(d["busy_ns"].sum()), rel=1e-9)
    assert level_of(np.array([0.0, 0.1, 0.25, 0.26, 0.5, 0.75, 0.76, 1.0])).tolist() == [-1, 0, 0, 1, 1, 2, 3, 3]


# -- the job's timeline ------------------------------------------------------------------
@pytest.fixture(scope="module")
def job4(tmp_path_factory: pytest.TempPathFactory) -> nw.Job:
    return sample_job(tmp_path_factory.mktemp("jobtl"), nodes=4, events=20_000, processes=1, cores=3, seed=5)


def test_timeline_of_a_job_is_asked_for_by_name(job4: nw.Job) -> None:
    """Timeline takes one profile; a job is JobTimeline's, and saying so beats a quiet swap of class."""
    with pytest.raises(TypeError, match=r"nw\.JobTimeline\(job\)"):
        nw.Timeline(job4)
    from neuron_widgets.widgets import JobTimeline as exported

    assert exported is JobTimeline and nw.JobTimeline is JobTimeline


def test_timeline_of_a_job_draws_one_track_per_part_then_their_density(job4: nw.Job) -> None:
    tl = nw.JobTimeline(job4, height=400)
    assert isinstance(tl, JobTimeline)
    # At once: each part's span from the job's metadata, one track each, in part order.
    assert [t["label"] for t in tl.tracks] == ["node-00", "node-01", "node-02", "node-03"]
    assert tl.summarised.wait(120), tl.status
    assert not tl.error, tl.error
    assert [t["label"] for t in tl.tracks] == ["node-00", "node-01", "node-02", "node-03"]
    for grouping in ("neuron_core", "process", "instance", "thread", "cpu_device"):
        assert tl.profile.tracks(grouping)["label"].tolist() == ["node-00", "node-01", "node-02", "node-03"]
    # The density equals each part's own, computed by the part's task (and kept: a second timeline is cached).
    for part in ("node-00", "node-03"):
        own = busy_density(job4.load(part))
        pd.testing.assert_frame_equal(tl.density[part], own, check_dtype=False)
    names = set(tl.profile.name_dictionary())
    assert names & {n for _, n in LEVELS}
    ev = tl.profile.event(row=0)
    assert ev["args"]["part"] == ev["instance_id"] and ev["args"]["busy"].endswith("%")
    assert ev["args"]["NeuronCores"] == 3
    again = nw.JobTimeline(job4)
    assert again.summarised.wait(60) and "4 of 4 parts summarised" in again.status
    assert (across(job4, ["busy_density"])["parts"]["status"] == "cached").all()


def test_opening_a_part_shows_its_events_under_its_name_and_keeps_the_view(job4: nw.Job) -> None:
    tl = nw.JobTimeline(job4)
    assert tl.summarised.wait(120)
    lo, hi = tl.profile.start_ts, tl.profile.end_ts
    window = (lo + (hi - lo) // 4, lo + (hi - lo) // 2)
    tl.time_range = window
    part = tl.open_part("node-02")
    assert tl.opened == ["node-02"]
    labels = [t["label"] for t in tl.tracks]
    assert labels[:2] == ["node-00", "node-01"] and labels[-1] == "node-03"
    inner = [lab for lab in labels if lab.startswith("node-02/")]
    assert len(inner) == len(labels) - 3 and "node-02" not in labels
    # Every event of the part is there, renamed under the part; nothing else changed.
    shown = tl.profile.events
    mine = shown[shown["input"] == "node-02"]
    assert len(mine) == len(part)
    assert set(mine["instance_id"]) == {f"node-02/{i}" for i in part.events["instance_id"].unique()}
    assert sorted(mine["start_ts"]) == sorted(part.events["start_ts"])
    assert abs(tl.time_range[0] - window[0]) <= 1 and abs(tl.time_range[1] - window[1]) <= 1
    # Neuron Explorer's labels after the part's name.
    assert any(lab.endswith("/neuron_hw/NC0:0") for lab in inner), inner
    tl.close_part("node-02")
    assert tl.opened == [] and [t["label"] for t in tl.tracks] == ["node-00", "node-01", "node-02", "node-03"]


def test_a_click_on_a_parts_track_opens_it(job4: nw.Job) -> None:
    tl = nw.JobTimeline(job4)
    assert tl.summarised.wait(120)
    src = np.asarray(tl.profile.column("instance_id").to_pylist())
    row = int(np.flatnonzero(src == "node-01")[0])
    tl.selected_row = row
    deadline = time.monotonic() + 60
    while tl.opened != ["node-01"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert tl.opened == ["node-01"], (tl.status, tl.error)
    assert any(t["label"].startswith("node-01/") for t in tl.tracks)
    for t in threading.enumerate():  # the opening thread's last words (status, loading) are said
        if t.name == "neuron-widgets-job-open":
            t.join(60)
    # A click on an event of an opened part is an ordinary selection: no part is loaded for it
    # (the click's handler runs in the assignment; a load would be a thread started there).
    events = np.asarray(tl.profile.column("trace_event_source").to_pylist())
    tl.selected_row = int(np.flatnonzero(events == "neuron_hw")[0])
    assert not any(t.name == "neuron-widgets-job-open" for t in threading.enumerate())
    assert tl.opened == ["node-01"] and tl.selection["instance_id"].startswith("node-01/")


def test_opened_parts_are_published_with_their_tracks(job4: nw.Job) -> None:
    """Read from another thread as one (`parts_shown()`), `opened` and the tracks always agree, opening and closing;
    read as two (`opened`, then `tracks`), once `opened` says the new state the tracks show it (they are set first),
    and the two disagree only in the instant between the two stores (issue 35.14: it was the whole change)."""
    tl = nw.JobTimeline(job4)
    assert tl.summarised.wait(120)
    wrong: list[str] = []
    straddled = samples = 0
    for part in ("node-01", "node-02", "node-01"):
        for act, opening in ((tl.open_part, True), (tl.close_part, False)):
            worker = threading.Thread(target=act, args=(part,))
            worker.start()
            while True:
                alive = worker.is_alive()
                shown = tl.parts_shown()
                drawn = any(t["label"].startswith(f"{part}/") for t in shown.tracks)
                if (part in shown.opened) != drawn:
                    wrong.append(f"{act.__name__}({part}): parts_shown() opened={shown.opened}, its tracks drawn={drawn}")
                # What is open first, then what is drawn: once `opened` says the new state, the tracks show it.
                said = part in tl.opened
                drawn = any(t["label"].startswith(f"{part}/") for t in tl.tracks)
                samples += 1
                if said == opening and drawn != opening:
                    wrong.append(f"{act.__name__}({part}): opened={tl.opened}, its tracks drawn={drawn}")
                straddled += said != drawn
                if not alive:
                    break
            worker.join()
    assert not wrong, wrong[:3]
    assert straddled <= max(samples // 1000, 5), (straddled, samples)
    assert tl.opened == [] and [t["label"] for t in tl.tracks] == ["node-00", "node-01", "node-02", "node-03"]


def test_a_bad_part_is_named_and_the_rest_drawn(tmp_path: Path) -> None:
    root = write_job(tmp_path / "job", nodes=3, events=6_000, processes=1, cores=2, seed=2)
    bad = root / "node-01" / "SystemProfileEvents.parquet"
    bad.write_bytes(bad.read_bytes()[:200])
    job = nw.load_job(root, results=tmp_path / "results")
    tl = nw.JobTimeline(job)
    assert tl.summarised.wait(120)
    assert "node-01" in " ".join(tl.notes) and "left out" in " ".join(tl.notes)
    assert set(tl.density) == {"node-00", "node-02"}
    with pytest.raises(nw.ProfileError):
        tl.open_part("node-01")
    assert "node-01" in tl.error and str(root / "node-01") in tl.error
    assert tl.opened == []


def test_under_renames_instances_everywhere_and_keeps_the_rest(tmp_path: Path) -> None:
    p = nw.sample_profile()
    r = under(p, "node-07")
    assert len(r) == len(p)
    assert set(r.events["instance_id"]) == {f"node-07/{i}" for i in p.events["instance_id"].unique()}
    assert (r.array("start_ts") == p.array("start_ts")).all()
    if len(p.device_profiles):
        assert all(str(i).startswith("node-07/") for i in r.device_profiles["instance_id"].dropna())
    for name in p.counters.names():
        c = r.counter(name)
        if "instance_id" in c:
            assert all(str(i).startswith("node-07") for i in c["instance_id"])
    # The arguments are still read from the part's file.
    rows = np.flatnonzero(p.events["name"].to_numpy() == "nc_exec_running")[:3]
    assert r.args_of_rows(rows) == p.args_of_rows(rows)


def test_job_view_of_an_empty_overview_and_of_parts_without_metadata() -> None:
    ov = overview_profile(["a", "b"], {}, {})
    assert len(ov) == 0
    ov = overview_profile(["a", "b"], {}, {"b": (10, 20)})
    assert ov.tracks("default")["label"].tolist() == ["b"] and ov.event(row=0)["name"] == "not summarised yet"
    v = job_view(ov, {"a": nw.sample_profile()})
    labels = v.tracks("default")["label"].tolist()
    assert labels[-1] == "b" and all(lab.startswith("a/") for lab in labels[:-1])


def test_export_of_a_job_timeline_opens_offline(job4: nw.Job, tmp_path: Path) -> None:
    tl = nw.JobTimeline(job4)
    assert tl.summarised.wait(120)
    tl.open_part("node-03")
    out = tl.to_html(tmp_path / "job.html", time_range="all")
    # Every event shown: the other parts' density and node-03's own events (the page is tested in a browser).
    assert out["timelines"][0]["events"] == len(tl.profile) > len(job4.load("node-03"))
