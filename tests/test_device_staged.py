"""A Parquet device profile read in two steps (the columns its events are drawn from, then the rest) gives what
reading it whole gives; a drill-down builds its events from the first step (readers/neuron/device_trace.py,
model/device/loading.py, DeviceEvents.adopt, DeviceTraceViewer)."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_device_widgets import execution_rows, wait_loaded
from test_widgets import Recorder

import neuron_widgets as nw
from neuron_widgets.model.device import colours, loading
from neuron_widgets.model.device.events import DRAWN_COLUMNS, DeviceEvents
from neuron_widgets.model.device.loading import device_trace_of
from neuron_widgets.model.device.trace import DeviceTrace
from neuron_widgets.readers.neuron.device_trace import load_device_trace_staged
from neuron_widgets.widgets import DeviceTraceViewer, Timeline

TABLES = ("instructions", "dma", "semaphores", "cc_ops", "flows", "summary", "execution_info", "active_time", "layers")


def same_trace(a: DeviceTrace, b: DeviceTrace) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    assert (a.source, a.format, a.metadata, a.alignment, a.offset_ns, a.residual_ns, a.notes) == \
        (b.source, b.format, b.metadata, b.alignment, b.offset_ns, b.residual_ns, b.notes)


def same_events(a: DeviceEvents, b: DeviceEvents) -> None:
    assert a.core.equals(b.core)
    for g in a.groupings:
        pd.testing.assert_frame_equal(a.tracks(g), b.tracks(g))


def staged(path: Path) -> tuple[DeviceTrace, DeviceTrace]:
    got = load_device_trace_staged(path)
    assert got is not None
    drawn, finish = got
    return drawn, finish()


def check(path: Path) -> None:
    drawn, whole = staged(path)
    same_trace(whole, nw.load_device_trace(path))
    for table, cols in DRAWN_COLUMNS.items():
        assert list(getattr(drawn, table).columns) == [c for c in getattr(whole, table).columns if c in cols]
    for table in set(TABLES) - set(DRAWN_COLUMNS):  # read whole in the first step already
        assert getattr(drawn, table) is getattr(whole, table) or getattr(whole, table).empty
    same_events(DeviceEvents(drawn), DeviceEvents(whole))


@pytest.fixture()
def device_dir(sample_dir: Path, tmp_path: Path) -> Path:
    src = next((sample_dir / "device_profiles").iterdir())
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def test_the_two_steps_give_the_whole_trace(sample_dir: Path) -> None:
    for d in sorted((sample_dir / "device_profiles").iterdir()):
        check(d)


def test_files_in_parts_coded_and_plain_and_columns_missing(device_dir: Path) -> None:
    rng = np.random.default_rng(0)
    for table in ("Instruction", "DmaPacket"):
        raw = pq.read_table(device_dir / f"{table}.parquet")
        (device_dir / f"{table}.parquet").unlink()
        cuts = np.sort(rng.choice(np.arange(1, raw.num_rows), size=2, replace=False))
        parts = [raw.slice(0, cuts[0]), raw.slice(cuts[0], cuts[1] - cuts[0]), raw.slice(cuts[1])]
        # A drawn column and another missing from the middle part; a column only the last part has.
        for name in ("opcode" if table == "Instruction" else "queue_name", "id"):
            parts[1] = parts[1].drop_columns([name])
        parts[2] = parts[2].append_column("extra", pa.array(np.arange(parts[2].num_rows)))
        for k, part in enumerate(parts):
            pq.write_table(part, device_dir / f"{table}_{k}.parquet", use_dictionary=k != 1)
    check(device_dir)


@pytest.mark.parametrize("drop", [("Instruction", "timeline_track"), ("Instruction", "engine"),
                                  ("DmaPacket", "queue_name"), ("DmaPacket", None), ("Instruction", "pcore_idx")])
def test_tables_without_some_drawn_columns(device_dir: Path, drop: tuple[str, str | None]) -> None:
    table, column = drop
    f = device_dir / f"{table}.parquet"
    if column is None:
        f.unlink()
    else:
        pq.write_table(pq.read_table(f).drop_columns([column]), f)
    check(device_dir)


def test_a_drill_down_reads_in_two_steps_and_keeps_the_whole_trace(sample_dir: Path) -> None:
    p, other = nw.load_profile(sample_dir), nw.load_profile(sample_dir)
    ev = p.core.to_pandas()
    for key in (int(ev.loc[ev["name"] == "nc_exec_running", "id"].iloc[0]),
                int(ev.loc[ev["name"] == "nc_exec_running", "id"].iloc[60]), "neuron_profile_001"):
        seen: list[DeviceTrace] = []
        got = device_trace_of(p, key, seen.append)
        assert len(seen) == 1
        first = seen[0]
        assert set(first.instructions.columns) <= set(DRAWN_COLUMNS["instructions"])
        # On the clock the whole trace is put on, with its notes.
        assert (first.alignment, first.offset_ns, first.residual_ns, first.notes) == \
            (got.alignment, got.offset_ns, got.residual_ns, got.notes)
        same_trace(got, other.device_trace(key))
        same_events(DeviceEvents(first), DeviceEvents(got))
        # Kept: the next call reads nothing.
        assert device_trace_of(p, key, seen.append) is got and len(seen) == 1


def test_the_viewer_draws_from_the_first_step_and_shows_the_whole_trace() -> None:
    profile = nw.sample_profile()
    tl = Timeline(profile)
    viewer = DeviceTraceViewer(tl)
    tl.selected_row = int(execution_rows(profile)[0])
    wait_loaded(viewer)
    trace = viewer.device_trace
    assert viewer.profile is DeviceEvents.of(trace) and viewer.profile.trace is trace
    assert "operands" in trace.instructions and "operands" not in DRAWN_COLUMNS["instructions"]
    same_events(viewer.profile, DeviceEvents(trace))
    assert viewer.color_choices == colours.choices(DeviceEvents(trace))
    ins = int(np.flatnonzero(viewer.profile._joined("table").chunk(0).indices.to_numpy() == 0)[0])
    assert "operands" in viewer.profile.event(row=ins)["args"]
    assert viewer.strip and viewer.hierarchy and viewer.error == ""


def test_kept_while_its_files_are_unchanged_read_again_when_written_again(sample_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "profile"
    shutil.copytree(sample_dir, copy)
    p = nw.load_profile(copy)
    ev = p.core.to_pandas()
    key = int(ev.loc[ev["name"] == "nc_exec_running", "id"].iloc[0])
    first = p.device_trace(key)
    name = Path(first.source).name
    by_name = p.device_trace(name)
    assert p.device_trace(key) is first and p.device_trace(name) is by_name
    f = copy / "device_profiles" / name / "Instruction.parquet"
    table = pq.read_table(f)
    before = f.stat()
    # Processed anew: fewer instructions, the modification time put back as it was.
    pq.write_table(table.slice(0, table.num_rows // 2), f)
    os.utime(f, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = p.device_trace(key)
    assert again is not first and len(again) == table.num_rows // 2
    assert (again.alignment, again.offset_ns) == (first.alignment, first.offset_ns)
    assert len(p.device_trace(name)) == table.num_rows // 2
    assert p.device_trace(key) is again
    # Staged (a drill-down's way) too.
    pq.write_table(table, f)
    seen: list[DeviceTrace] = []
    whole = device_trace_of(p, key, seen.append)
    assert len(seen) == 1 and len(whole) == table.num_rows
    same_trace(whole, first)


def test_drawn_events_wait_for_the_whole_trace(sample_dir: Path) -> None:
    path = next((sample_dir / "device_profiles").iterdir())
    for give in ("adopt", "release"):
        got = load_device_trace_staged(path)
        assert got is not None
        drawn, finish = got
        events = DeviceEvents.drawn(drawn)
        seen: list[DeviceTrace] = []
        reader = threading.Thread(target=lambda ev=events, out=seen: out.append(ev.trace))
        reader.start()
        reader.join(0.3)
        assert reader.is_alive() and not seen  # the rows' properties wait for the whole trace
        whole = finish()
        if give == "adopt":
            events.adopt(whole)
        else:
            events.release()
        reader.join(10)
        assert seen == [whole if give == "adopt" else drawn]
        assert (DeviceEvents.of(whole) is events) == (give == "adopt")


def staged_loads(monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> list[str]:
    """Each staged read's steps as they happen ("drawn", "rest"); `fail`: the rest's read fails."""
    steps: list[str] = []
    inner = loading._staged

    def staged(path: Path):  # type: ignore[no-untyped-def]
        got = inner(path)
        steps.append("drawn")

        def finish() -> DeviceTrace:
            steps.append("rest")
            if fail:
                raise nw.ProfileError(path, "Instruction could not be read (truncated)", "process it again")
            return got[1]()

        return got[0], finish

    monkeypatch.setattr(loading, "_staged", staged)
    return steps


def test_the_first_window_goes_out_before_the_rest_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    steps = staged_loads(monkeypatch)
    profile = nw.sample_profile()
    tl = Timeline(profile)
    viewer = DeviceTraceViewer(tl)
    rec = Recorder(viewer)
    viewer._timeline_width = 1600  # the followed timeline's browser asked at that width
    viewer.send = lambda content, buffers=None: (steps.append(str(content.get("uuid"))),  # type: ignore[method-assign]
                                                 rec.sent.append((content, buffers or [])))
    tl.selected_row = int(execution_rows(profile)[0])
    wait_loaded(viewer)
    assert steps[:3] == ["drawn", f"push:{int(steps[1][5:])}", "rest"]
    assert viewer.profile.trace is viewer.device_trace and "operands" in viewer.device_trace.instructions
    assert viewer.strip and viewer.hierarchy and viewer.error == "" and not viewer.loading


def test_a_failed_rest_is_said_and_leaves_nothing_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    staged_loads(monkeypatch, fail=True)
    profile = nw.sample_profile()
    tl = Timeline(profile)
    viewer = DeviceTraceViewer(tl)
    tl.selected_row = int(execution_rows(profile)[0])
    wait_loaded(viewer)
    assert "Could not load" in viewer.error and "truncated" in viewer.error and not viewer.loading
    done = threading.Event()
    threading.Thread(target=lambda: (viewer.profile.trace, done.set()), daemon=True).start()
    assert done.wait(10)  # the drawn events shown gave up waiting for the whole trace


def test_colours_other_than_the_opcode_wait_for_the_whole_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    steps = staged_loads(monkeypatch)
    profile = nw.sample_profile()
    tl = Timeline(profile)
    viewer = DeviceTraceViewer(tl, color_by="layer")
    tl.selected_row = int(execution_rows(profile)[0])
    wait_loaded(viewer)
    assert steps == ["drawn", "rest"] and viewer.color_by == "layer" and viewer._color is not None
    assert viewer.error == "" and viewer.strip
