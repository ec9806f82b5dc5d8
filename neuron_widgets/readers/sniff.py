"""Cheap looks at a file's first bytes: compression, JSON or not, and what a foreign file is."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

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


def head(path: Path, n: int = 1 << 16) -> bytes:
    """The first `n` bytes of the file, decompressed if it is gzip, bzip2 or xz."""
    with open(path, "rb") as f:
        magic = f.read(6)
    opener = {b"\x1f\x8b": gzip.open, b"BZh": bz2.open, b"\xfd7zXZ": lzma.open}
    for sig, op in opener.items():
        if magic.startswith(sig):
            try:
                with op(path, "rb") as f:
                    return f.read(n)
            except (OSError, EOFError, lzma.LZMAError):
                return b""
    with open(path, "rb") as f:
        return f.read(n)


def damaged_compression(path: Path) -> str | None:
    """Why a compressed file cannot even be opened, or None if it is not compressed or opens."""
    if not path.is_file():
        return None
    with open(path, "rb") as f:
        magic = f.read(6)
    opener = {b"\x1f\x8b": gzip.open, b"BZh": bz2.open, b"\xfd7zXZ": lzma.open}
    for sig, op in opener.items():
        if magic.startswith(sig):
            try:
                with op(path, "rb") as f:
                    f.read(1 << 16)
            except (OSError, EOFError, lzma.LZMAError) as exc:
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
