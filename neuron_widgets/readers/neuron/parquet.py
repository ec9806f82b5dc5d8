"""Neuron Explorer Parquet output: one directory, one file (or several) per table."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from tqdm import tqdm

from ...errors import LoadWarnings, ProfileError
from ...model.filters import Filters
from ...model.lazy import read_threads
from ...model.profile import Counters, Profile
from ...model.schema import EVENT_COLUMNS, LAZY_COLUMNS, ROW, STRING, check_ids, normalise, type_problem
from ...progress import progress

EVENTS = "SystemProfileEvents"
_TABLE_FILE = re.compile(r"^(?P<table>[A-Za-z][A-Za-z0-9]*?)(?:_(?P<part>\d+))?\.parquet$")
_RERUN = "Re-create it with `neuron-explorer view -d <capture dir> --output-format parquet`"
# Lazy values of this many recently looked-up events are kept (ParquetLazy.value).
RECENT_EVENTS = 8
# Up to this many events are read one by one from their row groups rather than by one scan.
FEW_EVENTS = 4
# Pages are decoded in batches of this many rows when one event's lazy values are read.
_BATCH_ROWS = 16384
# Batches of them kept after such a read (ParquetLazy._kept): a few MB.
_KEPT_BATCHES = 4
COUNTER_TABLES = {"cpu_usage": "CpuUsage", "host_memory": "HostMemUsage", "hbm_usage": "SystemProfileHbmUsage"}


def table_files(directory: Path) -> dict[str, list[Path]]:
    """Table name -> its files, split parts (`Table_0`, `Table_1`, ...) in numeric order."""
    found: dict[str, list[tuple[int, Path]]] = {}
    for f in directory.iterdir():
        m = _TABLE_FILE.match(f.name)
        if m and f.is_file():
            part = int(m.group("part")) if m.group("part") is not None else -1
            found.setdefault(m.group("table"), []).append((part, f))
    return {t: [f for _, f in sorted(parts)] for t, parts in found.items()}


def profile_dirs(path: Path) -> list[Path]:
    """Processed profile directories at or under `path` (the `--data-path` layout too)."""
    if path.is_file():
        path = path.parent
    if any(_TABLE_FILE.match(f.name) and f.name.startswith(EVENTS) for f in path.iterdir()):
        return [path]
    base = path / "profiles" / "global" if (path / "profiles" / "global").is_dir() else path
    if base.name == "profiles" and (base / "global").is_dir():
        base = base / "global"
    out = []
    for sub in sorted(p for p in base.iterdir() if p.is_dir()):
        if any(f.name.startswith(EVENTS) and f.suffix == ".parquet" for f in sub.iterdir()):
            out.append(sub)
    return out


def sniff(path: Path) -> bool:
    if path.is_file():
        return path.suffix == ".parquet"
    try:
        return bool(profile_dirs(path))
    except OSError:
        return False


def _open(files: list[Path], what: str) -> pa.Schema:
    schemas = []
    for f in files:
        try:
            schemas.append(pq.read_schema(f))
        except (pa.ArrowInvalid, OSError) as exc:
            size = f.stat().st_size if f.exists() else 0
            problem = "is empty" if size == 0 else f"is not a readable Parquet file ({exc})"
            raise ProfileError(f, f"{what} {problem}", f"The file may be truncated or still being written. {_RERUN}") from None
    try:
        schema = pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ProfileError(files[0].parent, f"the parts of {what} disagree on their columns ({exc})", _RERUN) from None
    return schema


def _dataset(files: list[Path], schema: pa.Schema) -> ds.Dataset:
    strings = [c for c, (t, _) in EVENT_COLUMNS.items() if t == STRING and c in schema.names]
    fmt = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=set(strings)))
    wanted = pa.schema([
        pa.field(f.name, STRING) if f.name in strings and not pa.types.is_dictionary(f.type) else f
        for f in schema
    ])
    return ds.dataset([str(f) for f in files], schema=wanted, format=fmt)


def _check_schema(schema: pa.Schema, where: Path) -> None:
    for col, (_, required) in EVENT_COLUMNS.items():
        if col not in schema.names:
            if required and col != "duration_ns":
                have = ", ".join(schema.names)
                raise ProfileError(where, f"{EVENTS} has no column '{col}' (it has: {have})",
                                   f"This is not Neuron Explorer system-profile output, or it is cut short. {_RERUN}")
            continue
        problem = type_problem(col, schema.field(col).type)
        if problem:
            raise ProfileError(where, f"{EVENTS} {problem}", f"The file does not follow the published schema. {_RERUN}")


@dataclass
class ParquetLazy:
    """Lazy columns read from the same scan (same files, same filter, same row order)."""

    dataset: ds.Dataset
    expr: ds.Expression | None
    present: list[str]
    # The last few events looked up, all their lazy values: a click asks for each column of the
    # same event (details, then the drill-down's arguments), and each scan decodes a row group.
    _recent: OrderedDict[tuple[Any, Any], dict[str, Any]] = field(default_factory=OrderedDict, repr=False)
    _recent_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _groups: dict[str, Any] | None = field(default=None, repr=False)
    _read_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # The last batches decoded for one event, by (row group, first row in it): a click reads its
    # execution's arguments, then the sync point recorded just before it, whose row is in the same
    # batch as a rule (decoding the row group up to it again took 20-30 ms at 1M events).
    _kept: OrderedDict[tuple[int, int], pa.RecordBatch] = field(default_factory=OrderedDict, repr=False)

    def names(self) -> list[str]:
        return self.present

    def column(self, name: str) -> pa.ChunkedArray:
        return self.dataset.to_table(columns=[name], filter=self.expr).column(name)

    def value(self, name: str, event: dict[str, Any]) -> Any:
        key = (event["id"], event["start_ts"])
        with self._recent_lock:
            found = self._recent.get(key)
        if found is not None:
            return found.get(name)
        # One reader at a time: a click's details and its drill-down (in another thread) ask for
        # the same event at once, and the second then finds it here instead of reading it again.
        with self._read_lock:
            with self._recent_lock:
                found = self._recent.get(key)
            if found is None:
                found = self._at_row(event) or self._scanned(event)
                with self._recent_lock:
                    self._recent[key] = found
                    while len(self._recent) > RECENT_EVENTS:
                        self._recent.popitem(last=False)
        return found.get(name)

    def _scanned(self, event: dict[str, Any]) -> dict[str, Any]:
        """Every lazy column of one event by a scan; row-group statistics on id and start_ts find it."""
        expr = (ds.field("id") == event["id"]) & (ds.field("start_ts") == event["start_ts"])
        if self.expr is not None:
            expr = expr & self.expr
        got = self.dataset.to_table(columns=self.present, filter=expr)
        return {n: got.column(n)[0].as_py() if got.num_rows else None for n in self.present}

    def _at_row(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """The event's lazy values read from its own row group, decoding pages only up to its row.

        Only for an unfiltered load, where the source row is the row's place in the files; the
        event's id and start confirm it (None otherwise, and the caller scans instead).
        """
        row = event.get(ROW)
        if self.expr is not None or row is None:
            return None
        groups = self._row_groups()
        k = int(np.searchsorted(groups["first"], row, side="right")) - 1
        if k < 0 or row >= groups["first"][k] + groups["rows"][k]:
            return None
        offset = int(row - groups["first"][k])
        kept = next(((at, b) for (g, at), b in self._kept.items() if g == k and at <= offset < at + b.num_rows),
                    None)
        if kept is not None:
            return self._row_of(kept[1], offset - kept[0], event)
        try:
            batches = pq.ParquetFile(groups["file"][k]).iter_batches(
                batch_size=_BATCH_ROWS, row_groups=[int(groups["group"][k])], columns=[*self.present, "id", "start_ts"])
            at = 0
            for batch in batches:
                if offset < at + batch.num_rows:
                    self._kept[(k, at)] = batch
                    while len(self._kept) > _KEPT_BATCHES:
                        self._kept.popitem(last=False)
                    return self._row_of(batch, offset - at, event)
                at += batch.num_rows
        except (pa.ArrowInvalid, OSError):
            return None
        return None

    def _row_of(self, batch: pa.RecordBatch, i: int, event: dict[str, Any]) -> dict[str, Any] | None:
        """Row `i` of a decoded batch, if it is the event (its id and start confirm it)."""
        got = batch.slice(i, 1).to_pylist()[0]
        if got["id"] != event["id"] or got["start_ts"] != event["start_ts"]:
            return None
        return {n: got.get(n) for n in self.present}

    def _row_groups(self) -> dict[str, Any]:
        """Each row group's file, index, first source row and size (read once; called under `_read_lock`)."""
        if self._groups is None:
            files, group, first, rows = [], [], [], []
            at = 0
            for f in self.dataset.files:
                meta = pq.ParquetFile(f).metadata
                for g in range(meta.num_row_groups):
                    files.append(f)
                    group.append(g)
                    first.append(at)
                    rows.append(meta.row_group(g).num_rows)
                    at += rows[-1]
            self._groups = {"file": files, "group": np.array(group), "first": np.array(first, np.int64),
                            "rows": np.array(rows, np.int64)}
        return self._groups

    def take(self, name: str, rows: np.ndarray) -> pa.Array:
        """One column at sorted source rows, streamed (memory stays that of the rows taken plus two row groups)."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.expr is None:
            return self._take_by_group(name, rows)
        parts, at, k = [], 0, 0
        for batch in self._batches(name):
            n = batch.num_rows
            stop = int(np.searchsorted(rows, at + n, side="left"))
            if stop > k:
                parts.append(batch.column(0).take(pa.array(rows[k:stop] - at)))
                k = stop
            at += n
            if k >= rows.size:
                break
        typ = self.dataset.schema.field(name).type
        out = pa.concat_arrays([c.cast(typ) if c.type != typ else c for c in parts]) if parts else pa.array([], typ)
        pa.default_memory_pool().release_unused()  # the decoded batches, so the process shrinks back
        return out

    def _take_by_group(self, name: str, rows: np.ndarray) -> pa.Array:
        """An unfiltered load's rows are the files' rows: decode only the row groups that hold some, two at a time."""
        with self._read_lock:
            groups = self._row_groups()
        first, size = groups["first"], groups["rows"]
        lo = np.searchsorted(rows, first, side="left")
        hi = np.searchsorted(rows, first + size, side="left")
        wanted = [k for k in range(first.size) if hi[k] > lo[k]]
        typ = self.dataset.schema.field(name).type

        def one(k: int) -> pa.Array:
            col = pq.ParquetFile(groups["file"][k]).read_row_group(int(groups["group"][k]), columns=[name],
                                                                   use_threads=False).column(0)
            got = col.take(pa.array(rows[lo[k]:hi[k]] - first[k])).combine_chunks()
            return got.cast(typ) if got.type != typ else got

        with ThreadPoolExecutor(max_workers=read_threads()) as pool:
            parts = list(pool.map(one, wanted))
        out = pa.concat_arrays(parts) if parts else pa.array([], typ)
        pa.default_memory_pool().release_unused()
        return out

    def _batches(self, name: str) -> Iterator[pa.RecordBatch]:
        """One column in scan order, a batch at a time (no read-ahead: memory stays a batch's)."""
        if self.expr is None:
            for f in self.dataset.files:
                yield from pq.ParquetFile(f).iter_batches(batch_size=4 * _BATCH_ROWS, columns=[name])
        else:
            yield from self.dataset.to_batches(columns=[name], filter=self.expr, batch_readahead=1, fragment_readahead=1)

    def values(self, name: str, events: list[dict[str, Any]]) -> list[Any]:
        """Several events' values: by their source rows when they carry them, else in one scan (row groups
        pruned by their ids); a few, each from its row group."""
        if len(events) <= FEW_EVENTS and self.expr is None:
            return [self.value(name, e) for e in events]
        rows = [e.get(ROW) for e in events]
        if all(r is not None for r in rows):
            # By source row (the scan's order, filtered or not): only the row groups that hold them are
            # decoded, and no Python object is made per event but its value.
            src = np.asarray(rows, dtype=np.int64)
            order = np.argsort(src, kind="stable")
            back = np.empty_like(order)
            back[order] = np.arange(order.size)
            return list(self.take(name, src[order]).take(pa.array(back)).to_pylist())
        ids = sorted({e["id"] for e in events})
        expr = ds.field("id").isin(ids)
        if self.expr is not None:
            expr = expr & self.expr
        got = self.dataset.to_table(columns=["id", "start_ts", name], filter=expr)
        found = dict(zip(zip(got.column("id").to_pylist(), got.column("start_ts").to_pylist(), strict=True),
                         got.column(name).to_pylist(), strict=True))
        return [found.get((e["id"], e["start_ts"])) for e in events]


def _first_row(files: list[Path] | None) -> dict[str, Any]:
    if not files:
        return {}
    try:
        t = pq.read_table(files[0])
    except (pa.ArrowInvalid, OSError):
        return {}
    return t.slice(0, 1).to_pylist()[0] if t.num_rows else {}


def _origin(dataset: ds.Dataset, meta: dict[str, Any]) -> int:
    for key in ("first_ts_ns", "first_ts"):
        v = meta.get(key)
        if v not in (None, ""):
            try:
                return int(v)
            except (TypeError, ValueError):
                pass
    lows = []
    for frag in dataset.get_fragments():
        md = frag.metadata
        col = md.schema.to_arrow_schema().get_field_index("start_ts")
        for i in range(md.num_row_groups):
            st = md.row_group(i).column(col).statistics
            if st is not None and st.has_min_max:
                lows.append(st.min)
    return int(min(lows)) if lows else 0


def _scan(dataset: ds.Dataset, columns: list[str], expr: ds.Expression | None, bar: tqdm) -> pa.Table:
    """The threaded scan, in a worker so the progress bar can tick while it runs."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["table"] = dataset.to_table(columns=columns, filter=expr, use_threads=True)
        except BaseException as exc:  # re-raised in the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.25)
        bar.update(0.25)
    if "error" in result:
        raise result["error"]
    return result["table"]


def _read_small(files: list[Path], what: str, warnings: LoadWarnings) -> pd.DataFrame:
    try:
        return pa.concat_tables([pq.read_table(f) for f in files], promote_options="permissive").to_pandas()
    except (pa.ArrowInvalid, OSError) as exc:
        warnings.add(f"{what} could not be read and is left out", 1, f"{files[0]}: {exc}")
        return pd.DataFrame()


def read(path: Path, filters: Filters) -> Profile:
    dirs = profile_dirs(path)
    if not dirs:
        raise ProfileError(path, f"no {EVENTS}.parquet here", f"Point at the directory `neuron-explorer view` wrote. {_RERUN}")
    if len(dirs) > 1:
        names = ", ".join(d.name for d in dirs)
        raise ProfileError(path, f"holds {len(dirs)} processed profiles ({names})",
                           "Pass one of them, e.g. load_profile(path / 'profiles/global/<name>@latest')")
    directory = dirs[0]
    tables = table_files(directory)
    files = tables[EVENTS]
    schema = _open(files, EVENTS)
    _check_schema(schema, files[0])
    dataset = _dataset(files, schema)
    meta = {**_first_row(tables.get("Metadata")), **_first_row(tables.get("SystemProfileMetadata"))}
    origin = _origin(dataset, meta)
    expr = filters.expression(origin) if filters else None
    lazy_present = [c for c in LAZY_COLUMNS if c in schema.names]
    columns = [c for c in schema.names if c not in lazy_present]
    warnings = LoadWarnings()
    try:
        with progress(f"reading {directory.name}", None, "s") as bar:
            table = _scan(dataset, columns, expr, bar)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ProfileError(files[0], f"{EVENTS} could not be read ({exc})",
                           f"A part may be truncated or corrupt. {_RERUN}") from None
    origin_name = f"{directory.name}/{EVENTS}"
    n = table.num_rows
    table = table.append_column(ROW, pa.array(np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)))
    table = normalise(table, warnings, origin_name)
    check_ids(table, warnings, origin_name)
    counters = Counters({
        key: partial(_read_small, tables[name], name, warnings)
        for key, name in COUNTER_TABLES.items() if name in tables
    })
    device_profiles = _read_small(tables["DeviceProfileList"], "DeviceProfileList", warnings) \
        if "DeviceProfileList" in tables else None
    profile = Profile(
        table, source=str(directory), format="neuron-parquet", warnings=warnings,
        lazy=ParquetLazy(dataset, expr, lazy_present) if lazy_present else None,
        counters=counters, device_profiles=device_profiles, metadata={**meta, "origin_ts": origin},
        extra={"tables": {t: [str(f) for f in fs] for t, fs in tables.items()}, "directory": str(directory)},
    )
    # The scan's decode buffers are freed by now; hand them back instead of keeping them pooled.
    pa.default_memory_pool().release_unused()
    return profile
