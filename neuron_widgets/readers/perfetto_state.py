"""Perfetto's per-sequence state: interned strings, track descriptors, defaults and clocks.

These come from the few packets that are not plain TrackEvents; they are read with the
compiled protobuf classes and turned into lookup tables the bulk columns are mapped through.
Interned data and packet defaults belong to a sequence's "generation": they are dropped when
a packet sets SEQ_INCREMENTAL_STATE_CLEARED (or incremental_state_cleared) on that sequence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ..errors import LoadWarnings
from .perfetto_tracks import Track
from .perfetto_wire import KIND_BOTH, KIND_SPECIAL, Packets

BOOTTIME = 6
_BUILTIN_CLOCKS = {1: "REALTIME", 2: "REALTIME_COARSE", 3: "MONOTONIC", 4: "MONOTONIC_COARSE",
                   5: "MONOTONIC_RAW", 6: "BOOTTIME"}


@dataclass
class State:
    """Everything the special packets say, keyed for the bulk mapping."""

    generation: np.ndarray  # per packet: dense (sequence, generation) code
    names: dict[tuple[int, int], str] = field(default_factory=dict)  # (seqgen, iid) -> event name
    categories: dict[tuple[int, int], str] = field(default_factory=dict)
    arg_names: dict[int, dict[int, str]] = field(default_factory=dict)  # seqgen -> iid -> annotation name
    arg_strings: dict[int, dict[int, str]] = field(default_factory=dict)  # seqgen -> iid -> interned string value
    tracks: dict[int, Track] = field(default_factory=dict)
    default_track: dict[int, int] = field(default_factory=dict)  # seqgen -> track uuid
    default_clock: dict[int, int] = field(default_factory=dict)  # seqgen -> clock id
    seq_thread: dict[int, tuple[int, int]] = field(default_factory=dict)  # sequence -> (pid, tid) of its writer
    process_names: dict[int, str] = field(default_factory=dict)
    thread_names: dict[tuple[int, int], str] = field(default_factory=dict)
    snapshots: list[tuple[int, int, dict[int, tuple[int, bool, int]]]] = field(default_factory=list)
    # (packet, sequence, {clock_id: (value, incremental, unit ns)}) in file order
    primary_clock: int = BOOTTIME
    process_tracks: dict[int, Track] = field(default_factory=dict)  # pid -> its process track


def generations(p: Packets) -> np.ndarray:
    """A dense code per packet for (sequence, number of state clears so far on it)."""
    n = p.seq.size
    if n == 0:
        return np.zeros(0, np.int64)
    seq_codes = np.unique(p.seq, return_inverse=True)[1].astype(np.int64)
    order = np.argsort(seq_codes, kind="stable")
    cleared = p.cleared[order].astype(np.int64)
    run = np.cumsum(cleared)
    starts = np.r_[0, np.flatnonzero(np.diff(seq_codes[order])) + 1]
    group_len = np.diff(np.r_[starts, n])
    before = np.repeat(run[starts] - cleared[starts], group_len)
    gen = np.empty(n, np.int64)
    gen[order] = run - before
    key = seq_codes * (int(gen.max()) + 1) + gen
    return np.unique(key, return_inverse=True)[1].astype(np.int64)


def read_state(buf: bytes, off: np.ndarray, length: np.ndarray, p: Packets, warnings: LoadWarnings,
               origin: str) -> State:
    state = State(generation=generations(p))
    special = np.flatnonzero((p.kind == KIND_SPECIAL) | (p.kind == KIND_BOTH))
    bad = 0
    for i in special.tolist():
        try:
            packet = pb.TracePacket.FromString(buf[off[i]: off[i] + length[i]])
        except DecodeError:
            bad += 1
            continue
        g = int(state.generation[i])
        seq = int(p.seq[i])
        if packet.HasField("interned_data"):
            _intern(state, g, packet.interned_data)
        if packet.HasField("trace_packet_defaults"):
            d = packet.trace_packet_defaults
            if d.HasField("timestamp_clock_id"):
                state.default_clock[g] = d.timestamp_clock_id
            if d.HasField("track_event_defaults") and d.track_event_defaults.HasField("track_uuid"):
                state.default_track[g] = d.track_event_defaults.track_uuid
        if packet.HasField("track_descriptor"):
            _describe(state, packet.track_descriptor)
        if packet.HasField("process_descriptor"):
            pd_ = packet.process_descriptor
            if pd_.process_name or pd_.cmdline:
                state.process_names[pd_.pid] = pd_.process_name or pd_.cmdline[0]
        if packet.HasField("thread_descriptor"):
            td = packet.thread_descriptor
            state.seq_thread[seq] = (td.pid, td.tid)
            if td.thread_name:
                state.thread_names[(td.pid, td.tid)] = td.thread_name
        if packet.HasField("process_tree"):
            for proc in packet.process_tree.processes:
                if proc.cmdline:
                    state.process_names.setdefault(proc.pid, proc.cmdline[0])
            for th in packet.process_tree.threads:
                if th.name:
                    state.thread_names.setdefault((th.tgid, th.tid), th.name)
        if packet.HasField("clock_snapshot"):
            snap = packet.clock_snapshot
            clocks = {c.clock_id: (c.timestamp, c.is_incremental, c.unit_multiplier_ns or 1) for c in snap.clocks}
            state.snapshots.append((i, seq, clocks))
            if snap.HasField("primary_trace_clock"):
                state.primary_clock = int(snap.primary_trace_clock)
    warnings.add(f"{origin}: descriptor or interning packets that could not be decoded (skipped)", bad)
    state.process_tracks = {t.pid: t for t in state.tracks.values() if t.pid is not None and t.tid is None}
    return state


def _intern(state: State, g: int, data: Any) -> None:
    for e in data.event_names:
        state.names[(g, e.iid)] = e.name
    for e in data.event_categories:
        state.categories[(g, e.iid)] = e.name
    if data.debug_annotation_names:
        names = state.arg_names.setdefault(g, {})
        for e in data.debug_annotation_names:
            names[e.iid] = e.name
    if data.debug_annotation_string_values:
        values = state.arg_strings.setdefault(g, {})
        for e in data.debug_annotation_string_values:
            values[e.iid] = e.str.decode("utf-8", "replace")


def _describe(state: State, d: Any) -> None:
    t = state.tracks.get(d.uuid) or Track(uuid=d.uuid)
    t.name = d.name or d.static_name or d.atrace_name or t.name
    if d.HasField("parent_uuid"):
        t.parent = d.parent_uuid
    if d.description:
        t.description = d.description
    if d.HasField("process"):
        t.pid = d.process.pid
        t.process_name = d.process.process_name or (d.process.cmdline[0] if d.process.cmdline else "")
        if t.process_name:
            state.process_names.setdefault(t.pid, t.process_name)
    if d.HasField("thread"):
        t.pid, t.tid = d.thread.pid, d.thread.tid
        if d.thread.thread_name:
            t.name = t.name or d.thread.thread_name
            state.thread_names.setdefault((t.pid, t.tid), d.thread.thread_name)
    if d.HasField("counter"):
        t.counter = True
    state.tracks[d.uuid] = t


def lookup(table: dict[tuple[int, int], str], gen: np.ndarray, iid: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Codes into a list of strings for interned ids; -1 where an id was never interned."""
    out = np.full(gen.size, -1, np.int64)
    if not table or gen.size == 0:
        return out, []
    keys = np.array([(g << 32) | (i & 0xFFFFFFFF) for g, i in table], dtype=np.int64)
    texts = list(table.values())
    uniq, codes = np.unique(np.array(texts, dtype=object), return_inverse=True)
    order = np.argsort(keys)
    keys, codes = keys[order], codes[order]
    want = (gen.astype(np.int64) << 32) | (iid.astype(np.int64) & 0xFFFFFFFF)
    pos = np.clip(np.searchsorted(keys, want), 0, keys.size - 1)
    hit = keys[pos] == want
    out[hit] = codes[pos[hit]]
    return out, [str(u) for u in uniq]


def resolve_clocks(p: Packets, state: State, events: np.ndarray, warnings: LoadWarnings, origin: str) -> np.ndarray:
    """Event timestamps (int64 ns) on the trace's primary clock.

    Sequence-scoped clocks (ids 64-127, as the Perfetto SDK writes by default) are deltas from
    the sequence's previous timestamp on that clock, starting at its last clock snapshot;
    other clocks are moved onto the primary clock by the offset in the first snapshot that
    has both. What cannot be mapped is kept as recorded and said in the warnings.
    """
    gen = state.generation
    clock = p.clock.astype(np.int64)
    no_clock = clock == 0
    if no_clock.any() and state.default_clock:
        defaults = np.zeros(int(gen.max()) + 1, np.int64)
        for g, c in state.default_clock.items():
            defaults[g] = c
        clock = np.where(no_clock, defaults[gen], clock)
    clock = np.where(clock == 0, BOOTTIME, clock)  # the proto's default
    ts = p.timestamp.astype(np.int64)
    for c in np.unique(clock[events]).tolist():
        if c >= 64:
            ts = _incremental(p, state, clock, ts, c)
    out = ts[events]
    ev_clock = clock[events]
    for c in np.unique(ev_clock).tolist():
        if c == state.primary_clock or c >= 64:
            continue
        offset = _offset(state, c)
        where = ev_clock == c
        if offset is None:
            name = _BUILTIN_CLOCKS.get(c, f"clock {c}")
            warnings.add(f"{origin}: events on {name} with no clock snapshot relating it to the trace clock "
                         "(kept as recorded; they may sit apart from the rest)", int(where.sum()))
        else:
            out[where] += offset
    return out


def _offset(state: State, c: int) -> int | None:
    for _, _, clocks in state.snapshots:
        if c in clocks and state.primary_clock in clocks and not clocks[c][1]:
            return clocks[state.primary_clock][0] - clocks[c][0]
    return None


def _incremental(p: Packets, state: State, clock: np.ndarray, ts: np.ndarray, c: int) -> np.ndarray:
    """Absolute primary-clock times for packets on sequence-scoped clock `c`."""
    ts = ts.copy()
    on = np.flatnonzero(clock == c)
    snaps = [(i, seq, clocks[c], clocks.get(state.primary_clock)) for i, seq, clocks in state.snapshots if c in clocks]
    for seq in np.unique(p.seq[on]).tolist():
        rows = on[p.seq[on] == seq]
        mine = [s for s in snaps if s[1] == seq]
        if not mine:
            continue
        at = np.array([s[0] for s in mine])
        which = np.searchsorted(at, rows, side="right") - 1  # the snapshot each packet follows
        valid = which >= 0
        for k, (_, _, (value, incremental, unit), primary) in enumerate(mine):
            sel = rows[valid & (which == k)]
            if sel.size == 0:
                continue
            raw = ts[sel]
            local = value + np.cumsum(raw) if incremental else raw
            base = primary[0] if primary is not None else 0
            ts[sel] = base + (local - value) * unit
    return ts
