"""Who did the work on a critical-path graph: instance, process, thread, core, read at the graph's rows only.

The graph of a 10M-event profile reads about 1.6M events; taking four columns at those rows costs
tens of milliseconds, where coding every event's grouping tuple (the profile's combos) or coding
tuples of Python objects costs seconds. Values are coded per column (nulls one value, -1), so a
filter is decided once per distinct value and then gathered per row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..model.grouping_labels import combo_label
from ..model.track_names import TrackNames
from ..model.worker_labels import core_label
from .critical_path_graph import Graph
from .frame import Frame

WORKER = ("instance_id", "process_id", "nc_idx", "thread_id")  # a worker: a core (no thread) or a thread
Key = tuple[Any, ...]


def column_at(fr: Frame, column: str, rows: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """A column at rows as a code per row into its distinct values (Python values as `to_pylist` gives them);
    -1 for null or a column the profile does not have."""
    rows = np.asarray(rows, np.int64)
    if column not in fr.profile.column_names or rows.size == 0:
        return np.full(rows.size, -1, np.int64), []
    arr = fr.profile.values_at(column, rows)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not pa.types.is_dictionary(arr.type):
        arr = pc.dictionary_encode(arr)
    words = arr.dictionary.to_pylist()
    # A dictionary may hold a value twice (or a null): code its entries by value first.
    dcode, uniq = pd.factorize(np.fromiter(words, dtype=object, count=len(words)))
    idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    codes = np.where(idx >= 0, dcode[np.maximum(idx, 0)] if dcode.size else -1, -1).astype(np.int64)
    return codes, list(uniq)


def codes_at(fr: Frame, columns: tuple[str, ...], rows: np.ndarray) -> np.ndarray:
    """A dense code per distinct tuple of some columns at rows (nulls a value of their own)."""
    rows = np.asarray(rows, np.int64)
    if rows.size == 0:
        return np.zeros(0, np.int64)
    packed = np.zeros(rows.size, np.int64)
    for c in columns:
        code, uniq = column_at(fr, c, rows)
        packed = packed * (len(uniq) + 1) + code + 1  # fewer distinct packed values than rows: no overflow
        packed = pd.factorize(packed)[0].astype(np.int64)
    return packed


def objects(codes: np.ndarray, uniq: list[Any]) -> np.ndarray:
    """Codes back to Python values (None for -1)."""
    return np.array([*uniq, None], dtype=object)[codes]


def nullable_ints(codes: np.ndarray, uniq: list[Any], null: np.ndarray | None = None) -> pd.api.extensions.ExtensionArray:
    """Codes back to an Int64 array (NA for -1 and where `null`)."""
    mask = codes < 0 if null is None else (codes < 0) | null
    try:
        vals = np.array([*[int(v) for v in uniq], 0], np.int64)[codes]
    except (TypeError, ValueError):  # not integers: as the values say, or refused as before
        vals_obj = np.where(mask, np.array(None, dtype=object), objects(codes, uniq))
        return pd.array(np.asarray(vals_obj, dtype=object), dtype="Int64")
    return pd.arrays.IntegerArray(vals, mask.copy())


def used_rows(n_rows: int, *arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows (>= 0) among some arrays, sorted, and per row its position among them (0 for a row not
    among them): a mark per event, not NumPy's hashing unique (seconds on millions of rows)."""
    mark = np.zeros(n_rows, bool)
    for a in arrays:
        mark[a[a >= 0]] = True
    rows = np.flatnonzero(mark)
    dense: np.ndarray = np.cumsum(mark, dtype=np.int32 if rows.size < 2**31 - 1 else np.int64)
    np.subtract(dense, 1, out=dense)
    np.maximum(dense, 0, out=dense)
    return rows, dense


class GraphWorkers:
    """Each edge's and instant's row as a position among the graph's distinct rows, and per column the code of
    each of those rows' values: a filter is decided per distinct value, then gathered per edge or instant."""

    def __init__(self, fr: Frame, g: Graph) -> None:
        self.fr = fr
        rows, dense = used_rows(g.n_rows, g.wrow, g.grow)
        self.rows = rows
        # A row not used (-1) points at position 0: filters leave those out (`filtered`).
        self.pos = {"edges": dense[np.maximum(g.wrow, 0)], "instants": dense[np.maximum(g.grow, 0)]}
        self._cols: dict[str, tuple[np.ndarray, list[Any]]] = {}

    def column(self, column: str) -> tuple[np.ndarray, list[Any]]:
        got = self._cols.get(column)
        if got is None:
            got = self._cols[column] = column_at(self.fr, column, self.rows)
        return got

    def hits(self, column: str, side: str, decide: Any) -> np.ndarray:
        """Per edge or instant (`side`), whether `decide(value)` holds for its row's value (None for null)."""
        codes, uniq = self.column(column)
        per_value = np.array([bool(decide(v)) for v in uniq] + [bool(decide(None))])
        if self.rows.size == 0:
            return np.zeros(self.pos[side].size, bool)
        return per_value[codes][self.pos[side]]


def graph_workers(fr: Frame, g: Graph) -> GraphWorkers:
    """The workers of the frame's graph (`graph_of`), built once and kept on the frame beside it."""
    return fr._cached("critical-workers", lambda: GraphWorkers(fr, g))


def _value(v: Any) -> Any:
    """A worker column's value as a key holds it: None for null, an int where the value is one."""
    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return None
    try:
        return int(v) if not isinstance(v, str) else v
    except (TypeError, ValueError):
        return v


def worker_key(part: Any, inst: Any, pid: Any, nc: Any, tid: Any) -> Key:
    """A worker of a path (a core: no thread; a thread: its calls' core left out), with its part in a job."""
    tid = _value(tid)
    inst = _value(inst)
    return (_value(part), None if inst is None else str(inst), _value(pid), None if tid is not None else _value(nc),
            tid)


def track_label(names: TrackNames, inst: Any, pid: Any, nc: Any, tid: Any, part: Any = None) -> str:
    """A worker as the Timeline names its track: a core as the Default grouping's runtime track
    (`i-0a88.../PID:2624383/neuron_rt/NC:1`, what findings name), a thread (a host thread, a GPU stream) as
    the Thread grouping's (`i-0a88.../PID:2624383/TID:2624400`, `rank0/GPU 0/stream 7`); a job's part first
    (`node-03/...`), as the job's Timeline names the tracks of an opened part."""
    inst, pid, nc, tid = (_value(v) for v in (inst, pid, nc, tid))
    if tid is None:
        label = core_label(inst, pid, nc, names)
    else:
        row = {"instance_id": inst, "process_id": pid, "thread_id": tid, "trace_event_source": None, "nc_idx": None,
               "pcore_idx": None, "worker_gid": None, "framework_stream_id": None}
        label, _ = combo_label(row, "thread", names, True, (names.thread_label(inst, pid, tid), None))
    return f"{part}/{label}" if part not in (None, "") else label


def track_labels(df: pd.DataFrame, names: TrackNames, part: Any = None) -> dict[Key, str]:
    """The track label of each distinct worker of a path's segments (`df`: its worker columns), by `worker_key`."""
    if df.empty:
        return {}
    cols = df[list(WORKER)].astype(object)
    cols = cols.where(cols.notna(), None).drop_duplicates()
    return {worker_key(part, inst, pid, nc, tid): track_label(names, inst, pid, nc, tid, part=part)
            for inst, pid, nc, tid in cols.itertuples(index=False)}
