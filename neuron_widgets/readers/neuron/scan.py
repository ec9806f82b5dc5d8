"""A byte scan (numba) of the event list of the Neuron runtime's JSON layouts, with no Python object per event.

Per event object: the kind and [start, end) span of the values of chosen keys (and of chosen keys
inside one nested object, the runtime's `data`), and the members its arguments need copied into one
buffer (`Packed`), so neither the file's bytes nor a `msgspec.Raw` per event outlive the load.
Every read is bounds-checked, and the scan stops with "malformed" on what it cannot follow: the
caller has msgspec check the text too (the scan finds things, msgspec says what is valid JSON).
"""

from __future__ import annotations

import bisect
import contextlib
import mmap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from ...memory import trim
from ..chrome.scan import span_codes
from ..columns import Codes, event_list, other_values, top_members
from ..sniff import head, is_utf8
from .scan_kernels import (
    BATCH,
    END,
    FULL,
    INT,
    MALFORMED,
    NOT_OBJECT,
    ODD_KEY,
    STR,
    C,
    _scan,
    _string_end,
    _value_end,
    _ws,
)


def _table(keys: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    width = max([len(k) for k in keys] + [1])
    table = np.zeros((max(len(keys), 1), width), np.uint8)
    lens = np.full(max(len(keys), 1), -1, np.int64)
    for f, k in enumerate(keys):
        table[f, :len(k)] = np.frombuffer(k.encode(), np.uint8)
        lens[f] = len(k)
    return table, lens


@dataclass(frozen=True)
class Spec:
    """What to find in each event: `keys` (columns 0..), the keys of the object under `sub` (columns
    after), and which members its arguments need (the keys in `keep`, and others if `keep_unknown`;
    a key written with escapes is always kept, for the reader of the arguments to judge)."""

    keys: tuple[str, ...]
    sub: str | None = None
    subkeys: tuple[str, ...] = ()
    keep: frozenset[str] = frozenset()
    keep_unknown: bool = False

    def column(self, key: str) -> int:
        return self.keys.index(key)

    def subcolumn(self, key: str) -> int:
        return len(self.keys) + self.subkeys.index(key)


@dataclass
class Batch:
    """One scan call's events: kinds and spans per column, flags, and which are objects."""

    buf: np.ndarray
    kinds: np.ndarray
    spans: np.ndarray
    ivals: np.ndarray  # the value of each INT
    flags: np.ndarray
    objs: np.ndarray  # each element's [start, end) in buf

    def elements(self) -> list[bytes]:
        """The bytes of the batch's objects, for msgspec to decode when the scan's reading is not enough."""
        return [self.buf[s:e].tobytes() for s, e in self.objs[self.objects].tolist()]

    @property
    def objects(self) -> np.ndarray:
        return (self.flags & NOT_OBJECT) == 0

    def plain(self) -> bool:
        return not (self.flags & ODD_KEY).any()

    def ints(self, col: int) -> tuple[np.ndarray, np.ndarray]:
        """int64 values of a column's integers that fit in 64 bits (0 elsewhere), and where there is one."""
        ok = self.kinds[:, col] == INT
        return np.where(ok, self.ivals[:, col], 0), ok

    def texts(self, col: int, codes: Codes, *more: Codes) -> np.ndarray:
        """Codes (against `codes`, and then each of `more`, stacked) of a column's strings without
        escapes; -1 where it is not one. The bytes are hashed once however many codings are asked for."""
        out = np.full((1 + len(more), self.kinds.shape[0]), -1, np.int32)
        rows = np.flatnonzero(self.kinds[:, col] == STR)
        if rows.size:
            local, firsts = span_codes(self.buf, self.spans[rows, col, 0] + 1, self.spans[rows, col, 1] - 1)
            texts = [self.buf[s + 1:e - 1].tobytes().decode() for s, e in self.spans[rows[firsts], col].tolist()]
            for k, c in enumerate((codes, *more)):
                out[k, rows] = c.add(texts)[local]
        return out if more else out[0]


class Packed:
    """Each kept event's argument members as one JSON object's bytes (b"" for none), in chunks of
    whole events; `offsets` index the chunks as if they were one buffer."""

    def __init__(self, chunks: list[np.ndarray], offsets: np.ndarray) -> None:
        self.chunks, self.offsets = chunks, offsets
        self.bases = np.cumsum([0] + [c.size for c in chunks[:-1]]).tolist()

    def __len__(self) -> int:
        return self.offsets.size - 1

    def __getitem__(self, row: int) -> bytes:
        s, e = int(self.offsets[row]), int(self.offsets[row + 1])
        if s == e:
            return b""
        k = bisect.bisect_right(self.bases, s) - 1
        return self.chunks[k][s - self.bases[k]:e - self.bases[k]].tobytes()

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.chunks) + self.offsets.nbytes


class Malformed(Exception):
    """The scan, or msgspec's check of what it found, could not follow the text: the caller reads
    the file the slow way, which says why."""


_CHECK = msgspec.json.Decoder(list[msgspec.Raw])
_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_CHUNK = 4 << 20  # argument bytes written at a time
_PAGE = mmap.PAGESIZE
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None) if hasattr(mmap.mmap, "madvise") else None


class ListScan:
    """The elements of the JSON array starting at `start` in `buf`, `batch` at a time; `packed()` after.

    With `checked` False the text has not been checked yet: msgspec checks each batch's elements (and
    that they are UTF-8) before they are handed on, and `release(end)` is told how far the text is done with.
    """

    def __init__(self, buf: np.ndarray, start: int, spec: Spec, batch: int = BATCH, checked: bool = True,
                 release: Callable[[int], None] | None = None) -> None:
        self.buf, self.spec, self.batch = buf, spec, max(1, batch)
        self.checked, self.release = checked, release
        self.i = start + 1
        self.keys, self.lens = _table(spec.keys)
        self.subkeys, self.sublens = _table(spec.subkeys)
        self.sub = spec.keys.index(spec.sub) if spec.sub else -1
        self.keep = np.array([k in spec.keep for k in spec.keys] or [False], np.bool_)
        width = len(spec.keys) + len(spec.subkeys)
        self.kinds = np.empty((self.batch, width), np.int8)
        self.spans = np.zeros((self.batch, width, 2), np.int64)
        self.ivals = np.zeros((self.batch, width), np.int64)
        self.flags = np.empty(self.batch, np.int8)
        self.objs = np.empty((self.batch, 2), np.int64)
        self.ends = np.empty(self.batch, np.int64)
        self.args = np.empty(_CHUNK, np.uint8)
        self.apos = 0
        self.chunks: list[np.ndarray] = []
        self.base = 0  # where the chunk being written starts, in the chunks as one buffer
        self.offsets: list[np.ndarray] = [np.zeros(1, np.int64)]
        self.end = -1

    def __iter__(self) -> Iterator[Batch]:
        state = 0
        while True:
            n, i, state, apos, status = _scan(self.buf, self.i, state, self.buf.size, self.keys, self.lens, self.sub,
                                              self.subkeys, self.sublens, self.keep, self.spec.keep_unknown,
                                              self.kinds, self.spans, self.ivals, self.flags, self.objs, self.ends,
                                              self.args, self.apos)
            if status == MALFORMED:
                raise Malformed(f"at byte {i}")
            if status == FULL and n == 0:
                self._next_chunk()
                continue
            if n and not self.checked:
                self._check(int(self.objs[0, 0]), int(self.objs[n - 1, 1]), n)
            self.i, self.apos = i, apos
            if n:
                # Views of the scan's arrays: each batch is read before the next scan call overwrites them.
                flags = self.flags[:n]
                self.offsets.append(self.ends[:n][(flags & NOT_OBJECT) == 0] + self.base)
                yield Batch(self.buf, self.kinds[:n], self.spans[:n], self.ivals[:n], flags, self.objs[:n])
            if self.release is not None:
                self.release(i)
            if status == END:
                self.end = i
                return

    def _next_chunk(self) -> None:
        if self.apos == 0:  # one event's members larger than a chunk
            self.args = np.empty(2 * self.args.size, np.uint8)
            return
        self.chunks.append(self.args[:self.apos].copy())
        self.base += self.apos
        self.apos = 0
        self.args = np.empty(max(_CHUNK, self.args.size), np.uint8)

    def _check(self, s: int, e: int, n: int) -> None:
        text = b"".join((b"[", self.buf[s:e].data, b"]"))
        if not is_utf8(text):
            raise Malformed("text that is not UTF-8")
        try:
            got = len(_CHECK.decode(text))
        except msgspec.DecodeError as exc:
            raise Malformed(str(exc)) from None
        if got != n:
            raise Malformed(f"{got} elements where the scan saw {n}")

    def packed(self) -> Packed:
        self.chunks.append(self.args[:self.apos].copy())
        self.args = np.empty(0, np.uint8)
        offsets = np.concatenate(self.offsets)
        self.offsets = []
        return Packed(self.chunks, offsets.astype(np.int32) if offsets[-1] < 2**31 else offsets)


def event_bytes(path: Path, keys: tuple[str, ...], what: str) -> tuple[dict[str, Any], np.ndarray]:
    """A JSON object's values other than its event list, and that list's bytes (the first of `keys`
    it has), the whole document checked by msgspec; errors as `columns.document` says them."""
    top, key = top_members(path, keys, what)
    raw = top[key]
    buf = np.frombuffer(raw, np.uint8)
    if buf.size == 0 or buf[0] != 91:  # not a list: said as for a decoded document
        event_list({key: msgspec.json.decode(raw)}, path, (key,), what)
    return other_values(top, keys, path), buf


def read_events(path: Path, keys: tuple[str, ...], what: str, spec: Spec, make: Callable[[], C],
                batch: int = BATCH) -> tuple[dict[str, Any], Packed, int, C]:
    """The document's other values, the events' packed arguments, how many entries the list held, and
    the consumer (`make()`, called with each batch as it is scanned) that read them.

    An uncompressed file is mapped and read a batch at a time, the pages done with handed back, so
    it is never held whole; if that road meets anything it does not expect (text that is not valid
    JSON or not UTF-8, the list twice, escaped keys at the top), the file is read again by a fresh
    consumer from the whole document, checked by msgspec first, whose errors name the file as before.
    """
    if path.stat().st_size > 0 and not _compressed(path):
        each = make()
        try:
            return (*_streamed(path, keys, spec, each, batch), each)
        except Malformed:
            del each
    each = make()
    doc, buf = event_bytes(path, keys, what)
    scan = ListScan(buf, 0, spec, batch)
    entries = 0
    for b in scan:
        entries += b.kinds.shape[0]
        each(b)
    return doc, scan.packed(), entries, each


def _compressed(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(64) != head(path, 64)  # `head` inflates what is compressed


def _streamed(path: Path, keys: tuple[str, ...], spec: Spec, each: Callable[[Batch], None],
              batch: int) -> tuple[dict[str, Any], Packed, int]:
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    buf = np.frombuffer(mm, np.uint8)
    done = [0]

    def release(end: int) -> None:
        # The pages read so far are handed back: mapped, they would count as this process's memory
        # (where the system has no madvise they stay, as a file's pages, until the file is closed).
        upto = end // _PAGE * _PAGE
        if upto > done[0] and _DONTNEED is not None:
            mm.madvise(_DONTNEED, done[0], upto - done[0])
            done[0] = upto

    try:
        span, packed, entries = _walk(buf, keys, spec, each, batch, release)
        skeleton = b"".join((buf[:span[0]].data, b"[]", buf[span[1]:].data))
    finally:
        del buf
    with contextlib.suppress(BufferError):  # a view still held (an exception's frame): closed when collected
        mm.close()
    try:
        top = _TOP.decode(skeleton)
        doc = {k: msgspec.json.decode(v) for k, v in top.items() if k not in keys}
    except msgspec.DecodeError as exc:
        raise Malformed(str(exc)) from None
    return doc, packed, entries


def _walk(buf: np.ndarray, keys: tuple[str, ...], spec: Spec, each: Callable[[Batch], None], batch: int,
          release: Callable[[int], None]) -> tuple[tuple[int, int], Packed, int]:
    """The top-level object's members, its one event list scanned (checked by msgspec a batch at a
    time), the others skipped (checked by msgspec afterwards, without the list)."""
    n = buf.size
    i = _ws(buf, 0)
    if i >= n or buf[i] != 123:
        raise Malformed("not an object")
    found: tuple[tuple[int, int], Packed, int] | None = None
    i = _ws(buf, i + 1)
    if i < n and buf[i] == 125:
        raise Malformed("no members")
    while True:
        if i >= n or buf[i] != 34:
            raise Malformed("a key expected")
        e, escaped = _string_end(buf, i)
        if e < 0 or escaped:
            raise Malformed("a key with escapes")
        key = buf[i + 1:e - 1].tobytes().decode("utf-8", "replace")
        i = _ws(buf, e)
        if i >= n or buf[i] != 58:
            raise Malformed("':' expected")
        vs = _ws(buf, i + 1)
        if key in keys:
            if found is not None or vs >= n or buf[vs] != 91:
                raise Malformed("the event list twice, or not a list")
            scan = ListScan(buf, vs, spec, batch, checked=False, release=release)
            entries = 0
            for b in scan:
                entries += b.kinds.shape[0]
                each(b)
            found = ((vs, scan.end), scan.packed(), entries)
            i = scan.end
        else:
            i, _ = _value_end(buf, vs)
            if i < 0:
                raise Malformed("a value cut short")
        i = _ws(buf, i)
        if i < n and buf[i] == 44:
            i = _ws(buf, i + 1)
            continue
        if i < n and buf[i] == 125 and _ws(buf, i + 1) == n and found is not None:
            return found
        raise Malformed("',' or '}' expected, or no event list")


def trim_large(path: Path) -> None:
    """Freed scratch handed back between the steps of a large load (glibc keeps it otherwise), so
    that the steps' peaks do not add up; a small load does not pay for the walk of the heap."""
    if path.stat().st_size > 32 << 20:
        trim()
