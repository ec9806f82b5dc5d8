"""JobTimeline: which parts are open is one state change (issue 35.14). The tracks, `opened`, the critical path's
placement and the brush's table are set before any of their observers runs, whichever thread opens or closes a
part (a click's handler, a cell, a thread of the user's), and reach the page in one message."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from generated_runs import sample_job

import neuron_widgets as nw
from neuron_widgets.widgets.job.timeline import JobTimeline, PartsShown

PARTS = ["node-00", "node-01", "node-02"]


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> nw.Job:
    return sample_job(tmp_path_factory.mktemp("jobpub"), nodes=3, events=6_000, processes=1, cores=2, seed=11)


def mismatch(opened: list[str], tracks: list[dict[str, Any]], critical: dict[str, Any] | None = None,
             brush: dict[str, Any] | None = None) -> str:
    """What does not match between the opened parts and the tracks (and the path's placement and the brush's table
    on them); '' when all agree. A folded part's track is `<part>`, an opened part's events are on `<part>/...`."""
    labels = [str(t["label"]) for t in tracks]
    inner = {lab.split("/", 1)[0] for lab in labels if "/" in lab}
    folded = {lab for lab in labels if "/" not in lab}
    if inner != set(opened) or folded & set(opened) or folded | set(opened) != set(PARTS):
        return f"opened={opened} but tracks of {sorted(inner)} and folded {sorted(folded)}"
    if critical and critical.get("state") == "shown":
        spans = critical.get("spans") or []
        on = {labels[int(spans[k + 2])] if int(spans[k + 2]) < len(labels) else f"#{int(spans[k + 2])}"
              for k in range(0, len(spans), 3)}
        if not on <= folded:
            return f"opened={opened}: the path's spans are drawn on {sorted(on)}, not on folded parts' tracks"
        jumps = critical.get("jumps") or []
        if any(int(jumps[k]) >= len(labels) for k in range(1, len(jumps), 3)):
            return f"opened={opened}: a jump of the path lands past the {len(labels)} tracks"
    if brush:
        keys = {row["key"] for row in brush.get("by_track", [])}
        if not keys <= set(labels):
            return f"opened={opened}: the brush's table names tracks not shown: {sorted(keys - set(labels))[:3]}"
    return ""


def wait_for(condition: Any, what: str, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, f"not {what} within {timeout} s"
        time.sleep(0.01)


def test_observers_reads_and_the_page_see_the_opened_parts_with_their_tracks(job: nw.Job) -> None:
    tl = JobTimeline(job)
    assert tl.summarised.wait(180), tl.status
    tl.critical_path = True
    wait_for(lambda: tl.critical_info.get("state") == "shown", "the path shown", 240)
    lo, hi = tl.profile.start_ts, tl.profile.end_ts
    brushed = (lo + (hi - lo) // 5, lo + (hi - lo) // 2)
    tl.brush_range = brushed
    assert tl.brush_summary["by_track"]

    # The observers: at every notification of any of the four, all four agree (and which thread told them).
    wrong: list[str] = []
    heard: list[tuple[str, str]] = []

    def observe(change: dict[str, Any]) -> None:
        heard.append((change["name"], threading.current_thread().name))
        bad = mismatch(tl.opened, tl.tracks, tl.critical_info, tl.brush_summary)
        if bad:
            wrong.append(f"observer of {change['name']}: {bad}")

    tl.observe(observe, names=["tracks", "opened", "critical_info", "brush_summary"])

    # The page: each message's state applied to what the page holds, then checked as the page would draw it.
    page = dict(tl.get_state())
    messages: list[set[str]] = []

    def sent(msg: dict[str, Any], buffers: Any = None) -> None:
        if msg.get("method") != "update":
            return
        page.update(msg["state"])
        messages.append(set(msg["state"]))
        bad = mismatch(page.get("opened", []), page["tracks"], page["critical_info"], page["brush_summary"])
        if bad:
            wrong.append(f"page after a message of {sorted(msg['state'])}: {bad}")
        if "tracks" in msg["state"] and page["critical_info"].get("state") != "shown":
            wrong.append(f"page: new tracks with the path {page['critical_info'].get('state')!r}, not placed on them")

    tl._send = sent  # type: ignore[method-assign]

    # A reader in a thread of its own: one read of all of it is always consistent.
    stop = threading.Event()
    reads = [0]

    def reader() -> None:
        while not stop.is_set():
            shown = tl.parts_shown()
            assert isinstance(shown, PartsShown)
            bad = mismatch(shown.opened, shown.tracks, shown.critical_info, shown.brush_summary)
            if bad:
                wrong.append(f"parts_shown(): {bad}")
            reads[0] += 1

    watcher = threading.Thread(target=reader)
    watcher.start()
    try:
        for cycle in range(4):
            for part in PARTS:
                if cycle % 2 == 0:  # a click on the part's track: the page's message is handled in a thread
                    src = np.asarray(tl.profile.column("instance_id").to_pylist())
                    row = int(np.flatnonzero(src == part)[0])
                    threading.Thread(target=setattr, args=(tl, "selected_row", row)).start()
                else:
                    threading.Thread(target=tl.open_part, args=(part,)).start()
                wait_for(lambda part=part: part in tl.parts_shown().opened, f"{part} opened")
                wait_for(lambda: not any(t.name == "neuron-widgets-job-open" for t in threading.enumerate()),
                         "the click's thread done")
            for part in PARTS if cycle % 2 == 0 else PARTS[::-1]:
                closer = threading.Thread(target=tl.close_part, args=(part,))
                closer.start()
                closer.join(120)
    finally:
        stop.set()
        watcher.join(60)
    assert not wrong, wrong[:5]
    assert tl.opened == [] and [t["label"] for t in tl.tracks] == PARTS
    # Everything was heard, from the threads that made the changes, and the page was told each change once:
    # the tracks, `opened` and the placement in the same message.
    assert {name for name, _ in heard} == {"tracks", "opened", "critical_info", "brush_summary"}
    assert any(thread == "neuron-widgets-job-open" for name, thread in heard if name == "opened")
    with_tracks = [m for m in messages if "tracks" in m]
    assert len(with_tracks) == 4 * 2 * len(PARTS)
    assert all({"opened", "critical_info", "brush_summary", "status"} <= m for m in with_tracks), with_tracks[:2]
    assert reads[0] > 10
    # The brush stayed where the user put it; its table is of the tracks shown.
    assert tl.brush_range == brushed and not mismatch(tl.opened, tl.tracks, brush=tl.brush_summary)


def test_observers_of_either_trait_run_once_after_both_are_set(job: nw.Job) -> None:
    """Each observer hears one change per trait per open or close (not the steps in between), with old and new
    values that are the states before and after."""
    tl = JobTimeline(job)
    assert tl.summarised.wait(180), tl.status
    seen: list[tuple[str, Any, Any, list[str], list[str]]] = []

    def observe(change: dict[str, Any]) -> None:
        seen.append((change["name"], change["old"], change["new"], list(tl.opened), [t["label"] for t in tl.tracks]))

    tl.observe(observe, names=["tracks", "opened"])
    before = [t["label"] for t in tl.tracks]
    tl.open_part("node-01")
    after = [t["label"] for t in tl.tracks]
    assert [s[0] for s in seen] == ["tracks", "opened"]
    assert [t["label"] for t in seen[0][1]] == before and [t["label"] for t in seen[0][2]] == after
    assert seen[1][1:3] == ([], ["node-01"])
    assert all(s[3] == ["node-01"] and s[4] == after for s in seen)  # both set when either observer runs
    seen.clear()
    tl.close_part("node-01")
    assert [s[0] for s in seen] == ["tracks", "opened"] and seen[1][1:3] == (["node-01"], [])
    assert all(s[3] == [] and s[4] == before for s in seen)
    assert "node-01 folded back" in tl.status
    with pytest.raises(Exception, match="read-only"):
        tl.opened = ["node-02"]  # type: ignore[misc]


def test_an_observer_that_fails_does_not_keep_the_others_from_hearing(job: nw.Job) -> None:
    tl = JobTimeline(job)
    assert tl.summarised.wait(180), tl.status
    heard: list[str] = []

    def failing(change: dict[str, Any]) -> None:
        raise RuntimeError("the user's observer fails")

    tl.observe(failing, names=["tracks"])
    tl.observe(lambda ch: heard.append(ch["name"]), names=["opened"])
    with pytest.raises(RuntimeError, match="the user's observer fails"):
        tl.open_part("node-02")
    assert heard == ["opened"] and tl.opened == ["node-02"]
    assert any(t["label"].startswith("node-02/") for t in tl.tracks)


def test_a_change_while_the_page_sets_state_is_still_one(job: nw.Job, tmp_path: Path) -> None:
    """The page's message (ipywidgets' set_state, the kernel's thread) holds the widget's notifications while it is
    applied: a part opened meanwhile by another thread still notifies its own observers, in its own thread, and goes
    out in its own one message."""
    tl = JobTimeline(job)
    assert tl.summarised.wait(180), tl.status
    messages: list[set[str]] = []
    tl._send = lambda msg, buffers=None: messages.append(set(msg.get("state", {})))  # type: ignore[method-assign]
    threads: list[str] = []
    tl.observe(lambda ch: threads.append(threading.current_thread().name), names=["opened"])
    opened = threading.Event()
    with tl.hold_trait_notifications():  # as set_state does around the page's values
        worker = threading.Thread(target=lambda: (tl.open_part("node-00"), opened.set()), name="opener")
        worker.start()
        assert opened.wait(120)
    worker.join()
    assert threads == ["opener"]
    assert [m for m in messages if "tracks" in m] and all("opened" in m for m in messages if "tracks" in m)
    assert not [m for m in messages if "opened" in m and "tracks" not in m]
