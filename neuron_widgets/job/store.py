"""Each part's analysis results, kept by the part's content, so a second run recomputes only changed parts.

An entry's name is the part's content key (a hash of its bytes and filters) and the analyses'
tag (names, arguments, the package version). It holds what the part's bytes say (its tables,
events, time span), never its name or path: those come from the job at hand, so a renamed or
copied job reports its own parts. A stat index (each file's resolved name, size, mtime_ns,
ctime_ns, inode and device: PartSpec.stamp) finds the content key of an unchanged part without
reading its bytes; a stat that cannot vouch for the bytes (changed in the last two seconds, no
ctime or inode) is not indexed and the part is hashed. Results are stored only under the key of
the bytes analysed: the stat taken before hashing must still hold after the analysis (or, where
the stat cannot vouch, the bytes hash to the same key again). Entries are written to a
temporary file, removed on any error (a full disk leaves nothing behind), and renamed into
place; an entry that cannot be read is computed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..readers.cache import root
from .parts import PartSpec

# What an entry holds that the job at hand must say instead.
NAMED = ("part", "path")


def default_root() -> Path:
    return root().parent / "results"


@dataclass(frozen=True)
class Key:
    """A part's content key, and the stamp it was taken under (None: the stat could not vouch)."""

    content: str
    stamp: str | None


@dataclass(frozen=True)
class ResultStore:
    """Picklable: a task carries it to its worker, which reads and writes the entries itself."""

    root: str

    def _index(self, stamp: str) -> Path:
        return Path(self.root) / "index" / stamp

    def known_key(self, spec: PartSpec) -> str | None:
        """The content key of a part unchanged since it was last hashed, without hashing it."""
        try:
            stamp = spec.stamp()
            return (self._index(stamp).read_text().strip() or None) if stamp is not None else None
        except (OSError, ValueError):
            return None

    def content_key(self, spec: PartSpec) -> Key:
        """The part's content key: from the stat index when the part is unchanged, else by hashing it
        (and indexed only if the stat held while the bytes were read)."""
        stamp = spec.stamp()
        if stamp is not None:
            with contextlib.suppress(OSError, ValueError):
                known = self._index(stamp).read_text().strip()
                if known:
                    return Key(known, stamp)
        key = spec.content_key()
        if stamp is not None and spec.stamp() == stamp:
            self._write(self._index(stamp), key.encode())
            return Key(key, stamp)
        return Key(key, None)

    def still(self, spec: PartSpec, key: Key) -> bool:
        """Whether the part still holds the bytes `key` names (after an analysis, before storing it)."""
        try:
            if key.stamp is not None:
                return spec.stamp() == key.stamp
            return spec.content_key() == key.content
        except OSError:
            return False

    def _entry(self, key: str, tag: str) -> Path:
        return Path(self.root) / hashlib.blake2b(f"{key}\0{tag}".encode(), digest_size=16).hexdigest()

    def get(self, key: str, tag: str) -> dict[str, Any] | None:
        try:
            with open(self._entry(key, tag), "rb") as f:
                got = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError, IndexError,
                TypeError):
            return None
        return got if isinstance(got, dict) else None

    def put(self, key: str, tag: str, value: dict[str, Any]) -> None:
        kept = {k: v for k, v in value.items() if k not in NAMED}
        self._write(self._entry(key, tag), pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        """Write to a temporary file of this writer's own and rename it into place; on any error
        (a full disk, a read-only cache, an interrupt) the temporary file is removed."""
        tmp: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
        except OSError:
            pass  # a cache that cannot be written only costs the recomputation
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
