"""Device profiles: Neuron Explorer Parquet device tables, neuron-profile / legacy device JSON, .ntff."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ...errors import LoadWarnings, ProfileError
from ...model.device.events import DRAWN_COLUMNS
from ...model.device.trace import DeviceTrace
from ..columns import TS_LIMIT, read_json
from ..perfetto import reader as perfetto
from ..sniff import read_all
from .parquet import table_files

_PARQUET_TABLES = {"instructions": "Instruction", "dma": "DmaPacket", "semaphores": "SemaphoreUpdate",
                   "cc_ops": "CcOp", "flows": "Flow", "summary": "Summary", "execution_info": "ExecutionInfo",
                   "active_time": "ActiveTime"}
_JSON_TABLES = {"instructions": "instruction", "dma": "dma", "semaphores": "semaphore_update",
                "summary": "summary", "active_time": "active_time", "layers": "layer_summary"}
# The column each table's rows are placed in time by (after renaming): rows without it are dropped.
_JSON_TIME = {"instructions": "start_ts", "dma": "start_ts", "semaphores": "timestamp", "active_time": "start_ts"}
_JSON_RENAME = {"instructions": {"timestamp": "start_ts", "duration": "duration_ns", "label": "timeline_track"},
                "dma": {"timestamp": "start_ts", "duration": "duration_ns", "subgroup": "queue_name",
                        "dma_queue": "queue_idx", "dma_engine": "engine_idx", "transfer_size": "transfer_bytes",
                        "read_size": "read_bytes", "write_size": "write_bytes"},
                "semaphores": {}, "summary": {}, "active_time": {}, "layers": {}}


def load_device_trace(path: str | os.PathLike[str]) -> DeviceTrace:
    """A device profile from a Parquet device-profile directory, a device JSON, or an .ntff."""
    p = Path(os.fspath(path)).expanduser()
    if not p.exists():
        raise ProfileError(p, "no such file or directory", "Check the path of the device profile")
    if p.is_dir():
        return _parquet(p)
    if p.suffix == ".ntff":
        return _ntff(p)
    if perfetto.sniff(p):
        return _perfetto(p)
    return _json(p)


def _perfetto(path: Path) -> DeviceTrace:
    """A device profile neuron-explorer wrote as Perfetto: a track per engine and DMA queue."""
    events = perfetto.read(path, None)  # type: ignore[arg-type]
    df = pd.DataFrame({"start_ts": events.array("start_ts"), "end_ts": events.array("end_ts"),
                       "opcode": events.column("name").to_pandas().astype(str).to_numpy(),
                       "track": events.column("perfetto_track").to_pandas().astype(str).to_numpy()})
    if len(events) <= 500_000:  # operands and the like, as columns, while that stays cheap
        args = pd.json_normalize([_args(a) for a in events.column("extra_attributes_json").to_pylist()])
        df = pd.concat([df, args.drop(columns=[c for c in args if c in df])], axis=1)
    dma = df["track"].str.contains(r"\b(?:dma|queue|q[A-Z])", case=False, regex=True)
    instructions = df[~dma].rename(columns={"track": "timeline_track"}).reset_index(drop=True)
    queues = df[dma].rename(columns={"track": "queue_name", "opcode": "queue_type"}).reset_index(drop=True)
    return DeviceTrace(str(path), "perfetto", instructions, dma=queues,
                       metadata={"warnings": events.warnings.lines()}, warnings=events.warnings)


def _args(text: str | None) -> dict[str, Any]:
    try:
        value = orjson.loads(text) if text else {}
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _parquet(directory: Path) -> DeviceTrace:
    tables = table_files(directory)
    if "Instruction" not in tables:
        raise ProfileError(directory, "holds no Instruction.parquet (not a processed device profile)",
                           "Point at the directory `neuron-explorer view` wrote for the device profile")
    wanted = [(attr, name) for attr, name in _PARQUET_TABLES.items() if name in tables]
    # The tables side by side: one's decoding (Arrow's threads) overlaps another's conversion to pandas and
    # its footer read (this side's Python). A table that fails is said in the order of _PARQUET_TABLES.
    with ThreadPoolExecutor(min(len(wanted), 4), thread_name_prefix="neuron-widgets-device-read") as pool:
        read = {attr: pool.submit(_frame, tables[name], name) for attr, name in wanted}
        meta = _first_row(tables.get("Metadata"))
        frames = {attr: future.result() for attr, future in read.items()}
    instr = frames.pop("instructions")
    _require(instr, ("start_ts", "end_ts"), tables["Instruction"][0])
    return DeviceTrace(str(directory), "neuron-parquet", instr, metadata=meta, **frames)


def load_device_trace_staged(path: str | os.PathLike[str]) -> tuple[DeviceTrace, Callable[[], DeviceTrace]] | None:
    """A Parquet device profile in two steps: at once, the trace whose instructions and DMA packets hold only
    the columns the timeline draws from (DRAWN_COLUMNS; every other table whole), and a function that reads
    their other columns and returns the whole trace, as `load_device_trace` reads it. None for a profile of
    another format (read it whole).

    A drill-down draws the first and sends its first window, then reads the rest while the browser paints.
    """
    p = Path(os.fspath(path)).expanduser()
    if not p.is_dir():
        return None
    tables = table_files(p)
    if "Instruction" not in tables:
        return None  # load_device_trace says what is wrong
    big = {attr: name for attr, name in _PARQUET_TABLES.items() if attr in DRAWN_COLUMNS and name in tables}
    try:
        shown = {attr: _column_order(tables[name]) for attr, name in big.items()}
    except (pa.ArrowInvalid, OSError):
        return None  # read whole, which says which file is damaged
    pool = ThreadPoolExecutor(4, thread_name_prefix="neuron-widgets-device-read")
    try:
        read = {attr: pool.submit(_frame, tables[name], name, [c for c in shown[attr] if c in DRAWN_COLUMNS[attr]]
                                  if attr in big else None)
                for attr, name in _PARQUET_TABLES.items() if name in tables}
        meta = _first_row(tables.get("Metadata"))
        frames = {attr: future.result() for attr, future in read.items()}
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    instr = frames.pop("instructions")
    _require(instr, ("start_ts", "end_ts"), tables["Instruction"][0])
    drawn = DeviceTrace(str(p), "neuron-parquet", instr, metadata=meta, **frames)

    def finish() -> DeviceTrace:
        try:
            rest = {attr: pool.submit(_frame, tables[big[attr]], big[attr],
                                      [c for c in cols if c not in DRAWN_COLUMNS[attr]]) for attr, cols in shown.items()}
            whole = {attr: _joined(getattr(drawn, attr), rest[attr], shown[attr]) for attr in big}
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return DeviceTrace(str(p), "neuron-parquet", whole.pop("instructions"), metadata=dict(meta),
                           **{**frames, **whole})

    return drawn, finish


def _column_order(files: list[Path]) -> list[str]:
    """A table's columns in the order reading its files whole gives them (the first file's, then new ones)."""
    names: list[str] = []
    for f in files:
        names += [n for n in pq.read_schema(f).names if n not in names]
    return names


def _joined(drawn: pd.DataFrame, rest: Future[pd.DataFrame], order: list[str]) -> pd.DataFrame:
    """A table's drawn columns and the rest, in the file's order (no column copied)."""
    other = rest.result()
    if not len(other.columns):
        return drawn[order] if list(drawn.columns) != order else drawn
    both = pd.concat([drawn, other], axis=1)
    return both if list(both.columns) == order else both[order]


def _frame(files: list[Path], name: str, columns: list[str] | None = None) -> pd.DataFrame:
    """One device table (the parts of its files) as a DataFrame; `columns`: only those (that a file has).

    Converted column by column, each Arrow column freed as it goes (self_destruct): a million
    instructions are not held twice, and the conversion reuses the memory just freed instead of
    faulting in as much again.
    """
    try:
        return _concat([_read(f, columns) for f in files]).to_pandas(split_blocks=True, self_destruct=True)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ProfileError(files[0], f"{name} could not be read ({exc})",
                           "The file may be truncated; process the device profile again") from None


def _read(path: Path, columns: list[str] | None = None) -> pa.Table:
    """One device table; text columns the file stores dictionary-encoded stay so (pandas categoricals).

    Engines, opcodes, queues and operands repeat across millions of rows: decoding them to one
    string per row was most of a drill-down's read time.
    """
    meta = pq.ParquetFile(path).metadata
    text = {f.name for f in meta.schema.to_arrow_schema()
            if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)}
    dictionary_pages: dict[str, bool] = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for i in range(group.num_columns):
            col = group.column(i)
            if col.path_in_schema in text:
                dictionary_pages[col.path_in_schema] = dictionary_pages.get(col.path_in_schema, True) and \
                    col.has_dictionary_page
    coded = [name for name, yes in dictionary_pages.items() if yes]
    if columns is not None:
        have = set(meta.schema.to_arrow_schema().names)
        columns = [c for c in columns if c in have]
        coded = [c for c in coded if c in columns]
    return pq.read_table(path, columns=columns, read_dictionary=coded)


def _concat(parts: list[pa.Table]) -> pa.Table:
    """Tables of several files as one; a column coded in one file and plain in another becomes plain text."""
    if len(parts) == 1:
        return parts[0]
    plain = {f.name for t in parts for f in t.schema if not pa.types.is_dictionary(f.type)}
    fixed = []
    for t in parts:
        for i, f in enumerate(t.schema):
            if pa.types.is_dictionary(f.type) and f.name in plain:
                t = t.set_column(i, f.name, t.column(i).cast(f.type.value_type))
        fixed.append(t)
    return pa.concat_tables(fixed, promote_options="permissive")


def _first_row(files: list[Path] | None) -> dict[str, Any]:
    if not files:
        return {}
    t = pq.read_table(files[0])
    return t.slice(0, 1).to_pylist()[0] if t.num_rows else {}


def _require(df: pd.DataFrame, cols: tuple[str, ...], where: Path) -> None:
    missing = [c for c in cols if c not in df]
    if missing:
        raise ProfileError(where, f"has no column {', '.join(missing)}", "This is not a device profile of the published schema")


def _json(path: Path) -> DeviceTrace:
    """A neuron-profile device JSON: each key a list of row objects (a lone object read as one row)."""
    warnings = LoadWarnings()
    doc = _document(path, warnings)
    if not isinstance(doc, dict) or "instruction" not in doc:
        # Nothing of the document is echoed (its keys may be secrets): only what was expected.
        raise ProfileError(path, "is not a device profile JSON (expected an object with an 'instruction' list)",
                           "Pass device_profile_model_<id>.json or a neuron-profile JSON export")
    frames: dict[str, pd.DataFrame] = {}
    for attr, key in _JSON_TABLES.items():
        rows = doc.get(key)
        if isinstance(rows, dict):
            rows = [rows]
        if not isinstance(rows, list):
            continue
        objects = [r for r in rows if isinstance(r, dict)]
        warnings.add(f"device JSON {key}: entries that are not objects, dropped", len(rows) - len(objects))
        df = _exact_ids(pd.DataFrame(objects), objects).rename(columns=_JSON_RENAME[attr])
        frames[attr] = _json_times(df, key, warnings, _JSON_TIME.get(attr))
    instr = frames.pop("instructions")
    if instr.empty:
        instr = pd.DataFrame({"start_ts": pd.Series(dtype="int64"), "end_ts": pd.Series(dtype="int64")})
    meta = doc.get("metadata")
    meta = meta[0] if isinstance(meta, list) and meta and isinstance(meta[0], dict) else meta if isinstance(meta, dict) else {}
    return DeviceTrace(str(path), "neuron-json", instr, metadata=meta, warnings=warnings, **frames)


def _document(path: Path, warnings: LoadWarnings) -> Any:
    """The parsed file; one that holds NaN or Infinity (Python's json module writes them, strict JSON has
    none) is read again leniently, its non-numbers then dropped or clamped row by row and counted."""
    try:
        return read_json(path)
    except ProfileError as strict:
        data = read_all(path)
        if not re.search(rb"\bNaN\b|\bInfinity\b", data):
            raise
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):
            raise strict from None
        warnings.add("device JSON: NaN / Infinity literals (not JSON) read as numbers", 1)
        return doc


# Identifiers the JSON writes as integers past 2^53: a float column would round them.
_ID_COLUMNS = ("id", "pc", "raw_bir_id", "raw_penguin_id", "crc", "crc_in", "crc_out", "block_id", "semaphore_id",
               "packet_aggregation_id")


def _exact_ids(df: pd.DataFrame, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Id columns that pandas made floats (some row lacks the id) rebuilt as nullable integers, exactly."""
    for c in _ID_COLUMNS:
        if c in df and df[c].dtype.kind == "f":
            values = [r.get(c) for r in rows]
            if all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
                big = any(v is not None and v >= 2**63 for v in values)
                df[c] = pd.array(values, dtype="UInt64" if big else "Int64")
    return df


# Device times are ns from the profile's start (or the epoch): past 2^62 ns (146 years) a value is no
# time; the limit is the one every reader keeps Profile times within.
TIME_LIMIT = TS_LIMIT + 1


def _json_times(df: pd.DataFrame, key: str, warnings: LoadWarnings, when: str | None) -> pd.DataFrame:
    """start_ts, duration_ns and end_ts as int64; rows whose time (`when`) is missing or out of range dropped,
    negative or missing durations taken as 0 and durations past the range shortened, each counted."""
    if not len(df) or when is None:  # (a frame of rows without keys has rows, and is "empty")
        return df
    if when not in df:  # no row has a time: none can be drawn
        warnings.add(f"device JSON {key}: rows without a numeric timestamp, dropped", len(df))
        return df.iloc[:0].assign(**{when: pd.Series(dtype="int64")},
                                  **({"end_ts": pd.Series(dtype="int64")} if when == "start_ts" else {}))
    t = _numbers(df[when])
    bad = ~np.isfinite(t)
    far = ~bad & (np.abs(np.where(bad, 0, t)) >= TIME_LIMIT)
    warnings.add(f"device JSON {key}: rows without a numeric timestamp, dropped", int(bad.sum()),
                 _example(df, when, bad))
    warnings.add(f"device JSON {key}: rows whose timestamp is out of range (|t| >= 2^62 ns), dropped",
                 int(far.sum()), _example(df, when, far))
    keep = ~(bad | far)
    if not keep.all():  # the index stays the rows' place in the file until the end, for the examples
        df, t = df[keep], t[keep]
    df[when] = _as_int64(df[when], t)
    if "duration_ns" in df and "end_ts" not in df and when == "start_ts":
        d = _numbers(df["duration_ns"])
        missing = ~np.isfinite(d)
        negative = ~missing & (d < 0)
        start = df[when].to_numpy(np.int64)
        room = TIME_LIMIT - 1 - np.maximum(start, 0)  # int64: a float room would round up past the limit
        long = ~missing & ~negative & (d >= room.astype(np.float64))
        warnings.add(f"device JSON {key}: rows without a numeric duration, taken as 0 ns", int(missing.sum()),
                     _example(df, "duration_ns", missing))
        warnings.add(f"device JSON {key}: negative durations, clamped to 0 ns", int(negative.sum()),
                     _example(df, "duration_ns", negative))
        warnings.add(f"device JSON {key}: durations reaching past 2^62 ns, shortened", int(long.sum()),
                     _example(df, "duration_ns", long))
        fixed = missing | negative | long
        d = np.where(long, room, np.trunc(np.where(fixed, 0, d)).astype(np.int64))
        df["duration_ns"] = _as_int64(df["duration_ns"], d, exact=not fixed.any())
        df["end_ts"] = start + df["duration_ns"].to_numpy(np.int64)
    elif when == "start_ts" and "end_ts" not in df:
        warnings.add(f"device JSON {key}: rows without a numeric duration, taken as 0 ns", len(df))
        df["end_ts"] = df[when].to_numpy(np.int64)
    elif "end_ts" in df:
        e = _numbers(df["end_ts"])
        bad_end = ~np.isfinite(e) | (np.abs(np.where(np.isfinite(e), e, 0)) >= TIME_LIMIT)
        start = df[when].to_numpy(np.int64)
        e = np.where(bad_end, start, e)
        early = ~bad_end & (e < start)
        warnings.add(f"device JSON {key}: rows whose end is missing or out of range, ended at their start",
                     int(bad_end.sum()), _example(df, "end_ts", bad_end))
        warnings.add(f"device JSON {key}: rows that end before they start, ended at their start", int(early.sum()),
                     _example(df, "end_ts", early))
        df["end_ts"] = _as_int64(df["end_ts"], np.maximum(e, start), exact=not (bad_end | early).any())
    return df.reset_index(drop=True)


def _numbers(s: pd.Series) -> np.ndarray:
    """A column as float64 for range checks (NaN where it is no number)."""
    if s.dtype.kind in "iu":
        return s.to_numpy(np.float64)
    return pd.to_numeric(s, errors="coerce").to_numpy(np.float64, na_value=np.nan)


def _as_int64(s: pd.Series, checked: np.ndarray, exact: bool = True) -> pd.Series:
    """The column as int64: its own integers where it had them (no trip through float), else the checked values."""
    if exact and s.dtype.kind == "i":
        return s.astype("int64")
    if exact and s.dtype == object:
        try:
            return pd.Series(np.array([int(v) for v in s], dtype=np.int64), index=s.index)
        except (TypeError, ValueError, OverflowError):
            pass
    return pd.Series(checked.astype(np.int64) if checked.dtype.kind == "i" else np.trunc(checked).astype(np.int64),
                     index=s.index)


def _example(df: pd.DataFrame, col: str, mask: np.ndarray) -> str | None:
    hit = np.flatnonzero(mask)
    if not hit.size:
        return None
    value = df[col].iat[int(hit[0])]
    value = value.item() if isinstance(value, np.generic) else value
    return f"row {df.index[int(hit[0])]}: {col}={value!r}"[:120]


def _ntff(path: Path) -> DeviceTrace:
    if path.stat().st_size == 0:
        raise ProfileError(path, "the device trace is 0 bytes: no execution was captured",
                           "This is usually a warm-up problem: run a few iterations before profiling")
    neffs = list(path.parent.glob("*.neff"))
    if not neffs:
        raise ProfileError(path, "has no .neff beside it, so it cannot be decoded",
                           "Set neff_cache_dir (or TORCH_NEURONX_NEFF_CACHE_DIR) so the compiled model is kept, "
                           "and capture again")
    raise ProfileError(path, "is a raw device trace; its format is not public",
                       f"Process it where the Neuron tools are installed: `neuron-explorer view -d {path.parent} "
                       "--output-format parquet`, then load the device-profile directory it writes")
