"""A job's parts: which paths are the node / rank profiles, and what their metadata says.

Opening a part reads no events: a Parquet profile's footers (row counts and start/end
statistics), its Metadata table (cores, instance type), or, for a trace file, the parse cache
when it was read before; other files are described by their size until a task loads them.
"""

from __future__ import annotations

import glob as globbing
import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ..errors import ProfileError
from ..model.profile import Profile
from ..readers import READERS, load_profile
from ..readers import cache as parse_cache

# A file's stat vouches for its bytes once its ctime is this old (as for the parse cache: readers/cache.py).
RACY_NS = 2_000_000_000
# Files beside the profiles that are not parts (notes, scripts, a job's own outputs).
_NOT_PARTS = (".md", ".txt", ".py", ".sh", ".log", ".yaml", ".yml", ".html", ".csv", ".ipynb")


@dataclass(frozen=True)
class PartSpec:
    """One part: its name, its path and the filters pushed into its load. Picklable, so a Dask
    task carries it to a worker and loads the part there."""

    name: str
    path: str
    filters: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def load(self) -> Profile:
        # No background preparation: a task analyses the part and ends.
        return load_profile(self.path, prepare=False, **self.filters)

    def files(self) -> list[Path]:
        p = Path(self.path)
        if p.is_file():
            return [p]
        if not p.is_dir():
            raise ProfileError(p, "no such file or directory (the part was moved or deleted)",
                               "Check the path of this part; the job's other parts are analysed")
        return sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith("."))

    def stamp(self) -> str | None:
        """What `stat` says of the part now (its files' resolved names, sizes, mtime_ns, ctime_ns, inodes
        and devices) and its filters, hashed; None when the stat cannot vouch for the bytes.

        mtime can be put back by anyone (`os.utime`, `touch -d`); ctime cannot: every write and every
        mtime change sets it to the kernel's clock. It is not trusted within RACY_NS of a change
        (its clock is coarse: a second write in the same tick leaves the stat as it was), nor on a
        file system that reports no ctime or inode: such a part is hashed on every run.
        """
        h = hashlib.blake2b(digest_size=16)
        now = time.time_ns()
        files = self.files()
        if not files:
            return None
        for f in files:
            st = f.stat()
            if st.st_ino == 0 or st.st_ctime_ns <= 0 or now - st.st_ctime_ns < RACY_NS:
                return None
            h.update(f"{f.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\0{st.st_dev}\n"
                     .encode())
        h.update(repr(sorted(self.filters.items())).encode())
        return h.hexdigest()

    def content_key(self) -> str:
        """A hash of every byte of the part (its files by relative name), the filters too."""
        h = hashlib.blake2b(digest_size=16)
        base = Path(self.path)
        for f in self.files():
            h.update(f"{f.relative_to(base) if f != base else f.name}\0".encode())
            with open(f, "rb") as fh:
                while chunk := fh.read(1 << 22):
                    h.update(chunk)
        h.update(repr(sorted(self.filters.items())).encode())
        return h.hexdigest()


def find_parts(where: str | os.PathLike[str] | list[str | os.PathLike[str]] | tuple[str | os.PathLike[str], ...],
               ) -> tuple[list[Path], list[str]]:
    """The part paths of a job given as a directory of parts, a glob pattern or a list, and notes on
    what was set aside: a part given twice (the same resolved path) is kept once; a listed path that
    does not exist stays a part (left out by its task, and named) unless none of them exists."""
    if isinstance(where, list | tuple):
        paths = [Path(os.fspath(p)).expanduser() for p in where]
        if not paths:
            raise ProfileError(None, "an empty list of parts was given", "Pass the node or rank profiles of the job")
        if not any(p.exists() for p in paths):
            raise ProfileError(paths[0], f"none of the {len(paths)} parts given exists" if len(paths) > 1
                               else "no such file or directory", "Check the paths of the job's parts")
        paths, notes = _once(paths)
        notes += [f"{p}: no such file or directory; this part is left out" for p in paths if not p.exists()]
        return paths, notes
    text = os.fspath(where)
    if any(c in text for c in "*?["):
        paths = [Path(p) for p in sorted(globbing.glob(os.path.expanduser(text)))]
        if not paths:
            raise ProfileError(text, "the pattern matches no file or directory", "Check the pattern")
        return _once(paths)
    root = Path(text).expanduser()
    if not root.exists():
        raise ProfileError(root, "no such file or directory", "Check the path of the job; relative paths start from "
                           + os.getcwd())
    if not root.is_dir():
        raise ProfileError(root, "is one file, not a job", "Pass a directory of node or rank profiles, a glob or a list; "
                           "nw.load_profile reads one profile")
    if (root / "SystemProfileEvents.parquet").exists() or any(root.glob("SystemProfileEvents*.parquet")):
        raise ProfileError(root, "is one node's profile, not a job", "Pass the directory that holds one such "
                           "directory per node (or a list of them); nw.load_profile reads this one")
    paths = sorted(p for p in root.iterdir() if not p.name.startswith(".") and not p.name.endswith(_NOT_PARTS))
    if not paths:
        raise ProfileError(root, "holds no profiles", "A job directory holds one profile (directory or file) per node or rank")
    return _once(paths)


def _once(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """Each part once, by resolved path (links followed): the first mention is kept, the others named."""
    seen: dict[Path, Path] = {}
    kept, notes = [], []
    for p in paths:
        try:
            real = p.resolve()
        except (OSError, RuntimeError):  # a link loop: not the same as any other part
            real = p.absolute()
        if real in seen:
            notes.append(f"{p} is the same part as {seen[real]} ({real}): analysed once")
            continue
        seen[real] = p
        kept.append(p)
    return kept, notes


def part_names(paths: list[Path]) -> list[str]:
    """Short unique names: the file or directory name without its trace suffixes."""
    names = []
    for p in paths:
        n = p.name
        for suffix in (".gz", ".bz2", ".xz", ".json", ".pftrace", ".perfetto-trace", ".pb", ".trace", ".pt"):
            if n.endswith(suffix) and len(n) > len(suffix):
                n = n[: -len(suffix)]
        names.append(n)
    if len(set(names)) < len(names):  # same names in different directories: keep the parents
        names = [f"{p.parent.name}/{n}" for p, n in zip(paths, names, strict=True)]
    if len(set(names)) < len(names):
        names = [str(p) for p in paths]
    return names


def describe(path: Path) -> dict[str, Any]:
    """A part's row of `job.parts`, from metadata only."""
    row: dict[str, Any] = {"format": None, "events": None, "instances": None, "cores": None, "start_ts": None,
                           "end_ts": None, "bytes": 0}
    if not path.exists():
        return {**row, "format": "missing", "error": f"{path}: no such file or directory"}
    try:
        files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
        row["bytes"] = sum(f.stat().st_size for f in files)
        events = sorted(path.glob("SystemProfileEvents*.parquet")) if path.is_dir() else []
        if events:
            row.update(_parquet(path, events))
        else:
            row.update(_trace(path))
    except (OSError, ValueError) as exc:  # described as unreadable; its task says what is wrong
        row["format"] = "unreadable"
        row["error"] = str(exc)
    return row


def _parquet(path: Path, files: list[Path]) -> dict[str, Any]:
    rows, lo, hi, inst = 0, None, None, set()
    for f in files:
        meta = pq.ParquetFile(f).metadata
        rows += meta.num_rows
        names = meta.schema.names
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            for col, fn in (("start_ts", min), ("end_ts", max)):
                if col in names:
                    st = rg.column(names.index(col)).statistics
                    if st is not None and st.has_min_max:
                        v = st.min if col == "start_ts" else st.max
                        if col == "start_ts":
                            lo = v if lo is None else fn(lo, v)
                        else:
                            hi = v if hi is None else fn(hi, v)
            if "instance_id" in names:
                st = rg.column(names.index("instance_id")).statistics
                if st is not None and st.has_min_max:
                    inst.update({st.min, st.max})
    cores = None
    meta_file = path / "Metadata.parquet"
    if meta_file.exists():
        m = pq.read_table(meta_file).to_pylist()
        if m and m[0].get("num_physical_cores") is not None:
            cores = int(m[0]["num_physical_cores"])
    return {"format": "neuron-parquet", "events": rows, "instances": len(inst) or None, "cores": cores,
            "start_ts": lo, "end_ts": hi}


def _trace(path: Path) -> dict[str, Any]:
    known = parse_cache.peek(path, {r.name: r.cache_version for r in READERS if r.cache_version is not None})
    if known is not None:
        return known
    for reader in READERS:
        try:
            if reader.sniff(path):
                return {"format": reader.name}
        except OSError:
            continue
    return {"format": "unknown"}
