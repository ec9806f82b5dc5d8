"""The Perfetto reader reads a trace chunk by chunk: any chunk size gives the same Profile.

Random traces mix what carries state from one packet to the next (interning cleared and
re-interned per sequence, sequence defaults, sequence-scoped incremental clocks with
snapshots mid-stream, flows, counters, annotations), so chunk boundaries fall everywhere.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto_traces import BEGIN, COUNTER, END, INSTANT, Builder

import neuron_widgets as nw
from neuron_widgets.readers.perfetto import reader as perfetto

WORDS = ["nc_exec_running", "nrt_execute", "cc_running", "matmul", "<b>x</b>", "ünï", "dma"]


def random_trace(seed: int) -> Builder:
    rng = np.random.default_rng(seed)
    b = Builder()
    b.process(1, 10, "python")
    threads = {}
    for k in range(int(rng.integers(1, 4))):
        threads[100 + k] = 20 + k
        b.thread(100 + k, 10, 20 + k, f"worker {k}")
    b.named(50, "mem", parent=1, counter=True)
    seqs = list(range(1, int(rng.integers(2, 5))))
    clock_of: dict[int, int] = {}
    now: dict[int, int] = {}
    for s in seqs:
        if rng.random() < 0.5:  # sequence-scoped incremental clock, as the SDK writes by default
            clock_of[s] = 64
    open_: dict[int, int] = {u: 0 for u in threads}
    flow = 1
    for _ in range(int(rng.integers(20, 120))):
        s = int(rng.choice(seqs))
        r = rng.random()
        if r < 0.06 or s not in now:
            p = b.packet(s)
            p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            for iid in range(1, 4):
                e = p.interned_data.event_names.add()
                e.iid, e.name = iid, str(rng.choice(WORDS))
            e = p.interned_data.debug_annotation_names.add()
            e.iid, e.name = 1, "size"
            if s in clock_of:
                p.trace_packet_defaults.timestamp_clock_id = clock_of[s]
            if rng.random() < 0.5:
                p.trace_packet_defaults.track_event_defaults.track_uuid = int(rng.choice(list(threads)))
            if s in clock_of:
                base = int(rng.integers(1_000, 5_000)) * 1000
                snap = b.packet(s)
                snap.timestamp, snap.timestamp_clock_id = base, 6
                for cid, value, inc in ((6, base, False), (64, 0, True)):
                    c = snap.clock_snapshot.clocks.add()
                    c.clock_id, c.timestamp, c.is_incremental = cid, value, inc
                now[s] = 0
            else:
                now[s] = now.get(s, int(rng.integers(0, 1000)) * 1000)
            continue
        delta = int(rng.integers(1, 500))
        now[s] += delta
        ts = delta if s in clock_of else now[s]
        track = int(rng.choice(list(threads)))
        name: str | int = int(rng.integers(1, 4)) if rng.random() < 0.5 else str(rng.choice(WORDS))
        kinds = [BEGIN, INSTANT, COUNTER] + ([END] if open_[track] else [])
        kind = int(rng.choice(kinds))
        if kind == BEGIN:
            open_[track] += 1
        elif kind == END:
            open_[track] -= 1
        args = {1: int(rng.integers(0, 99)), "who": str(rng.choice(WORDS))} if rng.random() < 0.4 else None
        flows = (flow,) if rng.random() < 0.1 else ()
        term = (flow - 1,) if flow > 1 and rng.random() < 0.1 else ()
        flow += bool(flows)
        if kind == COUNTER:
            b.event(s, ts, kind, 50, value=float(rng.integers(0, 100)))
        else:
            b.event(s, ts, kind, track, name if kind != END else None, args, flows, term,
                    category=str(rng.choice(["a", "b"])) if rng.random() < 0.3 else None)
    return b


def frame(p: nw.Profile) -> pd.DataFrame:
    cols = ["name", "start_ts", "end_ts", "process_id", "thread_id", "category", "extra_attributes_json", "flow_id"]
    df = p.events.reset_index(drop=True)[cols].astype(str)
    return df.sort_values(cols).reset_index(drop=True)


def counters(p: nw.Profile) -> pd.DataFrame:
    return p.counters.get("counters").reset_index(drop=True)


@pytest.mark.parametrize("seed", range(40))
def test_any_chunk_size_reads_the_same_profile(tmp_path: Path, seed: int) -> None:
    path = random_trace(seed).write(tmp_path / f"r{seed}.pftrace")
    whole = perfetto.parse(path, chunk_bytes=1 << 30)
    rng = np.random.default_rng(seed)
    for size in (1, int(rng.integers(2, 64)), int(rng.integers(64, 2048))):
        part = perfetto.parse(path, chunk_bytes=size)
        pd.testing.assert_frame_equal(frame(part), frame(whole))
        pd.testing.assert_frame_equal(counters(part), counters(whole))
        assert part.warnings.counts == whole.warnings.counts
        assert part.metadata["perfetto"] == whole.metadata["perfetto"]


def test_incremental_clock_carried_across_chunks(tmp_path: Path) -> None:
    b = Builder()
    b.thread(9, 10, 11)
    b.scoped_clock(1, track=9, boottime=1_000_000, start=500)
    for k in range(200):  # each 10 ns after the one before
        b.event(1, 10, BEGIN if k % 2 == 0 else END, None, "step" if k % 2 == 0 else None)
    path = b.write(tmp_path / "inc.pftrace")
    for size in (7, 100, 1 << 20):
        got = perfetto.parse(path, chunk_bytes=size).events.sort_values("start_ts")
        assert got["start_ts"].tolist() == [1_000_010 + 20 * k for k in range(100)]
        assert (got["duration_ns"] == 10).all()


def test_a_packet_bigger_than_a_chunk_is_read_whole(tmp_path: Path) -> None:
    b = Builder()
    b.thread(1, 10, 11)
    b.event(1, 100, BEGIN, 1, "big", {"blob": "x" * 50_000})
    b.event(1, 200, END, 1)
    path = b.write(tmp_path / "big.pftrace")
    p = perfetto.parse(path, chunk_bytes=100)
    assert json.loads(p.events["extra_attributes_json"].iloc[0])["blob"] == "x" * 50_000
    assert not p.warnings


def test_cut_gzip_keeps_the_packets_before(tmp_path: Path) -> None:
    b = random_trace(3)
    for k in range(3000):
        b.event(1, 10_000_000 + k * 10, INSTANT, 100, f"late {k}")
    data = gzip.compress(b.bytes())
    path = tmp_path / "cut.pftrace.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    p = perfetto.parse(path, chunk_bytes=4096)
    assert 0 < len(p) < 3000
    assert any("compressed data is damaged or cut short" in k and "cut.pftrace.gz" in k for k in p.warnings)
    head = tmp_path / "head.pftrace.gz"
    head.write_bytes(data[:30])
    with pytest.raises(nw.ProfileError, match=r"head\.pftrace\.gz: the compressed data is damaged or cut short"):
        nw.load_profile(head, cache=False)


@pytest.mark.parametrize("seed", range(6))
def test_gzip_in_several_members_reads_as_the_plain_trace(tmp_path: Path, seed: int) -> None:
    # `cat a.gz b.gz` (or gzip -c appended to a file) is one valid gzip stream of several members;
    # cut anywhere, as a writer flushing members does, the trace reads as the plain one, in any chunk.
    raw = random_trace(seed).bytes()
    plain = tmp_path / f"r{seed}.pftrace"
    plain.write_bytes(raw)
    cuts = sorted(np.random.default_rng(seed).integers(1, len(raw), 3).tolist())
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    packed = tmp_path / f"r{seed}.pftrace.gz"
    packed.write_bytes(b"".join(gzip.compress(p) for p in pieces))
    whole = perfetto.parse(plain)
    for size in (97, 1 << 20):
        got = perfetto.parse(packed, chunk_bytes=size)
        pd.testing.assert_frame_equal(frame(got), frame(whole))
        assert {k.replace(".pftrace.gz", ".pftrace"): v for k, v in got.warnings.counts.items()} == whole.warnings.counts


def test_gzip_whose_check_fails_is_named(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(random_trace(1).bytes()))
    data[-8] ^= 0xFF  # the trailer's CRC: every byte inflates, the check says they are not what was written
    path = tmp_path / "crc.pftrace.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(nw.ProfileError, match=r"crc\.pftrace\.gz: the compressed data is damaged or cut short "
                                              r"\(CRC check failed"):
        nw.load_profile(path, cache=False)
