"""align(before, after, step=k): two runs' Timelines show the same window from the chosen step's start (their clocks
differ), follow each other's views from Python and from the page without echo, re-align, unlink, and say which run
lacks a step and what steps it has. The step starts are checked against a slow reference on random profiles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from random_neuron import random_events, write_profile
from schedule_neuron import simulate
from test_compare_steps import _reference_steps
from test_findings import _clean_job

import neuron_widgets as nw
from neuron_widgets.widgets import Timeline, TimelineAlignment, align
from neuron_widgets.widgets.timeline_align import MARGIN

SHIFT = 7_000_000_123  # the after-run's clock starts 7 s later: offsets differ between runs


def _shifted(rows: list[dict[str, Any]], by: int) -> list[dict[str, Any]]:
    return [{**r, "start_ts": r["start_ts"] + by, "end_ts": None if r["end_ts"] is None else r["end_ts"] + by}
            for r in rows]


def _kth_starts(rows: list[dict[str, Any]]) -> dict[tuple[Any, int], tuple[int, int]]:
    """(NEFF, k) -> (start, duration) of each NEFF's k-th step in time order, from the slow reference."""
    count: dict[Any, int] = {}
    out = {}
    for neff, _step, start, dur in _reference_steps(rows):
        k = count.get(neff, 0)
        count[neff] = k + 1
        out[(neff, k)] = (start, dur)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ...]:
    tmp = tmp_path_factory.mktemp("align")
    job = _clean_job()
    job.compute[:, 2, :] = 160_000
    slow = simulate(job)
    fixed = _shifted(simulate(job, compute_scale={2: 100 / 160}), SHIFT)
    return slow, fixed, write_profile(tmp / "before", slow), write_profile(tmp / "after", fixed)


@pytest.fixture()
def pair(runs: tuple[Any, ...]) -> tuple[Timeline, Timeline, TimelineAlignment]:
    _, _, before, after = runs
    b, a = Timeline(before), Timeline(after)
    return b, a, align(b, a, step=3)


def _anchor(rows: list[dict[str, Any]], p: nw.Profile, neff: Any, k: int) -> float:
    return float(_kth_starts(rows)[(neff, k)][0] - p.origin_ts)


def test_both_show_the_steps_window_from_its_own_start(runs, pair) -> None:
    slow, fixed, before, after = runs
    b, a, al = pair
    sb, sa = _anchor(slow, before, al.neff, 3), _anchor(fixed, after, al.neff, 3)
    assert al.anchors() == (sb, sa)
    assert sa != sb  # the runs' clocks are apart: only the distance from the step matches
    d = max(_kth_starts(slow)[(al.neff, 3)][1], _kth_starts(fixed)[(al.neff, 3)][1])
    w = (-MARGIN * d, (1 + MARGIN) * d)
    assert b.view == [sb + w[0], sb + w[1]] and a.view == [sa + w[0], sa + w[1]]
    for tl, role in ((b, "before"), (a, "after")):
        st = tl.aligned
        assert st["group"] == al.group and st["role"] == role and st["step"] == 3
        i = st["steps"].index(3)
        assert st["starts"][i] == (sb if role == "before" else sa)
        assert st["partner_starts"][i] == (sa if role == "before" else sb)
        assert st["windows"][i] == list(w)


def test_a_view_set_in_one_moves_the_other_by_the_step_offset(runs, pair) -> None:
    before = runs[2]
    b, a, al = pair
    sb, sa = al.anchors()
    b.time_range = (before.origin_ts + int(sb) + 1_000, before.origin_ts + int(sb) + 51_000)
    assert a.view == [sa + (b.view[0] - sb), sa + (b.view[1] - sb)]
    a.view = [sa - 5_000.0, sa + 20_000.0]
    assert b.view == [sb - 5_000.0, sb + 20_000.0]
    assert a.view == [sa - 5_000.0, sa + 20_000.0]  # no echo moved the one that was set


def test_a_view_from_the_page_is_followed_and_not_echoed(pair) -> None:
    b, a, al = pair
    sb, sa = al.anchors()
    seen: list[list[float]] = []
    b.observe(lambda ch: seen.append(list(ch["new"])), names=["view"])
    # The page already moved the partner (its bus) to within rounding: the kernel leaves both alone.
    a.set_state({"view": [sa + 10_000.0, sa + 30_000.0]})
    assert b.view == [sb + 10_000.0, sb + 30_000.0] and len(seen) == 1
    b.set_state({"view": [sb + 10_000.25, sb + 30_000.0]})  # rounding's worth: no round trip back
    assert a.view == [sa + 10_000.0, sa + 30_000.0]


def test_realign_from_python_and_from_the_page(runs, pair) -> None:
    slow, fixed, before, after = runs
    b, a, al = pair
    al.step = 5
    sb, sa = _anchor(slow, before, al.neff, 5), _anchor(fixed, after, al.neff, 5)
    assert al.anchors() == (sb, sa) and b.aligned["step"] == a.aligned["step"] == 5
    assert b.view[0] - sb == a.view[0] - sa and b.view[1] - sb == a.view[1] - sa
    # The page's step picker writes the step into the trait: the kernel follows.
    b.set_state({"aligned": {**b.aligned, "step": 2}})
    assert al.step == 2 and a.aligned["step"] == 2
    sb, sa = al.anchors()
    assert b.view[0] - sb == a.view[0] - sa


def test_a_view_on_exactly_one_step_realigns_on_it(runs, pair) -> None:
    """The Summary's step bar sets its Timeline's range to that step: the pair aligns on it."""
    fixed = runs[1]
    b, a, al = pair
    start, dur = _kth_starts(fixed)[(al.neff, 6)]
    a.time_range = (start, start + dur)
    assert al.step == 6 and b.aligned["step"] == 6
    sb, sa = al.anchors()
    assert a.view == [sa, sa + dur] and b.view == [sb, sb + dur]
    # The comparison's starts are exact epoch ns: a window 256 ns off a step's start is followed, not re-aligned.
    start, dur = _kth_starts(fixed)[(al.neff, 2)]
    a.time_range = (start - 256, start - 256 + dur)
    assert al.step == 6 and b.view == [sb + (a.view[0] - sa), sb + (a.view[1] - sa)]
    a.time_range = (start, start + dur)
    assert al.step == 2 and b.view == [al.anchors()[0], al.anchors()[0] + dur]
    a.time_range = (start, start + dur + 500)  # not a step's width: followed, not re-aligned
    assert al.step == 2


def test_unlink_leaves_both_on_their_own(pair) -> None:
    b, a, al = pair
    al.unlink()
    assert not al.linked and b.aligned == {} and a.aligned == {}
    old = list(a.view)
    b.view = [b.view[0] + 1e6, b.view[1] + 1e6]
    assert a.view == old
    with pytest.raises(RuntimeError, match="unlinked"):
        al.step = 4  # nothing to re-align: align() again
    assert "unlinked" in repr(al)


def test_the_pages_unlink_ends_it_in_the_kernel(pair) -> None:
    b, a, al = pair
    a.set_state({"aligned": {}})
    assert not al.linked and b.aligned == {}
    old = list(a.view)
    b.view = [b.view[0] + 1e6, b.view[1] + 1e6]
    assert a.view == old


def test_a_new_alignment_replaces_the_old_one(runs) -> None:
    _, _, before, after = runs
    b, a = Timeline(before), Timeline(after)
    first = align(b, a, step=1)
    with pytest.raises(ValueError):
        align(b, a, step=10_000)
    assert first.linked and b.aligned["group"] == a.aligned["group"] == first.group  # a refused one changes nothing
    second = align(b, a, step=2)
    assert not first.linked and second.linked and b.aligned["group"] == a.aligned["group"] == second.group
    # Re-pairing one of them with a third timeline unlinks its old partner.
    c = Timeline(before)
    third = align(c, a, step=2)
    assert not second.linked and third.linked and b.aligned == {} and a.aligned["group"] == third.group


def test_a_missing_step_names_the_run_and_its_steps(runs, tmp_path: Path) -> None:
    slow, fixed, before, _ = runs
    last = max(json.loads(r["extra_attributes_json"]).get("exec_id", 0) for r in fixed if r["extra_attributes_json"])
    short = [r for r in fixed if not r["extra_attributes_json"]
             or json.loads(r["extra_attributes_json"]).get("exec_id", 0) < last - 3]
    after = write_profile(tmp_path / "short", short)
    b, a = Timeline(before), Timeline(after)
    neff = _reference_steps(slow)[0][0]  # the default: the NEFF of the before-run's first step
    n_before = len([k for (n, k) in _kth_starts(slow) if n == neff])
    n_after = len([k for (n, k) in _kth_starts(short) if n == neff])
    assert n_after < n_before
    with pytest.raises(ValueError) as e:
        align(b, a, step=n_after)
    said = str(e.value)
    assert f"step {n_after}" in said and "not in the after-run" in said and "before-run" not in said.split(":")[0]
    assert f"the after-run has steps 0 to {n_after - 1}" in said and f"the before-run has steps 0 to {n_before - 1}" in said
    with pytest.raises(ValueError, match="not in the before-run and the after-run"):
        align(b, a, step=n_before + 5)
    with pytest.raises(ValueError, match="count from 0"):
        align(b, a, step=-1)
    with pytest.raises(TypeError, match="whole number"):
        align(b, a, step=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no steps of NEFF 'nope'"):
        align(b, a, neff="nope")
    with pytest.raises(TypeError, match="two Timelines"):
        align(b, before)  # type: ignore[arg-type]
    assert b.aligned == {} and a.aligned == {}  # a refused alignment links nothing
    ok = align(b, a, step=n_after - 1)
    assert ok.linked


def test_runs_without_steps_say_so(tmp_path: Path) -> None:
    rows = [r for r in random_events(3) if r["name"] != "nc_exec_running"]
    p = write_profile(tmp_path / "none", rows)
    with pytest.raises(ValueError, match="neither run has steps"):
        align(Timeline(p), Timeline(p))


@pytest.mark.parametrize("seed", range(6))
def test_anchors_match_the_reference_on_random_profiles(seed: int, tmp_path: Path) -> None:
    rb, ra = random_events(seed), _shifted(random_events(seed + 500), 3_000_000_007 * (seed + 1))
    pb, pa = write_profile(tmp_path / "b", rb), write_profile(tmp_path / "a", ra)
    kb, ka = _kth_starts(rb), _kth_starts(ra)
    neffs = list(dict.fromkeys(n for n, _ in kb)) or list(dict.fromkeys(n for n, _ in ka))
    b, a = Timeline(pb), Timeline(pa)
    if not neffs:
        with pytest.raises(ValueError):
            align(b, a)
        return
    neff = neffs[0]
    both = sorted(k for (n, k) in kb if n == neff and (n, k) in ka)
    if not both:
        with pytest.raises(ValueError):
            align(b, a, step=0, neff=neff)
        return
    al = align(b, a, step=both[0], neff=neff)
    assert list(al.steps["ordinal"]) == both
    for k in both:
        al.step = k
        sb, sa = float(kb[(neff, k)][0] - pb.origin_ts), float(ka[(neff, k)][0] - pa.origin_ts)
        assert al.anchors() == (sb, sa)
        d = max(kb[(neff, k)][1], ka[(neff, k)][1], 1)
        assert b.view == [sb - MARGIN * d, sb + (1 + MARGIN) * d]
        assert a.view == [sa - MARGIN * d, sa + (1 + MARGIN) * d]
    missing = max(max((k for (n, k) in kb if n == neff), default=-1), max((k for (n, k) in ka if n == neff),
                                                                         default=-1)) + 1
    with pytest.raises(ValueError, match=f"step {missing} of "):
        al.step = missing
    assert np.isfinite(b.view).all() and np.isfinite(a.view).all()


def test_exporting_one_aligned_timeline_keeps_its_window(pair, tmp_path: Path) -> None:
    from neuron_widgets.export import export_html

    b, a, al = pair
    al.step = 4
    sb, sa = al.anchors()
    a.view = [sa + 2_000.0, sa + 60_000.0]
    export_html(tmp_path / "one.html", b)
    html = (tmp_path / "one.html").read_text()
    assert "nw-export" in html
    from neuron_widgets.export import _source_of

    st = _source_of(b).state
    assert st.view == (sb + 2_000.0, sb + 60_000.0)
    assert st.aligned == {}  # alone in its page: no partner to follow there


def test_the_summarys_step_bar_realigns_the_pair(runs) -> None:
    """Summary(after, compare=before): a click on a step's bar fits the after-timeline to that step, and the pair
    re-aligns on it (the bar's start is the comparison's, to the nanosecond: exact int64 epoch times)."""
    from bokeh.models import ColumnDataSource

    from neuron_widgets.widgets import Summary

    _, _, before, after = runs
    b, a = Timeline(before), Timeline(after)
    al = align(b, a, step=1)
    s = Summary(a, compare=before)
    assert s.done.wait(180), s.status.value
    src = s.charts.fix.chart.select_one({"type": ColumnDataSource, "name": "nw-fix-steps"})
    matched = s.charts.fix.result.steps
    matched = matched[matched["status"] == "matched"].reset_index(drop=True)
    i = next(i for i, r in matched.iterrows() if r["model_name"] == al.neff and r["ordinal"] == 4)
    src.selected.indices = [i]
    assert al.step == 4 and b.aligned["step"] == 4 and a.aligned["step"] == 4
    sb, sa = al.anchors()
    assert a.view[0] == sa and a.view[1] - a.view[0] == matched["duration_after_ns"][i]
    assert b.view == [sb + (a.view[0] - sa), sb + (a.view[1] - sa)]


def test_an_aligned_pair_exported_without_a_range_holds_each_run_whole(runs, pair, tmp_path: Path) -> None:
    """D7: export_html(path, tb, ta) (the README's call, no time_range) writes each run from its first event to past
    its last, so the page's step picker finds events at every step; a range given is still the range written."""
    from test_export import Export

    from neuron_widgets.export import export_html

    b, a, al = pair
    sb, _ = al.anchors()
    w0, w1 = al.window()
    assert (b.view[1] - b.view[0]) < 0.5 * (b.span[1] - b.span[0])  # the window shown is a small part of the run
    got = export_html(tmp_path / "pair.html", b, a)
    page = Export(tmp_path / "pair.html")
    for i, tl in enumerate((b, a)):
        p = tl.profile
        meta = page.json(f"t{i}:meta")
        assert meta["state"]["aligned"]["group"] == al.group
        assert meta["range"] == [float(p.start_ts - p.origin_ts), float(p.end_ts + 1 - p.origin_ts)]
        assert got["timelines"][i]["events"] == len(p)
        # Every step both runs have: this run's exported events reach into that step's window.
        items = page.items(i)
        start, end = items["start"][: items["dur"].size], items["start"][: items["dur"].size] + items["dur"]
        starts = al.steps["start_before" if i == 0 else "start_after"].to_numpy(float)
        for s in starts:
            lo, hi = s + w0, s + w1
            assert ((start < hi) & (end > lo)).any(), (i, s)
    # The window shown, as given: what is in it only (and still linked).
    origin = b.profile.origin_ts
    export_html(tmp_path / "window.html", b, a, time_range=(origin + int(sb + w0), origin + int(sb + w1)))
    assert Export(tmp_path / "window.html").json("t0:meta")["range"] == [float(int(sb + w0)), float(int(sb + w1))]
