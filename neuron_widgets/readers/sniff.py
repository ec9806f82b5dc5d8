"""A file's bytes: compression found by magic bytes, cheap looks at the start, foreign files named."""

from __future__ import annotations

import bz2
import lzma
import os
import re
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
import pyarrow as pa
from isal import igzip, isal_zlib

from ..errors import ProfileError

_MAGIC = {
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"%PDF": "a PDF document",
    b"PK\x03\x04": "a zip archive",
    b"PAR1": "a Parquet file",
    b"\x1f\x8b": "gzip data",
    b"BZh": "bzip2 data",
    b"\xfd7zXZ": "xz data",
    b"SQLite format 3": "an SQLite database",
    b"\x7fELF": "an executable",
}
# gzip by ISA-L (python-isal): it inflates about twice as fast as zlib, Arrow's gzip stream included
# (bench/RESULTS.md, "Session 2026-11-29 b"); it reads as the gzip module does and says what is wrong alike.
_OPENERS: dict[bytes, Callable[..., IO[Any]]] = {b"\x1f\x8b": igzip.open, b"BZh": bz2.open, b"\xfd7zXZ": lzma.open}
_ISAL_ERROR = cast(type[Exception], isal_zlib.error)  # its stub calls the class an instance
_ERRORS = (OSError, EOFError, zlib.error, _ISAL_ERROR, lzma.LZMAError)


def _gzip_size(path: Path) -> int:
    """The inflated size a gzip file's trailer states (modulo 4 GiB: only a hint, never trusted)."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() < 18:
            return 0
        f.seek(-4, os.SEEK_END)
        return int.from_bytes(f.read(4), "little")


def _opener(path: Path) -> Callable[..., IO[Any]] | None:
    """How to open the file: by its magic bytes, whatever its name says."""
    with open(path, "rb") as f:
        magic = f.read(6)
    return next((op for sig, op in _OPENERS.items() if magic.startswith(sig)), None)


def head(path: Path, n: int = 1 << 16) -> bytes:
    """The first `n` bytes of the file, decompressed; b"" if the compressed data cannot be read."""
    op = _opener(path) or open
    try:
        with op(path, "rb") as f:
            return f.read(n)
    except _ERRORS:
        return b""


def read_all(path: Path) -> bytes:
    """The whole file, decompressed; damaged compressed data is an error naming the file, and so is
    compressed data that inflates past `inflate_limit` (stopped there: never held whole)."""
    op = _opener(path)
    if op is None:
        with open(path, "rb") as f:
            data = f.read()
    else:
        data = _inflated(path, op)
    data, n = repaired(data, _escapes.get())
    fixes = _repairs.get()
    if fixes is not None:
        fixes[0] += n
    return data


def _inflated(path: Path, op: Callable[..., IO[Any]]) -> bytes:
    """All of a compressed file, inflated by `op`; damaged data or data past `inflate_limit` is an error
    naming the file."""
    limit = inflate_limit(path)
    try:
        with op(path, "rb") as f:
            if op is igzip.open:  # the size its trailer states read at once: one read, nothing joined
                return _bounded(path, f, limit, _PIECE, _gzip_size(path))
            return _bounded(path, f, limit, _SMALL_PIECE)
    except _ERRORS as exc:
        raise ProfileError(path, f"the compressed data is damaged or cut short ({exc or type(exc).__name__})",
                           "Copy the file again, or decompress it by hand to see how much is readable") from None


def _bounded(path: Path, f: Any, limit: int, step: int, hint: int = 0) -> bytes:
    """All of `f`, read `step` bytes at a time (the first read `hint` + 1 when the size is known: then
    one read, nothing joined); an error as soon as it passes `limit` bytes."""
    parts: list[bytes] = []
    total = 0
    want = hint + 1 if hint else step
    while True:
        piece = f.read(min(want, limit + 1 - total))
        want = step
        if not piece:
            break
        parts.append(piece)
        total += len(piece)
        if total > limit:
            del parts
            raise too_big(path, f"its {_size(path.stat().st_size)} inflate to more than {_size(limit)}, the bound on "
                          "decompressed data", limit)
    return parts[0] if len(parts) == 1 else b"".join(parts)


# Decompressed bytes read at a time while a whole document is inflated: by ISA-L's gzip reader, and by
# Python's bz2 / lzma files (whose reads hold a few times what they return while they join their blocks).
_PIECE = 16 << 20
_SMALL_PIECE = 1 << 20

# The bound on decompressed data (see README, "Limits and safety"). Unless set, a compressed JSON
# document may inflate to the larger of _FLOOR and _RATIO times its compressed size: JSON traces
# compress 7-20 times, a file of padding ~1000 times. A Perfetto packet (held whole while it is
# decoded) may be _PACKET bytes: the SDK writes packets of kilobytes. Set, the one number bounds both.
ENV_MAX_INFLATED = "NEURON_WIDGETS_MAX_INFLATED_BYTES"
_FLOOR = 256 << 20
_RATIO = 100
_PACKET = 256 << 20
_bound: ContextVar[int | None] = ContextVar("max_inflated_bytes", default=None)
_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30,
          "ti": 1 << 40}


@contextmanager
def inflate_bound(limit: int | None) -> Iterator[None]:
    """Within this block, `limit` bounds decompressed data (None: as set outside, or the default)."""
    if limit is None:
        yield
        return
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise ValueError(f"max_inflated_bytes must be a positive number of bytes, not {limit!r}")
    token = _bound.set(limit)
    try:
        yield
    finally:
        _bound.reset(token)


def _explicit_bound() -> int | None:
    limit = _bound.get()
    if limit is not None:
        return limit
    text = os.environ.get(ENV_MAX_INFLATED, "").strip()
    if not text:
        return None
    m = re.fullmatch(r"([0-9][0-9_]*(?:\.[0-9]+)?)\s*([kmgt]i?)?b?", text.lower())
    if m is None or float(m.group(1).replace("_", "")) * _UNITS[m.group(2) or ""] < 1:
        raise ProfileError(None, f"{ENV_MAX_INFLATED}={text!r} is not a size",
                           "Give a number of bytes, such as 8000000000 or 8G, or unset it for the default")
    return int(float(m.group(1).replace("_", "")) * _UNITS[m.group(2) or ""])


def inflate_limit(path: Path) -> int:
    """How many bytes the compressed file at `path` may inflate to."""
    limit = _explicit_bound()
    return limit if limit is not None else max(_FLOOR, _RATIO * path.stat().st_size)


def packet_limit() -> int:
    """How large one Perfetto packet may be."""
    limit = _explicit_bound()
    return limit if limit is not None else _PACKET


def too_big(path: Path, problem: str, limit: int, need: int | None = None) -> ProfileError:
    """The error for data past the bound `limit`: what was found, and how to raise the bound (to a
    round number past what is needed, when that is known)."""
    want = max(2 * limit, need or 0)
    want = -(-want // 10 ** (len(str(want)) - 1)) * 10 ** (len(str(want)) - 1)
    return ProfileError(path, f"{problem}; stopped there rather than fill memory",
                        f"If it is a real trace, raise the bound: load_profile(..., max_inflated_bytes={want}) "
                        f"or the environment variable {ENV_MAX_INFLATED}={want}")


def _size(n: int) -> str:
    if n < 1 << 20:
        return f"{n:,} bytes"
    return f"{n:,} bytes ({n / 2**30:.2f} GiB)" if n >= 1 << 30 else f"{n:,} bytes ({n / 2**20:.1f} MiB)"


# Bytes that are not UTF-8 in a whole document are replaced by U+FFFD as it is read (found at once:
# an ASCII check, else Arrow's UTF-8 validation, no copy of the text); escaped UTF-16 halves without
# their other half ("\udc80", which msgspec and orjson refuse) when a reader asks for it after
# meeting one. What is replaced is counted in the list of `counting_repairs`.
_repairs: ContextVar[list[int] | None] = ContextVar("text_repairs", default=None)
_escapes: ContextVar[bool] = ContextVar("repair_escapes", default=False)
_ESCAPES = re.compile(rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_REPLACEMENT = "\ufffd".encode()


@contextmanager
def counting_repairs(escapes: bool = False) -> Iterator[list[int]]:
    """Within this block, what `read_all` replaces is counted in the list yielded; with `escapes`,
    lone escaped surrogates are replaced too."""
    fixes: list[int] = [0]
    token, token2 = _repairs.set(fixes), _escapes.set(escapes)
    try:
        yield fixes
    finally:
        _repairs.reset(token)
        _escapes.reset(token2)


def is_utf8(data: bytes) -> bool:
    """Whether `data` is UTF-8 text (Arrow's check, without decoding it into a str)."""
    if data.isascii():
        return True
    text = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([0, len(data)], np.int64)), pa.py_buffer(data))
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def repaired(data: bytes, escapes: bool = True) -> tuple[bytes, int]:
    """`data` with bytes that are not UTF-8 (and, with `escapes`, lone escaped surrogates) replaced
    by U+FFFD, and how many were."""
    n = 0
    if not is_utf8(data):
        text = data.decode("utf-8", "replace")
        n += text.count("\ufffd") - data.count(_REPLACEMENT)
        data = text.encode("utf-8")
        del text
    if escapes:
        lone = 0

        def replace(m: re.Match[bytes]) -> bytes:
            nonlocal lone
            if len(m.group()) in (2, 12):  # an escaped backslash, a whole pair
                return m.group()
            lone += 1
            return b"\\ufffd"

        data = _ESCAPES.sub(replace, data)
        n += lone
    return data, n


def open_stream(path: Path) -> Any:
    """The file for reading in pieces, decompressed as it is read (a context manager with read(n))."""
    return (_opener(path) or open)(path, "rb")


def stream_errors() -> tuple[type[BaseException], ...]:
    """What reading a damaged or cut-short compressed stream raises."""
    return _ERRORS


def damaged_compression(path: Path) -> str | None:
    """Why a compressed file cannot even be opened, or None if it is not compressed or opens."""
    op = _opener(path) if path.is_file() else None
    if op is None:
        return None
    try:
        with op(path, "rb") as f:
            f.read(1 << 16)
    except _ERRORS as exc:
        return str(exc) or type(exc).__name__
    return None


def describe_foreign(path: Path) -> str:
    if path.is_dir():
        names = sorted(p.name for p in path.iterdir())[:8]
        return "a directory holding " + (", ".join(names) if names else "nothing")
    with open(path, "rb") as f:
        start = f.read(16)
    for sig, what in _MAGIC.items():
        if start.startswith(sig):
            return f"it is {what}"
    text = start.decode("utf-8", "replace").strip()
    return f"it starts with {text[:16]!r}" if text else "it holds no text"


def looks_like_json(data: bytes) -> bool:
    s = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    return s[:1] in (b"{", b"[")
