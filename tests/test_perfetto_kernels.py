"""The Perfetto reader's bulk kernels against slow, obviously-right references on random input."""

from __future__ import annotations

import numpy as np
import pytest

from neuron_widgets.readers.perfetto import wire
from neuron_widgets.readers.perfetto.args import gather
from neuron_widgets.readers.perfetto.reader import _by_track
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


@pytest.mark.parametrize("seed", range(30))
def test_events_by_track_as_a_lexsort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(0, 4000)), int(rng.integers(1, 60))
    codes = rng.integers(0, k, n).astype(np.int32)
    ts = np.sort(rng.integers(0, 500, n)).astype(np.int64)  # many ties
    back = rng.random(n) < rng.choice([0.0, 0.01, 0.3])
    ts[back] = rng.integers(0, 500, int(back.sum()))
    for index in (np.int32, np.int64):
        got = _by_track(codes, ts, k, index)
        assert got.dtype == index
        assert np.array_equal(got, np.lexsort((ts, codes)))


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
    off = rng.integers(0, 4900, n).astype(np.int64)
    length = rng.integers(0, 100, n).astype(np.int32)
    keep = rng.random(n) < 0.6
    rows = np.sort(rng.choice(n, int(rng.integers(0, n + 1)), replace=False)) if n else np.zeros(0, np.int64)
    got = gather(buf, off, length, rows, keep).to_pylist()
    assert got == [bytes(buf[off[r]: off[r] + length[r]]) if keep[r] else b"" for r in rows.tolist()]
    assert gather(buf, off, length).to_pylist() == [bytes(buf[o: o + m]) for o, m in zip(off, length, strict=True)]


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
