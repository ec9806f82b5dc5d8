"""Perfetto's protobuf wire format, decoded in bulk.

A trace is a `Trace` message: field 1 repeated, one `TracePacket` each. Building a Python
object per packet costs microseconds each, which is minutes at tens of millions of events,
so the hot path (packet framing and the TrackEvent fields the model needs) is read here by
one numba pass over the bytes. The few other packets (descriptors, interned data, clock
snapshots, defaults) are handed to the compiled protobuf classes by their byte ranges.
Field numbers are those of Perfetto's public trace proto (protos/perfetto/trace).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

# TracePacket fields the bulk pass reads itself.
_P_TIMESTAMP, _P_CLOCK, _P_SEQ, _P_FLAGS, _P_CLEARED, _P_TRACK_EVENT = 8, 58, 10, 13, 41, 11
# TracePacket fields whose packets go to the protobuf classes (rare, small).
SPECIAL_FIELDS = (12, 60, 43, 44, 6, 59, 2)  # interned_data, track/process/thread descriptor, clocks, defaults, process_tree

# What a packet holds (the `kind` array).
KIND_OTHER, KIND_EVENT, KIND_SPECIAL, KIND_BOTH = 0, 1, 2, 3  # BOTH: an event packet that also interns or describes

# Problems counted by the pass (index into the `problems` array).
PROBLEMS = (
    "packets cut short or malformed (skipped)",
    "fields of an unexpected wire type (skipped)",
    "TrackEvents with legacy thread-relative timestamps (read as absolute)",
    "TrackEvents in the legacy JSON-event form (not drawn)",
)
_P_BAD, _P_WIRE, _P_LEGACY_TS, _P_LEGACY = 0, 1, 2, 3


@numba.njit(cache=True, nogil=True)
def _varint(buf: np.ndarray, pos: int, end: int) -> tuple[np.uint64, int]:
    """The varint at `pos` and the position after it; position -1 if it runs past `end`."""
    if pos < end and buf[pos] < 0x80:  # one byte: most tags, types, lengths and interned ids
        return np.uint64(buf[pos]), pos + 1
    result = np.uint64(0)
    shift = 0
    while pos < end and shift < 70:
        b = buf[pos]
        pos += 1
        result |= np.uint64(b & 0x7F) << np.uint64(shift)
        if b < 0x80:
            return result, pos
        shift += 7
    return np.uint64(0), -1


@numba.njit(cache=True, nogil=True)
def _tag(buf: np.ndarray, pos: int, end: int) -> tuple[int, int, int]:
    """(field number, wire type, position after the tag); position -1 if the tag is cut short."""
    tag, p = _varint(buf, pos, end)
    return int(tag >> np.uint64(3)), int(tag & np.uint64(7)), p


@numba.njit(cache=True, nogil=True)
def _push(flow_packet, flow_id, flow_term, nflow, i, v, terminating) -> int:
    """Append one flow id; -1 when the arrays are full (the caller grows them and starts again)."""
    if nflow == flow_id.size:
        return -1
    flow_packet[nflow] = i
    flow_id[nflow] = v
    flow_term[nflow] = terminating
    return nflow + 1


@numba.njit(cache=True, nogil=True)
def _value(buf: np.ndarray, pos: int, end: int, wire: int) -> tuple[int, int]:
    """A field's value of wire type `wire` at `pos`: (where its payload starts, the position after it).

    The payload of a length-delimited field starts after its length; the position after is -1
    if the value is malformed or cut short. The one place a field's extent is read, so no
    length is decoded twice.
    """
    if wire == 0:
        _, q = _varint(buf, pos, end)
        return pos, q
    if wire == 1:
        return pos, (pos + 8 if pos + 8 <= end else -1)
    if wire == 5:
        return pos, (pos + 4 if pos + 4 <= end else -1)
    if wire == 2:
        n, q = _varint(buf, pos, end)
        if q < 0 or n > np.uint64(end - q):
            return pos, -1
        return q, q + int(n)
    return pos, -1  # groups (3, 4) are not used by Perfetto; 6, 7 do not exist


@numba.njit(cache=True, nogil=True)
def _fixed64(buf: np.ndarray, pos: int) -> np.uint64:
    v = np.uint64(0)
    for k in range(8):
        v |= np.uint64(buf[pos + k]) << np.uint64(8 * k)
    return v


@numba.njit(cache=True, nogil=True)
def split_packets(buf: np.ndarray, out_off: np.ndarray, out_len: np.ndarray) -> tuple[int, int, int]:
    """Frame the Trace: packets' (offset, length). Returns (packets, other top-level fields, stop).

    `stop` is where reading ended: len(buf) for a whole file, less when a length or tag runs
    past the end (a truncated file keeps every packet before that point).
    """
    pos = 0
    n = 0
    other = 0
    end = buf.size
    while pos < end:
        field, wire, p = _tag(buf, pos, end)
        if p < 0:
            return n, other, pos
        start, q = _value(buf, p, end, wire)
        if q < 0:
            return n, other, pos
        if field == 1 and wire == 2:
            if n == out_off.size:
                return n, other, pos  # caller grows and calls again from here
            out_off[n] = start
            out_len[n] = q - start
            n += 1
        else:
            other += 1
        pos = q
    return n, other, pos


@dataclass
class Packets:
    """Per packet: what the bulk pass read. TrackEvent fields are meaningful where kind == 1."""

    kind: np.ndarray  # int8: KIND_*
    timestamp: np.ndarray  # uint64, as written (clock domain in `clock`)
    has_ts: np.ndarray  # bool
    clock: np.ndarray  # uint32 timestamp_clock_id, 0 when not given
    seq: np.ndarray  # uint32 trusted_packet_sequence_id
    cleared: np.ndarray  # bool: incremental state cleared here
    ev_type: np.ndarray  # int8 TrackEvent.Type (0 unspecified, 1 begin, 2 end, 3 instant, 4 counter)
    track: np.ndarray  # uint64 track_uuid
    has_track: np.ndarray  # bool
    name_iid: np.ndarray  # uint32: the low 32 bits, all the interned look-up uses; 0 when not interned
    name_off: np.ndarray  # int32 (int64 past 2 GiB) offset of an inline name, -1 if none
    name_len: np.ndarray  # int32
    cat_iid: np.ndarray  # uint64, first category iid
    cat_off: np.ndarray  # int32 (int64 past 2 GiB), first inline category, -1 if none
    cat_len: np.ndarray  # int32
    ev_off: np.ndarray  # int32 (int64 past 2 GiB): the TrackEvent's bytes, for debug annotations on demand
    ev_len: np.ndarray  # int32
    has_args: np.ndarray  # bool: debug annotations present
    counter: np.ndarray  # float64 counter value (int or double)
    flow_packet: np.ndarray  # int64: packet of each flow id
    flow_id: np.ndarray  # uint64
    flow_terminating: np.ndarray  # bool
    problems: np.ndarray  # int64 counts, see PROBLEMS


@numba.njit(cache=True, nogil=True)
def _decode(buf, off, length, kind, ts, has_ts, clock, seq, cleared, ev_type, track, has_track,
            name_iid, name_off, name_len, cat_iid, cat_off, cat_len, ev_off, ev_len, has_args, counter,
            flow_packet, flow_id, flow_term, problems, special_fields):
    nflow = 0
    for i in range(off.size):
        pos = off[i]
        end = pos + length[i]
        kind[i] = 0
        name_off[i] = -1
        cat_off[i] = -1
        te_start = -1
        te_end = -1
        ok = True
        while pos < end:
            field, wire, p = _tag(buf, pos, end)
            if p < 0:
                ok = False
                break
            if wire == 0 and (field == 8 or field == 58 or field == 10 or field == 13 or field == 41):
                v, p = _varint(buf, p, end)
                if p < 0:
                    ok = False
                    break
                if field == 8:
                    ts[i] = v
                    has_ts[i] = True
                elif field == 58:
                    clock[i] = np.uint32(v)
                elif field == 10:
                    seq[i] = np.uint32(v)
                elif field == 13:
                    if v & np.uint64(1):
                        cleared[i] = True
                elif v != np.uint64(0):
                    cleared[i] = True
                pos = p
                continue
            s, q = _value(buf, p, end, wire)
            if q < 0:
                ok = False
                break
            if field == 11:
                if wire == 2:
                    te_start = s
                    te_end = q
                else:
                    problems[1] += 1
            else:
                for f in special_fields:
                    if f == field:
                        if wire == 2:
                            kind[i] = 2
                        else:
                            problems[1] += 1
            pos = q
        if not ok:
            problems[0] += 1
            kind[i] = 0
            continue
        if te_start < 0:
            continue
        if kind[i] == 2:
            # A packet with a TrackEvent and descriptors/interning: the protobuf classes read the
            # descriptors first, then the event is decoded below like any other.
            kind[i] = 3
        else:
            kind[i] = 1
        ev_off[i] = te_start
        ev_len[i] = te_end - te_start
        pos = te_start
        end = te_end
        while pos < end:
            field, wire, p = _tag(buf, pos, end)
            if p < 0:
                ok = False
                break
            if wire == 0:
                v, q = _varint(buf, p, end)
                if q < 0:
                    ok = False
                    break
                if field == 9:
                    ev_type[i] = np.int8(v) if v < np.uint64(127) else np.int8(-1)
                elif field == 11:
                    track[i] = v
                    has_track[i] = True
                elif field == 10:
                    name_iid[i] = np.uint32(v & np.uint64(0xFFFFFFFF))
                elif field == 3:
                    if cat_iid[i] == np.uint64(0):
                        cat_iid[i] = v
                elif field == 30:
                    counter[i] = np.float64(np.int64(v))
                elif field == 36 or field == 42:
                    nflow = _push(flow_packet, flow_id, flow_term, nflow, i, v, field == 42)
                    if nflow < 0:
                        return -1, i  # caller grows and restarts
                elif field == 1 or field == 16:
                    problems[2] += 1
                pos = q
                continue
            s, q = _value(buf, p, end, wire)
            if q < 0:
                ok = False
                break
            if wire == 2:
                if field == 23:
                    name_off[i] = s
                    name_len[i] = q - s
                elif field == 22:
                    if cat_off[i] < 0:
                        cat_off[i] = s
                        cat_len[i] = q - s
                elif field == 4:
                    has_args[i] = True
                elif field == 6:
                    problems[3] += 1
                elif field == 47 or field == 48:  # packed fixed64 flow ids
                    k = s
                    while k + 8 <= q:
                        nflow = _push(flow_packet, flow_id, flow_term, nflow, i, _fixed64(buf, k), field == 48)
                        if nflow < 0:
                            return -1, i
                        k += 8
                elif field == 3 or field == 36 or field == 42:  # packed varints
                    k = s
                    while k < q:
                        v, k = _varint(buf, k, q)
                        if k < 0:
                            break
                        if field == 3:
                            if cat_iid[i] == np.uint64(0):
                                cat_iid[i] = v
                        else:
                            nflow = _push(flow_packet, flow_id, flow_term, nflow, i, v, field == 42)
                            if nflow < 0:
                                return -1, i
                elif field == 9 or field == 11 or field == 10 or field == 30:
                    problems[1] += 1
            elif wire == 1:
                if field == 44:
                    counter[i] = buf[p:p + 8].view(np.float64)[0]
                elif field == 47 or field == 48:
                    nflow = _push(flow_packet, flow_id, flow_term, nflow, i, _fixed64(buf, p), field == 48)
                    if nflow < 0:
                        return -1, i
            pos = q
        if not ok:
            problems[0] += 1
            kind[i] = 0
    return nflow, off.size


def decode(buf: np.ndarray, off: np.ndarray, length: np.ndarray) -> Packets:
    """Read every packet's header fields and TrackEvent (see Packets)."""
    n = off.size
    z = np.zeros
    at = np.int32 if buf.size < 2**31 else np.int64  # offsets into the chunk: half the memory as a rule
    p = Packets(kind=z(n, np.int8), timestamp=z(n, np.uint64), has_ts=z(n, bool), clock=z(n, np.uint32),
                seq=z(n, np.uint32), cleared=z(n, bool), ev_type=z(n, np.int8), track=z(n, np.uint64),
                has_track=z(n, bool), name_iid=z(n, np.uint32), name_off=z(n, at), name_len=z(n, np.int32),
                cat_iid=z(n, np.uint64), cat_off=z(n, at), cat_len=z(n, np.int32), ev_off=z(n, at),
                ev_len=z(n, np.int32), has_args=z(n, bool), counter=z(n, np.float64),
                flow_packet=z(0, np.int64), flow_id=z(0, np.uint64), flow_terminating=z(0, bool),
                problems=z(len(PROBLEMS), np.int64))
    special = np.array(SPECIAL_FIELDS, dtype=np.int64)
    cap = max(1024, n // 8)
    while True:
        fp, fi, ft = z(cap, np.int64), z(cap, np.uint64), z(cap, bool)
        p.problems[:] = 0
        p.cleared[:] = False
        p.cat_iid[:] = 0
        p.has_args[:] = False
        nflow, done = _decode(buf, off, length, p.kind, p.timestamp, p.has_ts, p.clock, p.seq, p.cleared,
                              p.ev_type, p.track, p.has_track, p.name_iid, p.name_off, p.name_len, p.cat_iid,
                              p.cat_off, p.cat_len, p.ev_off, p.ev_len, p.has_args, p.counter, fp, fi, ft,
                              p.problems, special)
        if done == n:
            p.flow_packet, p.flow_id, p.flow_terminating = fp[:nflow], fi[:nflow], ft[:nflow]
            return p
        cap *= 4  # more flow ids than room: rare, so start over with room to spare


def frame(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Packets' offsets and lengths, top-level fields that are not packets, and where reading stopped."""
    # Room for packets of 24 bytes on average (a track event takes 20-40), int32 under 2 GiB: one pass
    # as a rule, with the room a quarter of the bytes framed. Smaller packets take more passes, joined.
    cap = buf.size // 24 + 1024
    at = np.int32 if buf.size < 2**31 else np.int64
    offs, lens = [], []
    start, other = 0, 0
    while True:
        o, ln = np.empty(cap, at), np.empty(cap, at)
        n, oth, stop = split_packets(buf[start:] if start else buf, o, ln)
        offs.append(o[:n] + start if start else o[:n])
        lens.append(ln[:n])
        other += oth
        if n < cap or stop + start >= buf.size:
            if len(offs) == 1:
                return offs[0], lens[0], other, start + stop
            return np.concatenate(offs), np.concatenate(lens), other, start + stop
        start += stop


def warm() -> None:
    """Compile the kernels on a tiny trace (numba caches them on disk after the first time)."""
    buf = np.frombuffer(bytes([0x0A, 0x04, 0x40, 0x01, 0x50, 0x01]), dtype=np.uint8)
    off, ln, _, _ = frame(buf)
    decode(buf, off, ln)
