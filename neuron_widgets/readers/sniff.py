"""A file's bytes: compression found by magic bytes, cheap looks at the start, foreign files named."""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

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
_OPENERS: dict[bytes, Callable[..., IO[Any]]] = {b"\x1f\x8b": gzip.open, b"BZh": bz2.open, b"\xfd7zXZ": lzma.open}
_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


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
    """The whole file, decompressed; damaged compressed data is an error naming the file."""
    op = _opener(path) or open
    if op is gzip.open:
        try:
            # Arrow inflates in one C++ loop, about twice as fast as the gzip module's chunked reads.
            with pa.input_stream(str(path), compression="gzip") as f:
                return f.read()
        except OSError:
            pass  # damaged or cut short: the gzip module says how, below
    try:
        with op(path, "rb") as f:
            return f.read()
    except _ERRORS as exc:
        raise ProfileError(path, f"the compressed data is damaged or cut short ({exc or type(exc).__name__})",
                           "Copy the file again, or decompress it by hand to see how much is readable") from None


def open_stream(path: Path) -> Any:
    """The file for reading in pieces, decompressed as it is read (a context manager with read(n))."""
    op = _opener(path)
    if op is gzip.open:
        return pa.input_stream(str(path), compression="gzip")
    return (op or open)(path, "rb")


def stream_errors() -> tuple[type[BaseException], ...]:
    """What reading a damaged or cut-short compressed stream raises."""
    return (*_ERRORS, pa.ArrowInvalid)


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
