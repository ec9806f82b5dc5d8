"""A device trace as an event table the timeline engine can draw: one row per instruction, DMA
packet, collective op and semaphore value, on tracks per engine, DMA queue, CC stream and semaphore.

`DeviceEvents` is a `Profile`, so the Device Trace Viewer reuses the system timeline's tracks,
lanes, level-of-detail query, search, range summary and event details; what differs is the
grouping (engines and queues instead of Neuron Explorer's six host modes) and where an event's
properties come from (the device tables' rows, not extra_attributes_json).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..event_access import up_and_down
from ..profile import Profile, TrackIndex
from ..schema import ROW
from .codes import TABLE_LABELS, TABLES, combine, encode, engine_key, engine_tracks, missing, natural
from .colours import canonical, color_codes
from .engines import dma_queues
from .rows import rows_in_time_order
from .trace import DeviceTrace

DEVICE_GROUPINGS: dict[str, str] = {"engines": "Engines and queues", "tables": "One track per table"}

# Times are the event's own fields; every other column of a device row (its device id too) is an argument.
OWN_COLUMNS = frozenset({"start_ts", "end_ts"})
# Shown on hover, in this order, when the row has them.
HOVER_KEYS = ("operands", "hlo_name", "layer", "nki_source_location", "engine", "queue_name", "transfer_bytes",
              "throughput", "operation", "algorithm", "num_elements", "dtype", "value", "update_source")


# What `_parts` reads of the two big tables (of the others, everything): a trace whose instructions
# and DMA packets hold only these columns makes the same events. A drill-down draws its events from
# them before the rest of the tables is read (DeviceEvents.drawn, model/device/loading.py).
DRAWN_COLUMNS = {"instructions": ("start_ts", "end_ts", "pcore_idx", "engine", "timeline_track", "opcode"),
                 "dma": ("start_ts", "end_ts", "pcore_idx", "queue_name", "queue_idx", "engine_idx", "queue_type")}


@dataclass
class _Part:
    """One device table's rows: times, and name and track label as codes into small lists."""

    table: str
    start: np.ndarray
    end: np.ndarray
    name: np.ndarray
    names: list[str]
    label: np.ndarray
    labels: list[str]


def _times(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    start, end = df["start_ts"].to_numpy(np.int64), df["end_ts"].to_numpy(np.int64)
    return start, np.maximum(end, start) if (end < start).any() else end


def _with_core(df: pd.DataFrame, several: bool, label: tuple[np.ndarray, list[str]]) -> tuple[np.ndarray, list[str]]:
    if not several or "pcore_idx" not in df:
        return label
    return combine(encode(df["pcore_idx"]), label, lambda core, rest: f"Core {core or '?'}/{rest}")


def _several_cores(trace: DeviceTrace) -> bool:
    """Whether the instructions and DMA packets name more than one physical core (a track label then says which)."""
    seen: set[int] = set()
    for table in ("instructions", "dma"):
        df = getattr(trace, table)
        if "pcore_idx" not in df or df.empty:
            continue
        col = df["pcore_idx"]
        if col.dtype.kind in "iu":  # a whole-number column: its least and greatest say it (no hash of its rows)
            seen |= {int(col.min()), int(col.max())}
        else:
            seen |= set(pd.unique(col.dropna()).astype(int).tolist())
        if len(seen) > 1:
            return True
    return False


def _parts(trace: DeviceTrace) -> list[_Part]:
    several = _several_cores(trace)
    out = []
    ins = trace.instructions
    if not ins.empty:
        engine = engine_tracks(ins, trace)
        codes = encode(engine) if engine is not None else (np.zeros(len(ins), np.int32), ["engine"])
        label = _with_core(ins, several, (codes[0], [f"Engines/{e}" for e in codes[1]]))
        name: tuple[np.ndarray, list[str]] = (encode(ins["opcode"]) if "opcode" in ins
                                              else (np.zeros(len(ins), np.int32), ["instruction"]))
        out.append(_Part("instructions", *_times(ins), *name, *label))
    dma = trace.dma
    if not dma.empty:
        q = encode(dma_queues(dma))
        label = _with_core(dma, several, (q[0], [f"DMA/{v}" for v in q[1]]))
        kind = encode(dma["queue_type"]) if "queue_type" in dma else (np.zeros(len(dma), np.int32), ["packet"])
        out.append(_Part("dma", *_times(dma), kind[0], [f"DMA {k}" for k in kind[1]], *label))
    cc = trace.cc_ops
    if not cc.empty:
        stream = encode(cc["stream_id"]) if "stream_id" in cc else (np.zeros(len(cc), np.int32), ["0"])
        name = encode(cc["operation"]) if "operation" in cc else (np.zeros(len(cc), np.int32), ["cc_op"])
        out.append(_Part("cc_ops", *_times(cc), *name, stream[0], [f"CC ops/Stream {s}" for s in stream[1]]))
    sem = trace.semaphores
    if not sem.empty and "timestamp" in sem:
        out.append(_semaphore_spans(sem, trace))
    return out


def _semaphore_spans(sem: pd.DataFrame, trace: DeviceTrace) -> _Part:
    """Each update holds its value until the semaphore's next update (the last until the trace ends)."""
    sid = encode(sem["id"]) if "id" in sem else (np.zeros(len(sem), np.int32), ["semaphore"])
    ts = sem["timestamp"].to_numpy(np.int64)
    order = np.lexsort((ts, sid[0]))
    sid_o, ts_o = sid[0][order], ts[order]
    end_o = np.empty_like(ts_o)
    if ts_o.size:
        last = max(int(ts_o.max()), trace.span[1])
        end_o[:-1] = ts_o[1:]
        end_o[-1] = last
        end_o[np.flatnonzero(sid_o[1:] != sid_o[:-1])] = last
    end = np.empty_like(end_o)
    end[order] = np.maximum(end_o, ts_o)
    value = encode(sem["value"]) if "value" in sem else (np.zeros(len(sem), np.int32), ["update"])
    return _Part("semaphores", ts, end, value[0], [f"value {v}" for v in value[1]], sid[0],
                 [f"Semaphores/{v}" for v in sid[1]])


def _merged(codes: list[np.ndarray], texts: list[list[str]]) -> tuple[np.ndarray, list[str]]:
    """Per-part codes as one column of codes into one list of texts, the same text getting one code."""
    merged: dict[str, int] = {}
    remapped = []
    for c, t in zip(codes, texts, strict=True):
        lookup = np.array([merged.setdefault(x, len(merged)) for x in t] or [0], dtype=np.int32)
        same = lookup.size == len(t) and bool((lookup == np.arange(lookup.size)).all())
        remapped.append(c.astype(np.int32, copy=False) if same or not c.size else lookup[c])
    indices = np.concatenate(remapped) if len(remapped) > 1 else remapped[0] if remapped else np.zeros(0, np.int32)
    return indices, list(merged)


def _coded(codes: np.ndarray, texts: list[str]) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(texts, pa.string()))


class DeviceEvents(Profile):
    """The rows of a DeviceTrace as a Profile: instructions, DMA, CC ops and semaphores on their tracks."""

    def __init__(self, trace: DeviceTrace) -> None:
        self._trace = trace
        self._whole = threading.Event()  # cleared while the trace holds its drawn columns only (drawn())
        self._whole.set()
        parts = _parts(trace)
        n = sum(p.start.size for p in parts)

        def cat(xs: list[np.ndarray]) -> np.ndarray:
            return np.concatenate(xs) if len(xs) > 1 else xs[0] if xs else np.zeros(0, np.int64)

        name, names = _merged([p.name for p in parts], [p.names for p in parts])
        label, labels = _merged([p.label for p in parts], [p.labels for p in parts])
        # Rows are put in time order here, every column at once (model/device/rows.py), rather than by the
        # Profile taking the whole table once more. An event's id is its row in the tables' concatenation.
        rows = rows_in_time_order([p.start.size for p in parts], cat([p.start for p in parts]),
                                  cat([p.end for p in parts]), name, label)
        table = pa.table({
            "id": pa.array(rows.order),
            "start_ts": pa.array(rows.start), "end_ts": pa.array(rows.end),
            "name": _coded(rows.name, names),
            "trace_event_source": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array(["device"])),
            "track_label": _coded(rows.label, labels),
            "table": _coded(rows.table, [p.table for p in parts]),
            "source_row": pa.array(rows.source_row),
            ROW: pa.array(rows.order.astype(np.int32) if n < 2**31 else rows.order),
        })
        super().__init__(table, source=trace.source, format=f"device:{trace.format}",
                         metadata={"alignment": trace.alignment}, _ordered=True)
        self._flow_links: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def trace(self) -> DeviceTrace:
        """The device trace these are the events of; for events made with `drawn()`, the whole trace once it is
        adopted (this waits for it: its rows' properties, flows, colours and hierarchy are read from it)."""
        self._whole.wait()
        return self._trace

    @classmethod
    def drawn(cls, trace: DeviceTrace) -> DeviceEvents:
        """The events of a trace whose instructions and DMA packets hold only their drawn columns
        (DRAWN_COLUMNS): the same rows as the whole trace's; `trace` waits until `adopt()` gives the whole
        trace (or `release()` gives up on it). A drill-down draws them while the rest is read."""
        events = cls(trace)
        events._whole.clear()
        return events

    def adopt(self, trace: DeviceTrace) -> None:
        """Become the events of `trace`, which holds these events' drawn columns and more: built from those
        alone, the rows are the same; their properties, flows, colours and hierarchy now come from `trace`
        (and `DeviceEvents.of(trace)` is this)."""
        self._trace = trace
        self.metadata["alignment"] = trace.alignment
        trace.__dict__["_events"] = self
        self._whole.set()

    def release(self) -> None:
        """No whole trace is coming (its read failed): `trace` is the drawn one, and waits no more."""
        self._whole.set()

    @classmethod
    def of(cls, trace: DeviceTrace) -> DeviceEvents:
        """The events of a trace, built once per DeviceTrace object and kept with it.

        The profile caches the traces it has read; keeping their event tables (and so their
        tracks and level-of-detail index) with them makes a second click on an execution cheap.
        """
        cached = trace.__dict__.get("_events")
        if cached is None:
            cached = cls(trace)
            trace.__dict__["_events"] = cached
        return cached

    # -- grouping --------------------------------------------------------------------
    @property
    def groupings(self) -> dict[str, str]:
        return dict(DEVICE_GROUPINGS)

    def check_grouping(self, grouping: str) -> str:
        if grouping not in DEVICE_GROUPINGS:
            raise ValueError(f"unknown grouping {grouping!r} for a device trace; choose one of: "
                             f"{', '.join(DEVICE_GROUPINGS)}")
        return grouping

    def track_index(self, grouping: str = "engines") -> TrackIndex:
        self.check_grouping(grouping)
        with self._lock:
            if grouping in self._indexes:
                return self._indexes[grouping]
            codes, combo_track, labels = self._keys(grouping)
            tracks = pd.DataFrame({"label": labels, "trace_event_source": "device"})
            return self._build_index(grouping, tracks, combo_track, codes)

    def grouping_keys(self, grouping: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
        self.check_grouping(grouping)
        with self._lock:
            return self._keys(grouping)

    def _keys(self, grouping: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Per event a code of its track column, each code's track, and the track labels in order."""
        column = "track_label" if grouping == "engines" else "table"
        col = self._joined(column).chunk(0) if len(self) else pa.array([], pa.string()).dictionary_encode()
        names = [str(v) for v in col.dictionary.to_pylist()]
        if grouping == "tables":
            names_shown = [TABLE_LABELS.get(v, v) for v in names]
            rank = [TABLES.index(v) if v in TABLES else len(TABLES) for v in names]
            sort_keys: list[tuple[Any, ...]] = [(r, n) for r, n in zip(rank, names_shown, strict=True)]
        else:
            names_shown = names
            sort_keys = [(TABLES.index(_table_of(n)) if _table_of(n) in TABLES else 9, natural(n.split("/")[0]),
                          *engine_key(n)) for n in names]
        order = sorted(range(len(names)), key=lambda i: sort_keys[i])
        combo_track = np.empty(len(names), dtype=np.int32)
        combo_track[order] = np.arange(len(names), dtype=np.int32)
        codes = col.indices.to_numpy(zero_copy_only=False).astype(np.int32) if len(self) else np.zeros(0, np.int32)
        return codes, combo_track, [names_shown[i] for i in order]

    def link_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The Flow table's pairs as rows of this table (the earlier event of a pair is upstream)."""
        return self._links()

    # -- single events ---------------------------------------------------------------
    def _source(self, row: int) -> tuple[str, pd.Series]:
        table = str(self._joined("table").chunk(0)[row].as_py())
        src = int(self.array("source_row")[row])
        return table, getattr(self.trace, table).iloc[src]

    def event(self, event_id: int | None = None, *, row: int | None = None) -> dict[str, Any]:
        """The event's fields, and every column of its device-table row as its arguments."""
        row = self.resolve_row(event_id, row)
        table, src = self._source(int(row))
        out: dict[str, Any] = {"id": int(self.array("id")[row]), "name": str(self._joined("name").chunk(0)[row].as_py()),
                               "start_ts": int(self.array("start_ts")[row]), "end_ts": int(self.array("end_ts")[row]),
                               "table": table, "trace_event_source": "device"}
        out["args"] = {str(k): _plain(v) for k, v in src.items() if k not in OWN_COLUMNS and not missing(v)}
        return out

    def args_of_rows(self, rows: np.ndarray) -> list[dict[str, Any]]:
        """The arguments shown on hover (HOVER_KEYS the row has), for several events at once."""
        return [{k: a[k] for k in HOVER_KEYS if k in a} for a in self.details_of_rows(rows)]

    def details_of_rows(self, rows: np.ndarray) -> list[dict[str, Any]]:
        """Every column of each event's device-table row (what `event()["args"]` holds), read per table in bulk."""
        rows = np.asarray(rows, dtype=np.int64)
        out: list[dict[str, Any]] = [{} for _ in range(rows.size)]
        if rows.size == 0:
            return out
        tables = self._joined("table").chunk(0)
        codes = tables.indices.to_numpy(zero_copy_only=False)[rows]
        names = tables.dictionary.to_pylist()
        source = self.array("source_row")[rows]
        for code in np.unique(codes):
            where = np.flatnonzero(codes == code)
            frame = getattr(self.trace, str(names[code]))
            part = frame.iloc[source[where]]
            part = part.drop(columns=[c for c in OWN_COLUMNS if c in part.columns])
            for k, rec in zip(where.tolist(), part.to_dict("records"), strict=True):
                out[k] = {str(a): _plain(v) for a, v in rec.items() if not missing(v)}
        return out

    def dependencies(self, event_id: int | None = None, *, row: int | None = None) -> dict[str, pd.DataFrame]:
        """Events linked by the device profile's Flow table; the earlier of a pair is upstream."""
        row = self.resolve_row(event_id, row)
        src, dst = self._links()
        start = self.array("start_ts")
        linked = np.unique(np.concatenate([dst[src == row], src[dst == row]]))
        linked = linked[linked != row]
        up = linked[start[linked] <= start[row]]
        down = linked[start[linked] > start[row]]
        return up_and_down(self.core, up, down)

    def _links(self) -> tuple[np.ndarray, np.ndarray]:
        """Flow pairs as rows of this table (pairs whose ends are not drawn here are dropped)."""
        with self._lock:
            if self._flow_links is None:
                self._flow_links = self._resolve_flows()
            return self._flow_links

    def _resolve_flows(self) -> tuple[np.ndarray, np.ndarray]:
        flows = self.trace.flows
        if flows.empty or not {"in_id", "out_id"} <= set(flows.columns) or not len(self):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        tables = self._joined("table").chunk(0)
        code_of = {str(v): i for i, v in enumerate(tables.dictionary.to_pylist())}
        codes = tables.indices.to_numpy(zero_copy_only=False)
        source_row = self.array("source_row")
        ends = []
        for side in ("in", "out"):
            names = flows.get(f"{side}_table", pd.Series("instructions", index=flows.index)).map(_flow_table)
            ids = flows[f"{side}_id"].to_numpy(np.int64)
            rows = np.full(len(flows), -1, np.int64)
            for name in names.unique():
                df = getattr(self.trace, name, None)
                if name not in code_of or df is None or "id" not in df:
                    continue
                mine = np.flatnonzero(codes == code_of[name])
                table_ids = df["id"].to_numpy(np.int64)[source_row[mine]]
                order = np.argsort(table_ids, kind="stable")
                want = np.flatnonzero((names == name).to_numpy())
                pos = np.clip(np.searchsorted(table_ids, ids[want], sorter=order), 0, max(order.size - 1, 0))
                hit = table_ids[order[pos]] == ids[want] if order.size else np.zeros(want.size, bool)
                rows[want[hit]] = mine[order[pos[hit]]]
            ends.append(rows)
        keep = (ends[0] >= 0) & (ends[1] >= 0)
        return ends[0][keep], ends[1][keep]

    def color_codes(self, key: str) -> tuple[np.ndarray | None, list[str]] | None:
        """Codes for `color_by`: opcode (the name), layer, hlo, nki; None for any other key."""
        return (None, []) if canonical(key) == "name" else color_codes(self, key)

    def device_trace(self, key: int | str) -> DeviceTrace:
        raise ValueError("a device trace has no device traces of its own; drill down from the system profile")

    def __repr__(self) -> str:
        return f"<DeviceEvents of {self._trace!r}: {len(self):,} rows>"


def _table_of(label: str) -> str:
    head = label.split("/")[-2] if "/" in label else label
    for table, shown in TABLE_LABELS.items():
        if head == shown:
            return table
    return head


def _flow_table(name: Any) -> str:
    """The Flow table's table names (Instruction, DmaPacket...) as DeviceTrace attribute names."""
    key = str(name).lower()
    if key.startswith("instruction"):
        return "instructions"
    if key.startswith("dma"):
        return "dma"
    if key.startswith("ccop") or key.startswith("cc_op"):
        return "cc_ops"
    if key.startswith("semaphore"):
        return "semaphores"
    return key


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
