"""The rows of the runtime's `nrt_sys_trace_fetch_events()` JSON, built a batch of events at a time.

Each batch of events' bytes is decoded into `Event`s and reduced to arrays (time, phase, pairing
key, the start's columns) before the next batch; starts and stops are then paired over the whole
file in time order by one numba pass. Arguments stay in the file's bytes (`PairArgs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import numba
import numpy as np
import pandas as pd
import pyarrow as pa

from ...errors import LoadWarnings
from ...memory import trim
from ...model.order import time_order
from ...model.schema import HARDWARE_EVENTS, INCOMPLETE, ROW
from ..columns import TS_LIMIT, Codes, WorkedOutArgs, batches, decode_raw, ints, json_text, valued_ints

if TYPE_CHECKING:
    from .scan import Packed

BATCH = 100_000
START, STOP, OTHER = 0, 1, 2


class Data(msgspec.Struct):
    """The keys of an event's `data` that are columns (the rest are read with the arguments)."""

    instance_id: Any = None
    pid: Any = msgspec.UNSET  # absent: the document's pid
    tid: Any = 0
    device_core_idx: Any = None


class Event(msgspec.Struct):
    event_type: Any = None
    phase: Any = None
    tracking_id: Any = None
    nc_idx: Any = None
    timestamp_ns: Any = None
    data: Data | None = None


class _AnyData(Event):
    """An event whose `data` is not an object (or null): its columns' keys read as absent."""

    data: Any = None


_EVENTS = msgspec.json.Decoder(list[Event])
_EVENT = msgspec.json.Decoder(Event)
_ANY_DATA = msgspec.json.Decoder(_AnyData)
_NO_DATA = Data()


def _one(raw: bytes | msgspec.Raw) -> Event | None:
    """An entry decoded alone: None when it is not an object."""
    try:
        return _EVENT.decode(raw)
    except msgspec.ValidationError:
        pass
    try:
        e = _ANY_DATA.decode(raw)
    except msgspec.ValidationError:
        return None
    return Event(e.event_type, e.phase, e.tracking_id, e.nc_idx, e.timestamp_ns, None)


def decode(raws: list[msgspec.Raw], doc_pid: Any, batch: int = BATCH) -> tuple[list[msgspec.Raw], dict[str, np.ndarray],
                                                                                 list[str], list[str]]:
    """The event objects' bytes (entries that are not objects left out) and their arrays."""
    kept: list[msgspec.Raw] = []
    parts: list[dict[str, np.ndarray]] = []
    names, keys, instances = Codes(), (Codes(), Codes()), Codes()
    for chunk, events in batches(raws, _EVENTS, _one, batch):
        kept.extend(chunk)
        parts.append(compact(_arrays(events, doc_pid, names, keys, instances)))
    if not parts:
        parts.append(compact(_arrays([], doc_pid, names, keys, instances)))
    return kept, joined(parts), list(names.index), list(instances.index)


# A row's columns are its start's (or its instant's): a stop's are not kept.
ROW_COLUMNS = ("name", "instance", "pid", "tid", "nc", "ok_nc", "pcore", "ok_pcore")


def compact(part: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A batch's arrays as kept until the file is read: time, phase and key per event (the key as
    three narrow arrays), the row columns only for events that open a row (not stops)."""
    key = part.pop("key")
    opens = part["phase"] != STOP
    out = {k: part.pop(k) for k in ("ts", "ok_ts", "phase")}
    out["ktype"], out["kkind"], out["kval"] = key[:, 0].astype(np.int32), key[:, 1].astype(np.int8), key[:, 2].copy()
    del key
    for k in ROW_COLUMNS:
        out[k] = part.pop(k)[opens]
    return out


def joined(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The batches' arrays as whole columns (each batch's pieces let go as its column is joined), with
    one code per distinct (event type, tracking id) over the whole file."""
    c = {}
    many = len(parts) > 1
    for k in list(parts[0]):
        c[k] = np.concatenate([p.pop(k) for p in parts])
        if many:  # the pieces' pages back at once (in glibc's heap they would stay, scattered)
            trim()
    fields = [c.pop("kval"), c.pop("kkind"), c.pop("ktype")]
    order = np.lexsort(fields)
    # A new code where any of the three differs from the row before in sorted order (one sorted copy
    # at a time, so that no more than one extra array is held).
    new = np.zeros(order.size, bool)
    if order.size:
        new[0] = True
    while fields:
        ranked = fields.pop()[order]
        new[1:] |= ranked[1:] != ranked[:-1]
        del ranked
    key = np.empty(order.size, np.int64)
    key[order] = np.cumsum(new) - 1
    c["key"] = key
    return c


def _key(events: list[Event], types: Codes, texts: Codes) -> np.ndarray:
    """A start and its stop share the event type and the tracking id: (type's code, kind, value)
    rows, kind 0 for a 64-bit integer id (a boolean is the integer it equals), 1 for text (an id
    neither integer nor text is read as its repr), 2 for a larger integer."""
    n = len(events)
    tids = [e.tracking_id for e in events]
    small = [isinstance(t, int) and -(2**63) <= t < 2**63 for t in tids]
    kind = np.fromiter((0 if ok else 2 if isinstance(t, int) else 1 for t, ok in zip(tids, small, strict=True)), np.int64, n)
    text = texts.add(["" if ok else t if isinstance(t, str) else repr(t) for t, ok in zip(tids, small, strict=True)])
    value = np.where(kind == 0, np.fromiter((int(t) if ok else 0 for t, ok in zip(tids, small, strict=True)), np.int64, n),
                     text)
    return np.column_stack([types.add([str(e.event_type) for e in events]).astype(np.int64), kind, value])


def _arrays(events: list[Event], doc_pid: Any, names: Codes, keys: tuple[Codes, Codes],
            instances: Codes) -> dict[str, np.ndarray]:
    ts, ok_ts = ints([e.timestamp_ns for e in events], LoadWarnings(), "")
    phase = np.array([START if e.phase == "start" else STOP if e.phase == "stop" else OTHER for e in events], np.int8)
    key = _key(events, *keys)
    data = [e.data or _NO_DATA for e in events]
    out = {"ts": ts, "ok_ts": ok_ts, "phase": phase, "key": key,
           "name": names.add([v if type(v) is str else ("" if v is None else str(v)) for v in (e.event_type for e in events)]),
           "instance": instances.add([v if type(v) is str else str(v) if v else ""
                                      for v in (d.instance_id for d in data)])}
    unset = msgspec.UNSET
    # A process or thread that is not an integer is 0; a core that is not one is null.
    out["pid"] = valued_ints([doc_pid if (v := d.pid) is unset else v for d in data])[0]
    out["tid"] = valued_ints([d.tid for d in data])[0]
    for col, values in (("nc", [e.nc_idx for e in events]), ("pcore", [d.device_core_idx for d in data])):
        out[col], out[f"ok_{col}"] = valued_ints(values)
    return out


@numba.njit(cache=True, nogil=True)
def _pair(order: np.ndarray, phase: np.ndarray, key: np.ndarray, n_keys: int,
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:  # pragma: no cover - numba
    """Starts and stops in time order: each stop closes the latest open start of its key."""
    top = np.full(n_keys, -1, np.int64)  # the latest open start of each key
    below = np.full(phase.size, -1, np.int64)  # the start opened before it, of the same key
    first = np.full(n_keys, -1, np.int64)  # when each key's first start came, for the order of hanging ones
    start = np.empty(order.size, np.int64)
    stop = np.empty(order.size, np.int64)
    n = 0
    unmatched = 0
    for k in range(order.size):
        i = order[k]
        g = key[i]
        if phase[i] == 0:
            below[i] = top[g]
            top[g] = i
            if first[g] < 0:
                first[g] = k
        elif phase[i] == 1:
            s = top[g]
            if s < 0:
                unmatched += 1
                continue
            top[g] = below[s]
            start[n], stop[n] = s, i
            n += 1
        else:
            start[n], stop[n] = i, i
            n += 1
    return start[:n], stop[:n], top, below, first, unmatched


def pair(c: dict[str, np.ndarray], warnings: LoadWarnings, origin: str) -> tuple[np.ndarray, np.ndarray]:
    """Each row's start event and stop event (-1: it never stopped), as the events pair in time order."""
    ok = c["ok_ts"]
    warnings.add(f"{origin}: events without a usable timestamp_ns, dropped", int((~ok).sum()))
    # Past TS_LIMIT a duration (stop - start) could wrap: such events are dropped (a stop left without
    # its start is then counted below, a start without its stop kept as unended).
    far = ok & ((c["ts"] > TS_LIMIT) | (c["ts"] < -TS_LIMIT))
    warnings.add(f"{origin}: events whose timestamp_ns is past 146 years from the clock's zero (int64 nanoseconds), "
                 "dropped", int(far.sum()))
    ok = ok & ~far
    usable = np.flatnonzero(ok)
    order = usable[np.argsort(c["ts"][usable], kind="stable")]
    n_keys = int(c["key"].max()) + 1 if c["key"].size else 0
    start, stop, top, below, first, unmatched = _pair(order, c["phase"], c["key"], n_keys)
    # Starts still open: by key in the order each key first opened, oldest first within a key.
    hanging: list[int] = []
    for g in np.flatnonzero(top >= 0)[np.argsort(first[top >= 0], kind="stable")].tolist():
        chain = []
        s = int(top[g])
        while s >= 0:
            chain.append(s)
            s = int(below[s])
        hanging += chain[::-1]
    warnings.add(f"{origin}: 'stop' events with no open 'start' of the same tracking_id, ignored", int(unmatched))
    warnings.add(f"{origin}: 'start' events that never stopped (shown open to the trace end, marked incomplete)",
                 len(hanging))
    h = np.array(hanging, np.int64)
    return np.concatenate([start, h]), np.concatenate([stop, np.full(h.size, -1, np.int64)])


def table(c: dict[str, np.ndarray], start: np.ndarray, stop: np.ndarray, name_dict: list[str],
          instance_dict: list[str], instance: str, ordered: bool = False) -> pa.Table:
    """The rows (a start and its stop, or an instant) in pairing order, or with `ordered` in the order
    the Profile keeps (by start, longest first: it need not copy the table to sort it), `id` and the
    source row still each row's place in pairing order. `c`'s arrays are let go as they are used."""
    for k in ("key", "ok_ts"):  # the pairing's: done with
        c.pop(k, None)
    # The row columns are kept for the events that open a row, in file order.
    at = np.searchsorted(np.flatnonzero(c.pop("phase") != STOP), start)
    ts = c.pop("ts")
    begin = ts[start]
    open_ = stop < 0
    end = np.where(open_, 0, ts[np.where(open_, 0, stop)])
    del ts
    # Cut into the order `Profile` sorts by, on the ends `schema.normalise` will give: an open end at
    # the last time seen, an end before its start at the start.
    shown = np.where(open_, max(int(begin.max(initial=0)), int(end.max(initial=0))), end) if open_.any() else end
    order = time_order(begin, np.maximum(shown, begin)) if ordered else None
    del shown
    # The instances' dictionary in order of first appearance in pairing order (as `dictionary_encode`
    # of the unsorted rows gave it), each name once.
    named, same = pd.factorize(pd.Series([v or instance for v in instance_dict], dtype=object))
    codes, first = pd.factorize(named[c.pop("instance")[at]] if named.size else np.zeros(start.size, np.int64))
    instances = pa.array(np.asarray(same, dtype=object)[first], pa.string())
    if order is None:
        order = np.arange(start.size, dtype=np.int64)
    else:
        begin, end, open_, at, codes = begin[order], end[order], open_[order], at[order], codes[order]
    return _columns(c, order, at, begin, end, open_, name_dict, instances, codes)


def _columns(c: dict[str, np.ndarray], order: np.ndarray, at: np.ndarray, begin: np.ndarray, end: np.ndarray,
             open_: np.ndarray, name_dict: list[str], instances: pa.Array, codes: np.ndarray) -> pa.Table:
    """The table's columns, rows already in order (`order`: each one's place in pairing order)."""
    n = order.size
    cols: dict[str, Any] = {"id": order}
    name = c.pop("name")[at]
    hardware = np.isin(name, [i for i, v in enumerate(name_dict) if v in HARDWARE_EVENTS])
    cols["name"] = pa.DictionaryArray.from_arrays(pa.array(name, pa.int32()), pa.array(name_dict, pa.string()))
    del name
    cols["start_ts"] = begin
    cols["end_ts"] = pa.array(end, mask=open_)
    cols["duration_ns"] = pa.nulls(n, pa.int64())
    cols["trace_event_source"] = pa.DictionaryArray.from_arrays(pa.array(hardware.astype(np.int32)),
                                                                pa.array(["neuron_rt", "neuron_hw"], pa.string()))
    cols["instance_id"] = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32), pa.int32()), instances)
    cols["process_id"] = c.pop("pid")[at]
    cols["thread_id"] = c.pop("tid")[at]
    for k in ("nc", "pcore"):
        cols[f"{k}_idx"] = pa.array(c.pop(k)[at], mask=~c.pop(f"ok_{k}")[at])
    cols[INCOMPLETE] = pa.array(open_, pa.bool_())
    cols[ROW] = pa.array(order.astype(np.int32))
    return pa.table(cols)


class PairArgs(WorkedOutArgs):
    """A row made of a start and its stop: the tracking id, the start's `data` and then the stop's."""

    def __init__(self, raws: list[msgspec.Raw] | Packed, start: np.ndarray, stop: np.ndarray) -> None:
        super().__init__(raws)  # type: ignore[arg-type]  # Packed is read by row (`args[i]`) as the list is
        self.start, self.stop = start, stop

    def rows(self) -> int:
        return int(self.start.size)

    def text(self, row: int) -> str | None:
        a = _object(self.args[int(self.start[row])])
        data = a.get("data")
        out = {"tracking_id": a.get("tracking_id"), **(data if isinstance(data, dict) else {})}
        b = int(self.stop[row])
        if b >= 0 and b != self.start[row]:
            more = _object(self.args[b]).get("data")
            out.update(more if isinstance(more, dict) else {})
        if not isinstance(data, dict | None):
            out["data"] = data
        return json_text(out)


def _object(raw: Any) -> Any:
    """An event's members as decoded (the scan packs none, b"", for an event with neither tracking id nor data)."""
    return {} if type(raw) is bytes and not raw else decode_raw(raw)
