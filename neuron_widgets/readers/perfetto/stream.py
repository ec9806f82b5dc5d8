"""A Perfetto trace read chunk by chunk, so the reader's memory follows the events it keeps.

Each chunk of the file (about CHUNK_BYTES, decompressed) is framed into packets and decoded
in bulk; its descriptor, interning and clock packets go into the state carried from chunk to
chunk (generations, interned tables, running sequence clocks), and its track events are
reduced to the few columns the Profile is built from (~40 bytes each): time, clock, type,
track, name and category codes, generation, and the bytes of their debug annotations. The
chunk's bytes and per-packet arrays are dropped before the next chunk is read.
"""

from __future__ import annotations

import io
import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pyarrow as pa

from ...errors import LoadWarnings, ProfileError
from ...memory import trim
from ...progress import progress
from ..sniff import open_stream, packet_limit, stream_errors, too_big
from . import wire
from .args import gather
from .clocks import Clocks
from .state import Generations, State, Strings, absorb, finish

# Decompressed bytes read at a time: the per-packet arrays of one chunk are ~6x this.
CHUNK_BYTES = 16 << 20
_ADVICE_CUT = "The file may be cut short (still being written, or copied incompletely); record or copy it again"


@dataclass
class Events:
    """The trace's track events in file order, one entry each."""

    ts: np.ndarray  # int64, sequence-scoped clocks resolved; other clocks still as recorded
    clock: np.ndarray  # int32 clock id
    typ: np.ndarray  # int8 TrackEvent.Type
    track: np.ndarray  # uint64 track uuid (explicit, the sequence's default, or (1 << 63) | sequence)
    name: np.ndarray  # int32 code into Scan.names, -1 none
    cat: np.ndarray  # int32 code into Scan.categories, -1 none
    gen: np.ndarray  # int32 sequence generation (for interned annotation names)
    blobs: pa.ChunkedArray  # each event's TrackEvent bytes if it has annotations, then one empty entry
    counter_event: np.ndarray  # int64 event of each counter value
    counter_value: np.ndarray  # float64
    flow_event: np.ndarray  # int64 event of each flow id, -1 on a packet that is not a kept event
    flow_id: np.ndarray  # uint64


@dataclass
class Scan:
    events: Events
    state: State
    names: Strings
    categories: Strings
    packets: int
    sequences: int
    problems: np.ndarray  # counts, see wire.PROBLEMS
    other_fields: int  # top-level fields that are not packets
    no_ts: int  # track events without a timestamp
    other_kinds: int  # packets of kinds not shown


@numba.njit(cache=True, nogil=True)
def _hash_ranges(buf: np.ndarray, off: np.ndarray, length: np.ndarray) -> np.ndarray:
    """FNV-1a of each byte range, to find the distinct inline names at once."""
    out = np.zeros(off.size, np.uint64)
    for i in range(off.size):
        h = np.uint64(14695981039346656037)
        for j in range(off[i], off[i] + length[i]):
            h = (h ^ np.uint64(buf[j])) * np.uint64(1099511628211)
        out[i] = h
    return out


@dataclass
class _Collect:
    """What each chunk adds, kept as lists of small arrays until the end."""

    state: State = field(default_factory=State)
    gens: Generations = field(default_factory=Generations)
    clocks: Clocks = field(default_factory=Clocks)
    names: Strings = field(default_factory=Strings)
    categories: Strings = field(default_factory=Strings)
    cols: dict[str, list[np.ndarray]] = field(default_factory=dict)
    blobs: list[pa.Array] = field(default_factory=list)
    sequences: set[int] = field(default_factory=set)
    problems: np.ndarray = field(default_factory=lambda: np.zeros(len(wire.PROBLEMS), np.int64))
    packets: int = 0
    events: int = 0
    other_fields: int = 0
    no_ts: int = 0
    other_kinds: int = 0

    def put(self, **arrays: np.ndarray) -> None:
        for k, v in arrays.items():
            self.cols.setdefault(k, []).append(v)

    def chunk(self, raw: bytes, buf: np.ndarray, off: np.ndarray, length: np.ndarray) -> None:
        p = wire.decode(buf, off, length)
        state, first = self.state, self.packets
        self.packets += off.size
        self.problems += p.problems
        gen = self.gens.chunk(p.seq, p.cleared)
        known = len(state.snapshots)
        absorb(state, raw, off, length, p, gen, first)
        snapshots = [(i - first, s, c) for i, s, c in state.snapshots[known:]]
        ev = p.ev_packet
        ts, clock = self.clocks.events(p, gen, state, snapshots, ev)
        self.sequences.update(self.gens.sequences.tolist())
        self.no_ts += p.no_ts
        self.other_kinds += int(np.count_nonzero(p.kind == wire.KIND_OTHER)) - int(p.problems[0])
        g = gen[ev]
        del gen
        self.put(ts=ts, clock=clock, typ=p.ev_type, gen=g, track=self._tracks(p, g),
                 name=self._texts(self.names, state.names, buf, g, p.name_iid, p.name_event, p.name_off, p.name_len),
                 cat=self._texts(self.categories, state.categories, buf, g, p.cat_iid, p.cat_event, p.cat_off, p.cat_len),
                 counter_event=p.counter_event.astype(np.int64) + self.events, counter_value=p.counter_value.copy())
        self.blobs.append(gather(buf, ev.size, p.args_event, p.args_off, p.args_len))
        if p.flow_id.size:
            self.put(flow_event=np.where(p.flow_event >= 0, p.flow_event + self.events, -1), flow_id=p.flow_id.copy())
        self.events += ev.size

    def _tracks(self, p: wire.Packets, gen: np.ndarray) -> np.ndarray:
        """Each event's track: explicit, its generation's default, or (older SDKs) its sequence's thread
        (filled into the decoded array, which is the events' own)."""
        uuid = p.track
        missing = ~p.has_track
        if missing.any():
            defaults = self.state.default_track
            for g in np.unique(gen[missing]).tolist():
                sel = missing & (gen == g)
                if g in defaults:
                    uuid[sel] = defaults[g]
                else:
                    uuid[sel] = np.uint64((1 << 63) | int(p.seq[p.ev_packet[np.flatnonzero(sel)[0]]]))
        return uuid

    def _texts(self, strings: Strings, table: dict[tuple[int, int], str], buf: np.ndarray, gen: np.ndarray,
               iid: np.ndarray, inline: np.ndarray, off: np.ndarray, length: np.ndarray) -> np.ndarray:
        """Codes of each event's text (`gen`: the events' generations, `iid` their interned ids; `inline`:
        the events that give the text itself, at `off`, `length`): inline where given, else interned; -1
        for neither."""
        codes = strings.interned(table, gen, iid)
        if inline.size:
            o, n = off.astype(np.int64), length.astype(np.int64)
            _u, first, inv = np.unique(_hash_ranges(buf, o, n), return_index=True, return_inverse=True)
            words, broken = [], []
            for k, f in enumerate(first.tolist()):
                raw = bytes(buf[o[f]: o[f] + n[f]])
                try:
                    words.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    words.append(raw.decode("utf-8", "replace"))
                    broken.append(k)
            inv = inv.reshape(-1)
            if broken:  # counted per event, as the interned names that are not UTF-8 are counted per name
                self.state.bad_text += int(np.isin(inv, broken).sum())
            codes[inline] = strings.of(words)[inv]
        return codes

    def result(self) -> Scan:
        def cat(key: str, dtype: type) -> np.ndarray:
            parts = self.cols.pop(key, [])
            many = len(parts) > 1
            whole: np.ndarray = np.concatenate(parts).astype(dtype, copy=False) if many else \
                parts[0].astype(dtype, copy=False) if parts else np.zeros(0, dtype)
            del parts
            if many:  # the chunks' pieces sit in the heap: hand them back before the next column is joined
                trim()
            return whole

        # Each chunk's annotation bytes with 32-bit offsets; 64-bit if a chunk (its packets' bound raised) passes 2 GiB.
        kind = pa.large_binary() if any(b.type == pa.large_binary() for b in self.blobs) else pa.binary()
        parts = [b if b.type == kind else b.cast(kind) for b in self.blobs]
        blobs = pa.chunked_array([*parts, pa.array([b""], kind)], kind)
        self.blobs = []
        del parts
        events = Events(ts=cat("ts", np.int64), clock=cat("clock", np.int32), typ=cat("typ", np.int8),
                        track=cat("track", np.uint64), name=cat("name", np.int32), cat=cat("cat", np.int32),
                        gen=cat("gen", np.int32), blobs=blobs, counter_event=cat("counter_event", np.int64),
                        counter_value=cat("counter_value", np.float64), flow_event=cat("flow_event", np.int64),
                        flow_id=cat("flow_id", np.uint64))
        return Scan(events, self.state, self.names, self.categories, self.packets, len(self.sequences),
                    self.problems, self.other_fields, self.no_ts, self.other_kinds)


def _pending(tail: bytes) -> tuple[int, int] | None:
    """The top-level field at the start of `tail`: how many bytes it takes, and how many of them are
    its header (tag and length). None while its header is cut short; (-1, 0) if no more bytes could
    make it a field (a wire type that does not exist, a varint past ten bytes)."""
    pos, values = 0, []
    for _ in range(2):
        v, shift = 0, 0
        while True:
            if pos >= len(tail):
                return None
            if shift > 63:
                return -1, 0
            b = tail[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        values.append(v)
        wire = values[0] & 7
        if len(values) == 1 and wire in (1, 5):
            return pos + (8 if wire == 1 else 4), pos
        if len(values) == 1 and wire not in (0, 2):
            return -1, 0
    return (pos, pos) if values[0] & 7 == 0 else (pos + values[1], pos)


def _drain(f: Any, n: int | None, errors: tuple[type[BaseException], ...]) -> tuple[int, str | None]:
    """Read up to `n` bytes (None: to the end) from `f` and drop them: how many there were, and why
    the data broke off if it did."""
    got = 0
    while n is None or got < n:
        try:
            piece = len(f.read(CHUNK_BYTES if n is None else min(n - got, CHUNK_BYTES)))
        except errors as exc:
            return got, str(exc) or type(exc).__name__
        if not piece:
            break
        got += piece
    return got, None


def _mapped(f: Any, want: int) -> Any:
    """An uncompressed file that fits in one chunk, mapped rather than copied (its pages come from the
    page cache; a copy took fresh memory the size of the file); None for anything else. The file's
    position moves to its end, as a read of it all would. As for the Neuron JSON readers' mapping, a
    file truncated by another process during the read is not guarded against."""
    if not isinstance(f, io.BufferedReader) or f.tell() != 0:
        return None
    try:
        size = os.fstat(f.fileno()).st_size
        if not 0 < size <= want:
            return None
        view = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0), prot=mmap.PROT_READ)
    except (OSError, ValueError, TypeError):
        return None
    f.seek(size)
    return view


def scan(path: Path, warnings: LoadWarnings, chunk_bytes: int | None = None) -> Scan:
    """Read the trace at `path` chunk by chunk (see the module's doc)."""
    step = chunk_bytes or CHUNK_BYTES
    want, origin = step, path.name
    c = _Collect()
    tail, before = b"", 0  # bytes carried into the next chunk; decompressed bytes before them
    broken: str | None = None
    limit = packet_limit()
    before_end: int | None = None  # where the data ended, when it ended inside a packet read past
    with open_stream(path) as f, progress(f"reading {origin}", None, "B") as bar:
        while True:
            try:
                data = _mapped(f, want) if not tail else None
                if data is None:
                    data = f.read(want)
            except stream_errors() as exc:
                data, broken = b"", str(exc) or type(exc).__name__
            raw = tail + data if tail else data
            buf = np.frombuffer(raw, np.uint8)
            off, length, other, stop = wire.frame(buf)
            c.other_fields += other
            if off.size and int(length.max()) > limit:  # one within a chunk: refused alike, whatever the chunk size
                big = int(np.argmax(length))
                raise too_big(path, f"holds a packet of {int(length[big]):,} bytes at byte {before + int(off[big]):,}, "
                              f"past the bound on one packet ({limit:,} bytes)", limit, int(length[big]))
            if off.size:
                c.chunk(raw, buf, off, length)
            bar.update(len(data))
            if not data:
                break
            need, header = _pending(raw[stop: stop + 24]) or (0, 0)
            if need < 0 or need > limit:
                # Held whole, a packet this size would take its size again in memory, and bytes that
                # cannot be framed would be carried to the end of the file: read on without keeping
                # them, to tell a packet too big (refused) from a file cut short or broken there.
                held = len(raw) - stop
                before += stop
                del raw, buf, data
                rest = need - held if need > 0 else None
                got, broken = _drain(f, rest, stream_errors())
                if got == rest:
                    raise too_big(path, f"holds a packet of {need - header:,} bytes at byte {before + header:,}, past "
                                  f"the bound on one packet ({limit:,} bytes)", limit, need - header)
                raw, stop = b"", 0  # the packets before it are shown
                before_end = before + held + got
                break
            tail, before = raw[stop:], before + stop
            # No whole packet yet (one bigger than a chunk): read more at once, not the same again.
            want = step if off.size else want * 2
    size = before_end if before_end is not None else before + len(raw)
    end = before + stop
    if broken is not None and c.packets == 0:
        raise ProfileError(path, f"the compressed data is damaged or cut short ({broken})",
                           "Copy the file again, or decompress it by hand to see how much is readable")
    if c.packets == 0:
        cut = end < size
        raise ProfileError(path, "holds no Perfetto trace packets" + (" (it is cut short in the first packet)" if cut else ""),
                           _ADVICE_CUT if cut else "Pass a Perfetto trace (.pftrace) written by neuron-explorer "
                           "view --output-format perfetto or the Perfetto SDK")
    if broken is not None:
        warnings.add(f"{origin}: the compressed data is damaged or cut short after {size:,} bytes ({broken}); the "
                     f"{c.packets:,} packets before it are shown", 1)
    elif end < size:
        warnings.add(f"{origin}: the trace is cut short at byte {end:,} of {size:,}; the {c.packets:,} packets before "
                     "it are shown", 1)
    finish(c.state, warnings, origin)
    return c.result()
