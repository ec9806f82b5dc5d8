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

from ..model.grouping import COMBO_COLUMNS
from ..model.profile import Profile
from ..readers.perfetto_tracks import Identity, describe
from . import perfetto_encode as enc

SEQ = 1
CHUNK = 1 << 18
_MAX_SUBTRACKS = 64


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
    """
    t0 = time.perf_counter()
    target = _target(obj, grouping, time_range)
    p = target.profile
    out = Path(os.fspath(path)).expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    rows = _rows(p, target.time_range)
    idx = p.track_index(target.grouping)
    labels = idx.tracks["label"].astype(str).tolist()
    combos = _combos(p)
    unit = _units(idx, combos, rows)
    sub = _subtracks(unit, p.array("start_ts"), p.array("end_ts"), rows)
    written = 0
    with open(tmp, "wb") as f:
        tracks = _Tracks(f, p, labels, combos, idx)
        track_uuid = tracks.declare(unit, sub, rows)
        names = p.name_dictionary()
        f.write(_interning(names))
        intern: dict[str, int] = {}
        starts, ends = p.array("start_ts"), p.array("end_ts")
        incomplete = p.array("incomplete") if "incomplete" in p.column_names else np.zeros(len(p), bool)
        codes = p.name_codes()
        for a in range(0, rows.size, chunk):
            r = rows[a: a + chunk]
            kind = np.where(incomplete[r], enc.OPEN, np.where(ends[r] > starts[r], enc.SLICE, enc.INSTANT))
            before = len(intern)
            aoff, adata = enc.annotations(_args(p, r), intern)
            if len(intern) > before:
                f.write(_arg_names(list(intern.items())[before:]))
            foff, fids = _flows(p, r)
            f.write(enc.packets(kind, codes[r].astype(np.int64) + 1, track_uuid[a: a + chunk], starts[r], ends[r],
                                aoff, adata, foff, fids, SEQ))
            written += r.size
        tracks.counters(f)
    os.replace(tmp, out)
    return {"path": str(out), "events": written, "bytes": out.stat().st_size, "seconds": time.perf_counter() - t0,
            "grouping": target.grouping}


def _rows(p: Profile, time_range: tuple[int, int] | None) -> np.ndarray:
    if time_range is None or not len(p):
        return np.arange(len(p), dtype=np.int64)
    a, b = time_range
    s, e = p.array("start_ts"), p.array("end_ts")
    return np.flatnonzero((s <= b) & (e >= a)).astype(np.int64)


def _combos(p: Profile) -> pd.DataFrame | None:
    if not all(c in p.column_names for c in COMBO_COLUMNS):
        return None  # a device trace: its tracks are its engines and queues
    return p._combo_codes().table


def _units(idx: Any, combos: pd.DataFrame | None, rows: np.ndarray) -> np.ndarray:
    """Per row, the writer track it starts on: one per (grouping track, combo)."""
    if combos is None:
        return idx.track[rows].astype(np.int64)
    return idx.combo[rows].astype(np.int64)


@numba.njit(cache=True, nogil=True)
def _nest(unit: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray, out: np.ndarray) -> None:
    """Per row, the first sibling track of its unit where it nests in what is open there."""
    stack_end = np.empty((64, 256), np.int64)
    depth = np.zeros(64, np.int64)
    used = 0
    current = -1
    for k in range(order.size):
        i = order[k]
        if unit[i] != current:
            current = unit[i]
            depth[:] = 0
            used = 0
        s, e = start[i], end[i]
        chosen = 63
        for t in range(64):
            if t == used:
                used += 1
            d = depth[t]
            while d > 0 and stack_end[t, d - 1] <= s:
                d -= 1
            depth[t] = d
            if d == 0 or stack_end[t, d - 1] >= e:
                chosen = t
                break
        d = depth[chosen]
        if d < 256:
            stack_end[chosen, d] = e
            depth[chosen] = d + 1
        out[i] = chosen


def _subtracks(unit: np.ndarray, start: np.ndarray, end: np.ndarray, rows: np.ndarray) -> np.ndarray:
    s, e = start[rows], end[rows]
    order = np.lexsort((-e, s, unit))
    out = np.zeros(rows.size, np.int64)
    _nest(unit, s, e, order.astype(np.int64), out)
    return out


class _Tracks:
    """Track descriptors: processes, threads and named tracks, written before the events."""

    def __init__(self, f: Any, p: Profile, labels: list[str], combos: pd.DataFrame | None, idx: Any) -> None:
        self.f, self.p, self.labels, self.combos, self.idx = f, p, labels, combos, idx
        self.next_uuid = 1
        self.pids: dict[tuple[str, int], tuple[int, int]] = {}  # (instance, pid) -> (track uuid, perfetto pid)
        self.used_pids: set[int] = set()
        self.used_threads: set[tuple[int, int]] = set()

    def _uuid(self) -> int:
        self.next_uuid += 1
        return self.next_uuid

    def _write(self, packet: pb.TracePacket) -> None:
        data = packet.SerializeToString()
        self.f.write(b"\x0a" + _varint(len(data)) + data)

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

    def declare(self, unit: np.ndarray, sub: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Write a descriptor per (unit, sibling) pair used; return each row's track uuid."""
        key = unit * _MAX_SUBTRACKS + sub
        uniq, inverse = np.unique(key, return_inverse=True)
        uuids = np.empty(uniq.size, np.uint64)
        for k, (u, s) in enumerate(zip((uniq // _MAX_SUBTRACKS).tolist(), (uniq % _MAX_SUBTRACKS).tolist(), strict=True)):
            uuids[k] = self._declare_one(int(u), int(s))
        return uuids[inverse.reshape(-1)]

    def _declare_one(self, unit: int, sibling: int) -> int:
        packet = pb.TracePacket()
        d = packet.track_descriptor
        uuid = self._uuid()
        d.uuid = uuid
        if self.combos is None:
            label = self.labels[unit]
            d.name = label if sibling == 0 else f"{label} ({sibling + 1})"
            d.description = describe(Identity(source="device", stream=label))
            d.sibling_order_rank = unit
            self._write(packet)
            return uuid
        row = self.combos.iloc[unit]
        track = int(self.idx.combo_track[unit])
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

    def counters(self, f: Any) -> None:
        """Sampled series (host memory, HBM, CPU, Chrome counters) as counter tracks."""
        from ..widgets.counter_series import counter_series

        series = counter_series(self.p)
        origin = self.p.origin_ts
        for s in series.series:
            times, values = series.data[s["key"]]
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
            f.write(trace.SerializeToString())


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
