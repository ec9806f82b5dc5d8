"""A switch to a grouping not yet built: the preview in that grouping's tracks at once, the whole profile's index
built in a thread, then swapped in; a newer switch, a switch back or a close meanwhile; the preview's placing of
events against the whole profile's index on random profiles."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from random_neuron import BASE, write_profile
from test_widgets import Recorder, columns

import neuron_widgets as nw
from neuron_widgets.model import profile as model_profile
from neuron_widgets.model.preview_grouping import preview_in
from neuron_widgets.widgets import Timeline, timeline_switch, wire


@pytest.fixture()
def small_previews(monkeypatch: pytest.MonkeyPatch) -> None:
    """Previews for profiles of thousands of events: one event in 12 and everything longer than 1/64 of it."""
    monkeypatch.setattr(model_profile, "PREVIEW_MIN_EVENTS", 1000)
    monkeypatch.setattr(model_profile, "PREVIEW_EVENTS", 500)
    monkeypatch.setattr(model_profile, "PREVIEW_PX", 64)
    monkeypatch.setattr(timeline_switch, "FIRST_REPLY_WAIT_S", 0.05)


def random_rows(seed: int) -> list[dict[str, Any]]:
    """Events on 3 instances x 2 processes x up to 9 threads; some threads hold only a few short events (a
    preview may miss them), some events are long, nested or never end."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for inst in range(3):
        for pid in (100 + inst, 200 + inst):
            for tid in range(int(rng.integers(2, 10))):
                n = int(rng.choice([2, 3, 400, 900]))
                start = np.sort(rng.integers(0, 10_000_000, n))
                dur = np.where(rng.random(n) < 0.02, rng.integers(200_000, 3_000_000, n), rng.integers(0, 20_000, n))
                for s, d in zip(start.tolist(), dur.tolist(), strict=True):
                    unended = rng.random() < 0.002
                    source = "neuron_rt" if tid % 2 else "framework"
                    rows.append({"id": len(rows) + 1, "name": f"op{int(rng.integers(0, 7))}", "start_ts": BASE + s,
                                 "end_ts": None if unended else BASE + s + d, "duration_ns": None if unended else d,
                                 "trace_event_source": source, "instance_id": f"i-{inst}", "process_id": pid,
                                 "thread_id": 1000 + tid, "nc_idx": tid % 4 if source == "neuron_rt" else None,
                                 "pcore_idx": None, "worker_gid": None, "flow_id": None,
                                 "extra_attributes_json": None})
    return rows


def prepared(seed: int, tmp_path: Path) -> nw.Profile:
    """A profile as load_profile leaves it: its preview made and kept, its default grouping built."""
    p = write_profile(tmp_path / f"p{seed}", random_rows(seed))
    p.prepare("default", background=False)
    assert p.ready("default") and p._preview is not None
    return p


class HeldBuilds:
    """One profile's level-of-detail builds held until the test lets each go (a 10M-event build takes that long)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, profile: nw.Profile) -> None:
        self.asked: list[str] = []
        self.gate = threading.Event()
        self.fail: str | None = None
        real = model_profile.Profile.lod

        def held(this: model_profile.Profile, grouping: str = "default") -> Any:
            if this is profile and not this.ready(grouping):
                self.asked.append(grouping)
                self.gate.wait(300)
                if self.fail == grouping:
                    raise MemoryError("no room for the index")
            return real(this, grouping)

        monkeypatch.setattr(model_profile.Profile, "lod", held)


def wait_for(cond: Callable[[], bool], timeout: float = 60) -> None:
    """Until `cond()` holds (the state a thread is to reach), failing after `timeout` seconds."""
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "state not reached"
        time.sleep(0.01)


def ask(rec: Recorder, tl: Timeline, grouping: str, tracks: list[int] | None = None) -> tuple[dict[str, Any], list[bytes]]:
    return rec.ask(type="viewport", grouping=grouping, t0=tl.view[0], t1=tl.view[1], width=900, tracks=tracks)


def full_reply(p: nw.Profile, tl: Timeline, grouping: str, tracks: list[int] | None = None) -> tuple[dict[str, Any], list[bytes]]:
    """What a view drawn from every event answers, computed here directly."""
    return wire.viewport_reply(p, grouping, tl.view[0], tl.view[1], 900, tracks, tl._marked, None, None, None)


@pytest.mark.parametrize("seed", range(4))
def test_the_preview_places_events_as_the_whole_profile_does(seed: int, tmp_path: Path, small_previews: None) -> None:
    p = prepared(seed, tmp_path)
    pre = p.preview()
    rows = pre.source_rows
    assert rows is not None
    for grouping in nw.GROUPINGS:
        pg = preview_in(p, grouping)
        assert pg.preview is pre and preview_in(p, grouping).preview is pre  # one sample, kept
        full = p.track_index(grouping)
        idx = pre.track_index(grouping)
        labels, all_labels = idx.tracks["label"].tolist(), full.tracks["label"].tolist()
        assert idx.tracks["events"].sum() == len(pre)
        if grouping == "default":
            # Built while the profile loaded (before its combos were read): the sample's own tracks, in the
            # whole profile's order; an event the sample lacks has no place.
            assert pg.codes is None and labels == [x for x in all_labels if x in set(labels)]
            assert (np.asarray(labels)[idx.combo_track[idx.combo]] ==
                    np.asarray(all_labels)[full.combo_track[full.combo][rows]]).all()
            missing = np.setdiff1d(np.arange(len(p)), rows)[:50].tolist()
            assert all(pg.place(r) == (-1, -1) for r in missing)
            continue
        # The whole profile's tracks, in its order; lanes and counts are the sample's.
        assert labels == all_labels
        assert (idx.combo_track[idx.combo] == full.combo_track[full.combo][rows]).all()
        # Lanes: plain greedy over the sample's events of each track, in time order.
        start, end = pre.array("start_ts"), pre.array("end_ts")
        track = idx.combo_track[idx.combo]
        for t in np.unique(track):
            free: list[int] = []
            for i in np.flatnonzero(track == t):
                s, e = int(start[i]), max(int(end[i]), int(start[i]) + 1)
                k = next((j for j, f in enumerate(free) if f <= s), len(free))
                free[k:k + 1] = [e]
                assert idx.lane[i] == k
        # Every row of the profile has its track; a lane only if the sample holds it.
        for row in np.random.default_rng(seed).integers(0, len(p), 300).tolist():
            at = int(np.searchsorted(rows, row))
            held = at < rows.size and rows[at] == row
            assert pg.place(row) == (int(full.combo_track[full.combo[row]]), int(idx.lane[at]) if held else -1)


def test_a_profile_still_loading_has_the_previews_own_tracks(tmp_path: Path, small_previews: None) -> None:
    p = write_profile(tmp_path / "p", random_rows(1))
    pg = preview_in(p, "thread")  # no grouping built yet: the combos of every event are not read for it
    assert p._combos is None and pg.codes is None
    assert pg.preview.tracks("thread")["label"].isin(p.tracks("thread")["label"]).all()
    missing = int(np.setdiff1d(np.arange(len(p)), p.preview().source_rows)[0])
    assert pg.place(missing) == (-1, -1)


def test_switch_shows_the_preview_at_once_then_every_event(tmp_path: Path, small_previews: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    p = prepared(2, tmp_path)
    held = HeldBuilds(monkeypatch, p)
    tl = Timeline(p)
    tl._arg_scan.join(60)  # its late revision bump would be counted as the swap's
    rec = Recorder(tl)
    assert tl.status == "" and not tl.loading
    outside = int(np.setdiff1d(np.arange(len(p)), p.preview().source_rows)[7])
    tl.selected_row = outside
    tl.brush = [tl.span[1] * 0.2, tl.span[1] * 0.6]
    revision = tl.revision

    tl.grouping = "thread"
    # At once: the preview, in the thread grouping's tracks (every one of them), said to be one.
    assert tl.status.startswith("preview: ") and tl.loading and not p.ready("thread")
    labels = [t["label"] for t in tl.tracks]
    assert labels == p.tracks("thread")["label"].tolist()
    assert sum(t["lanes"] for t in tl.tracks) < p.tracks("thread")["lanes"].sum()
    track_of = p.track_index("thread")
    want = int(track_of.combo_track[track_of.combo[outside]])
    assert tl.selection_detail["row"] == outside and tl.selection_detail["track"] == want
    assert tl.selection_detail["lane"] == -1  # the sample lacks it: no outline on a wrong lane
    meta, bufs = ask(rec, tl, "thread")
    got = columns(meta, bufs)
    rows = got["row"].astype(np.int64)
    assert meta["grouping"] == "thread" and np.isin(rows, p.preview().source_rows).all()
    # Each item on its track of the whole profile: the browser's track numbers hold after the swap.
    exact = got["count"] == 1
    assert (got["track"][exact] == track_of.combo_track[track_of.combo[rows[exact]]]).all()
    wait_for(lambda: held.asked == ["thread"])  # the build started after that first reply
    # Meanwhile the whole profile answers: hover, search, the Python API, a click's details.
    assert rec.ask(type="hover", row=outside)[0]["row"] == outside
    found = rec.ask(type="find", codes=[int(p.name_codes()[outside])], after=-1.0, direction=1, tracks=[want])[0]
    assert found["total"] == int((p.name_codes() == p.name_codes()[outside]).sum())
    assert len(tl.selected_events()) > 0 and set(tl.selected_events()["track"]) <= set(labels)
    assert tl.revision == revision

    held.gate.set()
    assert tl._switch.idle(60)
    assert tl.status == "" and not tl.loading and tl.revision == revision + 1 and p.ready("thread")
    assert [(t["label"], t["lanes"], t["events"]) for t in tl.tracks] == list(
        zip(*(p.tracks("thread")[c].tolist() for c in ("label", "lanes", "events")), strict=True))
    assert tl.selection_detail["lane"] == int(track_of.lane[outside]) and tl.selection_detail["track"] == want
    assert tl.selected_row == outside and tl.brush == [tl.span[1] * 0.2, tl.span[1] * 0.6]
    assert {r["key"] for r in tl.brush_summary["by_track"]} <= set(labels)  # the brush's table, per thread
    # After the swap the replies are the whole profile's, byte for byte.
    for tracks in (None, [0, 2, 3]):
        meta, bufs = ask(rec, tl, "thread", tracks)
        ref_meta, ref_bufs = full_reply(p, tl, "thread", tracks)
        assert meta["revision"] == tl.revision and meta["n"] == ref_meta["n"] and meta["columns"] == ref_meta["columns"]
        assert [bytes(b) for b in bufs] == [bytes(b) for b in ref_bufs]
    drawn = (columns(*ask(rec, tl, "thread"))["flags"] & wire.FLAG_MARKER) == 0
    assert columns(*ask(rec, tl, "thread"))["count"][drawn].sum() == len(p)  # every event, once
    # Back to a grouping that is built: no preview, no build.
    tl.grouping = "default"
    assert tl._drawn is p and tl.status == "" and held.asked == ["thread"]


def test_a_newer_switch_supersedes_the_build_under_way(tmp_path: Path, small_previews: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    p = prepared(3, tmp_path)
    held = HeldBuilds(monkeypatch, p)
    tl = Timeline(p)
    tl._arg_scan.join(60)
    rec = Recorder(tl)
    swapped: list[str] = []
    tl.observe(lambda ch: swapped.append(tl.grouping), names=["revision"])
    tl.grouping = "thread"
    wait_for(lambda: held.asked == ["thread"])  # its build under way (held)
    t0 = time.perf_counter()
    tl.grouping = "process"  # answered from the process grouping's preview, not after thread's build
    assert time.perf_counter() - t0 < 30 and tl.status.startswith("preview: ")
    assert [t["label"] for t in tl.tracks] == p.tracks("process")["label"].tolist()
    # A request sent before the switch, for the old grouping: answered from its preview, no build in this thread.
    done = threading.Event()
    threading.Thread(target=lambda: (ask(rec, tl, "thread"), done.set()), daemon=True).start()
    assert done.wait(30) and rec.sent[-1][0]["grouping"] == "thread"
    held.gate.set()
    assert tl._switch.idle(60)
    # thread's build ended and was kept, but not swapped in; process's was built next, then shown.
    assert held.asked == ["thread", "process"] and p.ready("thread") and p.ready("process")
    assert swapped == ["process"] and tl.grouping == "process" and tl.status == "" and not tl.loading
    assert [t["lanes"] for t in tl.tracks] == p.tracks("process")["lanes"].tolist()
    bufs = ask(rec, tl, "process")[1]
    assert [bytes(b) for b in bufs] == [bytes(b) for b in full_reply(p, tl, "process")[1]]


def test_a_switch_back_to_a_built_grouping_cancels_the_build(tmp_path: Path, small_previews: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    p = prepared(0, tmp_path)
    held = HeldBuilds(monkeypatch, p)
    tl = Timeline(p)
    tl._arg_scan.join(60)
    revision = tl.revision
    tl.grouping = "neuron_core"
    wait_for(lambda: held.asked == ["neuron_core"])
    tl.grouping = "default"
    assert tl._drawn is p and tl.status == "" and not tl.loading
    held.gate.set()
    assert tl._switch.idle(60)
    assert tl.grouping == "default" and tl.revision == revision and tl._drawn is p
    tl.grouping = "neuron_core"  # built meanwhile: drawn from every event at once
    assert tl._drawn is p and tl.status == "" and held.asked == ["neuron_core"]


def test_closing_the_widget_stops_the_build_and_swaps_nothing(tmp_path: Path, small_previews: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    p = prepared(1, tmp_path)
    held = HeldBuilds(monkeypatch, p)
    tl = Timeline(p)
    tl._arg_scan.join(60)
    tl.grouping = "instance"
    wait_for(lambda: held.asked == ["instance"])
    revision = tl.revision
    tl.close()
    held.gate.set()
    assert tl._switch.idle(60)
    assert tl.revision == revision and tl._drawn is p.preview()


def test_a_failed_build_keeps_the_preview_and_says_why(tmp_path: Path, small_previews: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    p = prepared(2, tmp_path)
    held = HeldBuilds(monkeypatch, p)
    held.fail = "cpu_device"
    tl = Timeline(p)
    rec = Recorder(tl)
    tl.grouping = "cpu_device"
    held.gate.set()
    assert tl._switch.idle(60)
    assert "could not prepare the full view: MemoryError" in tl.error and not tl.loading
    assert tl.status.startswith("preview: ") and tl._drawn is p.preview()
    assert ask(rec, tl, "cpu_device")[0]["type"] == "viewport"  # the preview still answers
    held.fail = None
    tl.grouping = "default"
    tl.grouping = "cpu_device"  # tried again, and built
    assert tl._switch.idle(60) and tl._drawn is p and tl.error == "" and tl.status == ""
