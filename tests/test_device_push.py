"""A drill-down's first window, sent with the new trace's tracks (widgets/device_push.py, DeviceTraceViewer)."""

from __future__ import annotations

import numpy as np
from test_device_widgets import execution_rows, wait_loaded
from test_widgets import Recorder

import neuron_widgets as nw
from neuron_widgets.widgets import DeviceTraceViewer, Timeline
from neuron_widgets.widgets.device_push import (
    CHROME_H,
    GROUP_H,
    LANE_H,
    PUSHED,
    RESOLUTION,
    TRACK_PAD,
    first_window,
    tracks_on_screen,
)


def layout_reference(tracks: list[dict], height: int) -> int:
    """The browser's rows written out one by one: a header row per group the first time its path shows,
    a row per track; the tracks asked are those whose row starts within 1.5 scroll heights."""
    rows: list[tuple[str, int]] = []
    opened: list[str] = []
    for i, t in enumerate(tracks):
        path = t["label"].split("/")[:-1]
        for d in range(len(path)):
            group = "/".join(path[:d + 1])
            if group not in opened:
                opened.append(group)
                rows.append(("group", GROUP_H))
        rows.append((f"track{i}", t["lanes"] * LANE_H + TRACK_PAD))
    limit, y, asked = 1.5 * (height - CHROME_H), 0, 0
    for kind, h in rows:
        if y >= limit:
            break
        asked += kind.startswith("track")
        y += h
    return asked


def test_tracks_on_screen_counts_group_headers_and_lanes() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(0, 40))
        groups = ["Engines", "DMA", "Core 1/Engines", "Core 1/DMA", "Semaphores"]
        tracks = sorted(({"label": f"{groups[int(rng.integers(0, 5))]}/t{i}", "lanes": int(rng.integers(1, 4))}
                         for i in range(n)), key=lambda t: groups.index(t["label"].rsplit("/", 1)[0]))
        height = int(rng.integers(150, 1200))
        assert tracks_on_screen(tracks, height) == layout_reference(tracks, height)


def test_first_window_is_the_request_the_browser_makes_at_a_coarser_width() -> None:
    tracks = [{"label": "Engines/Tensor", "lanes": 1}, {"label": "DMA/q0", "lanes": 2}]
    assert first_window([10.0, 30.0], tracks, 400, "engines", None) is None  # the browser never asked
    assert first_window([10.0, 30.0], [], 400, "engines", 1000) is None
    got = first_window([10.0, 30.0], tracks, 400, "engines", 1000)
    assert got == {"type": "viewport", "grouping": "engines", "t0": 0.0, "t1": 40.0, "width": int(1000 * RESOLUTION),
                   "tracks": [0, 1]}


def browser_asks(widget: Timeline, **content: object) -> None:
    """A request as the comm delivers it: to every handler the widget's on_msg registered."""
    widget._handle_custom_msg({"uuid": "u", **content}, [])


def drilled(viewer_asks: bool) -> tuple[Timeline, DeviceTraceViewer, Recorder, Recorder]:
    profile = nw.sample_profile()
    tl = Timeline(profile)
    timeline_rec = Recorder(tl)
    viewer = DeviceTraceViewer(tl)
    rec = Recorder(viewer)
    browser_asks(tl, type="viewport", grouping=tl.grouping, t0=0, t1=tl.span[1], width=1600,
                 tracks=list(range(len(tl.tracks))))
    if viewer_asks:  # the empty viewer's own request: its width is the one used
        browser_asks(viewer, type="viewport", grouping="engines", t0=0, t1=1, width=1200, tracks=[])
    # The state messages in the same list as the replies, to see which goes first.
    send_state = viewer.send_state
    viewer.send_state = lambda key=None: (rec.sent.append(({"state": sorted(key or [])}, [])),  # type: ignore[method-assign]
                                          send_state(key))
    tl.selected_row = int(execution_rows(profile)[0])
    wait_loaded(viewer)
    return tl, viewer, rec, timeline_rec


def test_a_drill_down_sends_its_first_window_with_the_tracks() -> None:
    for viewer_asks, width in ((False, 1600), (True, 1200)):
        _tl, viewer, rec, _ = drilled(viewer_asks)
        pushed = [(m, b) for m, b in rec.sent if str(m.get("uuid", "")).startswith(PUSHED)]
        assert len(pushed) == 1
        # Sent just before the state that shows its trace (the browser keeps it until that state arrives).
        at = next(i for i, (m, _) in enumerate(rec.sent) if m is pushed[0][0])
        assert "generation" in rec.sent[at + 1][0].get("state", [])
        assert not any("generation" in m.get("state", []) for m, _ in rec.sent[:at])
        meta, buffers = pushed[0]
        k = int(meta["uuid"][len(PUSHED):])
        assert k == tracks_on_screen(viewer.tracks, viewer.height) > 0
        assert meta["generation"] == viewer.generation and meta["width"] == int(width * RESOLUTION)
        # What the browser gets for asking the same window itself, as Timeline._viewport answers it (the hierarchy
        # has come since: replies carry each instruction's node too, under a new revision the browser asks again
        # for; asked here without it, as when the window was pushed).
        assert meta["revision"] < viewer.revision
        t0, t1 = viewer.view
        w = t1 - t0
        viewer._node = None
        asked, asked_buffers = rec.ask(type="viewport", grouping="engines", t0=t0 - w / 2, t1=t1 + w / 2,
                                       width=int(width * RESOLUTION), tracks=list(range(k)))
        same = {"uuid", "revision"}
        assert {a: b for a, b in meta.items() if a not in same} == {a: b for a, b in asked.items() if a not in same}
        assert meta["n"] > 0 and buffers == asked_buffers
        # The pushed window counts as answered: the strip and the hierarchy came without a request.
        assert viewer.strip and viewer.hierarchy and not viewer.loading


def test_no_window_is_pushed_before_the_browser_ever_asked() -> None:
    profile = nw.sample_profile()
    tl = Timeline(profile)
    viewer = DeviceTraceViewer(tl)
    rec = Recorder(viewer)
    tl.selected_row = int(execution_rows(profile)[0])
    wait_loaded(viewer)
    assert not [m for m, _ in rec.sent if str(m.get("uuid", "")).startswith(PUSHED)]
    viewer.unfollow()
    # Unfollowed: the timeline's requests no longer reach the viewer.
    Recorder(tl)
    browser_asks(tl, type="viewport", grouping=tl.grouping, t0=0, t1=tl.span[1], width=900, tracks=[0])
    assert viewer._timeline_width is None


def test_the_rest_of_a_drill_down_is_read_once_its_first_window_is_drawn(monkeypatch) -> None:
    # The rest of the device tables was read while the browser decoded and drew the first window, and the two
    # shared the cores. Now the browser says when it drew that trace (a PaintedNotice of its generation); the
    # wait is bounded (PAINT_WAIT_S, made long here: the notice, not the bound, lets the load go on).
    import time

    from neuron_widgets.widgets import device_viewer

    monkeypatch.setattr(device_viewer, "PAINT_WAIT_S", 60.0)
    profile = nw.sample_profile()
    tl = Timeline(profile)
    viewer = DeviceTraceViewer(tl)
    rec = Recorder(viewer)
    browser_asks(tl, type="viewport", grouping=tl.grouping, t0=0, t1=tl.span[1], width=1600,
                 tracks=list(range(len(tl.tracks))))
    tl.selected_row = int(execution_rows(profile)[0])
    deadline = time.monotonic() + 30
    while not [m for m, _ in rec.sent if str(m.get("uuid", "")).startswith(PUSHED)] and time.monotonic() < deadline:
        time.sleep(0.01)
    shown = viewer.profile
    assert viewer.loading and not shown._whole.is_set()  # drawn columns only: the rest waits for the paint
    browser_asks(viewer, type="painted", generation=viewer.generation - 1)  # another trace's: not this one's
    assert not viewer._paint_seen.is_set()
    started = time.monotonic()
    browser_asks(viewer, type="painted", generation=viewer.generation)
    wait_loaded(viewer)
    assert time.monotonic() - started < 30 and shown._whole.is_set()  # the whole trace adopted, after the notice
    assert viewer.strip and viewer.hierarchy and not viewer.error
