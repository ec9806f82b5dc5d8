"""Each part's analysis results, kept by the part's content, so a second run recomputes only changed parts.

An entry's name is the part's content key (a hash of its bytes and filters) and the analyses'
tag (names, arguments, the package version). A stat index (the part's file names, sizes and
modification times) finds the content key of an unchanged part without reading its bytes, so
the client skips a cached part before any task is sent. Entries are written to a temporary
file and renamed into place; an entry that cannot be read is computed again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .parts import PartSpec


def default_root() -> Path:
    from ..readers.cache import root

    return root().parent / "results"


@dataclass(frozen=True)
class ResultStore:
    """Picklable: a task carries it to its worker, which reads and writes the entries itself."""

    root: str

    def _index(self, spec: PartSpec) -> Path:
        return Path(self.root) / "index" / spec.stamp()

    def known_key(self, spec: PartSpec) -> str | None:
        """The content key of a part unchanged since it was last hashed, without hashing it."""
        try:
            return self._index(spec).read_text().strip() or None
        except (OSError, ValueError):
            return None

    def content_key(self, spec: PartSpec) -> str:
        key = self.known_key(spec)
        if key is None:
            key = spec.content_key()
            self._write(self._index(spec), key.encode())
        return key

    def _entry(self, key: str, tag: str) -> Path:
        return Path(self.root) / hashlib.blake2b(f"{key}\0{tag}".encode(), digest_size=16).hexdigest()

    def get(self, key: str, tag: str) -> Any | None:
        try:
            with open(self._entry(key, tag), "rb") as f:
                return pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError):
            return None

    def put(self, key: str, tag: str, value: Any) -> None:
        self._write(self._entry(key, tag), pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache only costs the recomputation
