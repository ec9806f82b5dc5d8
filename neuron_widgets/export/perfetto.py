"""Any profile or view written as a Perfetto trace (.pftrace), streamed in chunks of packets.

Tracks are named as the grouping labels them: a process per instance and process id, a
thread track per thread, named child tracks for NeuronCores, streams and device engines.
Each track's description carries its exact grouping columns, so reading the file back
(readers/perfetto) gives the same events on the same tracks. Overlapping events that do not
nest (Perfetto nests slices on a track strictly) go to sibling tracks named `label (2)`.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ..model.counter_series import counter_series
from ..model.grouping import COMBO_COLUMNS, tracks_of
from ..model.profile import Profile
from ..readers.perfetto.tracks import Identity, describe
from . import perfetto_encode as enc

SEQ = 1
CHUNK = 1 << 18
_SIBLINGS = 8  # sibling tracks per writer track for events that overlap without nesting
_DEPTH = 64  # nesting depth followed per sibling


@dataclass
class _Target:
    profile: Profile
    grouping: str
    time_range: tuple[int, int] | None


def _target(obj: Any, grouping: str | None, time_range: tuple[int, int] | None) -> _Target:
    if isinstance(obj, Profile):
        return _Target(obj, obj.check_grouping(grouping or obj.default_grouping), time_range)
    profile = getattr(obj, "profile", None)
    if not isinstance(profile, Profile):
        raise TypeError(f"export_perfetto takes a Profile, a Timeline or a DeviceTraceViewer, not {type(obj).__name__}")
    if time_range is None and getattr(obj, "view", None) is not None and len(profile):
        v = obj.view
        origin = profile.origin_ts
        time_range = (origin + int(np.floor(v[0])), origin + int(np.ceil(v[1])))
    return _Target(profile, profile.check_grouping(grouping or obj.grouping), time_range)


def export_perfetto(obj: Any, path: str | os.PathLike[str], *, grouping: str | None = None,
                    time_range: tuple[int, int] | None = None, chunk: int = CHUNK) -> dict[str, Any]:
    """Write `obj` (a Profile, Timeline or DeviceTraceViewer) to `path` as a Perfetto trace.

    A widget exports its grouping and its visible time range; a Profile all of it (or
    `time_range`, absolute ns). Returns what was written: path, events, bytes, seconds.
    Memory stays flat in the number of events: rows are taken a chunk at a time, in time order,
    and each chunk's tracks are described just before its events.
    """
    t0 = time.perf_counter()
    target = _target(obj, grouping, time_range)
    p = target.profile
    out = Path(os.fspath(path)).expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    unit_of, labels, unit_label, combos = _units(p, target.grouping)
    nest = _Nesting(len(unit_label))
    written = 0
    starts, ends = p.array("start_ts"), p.array("end_ts")
    codes = p.name_codes()
    try:
        with open(tmp, "wb") as f:
            tracks = _Tracks(f, labels, unit_label, combos)
            f.write(_interning(p.name_dictionary()))
            intern: dict[str, int] = {}
            for a in range(0, len(p), chunk):
                r = np.arange(a, min(a + chunk, len(p)), dtype=np.int64)
                if target.time_range is not None:
                    lo, hi = target.time_range
                    r = r[(starts[r] <= hi) & (ends[r] >= lo)]
                if r.size == 0:
                    continue
                unit = unit_of(r)
                track_uuid = tracks.declare(unit, nest.place(unit, starts[r], ends[r]))
                incomplete = _incomplete(p, r)
                kind = np.where(incomplete, enc.OPEN, np.where(ends[r] > starts[r], enc.SLICE, enc.INSTANT))
                before = len(intern)
                aoff, adata = enc.annotations(_args(p, r), intern)
                if len(intern) > before:
                    f.write(_arg_names(list(intern.items())[before:]))
                foff, fids = _flows(p, r)
                f.write(enc.packets(kind, codes[r].astype(np.int64) + 1, track_uuid, starts[r], ends[r],
                                    aoff, adata, foff, fids, SEQ))
                written += r.size
            tracks.counters(p, target.time_range)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return {"path": str(out), "events": written, "bytes": out.stat().st_size, "seconds": time.perf_counter() - t0,
            "grouping": target.grouping}


def _units(p: Profile, grouping: str) -> tuple[Any, list[str], list[int], pd.DataFrame | None]:
    """Writer tracks: one per combo (every grouping column fixed), or per track of a device trace.

    Returns the unit of given rows, the grouping's labels, each unit's label index, and the
    combos' columns (None for a device trace, whose tracks are its engines and queues).
    """
    if all(c in p.column_names for c in COMBO_COLUMNS):
        combos = p._combo_codes()
        combo_track, tracks = tracks_of(combos.table, grouping, p.track_names)
        return (lambda rows: combos.codes[rows].astype(np.int64)), tracks["label"].astype(str).tolist(), \
            combo_track.tolist(), combos.table
    idx = p.track_index(grouping)
    labels = idx.tracks["label"].astype(str).tolist()
    return (lambda rows: idx.track[rows].astype(np.int64)), labels, list(range(len(labels))), None


def _incomplete(p: Profile, rows: np.ndarray) -> np.ndarray:
    if "incomplete" not in p.column_names:
        return np.zeros(rows.size, bool)
    return p.values_at("incomplete", rows).fill_null(False).to_numpy(zero_copy_only=False)


@numba.njit(cache=True, nogil=True)
def _nest(unit: np.ndarray, start: np.ndarray, end: np.ndarray, stack_end: np.ndarray, depth: np.ndarray,
          out: np.ndarray) -> None:
    """Per row (in time order, longest first), the first sibling track of its unit where it nests.

    Each (unit, sibling) keeps the ends of its open slices; state carries over between chunks.
    """
    siblings, room = stack_end.shape[1], stack_end.shape[2]
    for k in range(unit.size):
        u, s, e = unit[k], start[k], end[k]
        chosen = siblings - 1
        for t in range(siblings):
            d = depth[u, t]
            while d > 0 and stack_end[u, t, d - 1] <= s:
                d -= 1
            depth[u, t] = d
            if d < room and (d == 0 or stack_end[u, t, d - 1] >= e):
                chosen = t
                break
        d = depth[u, chosen]
        if d < room:
            stack_end[u, chosen, d] = e
            depth[u, chosen] = d + 1
        out[k] = chosen


class _Nesting:
    def __init__(self, units: int) -> None:
        self.stack_end = np.zeros((max(units, 1), _SIBLINGS, _DEPTH), np.int64)
        self.depth = np.zeros((max(units, 1), _SIBLINGS), np.int64)

    def place(self, unit: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        out = np.zeros(unit.size, np.int64)
        _nest(unit, np.ascontiguousarray(start, np.int64), np.ascontiguousarray(end, np.int64), self.stack_end,
              self.depth, out)
        return out


class _Tracks:
    """Track descriptors: processes, threads and named tracks, written before the events."""

    def __init__(self, f: Any, labels: list[str], unit_label: list[int], combos: pd.DataFrame | None) -> None:
        self.f, self.labels, self.unit_label, self.combos = f, labels, unit_label, combos
        self.declared: dict[int, int] = {}  # unit * _SIBLINGS + sibling -> track uuid
        self.next_uuid = 1
        self.pids: dict[tuple[str, int], tuple[int, int]] = {}  # (instance, pid) -> (track uuid, perfetto pid)
        self.used_pids: set[int] = set()
        self.used_threads: set[tuple[int, int]] = set()

    def _uuid(self) -> int:
        self.next_uuid += 1
        return self.next_uuid

    def _write(self, packet: pb.TracePacket) -> None:
        self.f.write(_packet(packet))

    def _process(self, instance: str, pid: int) -> tuple[int, int]:
        key = (instance, pid)
        if key not in self.pids:
            real = pid
            while real in self.used_pids:  # Perfetto merges processes by pid: keep instances apart
                real = (real + 1_000_003) % (2**31)
            self.used_pids.add(real)
            uuid = self._uuid()
            packet = pb.TracePacket()
            d = packet.track_descriptor
            d.uuid = uuid
            d.process.pid = real
            d.process.process_name = f"{instance}/PID:{pid}"
            d.description = describe(Identity(instance_id=instance, process_id=pid))
            d.child_ordering = pb.TrackDescriptor.EXPLICIT
            self._write(packet)
            self.pids[key] = (uuid, real)
        return self.pids[key]

    def declare(self, unit: np.ndarray, sibling: np.ndarray) -> np.ndarray:
        """Each row's track uuid; descriptors of (unit, sibling) pairs not seen before are written first."""
        key = unit * _SIBLINGS + sibling
        uniq, inverse = np.unique(key, return_inverse=True)
        uuids = np.empty(uniq.size, np.uint64)
        for k, pair in enumerate(uniq.tolist()):
            if pair not in self.declared:
                self.declared[pair] = self._declare_one(pair // _SIBLINGS, pair % _SIBLINGS)
            uuids[k] = self.declared[pair]
        return uuids[inverse.reshape(-1)]

    def _declare_one(self, unit: int, sibling: int) -> int:
        packet = pb.TracePacket()
        d = packet.track_descriptor
        uuid = self._uuid()
        d.uuid = uuid
        if self.combos is None:
            label = self.labels[self.unit_label[unit]]
            d.name = label if sibling == 0 else f"{label} ({sibling + 1})"
            d.description = describe(Identity(source="device", stream=label))
            d.sibling_order_rank = unit
            self._write(packet)
            return uuid
        row = self.combos.iloc[unit]
        track = self.unit_label[unit]
        label = self.labels[track]
        name = label if sibling == 0 else f"{label} ({sibling + 1})"
        inst, pid, tid = str(row["instance_id"]), int(row["process_id"]), int(row["thread_id"])
        parent, real_pid = self._process(inst, pid)
        ident = Identity(instance_id=inst, process_id=pid, thread_id=tid, nc_idx=_int(row["nc_idx"]),
                         pcore_idx=_int(row["pcore_idx"]), worker_gid=_int(row["worker_gid"]),
                         stream=None if row["framework_stream_id"] is None else str(row["framework_stream_id"]),
                         source=str(row["trace_event_source"]))
        d.description = describe(ident)
        plain_thread = ident.nc_idx is None and ident.stream is None and ident.source != "device" and sibling == 0
        if plain_thread and (real_pid, tid) not in self.used_threads:
            self.used_threads.add((real_pid, tid))
            d.thread.pid, d.thread.tid, d.thread.thread_name = real_pid, tid, name
        else:
            d.parent_uuid = parent
        d.name = name
        d.sibling_order_rank = track
        self._write(packet)
        return uuid

    def counters(self, p: Profile, time_range: tuple[int, int] | None) -> None:
        """Sampled series (host memory, HBM, CPU, Chrome counters) as counter tracks."""
        series = counter_series(p)
        origin = p.origin_ts
        for s in series.series:
            times, values = series.data[s["key"]]
            if time_range is not None:
                keep = (times + origin >= time_range[0]) & (times + origin <= time_range[1])
                times, values = times[keep], values[keep]
                if not times.size:
                    continue
            uuid = self._uuid()
            packet = pb.TracePacket()
            packet.track_descriptor.uuid = uuid
            packet.track_descriptor.name = s["label"]
            packet.track_descriptor.counter.unit_name = s["unit"] or ""
            self._write(packet)
            trace = pb.Trace()
            for t, v in zip((times + origin).astype(np.int64).tolist(), values.tolist(), strict=True):
                pk = trace.packet.add()
                pk.timestamp = t
                pk.trusted_packet_sequence_id = SEQ
                pk.track_event.type = pb.TrackEvent.TYPE_COUNTER
                pk.track_event.track_uuid = uuid
                pk.track_event.double_counter_value = v
            self.f.write(trace.SerializeToString())


def _int(v: Any) -> int | None:
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else int(v)


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _packet(packet: pb.TracePacket) -> bytes:
    data = packet.SerializeToString()
    return b"\x0a" + _varint(len(data)) + data


def _interning(names: list[str]) -> bytes:
    packet = pb.TracePacket()
    packet.trusted_packet_sequence_id = SEQ
    packet.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    for i, n in enumerate(names):
        e = packet.interned_data.event_names.add()
        e.iid, e.name = i + 1, str(n)
    return _packet(packet)


def _arg_names(new: list[tuple[str, int]]) -> bytes:
    packet = pb.TracePacket()
    packet.trusted_packet_sequence_id = SEQ
    packet.sequence_flags = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
    for name, iid in new:
        e = packet.interned_data.debug_annotation_names.add()
        e.iid, e.name = iid, name
    return _packet(packet)


def _args(p: Profile, rows: np.ndarray) -> pa.Array:
    if "extra_attributes_json" in p.column_names:
        return p.values_at("extra_attributes_json", rows)
    if hasattr(p, "args_of_rows"):
        got = p.args_of_rows(rows)
        return pa.array([orjson.dumps(a, option=orjson.OPT_NON_STR_KEYS, default=str).decode() if a else None
                         for a in got], pa.string())
    return pa.nulls(rows.size, pa.string())


def _flows(p: Profile, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if "flow_id" not in p.column_names:
        return np.zeros(rows.size + 1, np.int64), np.zeros(0, np.uint64)
    col = p.values_at("flow_id", rows)
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    counts = col.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.zeros(rows.size + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    values = col.flatten().to_pylist()
    if not values:
        return offsets, np.zeros(0, np.uint64)
    codes, uniq = pd.factorize(pd.Series(values, dtype=object))
    ids = np.array([_flow_number(str(u)) for u in uniq], dtype=np.uint64)
    return offsets, ids[codes]


def _flow_number(text: str) -> int:
    """Perfetto flow ids are 64-bit numbers: numeric ids are kept, others hashed (stable across runs)."""
    if text.isascii() and text.isdigit() and int(text) < 2**64:
        return int(text)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
