"""The Perfetto reader's bulk kernels against slow, obviously-right references on random input."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto_traces import BEGIN, COUNTER, END, INSTANT
from test_perfetto_chunks import random_trace

from neuron_widgets.readers.perfetto import wire
from neuron_widgets.readers.perfetto.args import gather
from neuron_widgets.readers.perfetto.state import Generations, Strings


class _Generations:
    """Reference: a dict walk, packet by packet."""

    def __init__(self) -> None:
        self.clears: dict[int, int] = {}
        self.codes: dict[tuple[int, int], int] = {}

    def chunk(self, seq: np.ndarray, cleared: np.ndarray) -> np.ndarray:
        counts = []
        for s, c in zip(seq.tolist(), cleared.tolist(), strict=True):
            self.clears[s] = self.clears.get(s, 0) + int(c)
            counts.append((s, self.clears[s]))
        # New generations are coded in (sequence, count) order.
        for key in sorted(set(counts)):
            self.codes.setdefault(key, len(self.codes))
        return np.array([self.codes[k] for k in counts], np.int32)


@pytest.mark.parametrize("seed", range(40))
def test_generations_match_a_packet_by_packet_walk(seed: int) -> None:
    rng = np.random.default_rng(seed)
    fast, slow = Generations(), _Generations()
    n_seq = int(rng.integers(1, 300))
    pool = (rng.integers(0, 2**32, n_seq, dtype=np.uint64) if seed % 2 else rng.integers(0, 4, n_seq)).astype(np.uint32)
    for _ in range(int(rng.integers(1, 5))):
        n = int(rng.integers(0, 2000))
        seq = rng.choice(pool, n).astype(np.uint32)
        if rng.random() < 0.5:
            seq = np.sort(seq)  # long runs of one sequence
        cleared = rng.random(n) < rng.choice([0.0, 0.01, 0.2, 0.9])
        got, want = fast.chunk(seq, cleared), slow.chunk(seq, cleared)
        assert got.dtype == np.int32 and np.array_equal(got, want)
        assert fast.codes == slow.codes
        assert np.array_equal(fast.sequences, np.unique(seq))


@pytest.mark.parametrize("seed", range(20))
def test_interned_codes_as_a_dict_lookup(seed: int) -> None:
    rng = np.random.default_rng(seed)
    strings, table = Strings(), {}
    for _ in range(3):  # the table grows between chunks, as interned data arrives
        for _ in range(int(rng.integers(0, 30))):
            table.setdefault((int(rng.integers(0, 5)), int(rng.integers(0, 40))), f"n{rng.integers(0, 25)}")
        n = int(rng.integers(0, 3000))
        gen = np.repeat(rng.integers(0, 6, n // 7 + 1), 7)[:n].astype(np.int32)  # runs of one name, as traces have
        iid = np.repeat(rng.integers(0, 45, n // 7 + 1), 7)[:n].astype(np.uint64)
        got = strings.interned(table, gen, iid)
        want = [strings.code[table[(g, i)]] if (g, i) in table else -1 for g, i in zip(gen.tolist(), iid.tolist(), strict=True)]
        assert got.dtype == np.int32 and got.tolist() == want


@pytest.mark.parametrize("seed", range(20))
def test_gathered_bytes_as_slices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    buf = rng.integers(0, 256, 5000).astype(np.uint8)
    n = int(rng.integers(0, 300))
    event = np.sort(rng.choice(n, int(rng.integers(0, n + 1)), replace=False)) if n else np.zeros(0, np.int64)
    off = rng.integers(0, 4900, event.size).astype(np.int32)
    length = rng.integers(0, 100, event.size).astype(np.int32)
    got = gather(buf, n, event.astype(np.int32), off, length)
    listed = dict(zip(event.tolist(), zip(off.tolist(), length.tolist(), strict=True), strict=True))
    assert got.to_pylist() == [bytes(buf[listed[i][0]: sum(listed[i])]) if i in listed else b"" for i in range(n)]
    assert got.type == pa.binary()


def _frame_reference(data: bytes) -> tuple[list[tuple[int, int]], int, int]:
    """Top-level fields read one byte at a time: packets (offset, length), other fields, where reading stopped."""
    def varint(pos: int) -> tuple[int, int] | None:
        v, shift = 0, 0
        while pos < len(data) and shift < 70:
            b = data[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            if b < 0x80:
                return v, pos
            shift += 7
        return None

    pos, packets, other = 0, [], 0
    while pos < len(data):
        got = varint(pos)
        if got is None:
            break
        tag, p = got
        wire_type = tag & 7
        if wire_type == 0:
            got = varint(p)
            if got is None:
                break
            start, nxt = p, got[1]
        elif wire_type in (1, 5):
            start, nxt = p, p + (8 if wire_type == 1 else 4)
            if nxt > len(data):
                break
        elif wire_type == 2:
            got = varint(p)
            if got is None or got[0] > len(data) - got[1]:
                break
            start, nxt = got[1], got[1] + got[0]
        else:
            break
        if tag >> 3 == 1 and wire_type == 2:
            packets.append((start, nxt - start))
        else:
            other += 1
        pos = nxt
    return packets, other, pos


@pytest.mark.parametrize("seed", range(40))
def test_framing_as_a_byte_walk(seed: int) -> None:
    rng = np.random.default_rng(seed)
    out = bytearray()
    for _ in range(int(rng.integers(0, 40))):
        r = rng.random()
        body = bytes(rng.integers(0, 256, int(rng.integers(0, 300))).astype(np.uint8))
        if r < 0.7:  # a packet, its length a one- or two-byte varint
            n = len(body)
            out += b"\x0a" + (bytes([n]) if n < 0x80 else bytes([(n & 0x7F) | 0x80, n >> 7])) + body
        elif r < 0.8:
            out += b"\x10" + bytes([0x85, 0x01])  # field 2, a varint
        elif r < 0.9:
            out += b"\x19" + body[:8].ljust(8, b"\0")  # field 3, fixed64
        else:
            out += bytes(rng.integers(0, 256, int(rng.integers(1, 6))).astype(np.uint8))  # noise
    if rng.random() < 0.5 and out:
        out = out[: int(rng.integers(0, len(out)))]  # cut short
    buf = np.frombuffer(bytes(out), np.uint8)
    off, length, other, stop = wire.frame(buf)
    packets, want_other, want_stop = _frame_reference(bytes(out))
    assert list(zip(off.tolist(), length.tolist(), strict=True)) == packets
    assert (other, stop) == (want_other, want_stop)


def _decoded_by_protobuf(data: bytes) -> dict[str, list]:
    """What decode must find, read with Perfetto's compiled classes: per packet, per event and per list."""
    want: dict[str, list] = {k: [] for k in ("kind", "ts", "seq", "clock", "cleared", "event", "type", "track",
                                              "name_iid", "cat_iid", "names", "cats", "args", "counters", "flows")}
    trace = pb.Trace.FromString(data)
    no_ts = 0
    for i, p in enumerate(trace.packet):
        special = any(p.HasField(f) for f in ("interned_data", "track_descriptor", "process_descriptor",
                                               "thread_descriptor", "clock_snapshot", "trace_packet_defaults",
                                               "process_tree"))
        has_event = p.HasField("track_event")
        want["kind"].append((3 if special else 1) if has_event else (2 if special else 0))
        want["ts"].append(p.timestamp if p.HasField("timestamp") else None)
        want["seq"].append(p.trusted_packet_sequence_id)
        want["clock"].append(p.timestamp_clock_id)
        want["cleared"].append(bool(p.sequence_flags & 1) or p.incremental_state_cleared)
        if not has_event:
            continue
        if not p.HasField("timestamp"):  # not an event: its flow ids are on none
            no_ts += 1
            want["flows"] += [(-1, f) for f in [*p.track_event.flow_ids, *p.track_event.terminating_flow_ids]]
            continue
        te, m = p.track_event, len(want["event"])
        want["event"].append(i)
        want["type"].append(te.type)
        want["track"].append(te.track_uuid if te.HasField("track_uuid") else None)
        want["name_iid"].append(te.name_iid & 0xFFFFFFFF)
        want["cat_iid"].append((te.category_iids[0] if te.category_iids else 0) & 0xFFFFFFFF)
        if te.HasField("name"):
            want["names"].append((m, te.name.encode()))
        if te.categories:
            want["cats"].append((m, te.categories[0].encode()))
        if te.debug_annotations:
            want["args"].append((m, te.SerializeToString()))
        if te.type == pb.TrackEvent.TYPE_COUNTER:
            which = te.WhichOneof("counter_value_field")
            want["counters"].append((m, float(getattr(te, which)) if which else 0.0))
        want["flows"] += sorted((m, f) for f in [*te.flow_ids, *te.terminating_flow_ids])
    want["no_ts"] = [no_ts]
    return want


@pytest.mark.parametrize("seed", range(30))
def test_decode_as_the_protobuf_classes(seed: int) -> None:
    b = random_trace(seed)
    rng = np.random.default_rng(seed)
    for k in range(int(rng.integers(0, 30))):  # events without a time, counters of either kind, flows of both kinds
        kind = int(rng.choice([BEGIN, END, INSTANT, COUNTER]))
        te = b.event(1, int(rng.integers(0, 10**12)), kind, 100, f"n{k}" if rng.random() < 0.5 else k,
                     {"a": k} if rng.random() < 0.5 else None, tuple(rng.integers(1, 9, int(rng.integers(0, 3)))),
                     tuple(rng.integers(1, 9, int(rng.integers(0, 2)))), category="c" if rng.random() < 0.5 else None)
        if kind == COUNTER and rng.random() < 0.5:
            te.counter_value = int(rng.integers(-5, 5))
        if rng.random() < 0.2:
            b.trace.packet[-1].ClearField("timestamp")
    data = b.bytes()
    buf = np.frombuffer(data, np.uint8)
    off, length, _, _ = wire.frame(buf)
    got = wire.decode(buf, off, length)
    want = _decoded_by_protobuf(data)
    assert got.kind.tolist() == want["kind"] and got.seq.tolist() == want["seq"]
    assert [t if h else None for t, h in zip(got.timestamp.tolist(), got.has_ts.tolist(), strict=True)] == want["ts"]
    assert got.clock.tolist() == want["clock"] and got.cleared.tolist() == want["cleared"]
    assert got.ev_packet.tolist() == want["event"] and got.ev_type.tolist() == want["type"]
    assert [t if h else None for t, h in zip(got.track.tolist(), got.has_track.tolist(), strict=True)] == want["track"]
    assert got.name_iid.tolist() == want["name_iid"] and got.cat_iid.tolist() == want["cat_iid"]
    for key, (event, start, size) in {"names": ("name_event", "name_off", "name_len"),
                                      "cats": ("cat_event", "cat_off", "cat_len"),
                                      "args": ("args_event", "args_off", "args_len")}.items():
        found = [(e, bytes(buf[o: o + n])) for e, o, n in zip(getattr(got, event).tolist(), getattr(got, start).tolist(),
                                                                getattr(got, size).tolist(), strict=True)]
        if key == "args":  # the TrackEvent's own bytes, as written: equal to the classes' once parsed
            found = [(e, pb.TrackEvent.FromString(x).SerializeToString()) for e, x in found]
        assert found == want[key]
    assert list(zip(got.counter_event.tolist(), got.counter_value.tolist(), strict=True)) == want["counters"]
    flows = sorted(zip(got.flow_event.tolist(), got.flow_id.tolist(), strict=True))
    assert flows == sorted(want["flows"]) and got.no_ts == want["no_ts"][0] and not got.problems.any()
