"""The parse cache: a trace read from JSON or protobuf is kept as Arrow columns after its first parse.

What an entry is keyed on, and why it can only ever hold the events of the bytes it names:

- An entry's name is a hash of the file's bytes (BLAKE2b, 128 bits), the reader and its version,
  and the entry layout (FORMAT). Two files with the same bytes share an entry; any other byte
  gives another entry.
- Hashing a large file on every open would cost more than the reopen itself, so a stat index
  maps what `stat` says of the file now (resolved path, size, mtime_ns, ctime_ns, inode,
  device) to the hash. mtime can be put back by anyone (`touch -d`, `os.utime`), but ctime
  cannot: every write, and every mtime change, sets it to the kernel's clock. So an unchanged
  stat means unchanged bytes, with two exceptions the index refuses to trust:
  a file whose ctime is less than RACY_NS old (the clock behind ctime is coarse, a few ms
  on Linux, seconds on some file systems, so a second write within the same tick would leave
  the stat unchanged), and a file system that reports no ctime or no inode. Such a file is
  hashed on every open (correct, only slower) and no index slot is written for it.
- An entry is stored only under the hash of the bytes that were parsed: the stat taken before
  hashing must still hold after the hash and after the parse (a file that changed meanwhile
  is parsed but not kept); where the stat cannot be trusted, the bytes are hashed again after
  the parse and the entry is kept only if that hash is the key.

Entries are written to a temporary directory and renamed into place, so a crash mid-write never
leaves an entry that loads; an entry that fails its checks when read is deleted and the file
parsed again. A read-only cache still serves its entries (only the last-used time is not
updated). The cache has a size cap (NEURON_WIDGETS_CACHE_MB, default 4096) with
least-recently-used eviction.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

from ..errors import LoadWarnings
from ..model.profile import Counters, Profile
from ..model.schema import ROW
from .columns import ArgsLazy

FORMAT = 2  # the entry layout's version (2: stat index with ctime and inode)
RACY_NS = 2_000_000_000  # a stat is trusted once the file's ctime is this old (see the module's doc)
_enabled: ContextVar[bool] = ContextVar("neuron_widgets_cache", default=True)
_pending: list[threading.Thread] = []
_lock = threading.Lock()


def root() -> Path:
    base = os.environ.get("NEURON_WIDGETS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "neuron-widgets")
    return Path(base) / "traces"


def cap_bytes() -> int:
    try:
        return int(float(os.environ.get("NEURON_WIDGETS_CACHE_MB", "4096")) * 1e6)
    except ValueError:
        return int(4096e6)


def is_enabled() -> bool:
    return _enabled.get()


@contextmanager
def enabled(flag: bool) -> Iterator[None]:
    token = _enabled.set(flag)
    try:
        yield
    finally:
        _enabled.reset(token)


@dataclass(frozen=True)
class Stamp:
    """What `stat` says of a file, as far as the cache relies on it."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int
    trusted: bool  # ctime older than RACY_NS, and the file system reports ctime and inode

    @classmethod
    def of(cls, path: Path) -> Stamp:
        st = path.stat()
        trusted = st.st_ino != 0 and st.st_ctime_ns > 0 and time.time_ns() - st.st_ctime_ns > RACY_NS
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, trusted)

    def same(self, other: Stamp) -> bool:
        return (self.size, self.mtime_ns, self.ctime_ns, self.inode, self.device) == \
            (other.size, other.mtime_ns, other.ctime_ns, other.inode, other.device)


def _slot(path: Path, stamp: Stamp) -> Path:
    """Where the stat index keeps the entry of this file as it is now."""
    key = f"{path.resolve()}\0{stamp.size}\0{stamp.mtime_ns}\0{stamp.ctime_ns}\0{stamp.inode}\0{stamp.device}\0{FORMAT}"
    return root() / "index" / hashlib.sha1(key.encode()).hexdigest()


def _indexed(path: Path, stamp: Stamp) -> tuple[str, int, str] | None:
    """(reader, version, key) the stat index holds for the file as `stamp` says it is, if trusted."""
    if not stamp.trusted:
        return None
    try:
        reader, version, key = _slot(path, stamp).read_text().split("\t")
        return reader, int(version), key.strip()
    except (OSError, ValueError):
        return None


def _hash(path: Path, reader: str, version: int) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    h.update(f"\0{reader}\0{version}\0{FORMAT}".encode())
    return h.hexdigest()


def content_key(path: Path, reader: str, version: int, stamp: Stamp | None = None) -> str | None:
    """The entry's name for the file's bytes as `stamp` (taken before) says they are: from the stat
    index when it can be trusted, else hashed. None when the file changed while it was hashed."""
    stamp = stamp or Stamp.of(path)
    known = _indexed(path, stamp)
    if known is not None and known[:2] == (reader, version):
        return known[2]
    key = _hash(path, reader, version)
    if not Stamp.of(path).same(stamp):
        return None  # written to while hashed: the hash is of no one state of the file
    if stamp.trusted:
        slot = _slot(path, stamp)
        try:
            slot.parent.mkdir(parents=True, exist_ok=True)
            tmp = slot.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(f"{reader}\t{version}\t{key}")
            os.replace(tmp, slot)
        except OSError:
            pass  # a read-only cache: the next open hashes again
    return key


def lookup(path: Path, versions: dict[str, int]) -> Profile | None:
    """The cached profile of an unchanged file seen before, without sniffing its format again."""
    if not _enabled.get() or not path.is_file():
        return None
    try:
        known = _indexed(path, Stamp.of(path))
    except OSError:
        return None
    if known is None or versions.get(known[0]) != known[1]:
        return None
    entry = root() / known[2]
    return _read(entry, path) if entry.is_dir() else None


def peek(path: Path, versions: dict[str, int]) -> dict[str, Any] | None:
    """What the cache knows of an unchanged file seen before (format, events, first start, last end),
    read from its entry's footer and two memory-mapped columns, not the whole entry."""
    if not path.is_file():
        return None
    try:
        known = _indexed(path, Stamp.of(path))
        if known is None or versions.get(known[0]) != known[1]:
            return None
        entry = root() / known[2]
        meta = json.loads((entry / "meta.json").read_text())
        table = ipc.open_file(pa.memory_map(str(entry / "events.arrow"))).read_all()
        start = pc.min_max(table.column("start_ts")) if table.num_rows else None
        end = pc.min_max(table.column("end_ts")) if table.num_rows else None
    except (OSError, KeyError, ValueError, pa.ArrowException):
        return None
    return {"format": meta["format"], "events": int(meta["rows"]),
            "start_ts": start["min"].as_py() if start else None, "end_ts": end["max"].as_py() if end else None}


def load_or_parse(path: Path, reader: str, version: int, parse: Callable[[], Profile]) -> Profile:
    """The profile from its cache entry, or parsed (and its entry written in the background if the
    file held still: see the module's doc)."""
    if not _enabled.get():
        return parse()
    try:
        stamp = Stamp.of(path)
        key = content_key(path, reader, version, stamp)
    except OSError:
        return parse()
    if key is None:
        return parse()
    entry = root() / key
    if entry.is_dir():
        got = _read(entry, path)
        if got is not None:
            return got
        shutil.rmtree(entry, ignore_errors=True)  # damaged or stale: parse again
    profile = parse()
    if _parsed_what_was_hashed(path, reader, version, stamp, key):
        t = threading.Thread(target=_write_quietly, args=(entry, profile), name="neuron-widgets-cache")
        with _lock:
            _pending.append(t)
        t.start()
    return profile


def _parsed_what_was_hashed(path: Path, reader: str, version: int, stamp: Stamp, key: str) -> bool:
    """Whether the bytes the parse read are those `key` was computed from."""
    try:
        if not Stamp.of(path).same(stamp):
            return False
        return stamp.trusted or _hash(path, reader, version) == key
    except OSError:
        return False


def flush(timeout: float | None = None) -> None:
    """Wait for entries still being written (tests and benchmarks; a process exit waits too)."""
    with _lock:
        threads = list(_pending)
    for t in threads:
        t.join(timeout)
    with _lock:
        _pending[:] = [t for t in _pending if t.is_alive()]


def _write_quietly(entry: Path, profile: Profile) -> None:
    try:
        write(entry, profile)
    except Exception as exc:
        # A cache that cannot be written (disk full, read-only home) only makes the next load slower.
        warnings.warn(f"neuron-widgets: the parse cache could not keep {profile.source} ({exc}); "
                      "the next load parses it again", RuntimeWarning, stacklevel=1)


def _ipc(path: Path, table: pa.Table) -> None:
    table = table.unify_dictionaries().combine_chunks()
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table)


def write(entry: Path, profile: Profile) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".writing-", dir=entry.parent))
    try:
        _ipc(work / "events.arrow", profile._table)
        lazy = profile._lazy
        lazy_kind, lazy_state = "none", {}
        if lazy is not None:
            if hasattr(lazy, "cache_columns"):
                cols, lazy_state = lazy.cache_columns()
                lazy_kind = type(lazy).__name__
            else:
                cols = {name: lazy.column(name).combine_chunks() for name in lazy.names()}
                lazy_kind = "columns"
            _ipc(work / "lazy.arrow", pa.table(cols))
        counters: dict[str, str] = {}
        for name in profile.counters.names():
            df = profile.counters.get(name)
            if isinstance(df, pd.DataFrame) and not df.empty:
                counters[name] = f"counter-{len(counters)}.arrow"
                _ipc(work / counters[name], pa.Table.from_pandas(df, preserve_index=False))
        meta = {"format": profile.format, "rows": len(profile), "lazy": lazy_kind, "lazy_state": lazy_state,
                "counters": counters, "metadata": profile.metadata,
                "extra": {k: v for k, v in profile.extra.items() if _jsonable(v)},
                "warnings": {"counts": dict(profile.warnings.counts), "examples": profile.warnings.examples},
                "written": time.time()}
        (work / "meta.json").write_text(json.dumps(meta, default=_plain))
        if entry.exists():
            shutil.rmtree(work, ignore_errors=True)
            return
        os.replace(work, entry)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    _evict(keep=entry)


def _read(entry: Path, path: Path) -> Profile | None:
    try:
        meta = json.loads((entry / "meta.json").read_text())
        table = ipc.open_file(pa.memory_map(str(entry / "events.arrow"))).read_all()
        if table.num_rows != meta["rows"]:
            return None
        lazy: Any = None
        if meta["lazy"] != "none":
            cols = ipc.open_file(pa.memory_map(str(entry / "lazy.arrow"))).read_all()
            arrays = {n: cols.column(n).combine_chunks() for n in cols.column_names}
            lazy = _restore(meta["lazy"], arrays, meta["lazy_state"])
        counters = {name: ipc.open_file(pa.memory_map(str(entry / f))).read_all().to_pandas()
                    for name, f in meta["counters"].items()}
        warnings = LoadWarnings()
        for kind, count in meta["warnings"]["counts"].items():
            warnings.counts[kind] = count
        warnings.examples = {k: list(v) for k, v in meta["warnings"]["examples"].items()}
    except (OSError, KeyError, ValueError, TypeError, pa.ArrowException):
        return None
    with suppress(OSError):  # a read-only cache still serves its entries
        os.utime(entry / "meta.json")  # recently used, for eviction
    return Profile(table, source=str(path), format=meta["format"], warnings=warnings, lazy=lazy,
                   counters=Counters(dict(counters)) if counters else None, metadata=meta["metadata"],
                   extra={**meta["extra"], "cached": str(entry)}, _ordered=True)


def _restore(kind: str, arrays: dict[str, pa.Array], state: dict[str, Any]) -> Any:
    if kind == "PerfettoArgs":
        from .perfetto.args import PerfettoArgs  # Perfetto's compiled protos (~0.15 s): only for a cached Perfetto trace

        return PerfettoArgs.from_cache(arrays, state)
    if kind == "columns":
        return StoredColumns(arrays)
    raise ValueError(f"unknown lazy kind {kind}")


class StoredColumns(ArgsLazy):
    """Lazy columns read back from a cache entry: Arrow arrays, by source row."""

    def __init__(self, arrays: dict[str, pa.Array]) -> None:
        self.arrays = arrays

    def names(self) -> list[str]:
        return list(self.arrays)

    def column(self, name: str) -> pa.ChunkedArray:
        return pa.chunked_array([self.arrays[name]])

    def take(self, name: str, rows: np.ndarray) -> pa.Array:
        return self.arrays[name].take(pa.array(np.asarray(rows, dtype=np.int64)))

    def value(self, name: str, event: dict[str, Any]) -> Any:
        return self.arrays[name][int(event[ROW])].as_py()


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v, default=_plain)
        return True
    except (TypeError, ValueError):
        return False


def _plain(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(type(v).__name__)


def entries() -> list[dict[str, Any]]:
    """What the cache holds: one dict per entry (key, format, rows, bytes, last used)."""
    out: list[dict[str, Any]] = []
    base = root()
    if not base.is_dir():
        return out
    for d in base.iterdir():
        if not d.is_dir() or d.name in ("index",) or d.name.startswith(".writing-"):
            continue
        try:
            meta = json.loads((d / "meta.json").read_text())
            size = sum(f.stat().st_size for f in d.iterdir())
            used = (d / "meta.json").stat().st_mtime
        except (OSError, ValueError):
            continue
        out.append({"key": d.name, "format": meta.get("format"), "rows": meta.get("rows"), "bytes": size,
                    "last_used": used, "path": str(d)})
    return sorted(out, key=lambda e: -e["last_used"])


def clear() -> int:
    """Empty the cache; returns the bytes freed."""
    freed = sum(e["bytes"] for e in entries())
    shutil.rmtree(root(), ignore_errors=True)
    return freed


def _evict(keep: Path) -> None:
    listed = entries()
    total = sum(e["bytes"] for e in listed)
    cap = cap_bytes()
    for e in reversed(listed):  # least recently used first
        if total <= cap:
            break
        if Path(e["path"]) == keep:
            continue
        shutil.rmtree(e["path"], ignore_errors=True)
        total -= e["bytes"]
    # Leftovers of writers that died mid-write (older than an hour) go too.
    for d in root().glob(".writing-*"):
        try:
            if time.time() - d.stat().st_mtime > 3600:
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass
