"""What one event is and what it links to: its properties and arguments, its dependency chain,
and the device trace of a hardware event. A part of `Profile`, kept apart for its size."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from .device.loading import device_trace_of
from .flows import FlowIndex, pairs_of, split
from .lazy import is_identity
from .schema import ROW

if TYPE_CHECKING:
    from collections.abc import Callable

    from .device.trace import DeviceTrace
    from .lazy import LazyColumns
    from .profile import Profile


# Up to this many rows are picked as one-row slices: Arrow's take over a table of several chunks joins each
# column's chunks first (8 ms at a million events, for the two events a click links to).
FEW_ROWS = 512


def rows_of(table: pa.Table, rows: np.ndarray) -> pa.Table:
    """The table's `rows`, in that order."""
    if len(rows) <= FEW_ROWS:
        return pa.concat_tables([table.slice(int(r), 1) for r in rows]) if len(rows) else table.slice(0, 0)
    return table.take(pa.array(np.asarray(rows, np.int64)))


def up_and_down(table: pa.Table, up: np.ndarray, down: np.ndarray) -> dict[str, pd.DataFrame]:
    """`dependencies`' two frames: the rows of `table` at `up` and at `down`, each with its `row` (one conversion
    to pandas for both: it costs a couple of ms however few the rows)."""
    both = rows_of(table, np.concatenate([up, down])).to_pandas()
    k = len(up)
    return {"upstream": both.iloc[:k].reset_index(drop=True).assign(row=up),
            "downstream": both.iloc[k:].reset_index(drop=True).assign(row=down)}


class EventAccess:
    """Single events of a Profile (the attributes below are the Profile's)."""

    _table: pa.Table
    _lazy: LazyColumns | None
    _materialised: dict[str, pa.ChunkedArray]
    _lock: Any  # threading.RLock
    _flows: Any
    _device_cache: dict[str, DeviceTrace]
    _aligned_cache: OrderedDict[int, DeviceTrace]

    if TYPE_CHECKING:  # the Profile's, for type checkers
        def array(self, name: str) -> np.ndarray: ...
        def column(self, name: str) -> pa.ChunkedArray: ...
        def _joined(self, name: str) -> pa.ChunkedArray: ...
        def _once(self, key: str, cached: Callable[[], Any], build: Callable[[], Any]) -> Any: ...
        def __len__(self) -> int: ...
        @property
        def column_names(self) -> list[str]: ...
        @property
        def core(self) -> pa.Table: ...

    def resolve_row(self, event_id: int | None, row: int | None) -> int:
        """The row of an event given by id or by row (the row wins when both are given)."""
        if row is not None:
            return int(row)
        if event_id is None:
            raise TypeError("give an event id or a row")
        return self.row_of(event_id)

    def row_of(self, event_id: int) -> int:
        ids = self.array("id")
        hits = np.flatnonzero(ids == event_id)
        if hits.size == 0:
            raise KeyError(f"no event with id {event_id}")
        return int(hits[0])

    def event(self, event_id: int | None = None, *, row: int | None = None) -> dict[str, Any]:
        """Every property of one event, its arguments parsed from extra_attributes_json."""
        row = self.resolve_row(event_id, row)
        out = {c: self._table.column(c)[row].as_py() for c in self._table.column_names if c != ROW}
        if self._lazy is not None:
            key = dict(out, **{ROW: int(self._table.column(ROW)[row].as_py())})
            for name in self._lazy.names():
                if name in self._materialised:
                    out[name] = self._materialised[name][row].as_py()
                else:
                    out[name] = self._lazy.value(name, key)
        raw = out.get("extra_attributes_json")
        out["args"] = _parse_args(raw)
        return out

    def args_of_rows(self, rows: np.ndarray) -> list[dict[str, Any]]:
        """Parsed arguments of several events at once (one read of the source, not one per event)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return []
        if "extra_attributes_json" in self._table.column_names or "extra_attributes_json" in self._materialised:
            texts = self.column("extra_attributes_json").take(pa.array(rows)).to_pylist()
            return [_parse_args(t) for t in texts]
        if self._lazy is None or "extra_attributes_json" not in self._lazy.names():
            return [{} for _ in rows]
        keys = [{"id": int(i), "start_ts": int(s), ROW: int(src)} for i, s, src in
                zip(self.array("id")[rows], self.array("start_ts")[rows], self._table.column(ROW).to_numpy()[rows],
                    strict=True)]
        bulk = getattr(self._lazy, "values", None)
        texts = bulk("extra_attributes_json", keys) if bulk is not None else \
            [self._lazy.value("extra_attributes_json", k) for k in keys]
        return [_parse_args(t) for t in texts]

    def details_of_rows(self, rows: np.ndarray) -> list[dict[str, Any]]:
        """Every argument of several events (what `event()["args"]` holds); the same as args_of_rows here."""
        return self.args_of_rows(rows)

    def dependencies(self, event_id: int | None = None, *, row: int | None = None) -> dict[str, pd.DataFrame]:
        """Events linked to one event by flow ids: `upstream` and `downstream` DataFrames.

        Upstream follows the chain framework -> neuron_rt -> neuron_hw back from the event,
        downstream forward; within one source, earlier events are upstream.
        """
        row = self.resolve_row(event_id, row)
        if "flow_id" not in self.column_names:
            return up_and_down(self.core, np.zeros(0, np.int64), np.zeros(0, np.int64))
        linked = self.flow_index().linked(row)
        if linked.size == 0:
            return up_and_down(self.core, linked, linked)
        source = self._joined("trace_event_source").chunk(0)
        up, down = split(linked, row, source.indices.to_numpy(zero_copy_only=False),
                         source.dictionary.to_pylist(), self.array("start_ts"))
        return up_and_down(self.core, up, down)

    def device_trace(self, key: int | str) -> DeviceTrace:
        """The device trace of a hardware event (an int: its event id) or of a device profile (a str: its name).

        Read on first use and cached; for an event, device times are put on the host clock with
        the execution's timestamp_sync_point (see `DeviceTrace.alignment`).
        """
        return device_trace_of(cast("Profile", self), key)  # an EventAccess is always a Profile's part

    def link_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Pairs of rows that share a flow id, each pair once (the edges behind `dependencies`).

        A flow id carried by more than PAIRS_PER_FLOW_LIMIT events links consecutive carriers
        only, so one runaway id cannot make the pair list quadratic.
        """
        if "flow_id" not in self.column_names or not len(self):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return pairs_of(self.flow_index())

    def flow_index(self) -> FlowIndex:
        """The index of flow ids behind `dependencies` and `link_pairs`, built on first use (the profile must have
        a flow_id column).

        Built outside the profile's lock, as a grouping is: the whole flow_id column is read and indexed (a
        second at 10M events), and meanwhile a drill-down started by the same click reads the profile (its
        caches, the event's arguments) without waiting for it. A second caller waits for the first's index.
        """
        def build() -> FlowIndex:
            index = FlowIndex.of(self._column_unlocked("flow_id"))
            with self._lock:
                self._flows = index
            return index

        return cast(FlowIndex, self._once("flows", lambda: self._flows, build))

    def _column_unlocked(self, name: str) -> pa.ChunkedArray:
        """`column(name)`, a lazy column read from the source without holding the profile's lock (as kept)."""
        if name in self._table.column_names or self._lazy is None or name not in self._lazy.names():
            return self.column(name)
        with self._lock:
            kept = self._materialised.get(name)
        if kept is not None:
            return kept
        full = self._lazy.column(name)
        rows = self._table.column(ROW)
        if len(full) != len(rows) or not is_identity(rows):
            full = full.take(rows)
        with self._lock:
            return self._materialised.setdefault(name, full)


def _parse_args(raw: Any) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {"extra_attributes_json": raw}
    return value if isinstance(value, dict) else {"value": value}
