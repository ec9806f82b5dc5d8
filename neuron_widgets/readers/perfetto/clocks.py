"""Perfetto timestamps onto the trace's primary clock, chunk by chunk.

Sequence-scoped clocks (ids 64-127, as the Perfetto SDK writes by default) are deltas from
the sequence's previous timestamp on that clock, starting at its last clock snapshot: that
running value is carried from one chunk of packets to the next. Other clocks are moved onto
the primary clock at the end by the offset in the first snapshot that has both, so a snapshot
written after the events it relates still applies. What cannot be mapped is kept as recorded
and said in the warnings.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ...errors import LoadWarnings
from ..columns import TS_LIMIT
from .state import BOOTTIME, State
from .wire import Packets

_BUILTIN_CLOCKS = {1: "REALTIME", 2: "REALTIME_COARSE", 3: "MONOTONIC", 4: "MONOTONIC_COARSE",
                   5: "MONOTONIC_RAW", 6: "BOOTTIME"}
# A time that would land past TS_LIMIT is set to FAR (never wrapped) and the reader drops its event.
FAR = np.iinfo(np.int64).max


def distinct(values: np.ndarray) -> list[int]:
    """The distinct values, ascending: a trace's packets are nearly always on one clock, which one
    comparison pass finds without sorting them."""
    if values.size and bool((values == values[0]).all()):
        return [int(values[0])]
    return [int(v) for v in np.unique(values).tolist()]


def far(ts: np.ndarray) -> np.ndarray:
    """Where times are past the range a Profile holds (FAR included)."""
    return (ts > TS_LIMIT) | (ts < -TS_LIMIT)


class Clocks:
    """The running value of each (sequence, sequence-scoped clock) between chunks."""

    def __init__(self) -> None:
        # (sequence, clock) -> [snapshot value, incremental, unit ns, primary-clock base, last local value]
        self.running: dict[tuple[int, int], list[int]] = {}

    def events(self, p: Packets, gen: np.ndarray, state: State, snapshots: list[Any],
               ev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The times (as `chunk` resolves them) and int32 clock ids of the packets `ev`, the chunk's events."""
        if not state.default_clock and not any(c >= 64 for _, _, cs in snapshots for c in cs) and \
                (p.clock.size == 0 or int(p.clock.max()) < 64):
            # No packet on a sequence-scoped clock, no default: each event's own time and clock, nothing carried.
            return _own_times(p.timestamp, p.clock, ev, BOOTTIME, TS_LIMIT, FAR)
        ts, clock = self.chunk(p, gen, state, snapshots)
        return ts[ev], clock[ev].astype(np.int32)

    def chunk(self, p: Packets, gen: np.ndarray, state: State, snapshots: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """The chunk's packets' times (sequence-scoped clocks resolved) and clock ids.

        `snapshots` are the chunk's own clock snapshots, (packet in chunk, sequence, clocks).
        """
        clock = p.clock.astype(np.int64)
        unset = clock == 0
        if unset.any() and state.default_clock:
            defaults = np.zeros(int(gen.max()) + 1, np.int64)  # generations are dense codes: a look-up table
            for g, c in state.default_clock.items():
                if g < defaults.size:
                    defaults[g] = c
            clock = np.where(unset, defaults[gen], clock)
        clock[clock == 0] = BOOTTIME  # the proto's default
        ts = p.timestamp.astype(np.int64)
        ts[p.timestamp > np.uint64(TS_LIMIT)] = FAR  # at or past 2^63 the cast would wrap to a negative time
        # A snapshot starts its sequence's clock even in a chunk with no packet on that clock.
        scoped = {c for c in distinct(clock) if c >= 64} | {c for _, _, cs in snapshots for c in cs if c >= 64}
        for c in sorted(scoped):
            self._incremental(p, state, snapshots, clock, ts, c)
        return ts, clock

    def _incremental(self, p: Packets, state: State, snapshots: list[Any], clock: np.ndarray, ts: np.ndarray,
                     c: int) -> None:
        on = np.flatnonzero(clock == c)
        for seq in sorted(set(np.unique(p.seq[on]).tolist()) | {s for _, s, cs in snapshots if c in cs}):
            rows = on[p.seq[on] == seq]
            mine = [(i, clocks[c], clocks.get(state.primary_clock)) for i, s, clocks in snapshots
                    if s == seq and c in clocks]
            at = np.array([m[0] for m in mine], np.int64)
            which = np.searchsorted(at, rows, side="right") - 1  # the snapshot each packet follows; -1 the carried one
            for k in range(-1, len(mine)):
                if k < 0:
                    run = self.running.get((seq, c))
                else:
                    (value, incremental, unit), primary = mine[k][1], mine[k][2]
                    run = [value, int(incremental), unit, primary[0] if primary is not None else 0, value]
                    self.running[(seq, c)] = run
                sel = rows[which == k]
                if run is None or sel.size == 0:
                    continue  # before any snapshot of this sequence: kept as recorded
                value, incremental, unit, base, last = run
                ts[sel], end = _scoped(p.timestamp[sel], bool(incremental), last, value, unit, base)
                if incremental:
                    run[4] = end


def to_primary(ts: np.ndarray, clock: np.ndarray, state: State, warnings: LoadWarnings, origin: str) -> np.ndarray:
    """Move events on other absolute clocks onto the primary clock (in place)."""
    for c in distinct(clock):
        if c == state.primary_clock or c >= 64:
            continue
        offset = _offset(state, c)
        where = clock == c
        if offset is None:
            name = _BUILTIN_CLOCKS.get(c, f"clock {c}")
            warnings.add(f"{origin}: events on {name} with no clock snapshot relating it to the trace clock "
                         "(kept as recorded; they may sit apart from the rest)", int(where.sum()))
        else:
            moved = ts[where]
            out = far(moved) | (np.abs(moved.astype(np.float64) + float(offset)) > TS_LIMIT)
            if abs(offset) >= 2**63:  # then every time lands past the limit
                out[:] = True
                offset = 0
            with np.errstate(over="ignore"):  # what wraps is past the limit, and replaced
                ts[where] = np.where(out, FAR, moved + np.int64(offset))
    return ts


def _scoped(raw: np.ndarray, incremental: bool, last: int, value: int, unit: int, base: int) -> tuple[np.ndarray, int]:
    """Times on a sequence-scoped clock (uint64 as written: deltas when incremental) on the primary
    clock, FAR where they land past TS_LIMIT; and the clock's running value after them (exact)."""
    d = raw.astype(np.float64)
    approx = float(base) + ((float(last) + np.cumsum(d) if incremental else d) - float(value)) * float(unit)
    beyond = ~(np.abs(approx) <= TS_LIMIT * 0.999)  # near the limit, rounding could go either way: the exact road
    if not beyond.any() and max(abs(base), abs(last), abs(value), unit) <= TS_LIMIT:
        with np.errstate(over="ignore"):
            local = last + np.cumsum(raw.astype(np.int64)) if incremental else raw.astype(np.int64)
            return base + (local - value) * unit, int(local[-1]) if incremental else last
    # Some time is far, or a snapshot holds a value past int64: Python's integers, which cannot wrap.
    steps = [int(v) for v in raw.tolist()]
    if incremental:
        running, exact = last, []
        for v in steps:
            running += v
            exact.append(running)
    else:
        running, exact = last, steps
    times = [base + (x - value) * unit for x in exact]
    return np.array([t if -TS_LIMIT <= t <= TS_LIMIT else FAR for t in times], np.int64), running


def _offset(state: State, c: int) -> int | None:
    for _, _, clocks in state.snapshots:
        if c in clocks and state.primary_clock in clocks and not clocks[c][1]:
            return clocks[state.primary_clock][0] - clocks[c][0]
    return None


@numba.njit(cache=True, nogil=True)
def _own_times(timestamp: np.ndarray, clock: np.ndarray, rows: np.ndarray, default: int, limit: int,
               far_: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's time as written (`far_` where it is past `limit`: a cast would wrap it) and clock
    (`default`, the proto's, where none is given)."""
    ts = np.empty(rows.size, np.int64)
    ck = np.empty(rows.size, np.int32)
    for k in range(rows.size):
        i = rows[k]
        t = timestamp[i]
        ts[k] = far_ if t > np.uint64(limit) else np.int64(t)
        c = clock[i]
        ck[k] = default if c == 0 else np.int32(c)
    return ts, ck
