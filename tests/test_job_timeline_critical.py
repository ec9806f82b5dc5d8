"""The job's critical path on its Timeline: analysis.critical_path(job) computed once in the background, its events
outlined on the opened parts' tracks, a span on each folded part's track where it runs through it, the jumps between
tracks; checked against a slow placement written segment by segment, on generated jobs and on random paths."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from generated_runs import sample_job
from test_export import Export

import neuron_widgets as nw
from neuron_widgets import analysis
from neuron_widgets.analysis import critical_path, critical_path_breakdown
from neuron_widgets.job.view import job_view, overview_profile
from neuron_widgets.model.markers import FLAG_HIGHLIGHT
from neuron_widgets.model.timefmt import duration
from neuron_widgets.model.worker_labels import core_label
from neuron_widgets.sample.job import write_job
from neuron_widgets.widgets.job.critical import job_critical_shown
from neuron_widgets.widgets.job.timeline import JobTimeline

REAL = analysis.critical_path


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> nw.Job:
    return sample_job(tmp_path_factory.mktemp("jobcp"), nodes=3, events=6_000, processes=1, cores=2, seed=11)


def wait_state(tl: Any, timeout: float = 180) -> str:
    """The toggle's state once the background work has answered (polls the state, never a guessed delay)."""
    end = time.monotonic() + timeout
    while tl.critical_info.get("state") == "computing" and time.monotonic() < end:
        time.sleep(0.02)
    return str(tl.critical_info.get("state", ""))


# -- the slow, obviously right placement ---------------------------------------------------
def ref_placement(view: nw.Profile, grouping: str, path: pd.DataFrame, opened: set[str]) -> dict[str, Any]:
    """Segment by segment: an opened part's event is its row in the view (found by the part and its own id among
    the view's rows); a folded part's segments extend its current span; jumps join consecutive placed events."""
    ev = view.events
    own: dict[tuple[str, int], int] = {}
    if "input" in ev.columns:
        ids = ev["source_id"] if "source_id" in ev.columns else ev["id"]
        for row, (inp, i) in enumerate(zip(ev["input"].astype(str), ids, strict=True)):
            if inp in opened:
                own[(inp, int(i))] = row
    idx = view.track_index(grouping)
    labels = [str(x) for x in idx.tracks["label"]]
    origin = view.origin_ts
    outlined: set[int] = set()
    spans: list[list[Any]] = []
    places: list[tuple[int, int, int, int]] = []  # start, end, track, lane
    current: list[Any] | None = None
    for seg in path.itertuples():
        part = "" if seg.part is None or pd.isna(seg.part) else str(seg.part)
        if part in opened:
            current = None
            row = own.get((part, int(seg.event_id))) if seg.event_id >= 0 else None
            if row is not None:
                outlined.add(row)
                places.append((int(seg.start_ts), int(seg.end_ts), int(idx.combo_track[idx.combo[row]]),
                               int(idx.lane[row])))
        elif part and part in labels:
            if current is not None and current[0] == part:
                current[2] = int(seg.end_ts)
            else:
                current = [part, int(seg.start_ts), int(seg.end_ts)]
                spans.append(current)
            if seg.event_id >= 0:
                places.append((int(seg.start_ts), int(seg.end_ts), labels.index(part), 0))
        else:
            current = None
    jumps = [[a[1] - origin, a[2], a[3], b[0] - origin, b[2], b[3]] for a, b in itertools.pairwise(places)
             if (a[2], a[3]) != (b[2], b[3])]
    return {"outlined": sorted(outlined), "jumps": jumps,
            "spans": [[s - origin, e - origin, labels.index(p)] for p, s, e in spans]}


def assert_placed(shown: Any, want: dict[str, Any]) -> None:
    assert shown.rows.tolist() == want["outlined"]
    np.testing.assert_array_equal(np.array(shown.jumps, np.int64).reshape(-1, 6),
                                  np.array(want["jumps"], np.int64).reshape(-1, 6))
    np.testing.assert_array_equal(np.array(shown.spans, np.int64).reshape(-1, 3),
                                  np.array(want["spans"], np.int64).reshape(-1, 3))


def assert_widget_placed(jt: JobTimeline) -> dict[str, Any]:
    path = critical_path(jt.job, scheduler="sync")
    want = ref_placement(jt.profile, jt.grouping, path, set(jt.opened))
    assert_placed(jt._critical, want)
    info = jt.critical_info
    assert info["jumps"] == jt._critical.jumps and info["spans"] == jt._critical.spans
    assert jt._marked["highlight"].tolist() == want["outlined"]
    return want


# -- the widget -------------------------------------------------------------------------------
def test_the_toggle_returns_at_once_says_it_is_busy_then_draws_the_jobs_path(job: nw.Job,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    gate, calls = threading.Event(), []

    def held(x: Any, client: Any = None, **kw: Any) -> pd.DataFrame:
        calls.append((x, client))
        assert gate.wait(120)
        return REAL(x, **kw)  # the stand-in Client is only recorded

    monkeypatch.setattr(analysis, "critical_path", held)
    client = object()  # the user's Client, handed to the analysis as given
    jt = JobTimeline(job, client=client)
    assert jt.critical_available is True and jt.critical_info == {}
    t = time.monotonic()
    jt.critical_path = True
    assert time.monotonic() - t < 1.0
    assert jt.critical_info["state"] == "computing"
    assert "part by part on your Dask client" in jt.critical_info["text"]
    assert jt.summarised.wait(180), jt.status
    deadline = time.monotonic() + 60
    while not calls and time.monotonic() < deadline:  # computed once the densities are in
        time.sleep(0.02)
    assert calls == [(job, client)] and jt.critical_info["state"] == "computing"
    gate.set()
    assert wait_state(jt) == "shown", jt.critical_info
    want = assert_widget_placed(jt)
    # Nothing opened: no event outlined, the path's runs through the parts as spans, the moves between parts jumps.
    assert want["outlined"] == [] and len(want["spans"]) >= 2 and len(want["jumps"]) >= 1
    assert jt.critical_info["text"].startswith("critical path: ") and " between parts" in jt.critical_info["text"]
    assert any(n.startswith("critical path: node-00: ") for n in jt.notes)  # the path's own notes, while it is on


def test_opened_parts_outline_their_segments_in_each_grouping_and_folding_gives_the_span_back(job: nw.Job) -> None:
    jt = JobTimeline(job)
    assert jt.summarised.wait(180), jt.status
    jt.critical_path = True
    assert wait_state(jt) == "shown", jt.critical_info
    folded = assert_widget_placed(jt)
    jt.open_part("node-02")
    assert wait_state(jt) == "shown"
    one = assert_widget_placed(jt)
    assert len(one["outlined"]) > 20 and len(one["spans"]) < len(folded["spans"])
    # The outlined events are the part's own events of the path, as the view names them.
    path = critical_path(job, scheduler="sync")
    mine = path[(path["part"] == "node-02") & (path["event_id"] >= 0)]
    shown = jt.profile.events.iloc[one["outlined"]]
    assert set(shown["source_id"] if "source_id" in shown else shown["id"]) == set(mine["event_id"])
    assert (shown["input"] == "node-02").all()
    jt.open_part("node-00")
    assert wait_state(jt) == "shown"
    both = assert_widget_placed(jt)
    assert both["spans"] == [] and len(both["jumps"]) > len(one["jumps"])
    for grouping in ("thread", "instance", "default"):
        jt.grouping = grouping
        assert wait_state(jt) == "shown"
        assert_widget_placed(jt)
    jt.close_part("node-02")
    jt.close_part("node-00")
    assert wait_state(jt) == "shown"
    assert assert_widget_placed(jt) == folded
    # The viewport reply flags the outlined events (even where they would merge into one item).
    jt.open_part("node-02")
    assert wait_state(jt) == "shown"
    sent: list = []
    jt.send = lambda content, buffers=None: sent.append((content, buffers or []))  # type: ignore[method-assign]
    jt._on_msg(jt, {"type": "viewport", "uuid": "u", "t0": jt.span[0], "t1": jt.span[1], "width": 300}, [])
    meta, buffers = sent[-1]
    rows, flags = (np.frombuffer(b, dt) for b, dt in ((buffers[meta["columns"].index("row")], np.int32),
                                                       (buffers[meta["columns"].index("flags")], np.uint8)))
    assert set(rows[(flags & FLAG_HIGHLIGHT) > 0].tolist()) == set(jt._marked["highlight"].tolist())


def test_off_clears_everything_a_second_on_reuses_the_path_and_off_while_computing_shows_nothing(
        job: nw.Job, monkeypatch: pytest.MonkeyPatch) -> None:
    gate, calls = threading.Event(), []

    def counted(x: Any, client: Any = None, **kw: Any) -> pd.DataFrame:
        calls.append(x)
        assert gate.wait(120)
        return REAL(x, client, **kw)

    monkeypatch.setattr(analysis, "critical_path", counted)
    jt = JobTimeline(job)
    assert jt.summarised.wait(180), jt.status
    jt.critical_path = True
    assert jt.critical_info["state"] == "computing"
    jt.critical_path = False  # off while it is computed: nothing is drawn when it comes
    assert jt.critical_info == {}
    gate.set()
    jt._path_thread.join(120)
    assert jt.critical_info == {} and jt._critical is None and "highlight" not in jt._marked
    assert not any(n.startswith("critical path") for n in jt.notes)
    jt.open_part("node-02")
    jt.critical_path = True
    assert wait_state(jt) == "shown"
    assert jt._marked["highlight"].size > 0 and jt.revision > 0
    jt.critical_path = False
    assert jt.critical_info == {} and jt._critical is None and jt._marked.get("highlight") is None
    assert not any(n.startswith("critical path") for n in jt.notes)
    jt.critical_path = True
    assert wait_state(jt) == "shown"
    assert len(calls) == 1  # computed once for the widget, however often it is toggled or what is opened


def test_a_job_without_a_path_or_whose_path_fails_says_why_and_the_toggle_goes_off(
        job: nw.Job, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(x: Any, client: Any = None, **kw: Any) -> pd.DataFrame:
        raise TypeError("critical_path: a job of Kineto parts is not computed part by part")

    monkeypatch.setattr(analysis, "critical_path", refused)
    jt = JobTimeline(job)
    jt.critical_path = True
    assert wait_state(jt) == "none"
    assert jt.critical_path is False and jt.critical_info["text"] == (
        "critical path unavailable: TypeError: critical_path: a job of Kineto parts is not computed part by part")
    empty = REAL(job, scheduler="sync").iloc[:0]
    empty.attrs["notes"] = ["node-00: no executions"]
    monkeypatch.setattr(analysis, "critical_path", lambda x, client=None, **kw: empty)
    jt.critical_path = True  # tried again
    assert wait_state(jt) == "none"
    assert jt.critical_path is False and jt.critical_info["text"] == "no critical path to draw: node-00: no executions"


def test_the_headline_names_the_worker_and_its_steps_as_the_breakdown_counts_them(job: nw.Job) -> None:
    jt = JobTimeline(job)
    jt.critical_path = True
    assert wait_state(jt) == "shown"
    b = critical_path_breakdown(job, scheduler="sync")
    work = b[~b["kind"].astype(str).isin(["gap", "launch"])].sort_values("duration_ns", ascending=False, kind="stable")
    top = work.iloc[0]
    path = critical_path(job, scheduler="sync")
    part = str(path.loc[path["instance_id"] == top["instance_id"], "part"].iloc[0])
    who = core_label(top["instance_id"], top["process_id"], top["nc_idx"], part=part)
    share = 100 * top["duration_ns"] / path["duration_ns"].sum()
    assert jt.critical_info["headline"] == (
        f"{who} is on the critical path in {int(top['steps_on_path']):,} of {int(top['steps']):,} steps; its "
        f"{top['kind']} there is {share:.0f}% of the run ({duration(int(top['duration_ns']))})")
    assert who.startswith("node-02/")  # the sample job's straggler: the last node's last core


def test_the_export_carries_outlines_spans_and_jumps_to_folded_parts(job: nw.Job, tmp_path: Path) -> None:
    jt = JobTimeline(job)
    assert jt.summarised.wait(180), jt.status
    jt.open_part("node-02")
    jt.critical_path = True
    assert wait_state(jt) == "shown"
    shown = jt._critical
    jt.to_html(tmp_path / "job.html", time_range="all")
    page = Export(tmp_path / "job.html")
    crit = page.json("t0:meta")["state"]["critical"]
    assert crit["text"] == jt.critical_info["text"] and crit["headline"] == jt.critical_info["headline"]
    assert crit["labels"] == shown.labels == ["node-00"]
    origin = jt.profile.origin_ts
    spans = np.array(crit["spans"], np.int64).reshape(-1, 3)
    np.testing.assert_array_equal(spans, shown.span_rows - np.array([0, origin, origin]))
    jumps = np.array(crit["jumps"], np.int64).reshape(-1, 4)
    assert len(jumps) == len(shown.jump_rows) > 0
    # A jump to or from the folded part names its track (row -1: labels[0]); the others are the page's rows.
    folded = shown.jump_rows[:, [0, 2]] < 0
    np.testing.assert_array_equal(jumps[:, [0, 2]][folded], shown.jump_rows[:, [0, 2]][folded])
    assert folded.any() and (~folded).any()
    flags = page.array("t0:flags")
    n_exact = page.json("t0:meta")["n_exact"]
    assert int(((flags[:n_exact] & FLAG_HIGHLIGHT) > 0).sum()) == shown.rows.size
    rows = jumps[:, [0, 2]][~folded]
    assert (flags[rows] & FLAG_HIGHLIGHT).all()


# -- the placement, on generated jobs and on random paths ------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_placement_matches_the_reference_on_generated_jobs(seed: int, tmp_path: Path) -> None:
    rng = np.random.default_rng(seed)
    nodes = int(rng.integers(2, 5))
    job = nw.load_job(write_job(tmp_path / "job", nodes=nodes, events=int(rng.integers(3_000, 8_000)),
                                processes=1, cores=int(rng.integers(1, 4)), seed=seed), results=tmp_path / "r")
    path = critical_path(job, scheduler="sync")
    parts = [str(p) for p in job.parts["part"]]
    spans = {str(r.part): (int(r.start_ts), int(r.end_ts)) for r in job.parts.itertuples()}
    overview = overview_profile(parts, {}, spans)
    for k in range(3):
        opened = sorted(rng.choice(parts, size=int(rng.integers(0, nodes + 1)), replace=False).tolist()) if k else []
        view = job_view(overview, {p: job.load(p) for p in opened})
        for grouping in ("default", "thread"):
            shown = job_critical_shown(view, grouping, path, opened, nodes)
            assert_placed(shown, ref_placement(view, grouping, path, set(opened)))


def random_path(rng: np.random.Generator, own: dict[str, np.ndarray], parts: list[str], base: int) -> pd.DataFrame:
    """Segments in time order over random parts: events of the part (or ids it does not hold), gaps, no part."""
    n = int(rng.integers(1, 80))
    t = np.cumsum(rng.integers(0, 1_000, n + 1)) + base  # on the job's clock (the view's times are its)
    part = [str(rng.choice([*parts, "node-xx", ""])) if rng.random() < 0.3 else parts[0] for _ in range(n)]
    part = [p if k == 0 or rng.random() < 0.5 else part[k - 1] for k, p in enumerate(part)]
    event = [int(rng.choice(own[p])) if p in own and len(own[p]) and rng.random() < 0.8
             else int(rng.choice([-1, 10**9])) for p in part]
    return pd.DataFrame({"start_ts": t[:-1], "end_ts": t[1:], "duration_ns": np.diff(t),
                         "kind": ["compute"] * n, "instance_id": "i", "process_id": pd.array([1] * n, "Int64"),
                         "thread_id": pd.array([None] * n, "Int64"), "nc_idx": pd.array([0] * n, "Int64"),
                         "event_id": event, "name": "x", "step": np.arange(n) % 5,
                         "part": [p or None for p in part]})


def test_placement_matches_the_reference_on_random_paths(job: nw.Job) -> None:
    parts = [str(p) for p in job.parts["part"]]
    spans = {str(r.part): (int(r.start_ts), int(r.end_ts)) for r in job.parts.itertuples()}
    overview = overview_profile(parts, {}, spans)
    loaded = {p: job.load(p) for p in parts}
    own = {p: loaded[p].array("id") for p in parts}
    rng = np.random.default_rng(5)
    for _ in range(150):
        opened = sorted(rng.choice(parts, size=int(rng.integers(0, 4)), replace=False).tolist())
        view = job_view(overview, {p: loaded[p] for p in opened})
        path = random_path(rng, own, parts, min(s for s, _ in spans.values()) + int(rng.integers(0, 10**6)))
        shown = job_critical_shown(view, "default", path, opened, len(parts))
        if not (path["event_id"] >= 0).any():
            assert shown.text.startswith("no critical path to draw") and shown.rows.size == 0
            continue
        assert_placed(shown, ref_placement(view, "default", path, set(opened)))
