"""Several inputs as one profile: one trace.json per rank, a system profile beside them, ...

Instances and processes stay apart (each input keeps its own ids); event ids are renumbered
only when inputs collide, the original kept in `source_id`; every event says which input it
came from (`input`). Clocks: inputs with wall-clock (epoch) timestamps share a time axis;
inputs whose timestamps are relative cannot be aligned and are reported as such.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import LoadWarnings, ProfileError
from ..model.filters import Filters
from ..model.lazy import LazyColumns, take_lazy
from ..model.profile import Counters, Profile
from ..model.schema import ROW
from . import cache
from .neuron.legacy_json import is_device_json
from .neuron.parquet import profile_dirs
from .sniff import head

# The package's load_profile and its list of readers are handed in by the registry (readers/__init__.py), which
# imports this module: importing them back would make the two need each other.
Load = Callable[..., Profile]

EPOCH_2001_NS = 978_307_200 * 10**9  # timestamps before this cannot be wall-clock times of a capture


@dataclass
class _Part:
    offset: int
    size: int
    lazy: LazyColumns | None


class CompositeLazy:
    """Lazy columns of merged inputs: global row = part offset + the part's own row."""

    def __init__(self, parts: list[_Part]) -> None:
        self.parts = parts
        self.starts = np.array([p.offset for p in parts], dtype=np.int64)

    def names(self) -> list[str]:
        out: list[str] = []
        for p in self.parts:
            for n in p.lazy.names() if p.lazy is not None else []:
                if n not in out:
                    out.append(n)
        return out

    def column(self, name: str) -> pa.ChunkedArray:
        typ = pa.list_(pa.string()) if name == "flow_id" else pa.string()
        chunks = []
        for p in self.parts:
            if p.lazy is not None and name in p.lazy.names():
                col = p.lazy.column(name).slice(0, p.size)
                col = col.cast(typ) if col.type != typ else col
                chunks.extend(col.chunks)
                if len(col) < p.size:
                    chunks.append(pa.nulls(p.size - len(col), typ))
            else:
                chunks.append(pa.nulls(p.size, typ))
        return pa.chunked_array(chunks, type=typ)

    def take(self, name: str, rows: np.ndarray) -> pa.Array:
        """Values at sorted global rows: each part answers for its own rows."""
        rows = np.asarray(rows, dtype=np.int64)
        typ = pa.list_(pa.string()) if name == "flow_id" else pa.string()
        which = np.searchsorted(self.starts, rows, side="right") - 1
        out = []
        for k in np.unique(which):
            part, local = self.parts[int(k)], rows[which == k] - self.parts[int(k)].offset
            if part.lazy is None or name not in part.lazy.names():
                out.append(pa.nulls(local.size, typ))
                continue
            got = take_lazy(part.lazy, name, local)
            out.append(got.cast(typ) if got.type != typ else got)
        return pa.concat_arrays(out) if out else pa.array([], typ)

    def value(self, name: str, event: dict[str, Any]) -> Any:
        k = int(np.searchsorted(self.starts, event[ROW], side="right")) - 1
        part = self.parts[k]
        if part.lazy is None or name not in part.lazy.names():
            return None
        local = dict(event, **{ROW: event[ROW] - part.offset})
        if "source_id" in local and local["source_id"] is not None:
            local["id"] = local["source_id"]
        return part.lazy.value(name, local)


def clock_of(p: Profile) -> str:
    if len(p) == 0:
        return "empty"
    return "wall clock" if p.start_ts >= EPOCH_2001_NS else "relative"


def merge(profiles: list[Profile], names: list[str], source: str) -> Profile:
    """One Profile holding every input's events, counters and device profiles."""
    warnings = LoadWarnings()
    tables, parts = [], []
    offset = 0
    ids_seen: list[np.ndarray] = []
    for p, name in zip(profiles, names, strict=True):
        warnings.merge(p.warnings)
        t = p._table
        rows = t.column(ROW).to_numpy()
        size = int(rows.max()) + 1 if rows.size else 0
        t = t.set_column(t.schema.get_field_index(ROW), ROW, pa.array(rows.astype(np.int64) + offset))
        t = t.append_column("input", pa.array([name] * t.num_rows, pa.string()).dictionary_encode())
        tables.append(t)
        ids_seen.append(p.array("id"))
        parts.append(_Part(offset, size, p._lazy))
        offset += size
    all_ids = np.concatenate(ids_seen) if ids_seen else np.zeros(0, np.int64)
    table = pa.concat_tables(tables, promote_options="permissive").unify_dictionaries()
    if all_ids.size and pd.Series(all_ids).duplicated().any():
        # Inputs number their events independently: renumber, keep the original beside it.
        table = table.append_column("source_id", table.column("id"))
        table = table.set_column(table.schema.get_field_index("id"), "id", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    clocks = {name: clock_of(p) for p, name in zip(profiles, names, strict=True)}
    kinds = {c for c in clocks.values() if c != "empty"}
    if len(kinds) > 1:
        rel = ", ".join(n for n, c in clocks.items() if c == "relative")
        warnings.add(f"inputs with relative timestamps cannot be aligned with wall-clock ones; shown as recorded ({rel})",
                     sum(1 for c in clocks.values() if c == "relative"))
    counters = Counters({name: _concat([p.counter(name) for p in profiles])
                         for name in sorted({n for p in profiles for n in p.counters.names()})})
    device = [p.device_profiles for p in profiles if len(p.device_profiles)]
    metadata = {"inputs": names, "clock_alignment": clocks,
                "per_input": {n: p.metadata for p, n in zip(profiles, names, strict=True)}}
    return Profile(table, source=source, format="+".join(sorted({p.format for p in profiles})), warnings=warnings,
                   lazy=CompositeLazy(parts), counters=counters,
                   device_profiles=pd.concat(device, ignore_index=True) if device else None, metadata=metadata,
                   extra={"filters_applied": True, "inputs": [p.extra for p in profiles],
                          "input_sources": [p.source for p in profiles]})  # where device files may be


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def sniff(path: Path, readers: Sequence[Any]) -> bool:
    return path.is_dir() and bool(inputs_in(path, readers)[0])


def read(path: Path, filters: Filters, load_profile: Load, readers: Sequence[Any]) -> Profile:
    """Every input of the folder; one that cannot be read is left out and named in the warnings
    (all of them failing is the first one's error)."""
    found, left_out = inputs_in(path, readers)
    profiles: list[Profile] = []
    names: list[Path] = []
    failed: list[ProfileError] = []
    for p in found:
        try:
            profiles.append(load_profile(p, **filters.as_kwargs(), **_inner()))
            names.append(p)
        except ProfileError as exc:
            failed.append(exc)
    if not profiles:
        raise failed[0]
    merged = profiles[0] if len(profiles) == 1 else merge(profiles, _unique_names(names), str(path))
    merged.extra["filters_applied"] = True
    for err in failed:
        merged.warnings.add(f"{path.name}: inputs that could not be read, left out", 1,
                            f"{Path(err.path or '').name}: {err.problem}")
    for name, why in left_out:
        merged.warnings.add(f"{path.name}: files no reader takes, left out ({why})", 1, name)
    return merged


def load_many(paths: list[Path], filters: Filters, source: str, load_profile: Load) -> Profile:
    profiles = [load_profile(p, **filters.as_kwargs(), **_inner()) for p in paths]
    names = _unique_names(paths)
    merged = merge(profiles, names, source)
    merged.extra["filters_applied"] = True
    return merged


def _inner() -> dict[str, bool]:
    """The outer load's parse-cache switch; no preparation of a part (the outer load prepares what it returns)."""
    return {"cache": cache.is_enabled(), "prepare": False}


def _unique_names(paths: list[Path]) -> list[str]:
    names = [p.name for p in paths]
    if len(set(names)) == len(names):
        return names
    return [str(p) for p in paths]


def inputs_in(directory: Path, readers: Sequence[Any]) -> tuple[list[Path], list[tuple[str, str]]]:
    """Loadable inputs directly in a directory: every file a trace reader takes (by its content,
    whatever its name) and processed profile directories; and the files left out, with why.
    `readers`: the registry's (registered ones included)."""
    # The readers that take one file (those that parse it whole), registered ones included.
    file_readers = [r for r in readers if r.cache_version is not None]
    found: list[Path] = []
    left_out: list[tuple[str, str]] = []
    for f in sorted(directory.iterdir()):
        if not f.is_file() or f.name.startswith("."):
            continue
        if f.name.startswith("device_profile_model_"):
            continue  # listed as a device profile by the system profile beside it
        try:
            if not any(r.sniff(f) for r in file_readers):
                left_out.append((f.name, "not a trace format neuron-widgets reads"))
            elif is_device_json(f, head(f)):
                left_out.append((f.name, "a device profile: open it with load_device_trace"))
            else:
                found.append(f)
        except OSError as exc:
            left_out.append((f.name, f"cannot be read: {exc.strerror or exc}"))
    for sub in sorted(d for d in directory.iterdir() if d.is_dir()):
        try:
            if profile_dirs(sub):
                found.append(sub)
        except OSError:
            continue
    return found, left_out
