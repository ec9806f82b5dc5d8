"""The binary payload of an exported page: typed columns and JSON sections in one gzip'd blob.

Everything that comes from a profile (names, labels, arguments) travels inside this blob, which
the page carries as base64: no profile text ever appears in the HTML itself, so none of it can
end a `<script>` element or be read as markup.
"""

from __future__ import annotations

import json
import os
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa

# Typed-array kinds the page knows; the name is what the page's decoder switches on.
DTYPES = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "i32": np.int32, "f64": np.float64, "i64": np.int64}
SAFE_INT = 2**53  # integers a float64 holds exactly


class Blob:
    """Sections appended in order, each aligned to 8 bytes so the page can view it as a typed array."""

    def __init__(self) -> None:
        # Arrays are kept as they are (no bytes copy): pack() streams them through the compressor.
        self._parts: list[bytes | np.ndarray] = []
        self._size = 0
        self.sections: dict[str, dict[str, Any]] = {}

    def _add(self, name: str, data: bytes | np.ndarray, spec: dict[str, Any]) -> None:
        if name in self.sections:
            raise ValueError(f"section {name!r} written twice")
        pad = (-self._size) % 8
        if pad:
            self._parts.append(b"\0" * pad)
            self._size += pad
        size = data.nbytes if isinstance(data, np.ndarray) else len(data)
        self.sections[name] = {**spec, "offset": self._size, "bytes": size}
        self._parts.append(data)
        self._size += size

    def array(self, name: str, values: np.ndarray, dtype: str) -> None:
        data = np.ascontiguousarray(values, dtype=DTYPES[dtype])
        self._add(name, data, {"dtype": dtype, "n": len(values)})

    def small_ints(self, name: str, values: np.ndarray) -> None:
        """Codes (-1 for none) in the narrowest type that holds them; stored +1 when -1 occurs."""
        v = np.asarray(values)
        lo = int(v.min()) if v.size else 0
        hi = int(v.max()) if v.size else 0
        shift = 1 if lo == -1 else 0
        if lo < -1 or hi + shift >= 2**32:
            self.array(name, v, "f64")
            return
        top = hi + shift
        dtype = "u8" if top < 256 else "u16" if top < 65536 else "u32"
        data = np.ascontiguousarray(v + shift if shift else v, dtype=DTYPES[dtype])
        self._add(name, data, {"dtype": dtype, "n": int(v.size), "shift": shift})

    def deltas(self, name: str, values: np.ndarray) -> None:
        """Integers (in order, mostly increasing) as differences from the previous one: they compress
        far better than the values. The page adds them back up in float64, so values must be < 2**53."""
        v = np.asarray(values, dtype=np.int64)
        base = int(v[0]) if v.size else 0
        d = np.diff(v, prepend=base)
        fits = d.size == 0 or (int(d.min()) >= 0 and int(d.max()) < 2**32)
        data = d.astype(np.uint32 if fits else np.float64)
        self._add(name, data, {"dtype": "u32" if fits else "f64", "n": int(v.size), "delta": True,
                                         "base": base})

    def json(self, name: str, obj: Any) -> None:
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        self._add(name, data, {"dtype": "json"})

    def column(self, name: str, col: pa.Array) -> dict[str, Any]:
        """A table column of the exported events, for the details panel; returns how the page reads it."""
        t = col.type
        if pa.types.is_dictionary(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
            enc = col.dictionary_encode() if not pa.types.is_dictionary(t) else col
            codes = enc.indices.to_numpy(zero_copy_only=False)
            codes = np.where(enc.is_null().to_numpy(zero_copy_only=False), -1, codes)
            self.small_ints(f"{name}:codes", codes)
            self.json(f"{name}:values", [str(x) for x in enc.dictionary.to_pylist()])
            return {"name": name, "kind": "text"}
        if pa.types.is_boolean(t):
            v = col.fill_null(False).to_numpy(zero_copy_only=False).astype(np.uint8)
            v[col.is_null().to_numpy(zero_copy_only=False)] = 2
            self.array(f"{name}:values", v, "u8")
            return {"name": name, "kind": "bool"}
        if pa.types.is_integer(t) or pa.types.is_floating(t):
            nulls = col.is_null().to_numpy(zero_copy_only=False)
            v = col.fill_null(0).to_numpy(zero_copy_only=False)
            kind = "int" if pa.types.is_integer(t) else "float"
            lo, hi = (int(v.min()), int(v.max())) if kind == "int" and v.size else (0, 0)
            if kind == "int" and (lo <= -SAFE_INT or hi >= SAFE_INT):
                self.array(f"{name}:values", v, "i64")
                kind = "bigint"
            elif kind == "int" and lo >= -(2**31) and hi < 2**31:
                self.array(f"{name}:values", v, "i32")
            elif kind == "int" and bool((np.diff(v) >= 0).all()):
                self.deltas(f"{name}:values", v)  # ids: rising in time order, tiny steps
            else:
                self.array(f"{name}:values", v, "f64")
            if nulls.any():
                self.array(f"{name}:nulls", nulls, "u8")
            return {"name": name, "kind": kind, "nulls": bool(nulls.any())}
        text = pa.array([None if x is None else str(x) for x in col.to_pylist()], pa.string())
        return self.column(name, text)

    def raw(self) -> bytes:
        return b"".join(memoryview(p).cast("B") if isinstance(p, np.ndarray) else p for p in self._parts)

    def pack(self) -> tuple[dict[str, Any], bytes]:
        """The manifest (section layout) and the gzip'd blob (the page carries it as base64: see b64_size).

        Sections go through the compressor as they are, so the uncompressed blob is never joined.
        """
        views = [memoryview(p).cast("B") if isinstance(p, np.ndarray) else memoryview(p) for p in self._parts]
        return {"version": 1, "sections": self.sections, "raw_bytes": self._size}, gzip_parallel(views)


# Level 5: within 3% of level 6's size at half its time (the budget search packs several times).
LEVEL = 5
# Bytes each thread deflates at a time: big enough that the blocks' seams cost nothing measurable
# (each block starts from the previous one's last 32 KiB, as one stream would), small enough that
# a 20 MB page keeps both cores busy.
CHUNK = 4 << 20
_WINDOW = 32 << 10  # deflate's window: what a block can refer back to
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def gzip_parallel(views: list[memoryview]) -> bytes:
    """One gzip member of the concatenation of `views`, its deflate blocks made on every core.

    Compression was ~40% of a 10M-event export on one core. zlib releases the GIL, so the data is cut
    into CHUNK-byte blocks deflated side by side (as pigz does): each block is primed with the 32 KiB
    before it and ends on a byte boundary (Z_SYNC_FLUSH), so the blocks joined are one deflate stream
    that any gunzip (the page's DecompressionStream) reads as if it were made in one go. The same data
    gives the same bytes (header mtime 0; the cut depends on the sizes only).
    """
    blocks = list(_blocks(views))
    n = sum(sum(v.nbytes for v in b) for b in blocks)
    if len(blocks) <= 1:
        deflated = [_deflate(blocks[0] if blocks else [], b"", last=True)]
    else:
        primes = [b""] + [_tail(b) for b in blocks[:-1]]
        jobs = [(_pool().submit(_deflate, b, prime, i == len(blocks) - 1)) for i, (b, prime) in
                enumerate(zip(blocks, primes, strict=True))]
        deflated = [j.result() for j in jobs]
    crc = 0
    for v in views:
        crc = zlib.crc32(v, crc)  # releases the GIL too: runs beside the threads
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no flags, mtime 0, unknown OS
    return b"".join([header, *deflated, crc.to_bytes(4, "little"), (n & 0xFFFFFFFF).to_bytes(4, "little")])


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="neuron-widgets-gzip")
        return _POOL


def _blocks(views: list[memoryview]) -> Any:
    """The views cut at every CHUNK bytes: lists of slices (no copy)."""
    block: list[memoryview] = []
    room = CHUNK
    for v in views:
        while v.nbytes:
            take = v[:room]
            block.append(take)
            room -= take.nbytes
            v = v[take.nbytes:]
            if room == 0:
                yield block
                block, room = [], CHUNK
    if block:
        yield block


def _tail(block: list[memoryview]) -> bytes:
    """The last _WINDOW bytes of a block (the next block's dictionary)."""
    out: list[bytes] = []
    need = _WINDOW
    for v in reversed(block):
        piece = v[max(0, v.nbytes - need):]
        out.append(piece.tobytes())
        need -= piece.nbytes
        if need == 0:
            break
    return b"".join(reversed(out))


def _deflate(block: list[memoryview], prime: bytes, last: bool) -> bytes:
    z = zlib.compressobj(LEVEL, zlib.DEFLATED, -15, zdict=prime) if prime else zlib.compressobj(LEVEL, zlib.DEFLATED, -15)
    out = [z.compress(v) for v in block]
    out.append(z.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH))
    return b"".join(out)


def b64_size(n: int) -> int:
    """Characters of the base64 text of `n` bytes."""
    return 4 * ((n + 2) // 3)
