"""Filters as users know them from the Neuron runtime and `neuron-explorer view`.

The same filter works two ways: as a mask over a loaded table (Profile.filter) and as a
pyarrow expression pushed into a Parquet scan (load_profile), so rows and row groups that
are not wanted are never read.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from .schema import HARDWARE_EVENTS

_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_TIME = re.compile(r"^\s*([-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*(ns|us|µs|ms|s)?\s*$")


def parse_time(value: int | float | str, origin: int) -> int:
    """A time as absolute nanoseconds.

    Integers are absolute nanoseconds (the unit of every Neuron table). Strings with a unit
    (`12.5ms`, `40 us`, `3s`) count from `origin`, the profile's first timestamp; a string of
    digits without a unit is absolute nanoseconds.
    """
    if isinstance(value, bool):
        raise TypeError("a time cannot be a bool")
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        if not np.isfinite(value):
            raise ValueError(f"time {value!r} is not finite")
        return round(value)
    m = _TIME.match(str(value))
    if not m:
        raise ValueError(f"cannot read {value!r} as a time; write e.g. '12.5ms', '40us', '3s' or integer nanoseconds")
    number, unit = m.groups()
    if unit is None:
        return int(number) if re.fullmatch(r"[-+]?[0-9]+", number) else round(float(number))
    return origin + round(float(number) * _UNITS[unit])


def parse_cores(spec: str | int | Iterable[int]) -> frozenset[int]:
    """`0`, `0,2,4`, `0-3` (the runtime's NeuronCore filter syntax), or integers."""
    if isinstance(spec, int | np.integer):
        return frozenset({int(spec)})
    if not isinstance(spec, str):
        return frozenset(int(c) for c in spec)
    cores: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"([0-9]+)\s*-\s*([0-9]+)", part)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo:
                raise ValueError(f"NeuronCore range {part!r} runs backwards; write {hi}-{lo}")
            cores.update(range(lo, hi + 1))
        elif re.fullmatch(r"[0-9]+", part):
            cores.add(int(part))
        else:
            raise ValueError(f"cannot read NeuronCore filter {part!r}; write e.g. '0', '0,2,4' or '0-3'")
    return frozenset(cores)


@dataclass(frozen=True)
class NamePattern:
    """`hardware,^cc_exec_barrier`: groups, exact names, `*` wildcards; `^` excludes."""

    include: tuple[str, ...]
    exclude: tuple[str, ...]

    @classmethod
    def parse(cls, spec: str | Sequence[str]) -> NamePattern:
        tokens = spec.split(",") if isinstance(spec, str) else list(spec)
        inc: list[str] = []
        exc: list[str] = []
        for tok in tokens:
            tok = tok.strip()
            if not tok:
                continue
            (exc if tok.startswith("^") else inc).append(tok.lstrip("^").strip())
        return cls(tuple(inc), tuple(exc))

    @staticmethod
    def _matches(token: str, names: np.ndarray, hardware: np.ndarray) -> np.ndarray:
        if token == "hardware":
            return hardware
        if token == "software":
            return ~hardware
        if "*" in token:
            # Only `*` is a wildcard: `[`, `?` in event names are literal characters.
            rx = re.compile(".*".join(re.escape(p) for p in token.split("*")) + r"\Z", re.S)
            return np.fromiter((rx.match(n) is not None for n in names), bool, names.size)
        return names == token

    def allowed(self, names: Sequence[str]) -> np.ndarray:
        """Which of `names` (distinct event names) pass."""
        arr = np.asarray(list(names), dtype=object)
        hardware = np.fromiter((n in HARDWARE_EVENTS for n in arr), bool, arr.size)
        keep = np.zeros(arr.size, bool) if self.include else np.ones(arr.size, bool)
        for tok in self.include:
            keep |= self._matches(tok, arr, hardware)
        for tok in self.exclude:
            keep &= ~self._matches(tok, arr, hardware)
        return keep

    def expression(self) -> ds.Expression:
        field = ds.field("name")

        def one(tok: str) -> ds.Expression:
            if tok == "hardware":
                return field.isin(sorted(HARDWARE_EVENTS))
            if tok == "software":
                return ~field.isin(sorted(HARDWARE_EVENTS))
            if "*" in tok:
                rx = "^" + ".*".join(re.escape(p) for p in tok.split("*")) + "$"
                # Regex kernels take plain strings, not the dictionary the column is read as.
                return pc.match_substring_regex(field.cast(pa.string()), pattern=rx)
            return field == tok

        expr: ds.Expression | None = None
        for tok in self.include:
            expr = one(tok) if expr is None else expr | one(tok)
        for tok in self.exclude:
            ex = ~one(tok)
            expr = ex if expr is None else expr & ex
        return expr if expr is not None else ds.scalar(True)


@dataclass(frozen=True)
class Filters:
    """What `load_profile(**filters)` and `Profile.filter(...)` accept, parsed once."""

    neuron_cores: frozenset[int] | None = None
    event_types: NamePattern | None = None
    instances: tuple[str, ...] | None = None
    time_range: tuple[int | float | str, int | float | str] | None = None

    @classmethod
    def make(cls, neuron_cores: str | int | Iterable[int] | None = None, event_types: str | Sequence[str] | None = None,
             instances: str | Iterable[str] | None = None,
             time_range: Sequence[int | float | str] | None = None) -> Filters:
        if isinstance(instances, str):
            instances = [i.strip() for i in instances.split(",") if i.strip()]
        if time_range is not None and len(time_range) != 2:
            raise ValueError("time_range takes two values: (start, end)")
        return cls(
            neuron_cores=parse_cores(neuron_cores) if neuron_cores is not None else None,
            event_types=NamePattern.parse(event_types) if event_types is not None else None,
            instances=tuple(instances) if instances is not None else None,
            time_range=(time_range[0], time_range[1]) if time_range is not None else None,
        )

    def as_kwargs(self) -> dict[str, Any]:
        """The filter as keyword arguments of load_profile / Profile.filter."""
        return {"neuron_cores": sorted(self.neuron_cores) if self.neuron_cores is not None else None,
                "event_types": [*self.event_types.include, *("^" + e for e in self.event_types.exclude)]
                if self.event_types is not None else None,
                "instances": list(self.instances) if self.instances is not None else None,
                "time_range": self.time_range}

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.neuron_cores, self.event_types, self.instances, self.time_range))

    def window(self, origin: int) -> tuple[int, int] | None:
        if self.time_range is None:
            return None
        t0, t1 = (parse_time(v, origin) for v in self.time_range)
        if t1 < t0:
            raise ValueError(f"time_range ends ({t1}) before it starts ({t0})")
        return t0, t1

    def _instance_allowed(self, values: Sequence[str]) -> np.ndarray:
        assert self.instances is not None
        pats = [p for p in self.instances]
        return np.fromiter((any(fnmatch.fnmatchcase(str(v), p) if "*" in p else v == p for p in pats)
                            for v in values), bool, len(values))

    def mask(self, table: pa.Table, origin: int) -> np.ndarray:
        """Boolean mask over `table`'s rows: no Python work per event, only per distinct value."""
        keep = np.ones(table.num_rows, dtype=bool)
        if self.event_types is not None:
            keep &= dict_mask(table.column("name"), self.event_types.allowed)
        if self.instances is not None:
            keep &= dict_mask(table.column("instance_id"), self._instance_allowed)
        if self.neuron_cores is not None:
            nc = table.column("nc_idx")
            vals = nc.fill_null(-1).to_numpy()
            # Events not tied to a NeuronCore (framework ops, host threads) stay.
            keep &= np.isin(vals, list(self.neuron_cores)) | nc.is_null().to_numpy(zero_copy_only=False)
        win = self.window(origin)
        if win is not None:
            start = table.column("start_ts").to_numpy()
            end = table.column("end_ts").to_numpy()
            keep &= _overlaps(start, end, *win)
        return keep

    def expression(self, origin: int, names: Sequence[str] | None = None) -> ds.Expression | None:
        """The same filter for a Parquet scan (row-group statistics prune what they can)."""
        parts: list[ds.Expression] = []
        if self.event_types is not None:
            if names is not None:
                allowed = [n for n, ok in zip(names, self.event_types.allowed(names), strict=True) if ok]
                parts.append(ds.field("name").isin(allowed))
            else:
                parts.append(self.event_types.expression())
        if self.instances is not None:
            if any("*" in p for p in self.instances):
                rx = "^(" + "|".join(".*".join(re.escape(s) for s in p.split("*")) for p in self.instances) + ")$"
                parts.append(pc.match_substring_regex(ds.field("instance_id").cast(pa.string()), pattern=rx))
            else:
                parts.append(ds.field("instance_id").isin(list(self.instances)))
        if self.neuron_cores is not None:
            parts.append(ds.field("nc_idx").isin(sorted(self.neuron_cores)) | ds.field("nc_idx").is_null())
        win = self.window(origin)
        if win is not None:
            t0, t1 = win
            start, end = ds.field("start_ts"), ds.field("end_ts")
            parts.append((start < t1) & ((end > t0) | (start >= t0)))
        if not parts:
            return None
        expr = parts[0]
        for p in parts[1:]:
            expr = expr & p
        return expr


def _overlaps(start: np.ndarray, end: np.ndarray, t0: int, t1: int) -> np.ndarray:
    # Half-open window [t0, t1); an instant exactly at t0 belongs to it.
    return (start < t1) & ((end > t0) | (start >= t0))


def dict_mask(col: pa.ChunkedArray, allowed_of: Callable[[list[Any]], np.ndarray]) -> np.ndarray:
    """Rows whose (dictionary) value passes `allowed_of`, decided once per distinct value."""
    chunk = col.combine_chunks()
    if not pa.types.is_dictionary(chunk.type):
        chunk = pc.dictionary_encode(chunk)
    ok = allowed_of(chunk.dictionary.to_pylist())
    idx = chunk.indices.fill_null(0).to_numpy(zero_copy_only=False)
    out = ok[idx] if ok.size else np.zeros(idx.size, bool)
    if chunk.null_count:
        out &= ~chunk.is_null().to_numpy(zero_copy_only=False)
    return out
