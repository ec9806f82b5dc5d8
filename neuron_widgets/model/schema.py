"""The normalised event table: SystemProfileEvents' columns, types and checks.

Every reader returns a table in this shape, so grouping, filters and the widgets never
need to know which file format an event came from.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import LoadWarnings

# The runtime's capture filter calls these the "hardware" group (NEURON_FORMATS.md §4).
HARDWARE_EVENTS: frozenset[str] = frozenset(
    {
        "nc_exec_running",
        "cc_running",
        "cc_exec_barrier",
        "numerical_err",
        "nrt_model_switch",
        "timestamp_sync_point",
        "hw_notify",
    }
)

SOURCES: tuple[str, ...] = ("framework", "neuron_rt", "neuron_hw", "device")

STRING = pa.dictionary(pa.int32(), pa.string())

# name -> (arrow type in the normalised table, required)
EVENT_COLUMNS: dict[str, tuple[pa.DataType, bool]] = {
    "id": (pa.int64(), True),
    "name": (STRING, True),
    "start_ts": (pa.int64(), True),
    "end_ts": (pa.int64(), True),
    "duration_ns": (pa.int64(), True),
    "trace_event_source": (STRING, True),
    "instance_id": (STRING, True),
    "process_id": (pa.int64(), True),
    "thread_id": (pa.int64(), True),
    "nc_idx": (pa.int64(), False),
    "pcore_idx": (pa.int64(), False),
    "worker_gid": (pa.int64(), False),
    "framework_stream_id": (STRING, False),
}

# Columns read only when a view asks for them (they hold most of a profile's bytes).
LAZY_COLUMNS: tuple[str, ...] = ("flow_id", "extra_attributes_json")

# Boolean extra column: the event started but its end was never recorded (a possible hang).
INCOMPLETE = "incomplete"

# Internal: position of the event in its source, so lazy columns can be fetched later.
ROW = "__row"

INT64_MAX = np.iinfo(np.int64).max


def is_integer(t: pa.DataType) -> bool:
    return pa.types.is_integer(t)


def is_stringish(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def type_problem(column: str, t: pa.DataType) -> str | None:
    """Why a column of type `t` cannot serve as `column`, or None if it can."""
    want, _ = EVENT_COLUMNS[column]
    if want == STRING:
        if is_stringish(t) or pa.types.is_null(t):
            return None
        return f"column '{column}' has type {t}, expected a string"
    if is_integer(t) or pa.types.is_null(t):
        return None
    return f"column '{column}' has type {t}, expected int64 nanoseconds or an integer id"


def _as_string_dict(arr: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray:
    if isinstance(arr, pa.Array):
        arr = pa.chunked_array([arr])
    if pa.types.is_dictionary(arr.type):
        if arr.type.index_type != pa.int32() or not pa.types.is_string(arr.type.value_type):
            arr = arr.cast(pa.string())
        else:
            # One shared dictionary across chunks keeps codes comparable across the table.
            return arr.unify_dictionaries() if arr.num_chunks > 1 else arr
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    return pc.dictionary_encode(arr).unify_dictionaries()


def _ints(col: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray | None]:
    """Values as one contiguous int64 array (nulls as 0) and the null mask, None if no nulls."""
    if col.null_count == 0:
        return (col.chunk(0).to_numpy() if col.num_chunks == 1 else col.to_numpy()), None
    nulls = col.is_null().to_numpy(zero_copy_only=False)
    return col.fill_null(0).to_numpy(), nulls


def normalise(table: pa.Table, warnings: LoadWarnings, origin: str) -> pa.Table:
    """Cast a reader's table to the canonical types and repair what can be repaired.

    Repairs are counted in `warnings`; no row is dropped without being counted.
    Extra columns are kept as they are, after the canonical ones.
    """
    n = table.num_rows
    cols: dict[str, pa.ChunkedArray] = {}
    for name, (typ, required) in EVENT_COLUMNS.items():
        if name in table.column_names:
            col = table.column(name)
            if typ == STRING:
                col = _as_string_dict(col)
            elif col.type != typ:
                col = col.cast(typ)
        else:
            if required and name not in ("duration_ns", "id"):
                raise KeyError(name)
            col = pa.chunked_array([pa.nulls(n, typ)])
        cols[name] = col

    start, start_null = _ints(cols["start_ts"])
    end, end_null = _ints(cols["end_ts"])
    keep = None
    if start_null is not None and start_null.any():
        warnings.add(f"{origin}: events without a start time, dropped", int(start_null.sum()))
        keep = ~start_null
    open_end = np.zeros(n, dtype=bool)
    if end_null is not None:
        open_end = end_null if start_null is None else end_null & ~start_null
    if open_end.any():
        # A start with no end never completed (a possible hang): keep it, open to the last time seen.
        end = end.copy()
        end[open_end] = max(int(start.max(initial=0)), int(end.max(initial=0)))
        # Ends a reader already flagged (and counted) as incomplete are not counted twice.
        flagged = table.column(INCOMPLETE).fill_null(False).to_numpy(zero_copy_only=False) \
            if INCOMPLETE in table.column_names else np.zeros(n, dtype=bool)
        warnings.add(f"{origin}: events without an end time, shown open to the profile end",
                     int((open_end & ~flagged).sum()))
    cols["start_ts"] = pa.chunked_array([pa.array(start)])
    cols["end_ts"] = pa.chunked_array([pa.array(end)])
    backwards = end < start
    nb = int(backwards.sum())
    if nb:
        ids = cols["id"].to_numpy(zero_copy_only=False)
        ex = ", ".join(str(i) for i in ids[backwards][:3])
        warnings.add(f"{origin}: events ending before they start, shown with zero duration", nb, f"id {ex}")
        end = np.where(backwards, start, end)
        cols["end_ts"] = pa.chunked_array([pa.array(end)])
    if cols["duration_ns"].null_count == n or nb or "duration_ns" not in table.column_names:
        cols["duration_ns"] = pa.chunked_array([pa.array(end - start)])
    else:
        dur, dur_null = _ints(cols["duration_ns"])
        given = ~open_end if dur_null is None else ~dur_null & ~open_end
        mismatch = int(((dur != end - start) & given).sum())
        if mismatch:
            warnings.add(f"{origin}: duration_ns disagrees with end_ts - start_ts, recomputed", mismatch)
        if mismatch or dur_null is not None:
            cols["duration_ns"] = pa.chunked_array([pa.array(end - start)])
        else:
            cols["duration_ns"] = pa.chunked_array([pa.array(dur)])
    if cols["id"].null_count:
        idv = cols["id"].to_numpy(zero_copy_only=False)
        missing = cols["id"].is_null().to_numpy(zero_copy_only=False)
        fill = np.flatnonzero(missing) + (int(np.nanmax(idv)) + 1 if (~missing).any() else 0)
        idv = np.where(missing, 0, cols["id"].fill_null(0).to_numpy()).astype(np.int64)
        idv[missing] = fill
        warnings.add(f"{origin}: events without an id, numbered after the largest id", int(missing.sum()))
        cols["id"] = pa.chunked_array([pa.array(idv)])
    for name in ("process_id", "thread_id", "instance_id", "trace_event_source", "name"):
        nulls = cols[name].null_count
        if nulls:
            warnings.add(f"{origin}: events with no {name}, shown under an empty value", nulls)
            blank = "" if EVENT_COLUMNS[name][0] == STRING else 0
            filled = cols[name].cast(pa.string()) if blank == "" else cols[name]
            cols[name] = filled.fill_null(blank)
            if blank == "":
                cols[name] = _as_string_dict(cols[name])

    # Other columns stay as the reader delivered them; the Profile joins their chunks on first use.
    extras = {c: table.column(c) for c in table.column_names if c not in EVENT_COLUMNS}
    if open_end.any() or INCOMPLETE in extras:
        flagged = extras[INCOMPLETE].fill_null(False).to_numpy(zero_copy_only=False) if INCOMPLETE in extras else False
        extras[INCOMPLETE] = pa.chunked_array([pa.array(open_end | flagged)])
    out = pa.table({**cols, **extras})
    if keep is not None:
        out = out.filter(pa.array(keep))
    return out


def check_ids(table: pa.Table, warnings: LoadWarnings, origin: str) -> None:
    ids = table.column("id").to_numpy()
    if len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1])):
        return
    dup = int(pd.Series(ids).duplicated().sum())
    warnings.add(f"{origin}: duplicate event ids (events kept; look them up by row)", dup)
