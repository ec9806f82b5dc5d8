"""A large profile's first view: drawn from a preview while its grouping is built, then from every event."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_widgets import Recorder, columns

import neuron_widgets as nw
from neuron_widgets.model import grouping as model_grouping
from neuron_widgets.model import profile as model_profile
from neuron_widgets.model.problem_rows import error_rows, incomplete_rows
from neuron_widgets.widgets import Timeline, wire


@pytest.fixture()
def small_previews(monkeypatch: pytest.MonkeyPatch) -> None:
    """Previews for the 20k-event sample: one event in 10 and everything longer than 1/64 of it."""
    monkeypatch.setattr(model_profile, "PREVIEW_MIN_EVENTS", 1000)
    monkeypatch.setattr(model_profile, "PREVIEW_EVENTS", 2000)
    monkeypatch.setattr(model_profile, "PREVIEW_PX", 64)


def test_preview_samples_and_keeps_what_must_be_seen(sample_dir: Path, small_previews: None) -> None:
    p = nw.load_profile(sample_dir, prepare=False)
    pre = p.preview()
    assert pre is p.preview()  # built once
    rows = pre.source_rows
    assert rows is not None and (np.diff(rows) > 0).all() and len(pre) == rows.size
    assert 2000 <= len(pre) < len(p) // 3
    # The same events, in the same order, with the profile's name codes.
    assert (pre.array("id") == p.array("id")[rows]).all()
    assert (pre.name_codes() == p.name_codes()[rows]).all() and pre.name_dictionary() == p.name_dictionary()
    # Every error and unfinished event, every long event, one in ten of the rest.
    must = np.union1d(error_rows(p, scan_args=False), incomplete_rows(p))
    assert must.size and np.isin(must, rows).all()
    long_ = np.flatnonzero(p.array("end_ts") - p.array("start_ts") >= (p.end_ts - p.start_ts) // 64)
    assert np.isin(long_, rows).all()
    assert np.isin(np.arange(0, len(p), len(p) // 2000), rows).all()
    assert pre.tracks("default")["label"].isin(p.tracks("default")["label"]).all()


def test_timeline_draws_the_preview_then_every_event(sample_dir: Path, small_previews: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    p = nw.load_profile(sample_dir, prepare=False)
    gate = threading.Event()
    real_lod = model_profile.Profile.lod

    def held_lod(self: model_profile.Profile, grouping: str = "default"):  # type: ignore[no-untyped-def]
        if self is p:
            gate.wait(300)  # the whole profile's index is "still being built" until the test says so
        return real_lod(self, grouping)

    monkeypatch.setattr(model_profile.Profile, "lod", held_lod)
    tl = Timeline(p)
    rec = Recorder(tl)
    assert tl.status.startswith("preview: ") and tl.loading and not p.ready("default")
    pre = p.preview()
    assert [t["lanes"] for t in tl.tracks] == pre.tracks("default")["lanes"].tolist()
    meta, bufs = rec.ask(type="viewport", grouping="default", t0=0, t1=tl.span[1], width=800)
    got = columns(meta, bufs)
    rows = got["row"].astype(np.int64)
    # Rows on the wire are the profile's rows (hover, click and search work on the whole profile).
    assert np.isin(rows, pre.source_rows).all()
    exact = got["count"] == 1
    assert (got["start"][exact] == p.array("start_ts")[rows[exact]] - p.origin_ts).all()
    err = error_rows(p, scan_args=False)
    flagged = rows[(got["flags"] & wire.FLAG_ERROR) > 0]
    assert err.size and np.isin(err, flagged).all()
    # A click on a sampled event places it; an event the preview does not hold still has its details.
    inside, outside = int(pre.source_rows[5]), int(np.setdiff1d(np.arange(len(p)), pre.source_rows)[5])
    tl.selected_row = inside
    assert tl.selection_detail["track"] >= 0 and tl.selection_detail["row"] == inside
    tl.selected_row = outside
    assert tl.selection_detail["track"] == -1 and tl.selection_detail["id"] == str(p.array("id")[outside])

    revision = tl.revision
    gate.set()
    for _ in range(300):
        if not tl.loading:
            break
        time.sleep(0.05)
    assert not tl.loading and tl.status == "" and tl.revision > revision and p.ready("default")
    assert [t["lanes"] for t in tl.tracks] == p.tracks("default")["lanes"].tolist()
    assert tl.selection_detail["track"] >= 0  # the selection is placed again, on the whole profile
    meta, bufs = rec.ask(type="viewport", grouping="default", t0=0, t1=tl.span[1], width=800)
    got = columns(meta, bufs)
    drawn = (got["flags"] & wire.FLAG_MARKER) == 0  # markers come on top, again
    assert got["count"][drawn].sum() == len(p)  # every event, once


def test_a_small_or_prepared_profile_has_no_preview(sample: nw.Profile) -> None:
    sample.lod("default")
    tl = Timeline(sample)
    assert tl.status == "" and not tl.loading and tl._drawn is sample


def test_one_build_whatever_the_number_of_threads(sample_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = nw.load_profile(sample_dir, prepare=False)
    calls = []
    real = model_grouping.Combos.of

    def counted(table):  # type: ignore[no-untyped-def]
        calls.append(1)
        time.sleep(0.2)
        return real(table)

    monkeypatch.setattr(model_grouping.Combos, "of", staticmethod(counted))
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(p.track_index("thread"))) for _ in range(4)]
    for t in threads:
        t.start()
    # While it is built, the profile still answers what needs no grouping.
    assert p.event(row=3)["id"] == p.array("id")[3]
    for t in threads:
        t.join(30)
    assert len(calls) == 1 and len(got) == 4 and all(g is got[0] for g in got)


def test_a_failed_build_raises_in_every_waiting_thread(sample_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = nw.load_profile(sample_dir, prepare=False)

    def broken(table):  # type: ignore[no-untyped-def]
        time.sleep(0.1)
        raise MemoryError("no room for the combos")

    monkeypatch.setattr(model_grouping.Combos, "of", staticmethod(broken))
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            p.track_index("process")
        except MemoryError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(errors) == 3 and not p._building


def test_prepare_builds_the_preview_first_and_keeps_it(sample_dir: Path, small_previews: None) -> None:
    p = nw.load_profile(sample_dir, prepare=False)
    built: list[str] = []
    real = model_profile.Profile.lod

    def noted(self: model_profile.Profile, grouping: str = "default"):  # type: ignore[no-untyped-def]
        built.append("preview" if self is not p else "whole")
        return real(self, grouping)

    model_profile.Profile.lod = noted  # type: ignore[method-assign]
    try:
        p.prepare("default", background=False)
    finally:
        model_profile.Profile.lod = real  # type: ignore[method-assign]
    # Kept: a switch to a grouping not yet built draws it at once (tests/test_grouping_switch.py).
    assert built[:2] == ["preview", "whole"] and p.ready("default") and p._preview is not None
    assert p.preview() is p._preview


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread niceness is Linux's")
def test_background_preparation_yields_the_cores(sample: nw.Profile, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from neuron_widgets.model.background import NICE, background_priority

    seen: dict[str, int] = {}

    def probe() -> None:
        background_priority()
        seen["thread"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    t = threading.Thread(target=probe)
    t.start()
    t.join()
    assert seen["thread"] >= NICE
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) < NICE  # the caller keeps its own
    # A background preparation lowers its own thread; a foreground one (background=False) does not.
    calls: list[bool] = []
    monkeypatch.setattr(model_profile, "background_priority",
                        lambda: calls.append(threading.current_thread() is not threading.main_thread()))
    p = sample.filter(time_range=(sample.start_ts, sample.end_ts))
    p.prepare("default").join()
    p.prepare("default", background=False)
    assert calls == [True]
