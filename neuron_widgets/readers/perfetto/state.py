"""Perfetto's per-sequence state: interned strings, track descriptors, defaults and clocks.

These come from the few packets that are not plain TrackEvents; they are read with the
compiled protobuf classes and turned into lookup tables the bulk columns are mapped through.
Interned data and packet defaults belong to a sequence's "generation": they are dropped when
a packet sets SEQ_INCREMENTAL_STATE_CLEARED (or incremental_state_cleared) on that sequence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numba
import numpy as np
from google.protobuf.message import DecodeError
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ...errors import LoadWarnings
from .tracks import Track
from .wire import KIND_BOTH, KIND_SPECIAL, Packets

BOOTTIME = 6


@dataclass
class State:
    """Everything the special packets say, keyed for the bulk mapping."""

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
    undecodable: int = 0  # special packets the protobuf classes could not read
    bad_text: int = 0  # names that were not UTF-8 (the protobuf classes give their bytes): replaced

    def text(self, v: str | bytes) -> str:
        """A name as text: bytes that are not UTF-8 replaced by U+FFFD, and counted."""
        if isinstance(v, str):
            return v
        self.bad_text += 1
        return bytes(v).decode("utf-8", "replace")


@numba.njit(cache=True, nogil=True)
def _per_sequence(seq: np.ndarray, cleared: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                 np.ndarray]:
    """The chunk's sequences, each given a slot as first seen: the table finding a sequence's slot
    (keys, slots) and per slot its sequence, whether its first packet clears, and its clears.

    A small open-addressing table finds the slot: a trace has few sequences, and sorting every
    packet's sequence id to find them cost more than the rest of the chunk's bookkeeping.
    """
    n = seq.size
    changes = 1  # at most this many distinct sequences: size the table once (arrays reassigned in the loop cost a
    for i in range(1, n):  # reference count update per packet)
        if seq[i] != seq[i - 1]:
            changes += 1
    cap = 64
    while cap < 2 * changes:
        cap *= 2
    keys = np.full(cap, -1, np.int64)
    vals = np.empty(cap, np.int64)
    found = np.empty(changes, np.int64)
    first_clears = np.zeros(changes, np.bool_)
    runs = np.zeros(changes, np.int64)
    used = 0
    last_seq, last_slot = np.int64(-1), 0
    for i in range(n):
        s = np.int64(seq[i])
        if s != last_seq:
            h = (s * 0x9E3779B1) & (cap - 1)
            while keys[h] != -1 and keys[h] != s:
                h = (h + 1) & (cap - 1)
            if keys[h] == -1:
                keys[h], vals[h] = s, used
                found[used] = s
                first_clears[used] = cleared[i]
                used += 1
            last_seq, last_slot = s, vals[h]
        if cleared[i]:
            runs[last_slot] += 1
    return keys, vals, found[:used].copy(), first_clears[:used].copy(), runs[:used].copy()


@numba.njit(cache=True, nogil=True)
def _generation_codes(seq: np.ndarray, cleared: np.ndarray, keys: np.ndarray, vals: np.ndarray, table: np.ndarray,
                      start: np.ndarray) -> np.ndarray:
    """Each packet's generation: table[start[slot] + the clears on its sequence so far in the chunk, itself
    included], its slot found again by _per_sequence's table."""
    cap = keys.size
    clears = np.zeros(start.size, np.int64)
    out = np.empty(seq.size, np.int32)
    last_seq, slot = np.int64(-1), 0
    for i in range(seq.size):
        s = np.int64(seq[i])
        if s != last_seq:
            h = (s * 0x9E3779B1) & (cap - 1)
            while keys[h] != s:
                h = (h + 1) & (cap - 1)
            last_seq, slot = s, vals[h]
        if cleared[i]:
            clears[slot] += 1
        out[i] = table[start[slot] + clears[slot]]
    return out


class Generations:
    """Each packet's (sequence, number of state clears so far on it) as a dense code, chunk by chunk.

    A packet that clears the state opens the new generation it belongs to.
    """

    def __init__(self) -> None:
        self.clears: dict[int, int] = {}  # sequence -> clears seen so far
        self.codes: dict[tuple[int, int], int] = {}
        self.sequences = np.zeros(0, np.uint32)  # the last chunk's distinct sequences, ascending

    def chunk(self, seq: np.ndarray, cleared: np.ndarray) -> np.ndarray:
        n = seq.size
        if n == 0:
            self.sequences = np.zeros(0, np.uint32)
            return np.zeros(0, np.int32)
        keys, slots, found, first_clears, runs = _per_sequence(seq, cleared)
        # A sequence's packets in the chunk carry every count from its first packet's to its last:
        # the generations are those ranges, coded in (sequence, count) order as they are first met.
        base = np.array([self.clears.get(s, 0) for s in found.tolist()], np.int64)
        lo = base + first_clears
        hi = base + runs
        offset = np.zeros(found.size, np.int64)
        table: list[int] = []
        for k in np.argsort(found, kind="stable").tolist():
            s = int(found[k])
            offset[k] = len(table) - int(lo[k])
            table.extend(self.codes.setdefault((s, c), len(self.codes)) for c in range(int(lo[k]), int(hi[k]) + 1))
            self.clears[s] = int(hi[k])
        self.sequences = np.sort(found).astype(np.uint32)
        return _generation_codes(seq, cleared, keys, slots, np.array(table, np.int32), offset + base)


def absorb(state: State, buf: bytes, off: np.ndarray, length: np.ndarray, p: Packets, gen: np.ndarray,
           first: int) -> None:
    """Read one chunk's descriptor, interning, defaults and clock packets into the carried state.

    `first` is the chunk's first packet's number in the file (snapshots are kept by it).
    """
    special = np.flatnonzero((p.kind == KIND_SPECIAL) | (p.kind == KIND_BOTH))
    for i in special.tolist():
        try:
            packet = pb.TracePacket.FromString(buf[off[i]: off[i] + length[i]])
        except DecodeError:
            state.undecodable += 1
            continue
        g = int(gen[i])
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
                state.process_names[pd_.pid] = state.text(pd_.process_name or pd_.cmdline[0])
        if packet.HasField("thread_descriptor"):
            td = packet.thread_descriptor
            state.seq_thread[seq] = (td.pid, td.tid)
            if td.thread_name:
                state.thread_names[(td.pid, td.tid)] = state.text(td.thread_name)
        if packet.HasField("process_tree"):
            for proc in packet.process_tree.processes:
                if proc.cmdline:
                    state.process_names.setdefault(proc.pid, state.text(proc.cmdline[0]))
            for th in packet.process_tree.threads:
                if th.name:
                    state.thread_names.setdefault((th.tgid, th.tid), state.text(th.name))
        if packet.HasField("clock_snapshot"):
            snap = packet.clock_snapshot
            clocks = {c.clock_id: (c.timestamp, c.is_incremental, c.unit_multiplier_ns or 1) for c in snap.clocks}
            state.snapshots.append((first + i, seq, clocks))
            if snap.HasField("primary_trace_clock"):
                state.primary_clock = int(snap.primary_trace_clock)


def finish(state: State, warnings: LoadWarnings, origin: str) -> None:
    """After the last chunk: what could not be decoded, and each process's own track."""
    warnings.add(f"{origin}: descriptor or interning packets that could not be decoded (skipped)", state.undecodable)
    warnings.add(f"{origin}: names that are not UTF-8 text (bytes replaced by \N{REPLACEMENT CHARACTER})", state.bad_text)
    state.process_tracks = {t.pid: t for t in state.tracks.values() if t.pid is not None and t.tid is None}


def _intern(state: State, g: int, data: Any) -> None:
    text = state.text
    for e in data.event_names:
        state.names[(g, e.iid)] = text(e.name)
    for e in data.event_categories:
        state.categories[(g, e.iid)] = text(e.name)
    if data.debug_annotation_names:
        names = state.arg_names.setdefault(g, {})
        for e in data.debug_annotation_names:
            names[e.iid] = text(e.name)
    if data.debug_annotation_string_values:
        values = state.arg_strings.setdefault(g, {})
        for e in data.debug_annotation_string_values:
            values[e.iid] = e.str.decode("utf-8", "replace")


def _describe(state: State, d: Any) -> None:
    t = state.tracks.get(d.uuid) or Track(uuid=d.uuid)
    text = state.text
    t.name = text(d.name or d.static_name or d.atrace_name) or t.name
    if d.HasField("parent_uuid"):
        t.parent = d.parent_uuid
    if d.description:
        t.description = text(d.description)
    if d.HasField("process"):
        t.pid = d.process.pid
        t.process_name = text(d.process.process_name or (d.process.cmdline[0] if d.process.cmdline else ""))
        if t.process_name:
            state.process_names.setdefault(t.pid, t.process_name)
    if d.HasField("thread"):
        t.pid, t.tid = d.thread.pid, d.thread.tid
        if d.thread.thread_name:
            thread_name = text(d.thread.thread_name)
            t.name = t.name or thread_name
            state.thread_names.setdefault((t.pid, t.tid), thread_name)
    if d.HasField("counter"):
        t.counter = True
    state.tracks[d.uuid] = t


class Strings:
    """Every distinct event name (or category) of a trace once, coded in the order first seen.

    Interned names are found by (generation, iid); inline ones by their text. The interned
    table grows chunk by chunk, so its sorted keys are extended with what each chunk added.
    """

    def __init__(self) -> None:
        self.code: dict[str, int] = {}
        self.texts: list[str] = []
        self._keys = np.zeros(0, np.int64)
        self._codes = np.zeros(0, np.int32)
        self._seen = 0

    def of(self, words: list[str]) -> np.ndarray:
        code, texts = self.code, self.texts
        out = np.empty(len(words), np.int32)
        for k, w in enumerate(words):
            c = code.get(w)
            if c is None:
                c = code[w] = len(texts)
                texts.append(w)
            out[k] = c
        return out

    def interned(self, table: dict[tuple[int, int], str], gen: np.ndarray, iid: np.ndarray) -> np.ndarray:
        """Codes of interned ids (iid[i] in generation gen[i]); -1 where an id was never interned in that
        generation."""
        if len(table) > self._seen:
            added = list(islice(table.items(), self._seen, None))
            keys = np.array([(g << 32) | (i & 0xFFFFFFFF) for (g, i), _ in added], np.int64)
            keys = np.concatenate([self._keys, keys])
            codes = np.concatenate([self._codes, self.of([t for _, t in added])])
            order = np.argsort(keys, kind="stable")
            self._keys, self._codes, self._seen = keys[order], codes[order], len(table)
        out = np.empty(gen.size, np.int32)
        if self._keys.size == 0 or gen.size == 0:
            out.fill(-1)
            return out
        _find(self._keys, self._codes, gen, iid, out)
        return out


@numba.njit(cache=True, nogil=True)
def _find(keys: np.ndarray, codes: np.ndarray, gen: np.ndarray, iid: np.ndarray, out: np.ndarray) -> None:
    """out[i]: the code of key (gen[i], low 32 bits of iid[i]) in the sorted `keys`, where it is there.

    Events come in runs of one name: a run costs one search."""
    last_key, last_code = np.int64(-1), np.int32(-1)
    for i in range(gen.size):
        want = (np.int64(gen[i]) << 32) | (np.int64(iid[i]) & 0xFFFFFFFF)
        if want != last_key:
            pos = np.searchsorted(keys, want)
            last_key = want
            last_code = codes[pos] if pos < keys.size and keys[pos] == want else np.int32(-1)
        out[i] = last_code
