"""Plain traces (Chrome, Fuchsia, browsers): busy time per process and thread, time per event name.

A thread is (instance, process, thread, stream): async slices keep rows of their own. An event's
self time is its duration less the time its children (the events it encloses on its thread,
clipped to its end) take.
"""

from __future__ import annotations

import numba
import numpy as np
import pandas as pd

from ..model.profile import Profile
from .frame import frame_of, notes_of
from .intervals import first_last, union

THREAD_KEYS = ("instance_id", "process_id", "thread_id", "framework_stream_id")


def _threads(profile: Profile) -> tuple[np.ndarray, pd.DataFrame]:
    """A thread code per event and one row of keys per thread (built once per profile: three analyses ask)."""
    fr = frame_of(profile)

    def build() -> tuple[np.ndarray, pd.DataFrame]:
        cols = tuple(c for c in THREAD_KEYS if c in profile.column_names)
        code = np.asarray(fr.combo_codes(cols), np.int64) if len(profile) else np.zeros(0, np.int64)
        n = int(code.max()) + 1 if code.size else 0
        first = np.full(n, -1, np.int64)
        first[code[::-1]] = np.arange(code.size)[::-1]  # each thread's first event
        keys = pd.DataFrame({c: profile.values_at(c, first).to_pylist() for c in cols}) if n else \
            pd.DataFrame(columns=list(cols))
        names = profile.metadata.get("thread_names") or {}
        if names and {"process_id", "thread_id"} <= set(keys.columns):
            # The trace's own thread names (its M events), as its tracks show them.
            keys["thread_name"] = [names.get(f"{p}/{t}") for p, t in zip(keys["process_id"], keys["thread_id"],
                                                                           strict=True)]
        keys["track"], keys["thread"] = _tracks(profile, first) if n else ([], [])
        return code, keys

    code, keys = fr._cached("threads", build)
    return code, keys.copy()


def _tracks(profile: Profile, first: np.ndarray) -> tuple[list[str], list[bool]]:
    """Each thread's track as the Timeline labels it (Default grouping, the one labelling code), and whether it is
    a thread at all: Kineto's profiler-wide rows ("Spans: PyTorch Profiler", "Traces") have text ids, not a pid."""
    combo, combo_track, labels = profile.grouping_keys("default")
    names = profile.track_names
    track = [labels[combo_track[combo[r]]] for r in first]
    inst = profile.values_at("instance_id", first).to_pylist() if "instance_id" in profile.column_names else [None] * len(first)
    pid = profile.values_at("process_id", first).to_pylist() if "process_id" in profile.column_names else [None] * len(first)
    real = [(str(i), p) not in names.text_pids for i, p in zip(inst, pid, strict=True)]
    return track, real


def thread_breakdown(profile: Profile, window: tuple[int, int] | None = None) -> pd.DataFrame:
    """One row per thread as the Timeline shows it (a track: async slices of one category emitted on several
    threads are one), busiest first: `events`, `span_ns` (first start to last end), `busy_time_ns` (time
    covered by any of its events), `idle_time_ns`, and both as `*_pctg` of the span; `track` is its label on the
    Timeline (Default grouping) and `thread` False for a profiler-wide row that is no thread (Kineto's
    "PyTorch Profiler" span). `window` (absolute ns): times within it only, events clipped to its edges (a
    brushed range: what lies outside the brush is not the range's)."""
    fr = frame_of(profile)
    start, end = fr.start, fr.end
    if window is not None:
        start, end = np.clip(start, window[0], window[1]), np.clip(end, window[0], window[1])
    code, keys = _threads(profile)
    # One row per Timeline track: a browser's async slices of one category are one track of their process
    # whichever threads emitted them, so one row here too (issue 35.4); the keys are its first thread's.
    track_of = pd.factorize(keys["track"])[0] if len(keys) else np.zeros(0, np.int64)
    code, keys = track_of[code], keys.iloc[np.unique(track_of, return_index=True)[1]].reset_index(drop=True)
    n = len(keys)
    spans = end > start
    g = code[spans]
    busy = union(g, start[spans], end[spans]).length(n)
    lo, hi = first_last(code, start, end, n)
    df = keys.copy()
    df["events"] = np.bincount(code, minlength=n)
    df["span_ns"] = hi - lo
    df["busy_time_ns"] = busy
    df["idle_time_ns"] = df["span_ns"] - busy
    with np.errstate(divide="ignore", invalid="ignore"):
        for part in ("busy", "idle"):
            df[f"{part}_time_pctg"] = np.where(df["span_ns"] > 0, 100.0 * df[f"{part}_time_ns"] / df["span_ns"].clip(lower=1),
                                               0.0)
    df = df[df["events"] > 0].sort_values(["busy_time_ns", "events"], ascending=False, kind="stable", ignore_index=True)
    return notes_of(df, [])


@numba.njit(cache=True, nogil=True)
def _child_time(order: np.ndarray, group: np.ndarray, start: np.ndarray,
                end: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Per event, the time its direct children take (each clipped to the parent's end)."""
    child = np.zeros(start.size, np.int64)
    stack = np.empty(start.size, np.int64)
    top = 0
    for k in range(order.size):
        i = order[k]
        while top > 0 and (group[stack[top - 1]] != group[i] or end[stack[top - 1]] <= start[i]):
            top -= 1
        if top > 0:
            p = stack[top - 1]
            child[p] += min(end[i], end[p]) - start[i]
        stack[top] = i
        top += 1
    return child


def self_times(profile: Profile) -> np.ndarray:
    fr = frame_of(profile)
    code, _ = _threads(profile)
    start, end = fr.start, np.maximum(fr.end, fr.start)
    # Parents before their children: by thread, start, then the longer first (then row order).
    order = np.lexsort((np.arange(start.size), -(end - start), start, code))
    return (end - start) - _child_time(order, code, start, end)


def _program_rows(profile: Profile) -> np.ndarray:
    """Per event, whether it is the program's: not on a profiler-wide row (Kineto's "PyTorch Profiler" span
    covers the whole recording; as the longest or the top event it would say nothing)."""
    code, keys = _threads(profile)
    real = keys["thread"].to_numpy(bool) if len(keys) else np.zeros(0, bool)
    return real[code] if code.size else np.zeros(0, bool)


def event_breakdown(profile: Profile) -> pd.DataFrame:
    """One row per event name: `count`, `total_ns`, `self_ns`, `mean_ns`, `max_ns`, largest total first (events on
    a profiler-wide row, such as Kineto's "PyTorch Profiler" span, left out)."""
    fr = frame_of(profile)
    keep = _program_rows(profile)
    dur = np.maximum(fr.end - fr.start, 0)[keep]
    own = self_times(profile)[keep]
    name = fr.name[keep]
    n = len(fr.names)
    df = pd.DataFrame({"name": fr.names, "count": np.bincount(name, minlength=n),
                       "total_ns": np.bincount(name, weights=dur, minlength=n).astype(np.int64),
                       "self_ns": np.bincount(name, weights=own, minlength=n).astype(np.int64)})
    mx = np.zeros(n, np.int64)
    np.maximum.at(mx, name, dur)
    df["max_ns"] = mx
    df = df[df["count"] > 0]
    df["mean_ns"] = df["total_ns"] / df["count"]
    return notes_of(df.sort_values(["total_ns", "name"], ascending=[False, True], ignore_index=True), [])


def longest_events(profile: Profile, n: int = 20) -> pd.DataFrame:
    """The n longest events: `name`, the thread's keys, `start_ts`, `duration_ns`, `id`, `row` (not those on a
    profiler-wide row)."""
    fr = frame_of(profile)
    dur = fr.end - fr.start
    mine = np.flatnonzero(_program_rows(profile))
    rows = mine[np.argsort(-dur[mine], kind="stable")[:n]]
    code, keys = _threads(profile)
    df = keys.iloc[code[rows]].reset_index(drop=True)
    df.insert(0, "name", [fr.names[c] for c in fr.name[rows]])
    df["start_ts"], df["duration_ns"] = fr.start[rows], dur[rows]
    df["id"], df["row"] = profile.array("id")[rows], rows
    return notes_of(df, [])
