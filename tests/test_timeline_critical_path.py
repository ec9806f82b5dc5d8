"""The Timeline's critical path toggle: its events become the highlight set, its jumps the arrows, in the export too."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from test_export import Export

import neuron_widgets as nw
from neuron_widgets.analysis import critical_path
from neuron_widgets.model.markers import FLAG_HIGHLIGHT
from neuron_widgets.widgets import Timeline


def wait_state(tl: Timeline, timeout: float = 60) -> str:
    """The toggle's state once the background computation has answered (never a guessed delay: polls it)."""
    end = time.monotonic() + timeout
    while tl.critical_info.get("state") == "computing" and time.monotonic() < end:
        time.sleep(0.02)
    return str(tl.critical_info.get("state", ""))


def rows_of(profile: nw.Profile, ids: np.ndarray) -> np.ndarray:
    where = {int(i): r for r, i in enumerate(profile.array("id"))}
    return np.array([where[int(i)] for i in ids], dtype=np.int64)


def test_the_toggle_outlines_the_paths_events_and_off_gives_back_the_users_highlight(sample: nw.Profile) -> None:
    tl = Timeline(sample)
    mine = sample.array("id")[:3]
    tl.highlight(mine)
    tl.critical_path = True
    assert wait_state(tl) == "shown"
    path = critical_path(sample)
    want = np.unique(rows_of(sample, path.loc[path["event_id"] >= 0, "event_id"].to_numpy()))
    assert want.size > 10
    np.testing.assert_array_equal(tl._marked["highlight"], want)
    # The viewport reply marks them, even where they would be merged into a run.
    meta, buffers = _viewport(tl)
    rows, flags = (np.frombuffer(b, dt) for b, dt in ((buffers[meta["columns"].index("row")], np.int32),
                                                       (buffers[meta["columns"].index("flags")], np.uint8)))
    assert set(rows[(flags & FLAG_HIGHLIGHT) > 0].tolist()) == set(want.tolist())
    tl.critical_path = False
    np.testing.assert_array_equal(tl._marked["highlight"], rows_of(sample, mine))
    assert tl.critical_info == {}
    tl.highlight(None)
    tl.critical_path = True
    assert wait_state(tl) == "shown"
    tl.critical_path = False
    assert tl._marked.get("highlight") is None or tl._marked["highlight"].size == 0


def _viewport(tl: Timeline) -> tuple[dict, list[bytes]]:
    sent: list = []
    tl.send = lambda content, buffers=None: sent.append((content, buffers or []))  # type: ignore[method-assign]
    tl._on_msg(tl, {"type": "viewport", "uuid": "u", "t0": tl.span[0], "t1": tl.span[1], "width": 200}, [])
    return sent[-1]


def test_jumps_join_consecutive_path_events_on_other_tracks_in_the_grouping_shown(sample: nw.Profile) -> None:
    tl = Timeline(sample)
    tl.critical_path = True
    assert wait_state(tl) == "shown"
    for grouping in ("default", "thread"):
        if grouping != tl.grouping:
            tl.grouping = grouping
            assert wait_state(tl) == "shown"
        path = critical_path(sample)
        ev = path[path["event_id"] >= 0]
        rows = rows_of(sample, ev["event_id"].to_numpy())
        idx = sample.track_index(grouping)
        origin = sample.origin_ts
        want = []
        for k in range(1, len(rows)):  # slowly, segment by segment: gaps are skipped, a jump crosses them
            ta, tb = int(idx.combo_track[idx.combo[rows[k - 1]]]), int(idx.combo_track[idx.combo[rows[k]]])
            la, lb = int(idx.lane[rows[k - 1]]), int(idx.lane[rows[k]])
            if (ta, la) != (tb, lb):
                want.append([int(ev["end_ts"].iloc[k - 1]) - origin, ta, la, int(ev["start_ts"].iloc[k]) - origin, tb, lb])
        got = np.array(tl.critical_info["jumps"], dtype=np.int64).reshape(-1, 6)
        assert len(want) > 0
        np.testing.assert_array_equal(got, np.array(want, dtype=np.int64))


def test_a_profile_without_a_path_says_so_and_the_toggle_goes_off(tmp_path: Path) -> None:
    f = tmp_path / "counters.json"
    f.write_text(json.dumps({"traceEvents": [{"ph": "C", "name": "mem", "pid": 1, "tid": 1, "ts": 1, "args": {"v": 1}},
                                             {"ph": "C", "name": "mem", "pid": 1, "tid": 1, "ts": 5, "args": {"v": 2}}]}))
    tl = Timeline(nw.load_profile(f))
    tl.critical_path = True
    assert wait_state(tl) == "none"
    assert tl.critical_path is False
    assert tl.critical_info["text"].startswith("no critical path to draw: ") and "no events" in tl.critical_info["text"]


@pytest.mark.parametrize("on", [True, False])
def test_the_export_carries_the_path_when_the_toggle_is_on(tmp_path: Path, sample: nw.Profile, on: bool) -> None:
    tl = Timeline(sample)
    if on:
        tl.critical_path = True
        assert wait_state(tl) == "shown"
    tl.to_html(tmp_path / "p.html", time_range="all")
    page = Export(tmp_path / "p.html")
    state = page.json("t0:meta")["state"]
    if not on:
        assert "critical" not in state
        return
    crit = state["critical"]
    assert crit["text"] == tl.critical_info["text"]
    jumps = np.array(crit["jumps"], dtype=np.int64).reshape(-1, 4)
    want = tl._critical.jump_rows
    assert len(jumps) == len(want) > 0
    # Times as the widget's (ns from the origin), rows as the page's exact events in the same order.
    origin = sample.origin_ts
    np.testing.assert_array_equal(jumps[:, 1], want[:, 1] - origin)
    np.testing.assert_array_equal(jumps[:, 3], want[:, 3] - origin)
    flags = page.array("t0:flags")
    n_exact = page.json("t0:meta")["n_exact"]
    assert int(((flags[:n_exact] & FLAG_HIGHLIGHT) > 0).sum()) == tl._marked["highlight"].size
    assert (flags[jumps[:, 0]] & FLAG_HIGHLIGHT).all() and (flags[jumps[:, 2]] & FLAG_HIGHLIGHT).all()


def test_a_device_trace_offers_no_toggle_in_the_notebook_nor_in_its_export(tmp_path: Path, sample: nw.Profile) -> None:
    """A device trace has no critical path: its viewer hides the button (which also kept the toolbar to one line)."""
    from neuron_widgets.export import export_html
    from neuron_widgets.widgets import DeviceTraceViewer

    assert Timeline(sample).critical_available
    dev = DeviceTraceViewer(sample.device_trace(sample.device_profiles.iloc[0, 0]))
    assert dev.critical_available is False
    export_html(tmp_path / "dev.html", dev)
    assert Export(tmp_path / "dev.html").json("t0:meta")["state"]["critical_available"] is False
    export_html(tmp_path / "tl.html", Timeline(sample))
    assert Export(tmp_path / "tl.html").json("t0:meta")["state"]["critical_available"] is True
