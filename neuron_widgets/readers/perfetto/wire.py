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
    """What the bulk pass read: per packet its own fields; per event (a packet whose TrackEvent was
    read whole and that has a timestamp), in file order, the TrackEvent's fields; and lists of the
    rarer fields (inline names, annotations, counter values, flow ids), each by event."""

    kind: np.ndarray  # int8 per packet: KIND_*
    timestamp: np.ndarray  # uint64, as written (clock domain in `clock`)
    has_ts: np.ndarray  # bool
    clock: np.ndarray  # uint32 timestamp_clock_id, 0 when not given
    seq: np.ndarray  # uint32 trusted_packet_sequence_id
    cleared: np.ndarray  # bool: incremental state cleared here
    ev_packet: np.ndarray  # per event: its packet (int32 under 2 GiB of chunk, else int64)
    ev_type: np.ndarray  # int8 TrackEvent.Type (0 unspecified, 1 begin, 2 end, 3 instant, 4 counter)
    track: np.ndarray  # uint64 track_uuid
    has_track: np.ndarray  # bool
    name_iid: np.ndarray  # uint32: the low 32 bits, all the interned look-up uses; 0 when not interned
    cat_iid: np.ndarray  # uint32: the low 32 bits of the first category iid
    name_event: np.ndarray  # events with an inline name (ascending), and where its bytes are
    name_off: np.ndarray
    name_len: np.ndarray  # int32
    cat_event: np.ndarray  # events with an inline category (the first), and where its bytes are
    cat_off: np.ndarray
    cat_len: np.ndarray  # int32
    args_event: np.ndarray  # events with debug annotations, and where their TrackEvent's bytes are
    args_off: np.ndarray
    args_len: np.ndarray  # int32
    counter_event: np.ndarray  # counter events (type 4), and their value (int or double)
    counter_value: np.ndarray  # float64
    flow_event: np.ndarray  # int64: the event of each flow id, -1 on a packet that is not an event
    flow_id: np.ndarray  # uint64
    no_ts: int  # TrackEvents read whole but without a timestamp (not events)
    problems: np.ndarray  # int64 counts, see PROBLEMS


@numba.njit(cache=True, nogil=True)
def _decode(buf, off, length, kind, ts, has_ts, clock, seq, cleared, ev_packet, ev_type, track, has_track,
            name_iid, cat_iid, lists, sizes, counter_value, flow_event, flow_id, problems, special_fields):
    """Fill the arrays of Packets. `lists` [kind, k] holds the rare fields' lists (inline names:
    event, offset, length; inline categories; annotations; counter events), `sizes` their lengths
    and, last, the events' and the flows' counts and the events without a timestamp. Stops at a
    packet whose flow ids find no room: (False, that packet)."""
    nflow = 0
    m = 0
    no_ts = 0
    n_names, n_cats, n_args, n_counters = 0, 0, 0, 0
    for i in range(off.size):
        pos = off[i]
        end = pos + length[i]
        kind[i] = 0
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
        # The TrackEvent goes in slot m; what it adds to the lists is taken back if it turns out not to be an event.
        typ = np.int8(0)
        trk = np.uint64(0)
        htrk = False
        niid = np.uint32(0)
        ciid = np.uint64(0)
        cnt = 0.0
        named, catted, argued = n_names, n_cats, n_args
        flows_from = nflow
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
                    typ = np.int8(v) if v < np.uint64(127) else np.int8(-1)
                elif field == 11:
                    trk = v
                    htrk = True
                elif field == 10:
                    niid = np.uint32(v & np.uint64(0xFFFFFFFF))
                elif field == 3:
                    if ciid == np.uint64(0):
                        ciid = v
                elif field == 30:
                    cnt = np.float64(np.int64(v))
                elif field == 36 or field == 42:
                    if nflow == flow_id.size:
                        return False, i
                    flow_event[nflow] = m
                    flow_id[nflow] = v
                    nflow += 1
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
                    if n_names == named:
                        n_names += 1
                    lists[0, named] = m
                    lists[1, named] = s
                    lists[2, named] = q - s
                elif field == 22:
                    if n_cats == catted:
                        lists[3, catted] = m
                        lists[4, catted] = s
                        lists[5, catted] = q - s
                        n_cats += 1
                elif field == 4:
                    if n_args == argued:
                        lists[6, argued] = m
                        lists[7, argued] = te_start
                        lists[8, argued] = te_end - te_start
                        n_args += 1
                elif field == 6:
                    problems[3] += 1
                elif field == 47 or field == 48:  # packed fixed64 flow ids
                    k = s
                    while k + 8 <= q:
                        if nflow == flow_id.size:
                            return False, i
                        flow_event[nflow] = m
                        flow_id[nflow] = _fixed64(buf, k)
                        nflow += 1
                        k += 8
                elif field == 3 or field == 36 or field == 42:  # packed varints
                    k = s
                    while k < q:
                        v, k = _varint(buf, k, q)
                        if k < 0:
                            break
                        if field == 3:
                            if ciid == np.uint64(0):
                                ciid = v
                        else:
                            if nflow == flow_id.size:
                                return False, i
                            flow_event[nflow] = m
                            flow_id[nflow] = v
                            nflow += 1
                elif field == 9 or field == 11 or field == 10 or field == 30:
                    problems[1] += 1
            elif wire == 1:
                if field == 44:
                    cnt = buf[p:p + 8].view(np.float64)[0]
                elif field == 47 or field == 48:
                    if nflow == flow_id.size:
                        return False, i
                    flow_event[nflow] = m
                    flow_id[nflow] = _fixed64(buf, p)
                    nflow += 1
            pos = q
        if not ok:
            problems[0] += 1
            kind[i] = 0
        else:
            # A packet with a TrackEvent and descriptors/interning: the protobuf classes read the
            # descriptors first, then the event is read like any other.
            kind[i] = 3 if kind[i] == 2 else 1
        if not ok or not has_ts[i]:
            if ok:
                no_ts += 1
            n_names, n_cats, n_args = named, catted, argued
            for f in range(flows_from, nflow):
                flow_event[f] = -1
            continue
        if typ == 4:
            lists[9, n_counters] = m
            counter_value[n_counters] = cnt
            n_counters += 1
        ev_packet[m] = i
        ev_type[m] = typ
        track[m] = trk
        has_track[m] = htrk
        name_iid[m] = niid
        cat_iid[m] = np.uint32(ciid & np.uint64(0xFFFFFFFF))
        m += 1
    sizes[0], sizes[1], sizes[2], sizes[3] = n_names, n_cats, n_args, n_counters
    sizes[4], sizes[5], sizes[6] = m, nflow, no_ts
    return True, off.size


def decode(buf: np.ndarray, off: np.ndarray, length: np.ndarray) -> Packets:
    """Read every packet's own fields and TrackEvent (see Packets)."""
    n = off.size
    z, e = np.zeros, np.empty
    at = np.int32 if buf.size < 2**31 else np.int64  # offsets into the chunk: half the memory as a rule
    # Per event and per list entry, room for every packet is taken but only what is written is touched.
    lists = e((10, n), at)
    special = np.array(SPECIAL_FIELDS, dtype=np.int64)
    cap = max(1024, n // 8)
    while True:
        kind, ts, has_ts, clock = e(n, np.int8), z(n, np.uint64), z(n, bool), z(n, np.uint32)
        seq, cleared = z(n, np.uint32), z(n, bool)
        ev_packet, ev_type, track, has_track = e(n, at), e(n, np.int8), e(n, np.uint64), e(n, bool)
        name_iid, cat_iid, counter_value = e(n, np.uint32), e(n, np.uint32), e(n, np.float64)
        flow_event, flow_id = e(cap, np.int64), e(cap, np.uint64)
        sizes, problems = z(7, np.int64), z(len(PROBLEMS), np.int64)
        done, _ = _decode(buf, off, length, kind, ts, has_ts, clock, seq, cleared, ev_packet, ev_type, track,
                          has_track, name_iid, cat_iid, lists, sizes, counter_value, flow_event, flow_id, problems,
                          special)
        if done:
            break
        cap *= 4  # more flow ids than room: rare, so start over with room to spare
    names, cats, args, counters, m, nflow, no_ts = sizes.tolist()
    return Packets(kind=kind, timestamp=ts, has_ts=has_ts, clock=clock, seq=seq, cleared=cleared,
                   ev_packet=ev_packet[:m], ev_type=ev_type[:m], track=track[:m], has_track=has_track[:m],
                   name_iid=name_iid[:m], cat_iid=cat_iid[:m],
                   name_event=lists[0, :names], name_off=lists[1, :names], name_len=lists[2, :names],
                   cat_event=lists[3, :cats], cat_off=lists[4, :cats], cat_len=lists[5, :cats],
                   args_event=lists[6, :args], args_off=lists[7, :args], args_len=lists[8, :args],
                   counter_event=lists[9, :counters], counter_value=counter_value[:counters],
                   flow_event=flow_event[:nflow], flow_id=flow_id[:nflow], no_ts=no_ts, problems=problems)


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
