"""The rows of a legacy system_profile.json, built a batch of events at a time.

Each batch of events' bytes is decoded straight into `Event`s (the fields the table needs: no
dict per event, the arguments stay in the file's bytes) and turned into arrays before the next
batch is decoded, so the load's peak is the file, one batch's Python values and the columns.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa

from ...errors import LoadWarnings
from ...memory import trim
from ...model.schema import HARDWARE_EVENTS, ROW
from ..columns import TS_LIMIT, Codes, batches, ints, valued_ints

BATCH = 100_000
FRAMEWORK_TYPE = 99999
UNIT = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_NC_GROUP = re.compile(r"nrt-nc-(\d+)$")
_FW_GROUP = re.compile(r"framework-(\d+)$")


class Event(msgspec.Struct):
    """The keys of an event the table is built from, with the default `.get` gave the dict reader."""

    id: Any = None
    name: Any = None
    timestamp: Any = None
    duration: Any = 0
    timestamp_unit: Any = None
    type: Any = None
    group: Any = None
    instance_id: Any = None
    process_id: Any = 0
    thread_id: Any = None
    nc_idx: Any = None
    lnc_idx: Any = None
    parent_id: Any = None
    device_core_idx: Any = None


# The keys whose values are columns: an event's other keys are its arguments (its type, group and
# device core included, as the file wrote them).
MAPPED = frozenset({"id", "name", "timestamp", "duration", "instance_id", "process_id", "thread_id", "nc_idx",
                    "lnc_idx", "parent_id", "timestamp_unit"})
_EVENTS = msgspec.json.Decoder(list[Event])
_EVENT = msgspec.json.Decoder(Event)


def _one(raw: bytes | msgspec.Raw) -> Event | None:
    try:
        return _EVENT.decode(raw)
    except msgspec.ValidationError:  # not an object
        return None


def decode(raws: list[msgspec.Raw], batch: int = BATCH) -> tuple[list[msgspec.Raw], list[dict[str, np.ndarray]], list[str],
                                                                   list[str], list[str]]:
    """Each batch's arrays, and the event objects' bytes (entries that are not objects left out)."""
    kept: list[msgspec.Raw] = []
    parts: list[dict[str, np.ndarray]] = []
    names, sources, instances = Codes(), Codes(), Codes()
    for chunk, events in batches(raws, _EVENTS, _one, batch):
        kept.extend(chunk)
        parts.append(_arrays(events, names, sources, instances))
    if not parts:
        parts.append(_arrays([], names, sources, instances))
    return kept, parts, list(names.index), list(sources.index), list(instances.index)


def _arrays(events: list[Event], names: Codes, sources: Codes, instances: Codes) -> dict[str, np.ndarray]:
    scale = np.array([UNIT.get(e.timestamp_unit, 1) if type(e.timestamp_unit) is str else 1 for e in events], np.int64)
    start, ok_ts = ints([e.timestamp for e in events], LoadWarnings(), "")
    dur, ok_dur = ints([e.duration for e in events], LoadWarnings(), "")
    name = [v if type(v) is str else ("" if v is None else str(v)) for v in (e.name for e in events)]
    # Groups name the core (`nrt-nc-000`) or the framework thread (`framework-80375131`): there are
    # few, so each distinct one is read once.
    codes, uniques = pd.factorize(pd.Series([e.group if type(e.group) is str else "" for e in events], dtype=object))
    framework = np.array([g.startswith("framework-") for g in uniques] or [False], bool)[codes].tolist()
    group_nc = np.array([_group_number(_NC_GROUP, g) for g in uniques] or [None], object)[codes].tolist()
    group_tid = np.array([_group_number(_FW_GROUP, g) for g in uniques] or [None], object)[codes].tolist()
    source = ["framework" if e.type == FRAMEWORK_TYPE or fw else "neuron_hw" if v in HARDWARE_EVENTS else "neuron_rt"
              for e, fw, v in zip(events, framework, name, strict=True)]
    nc = [a if (a := e.nc_idx) is not None else b if (b := e.lnc_idx) is not None else c
          for e, c in zip(events, group_nc, strict=True)]
    tid = [a if (a := e.thread_id) is not None else b if b is not None else 0 for e, b in zip(events, group_tid, strict=True)]
    ids, ok_id = ints([e.id for e in events], LoadWarnings(), "")
    pid, _ = ints([e.process_id for e in events], LoadWarnings(), "")
    out = {**_times(scale, start, ok_ts, dur, ok_dur),
           "name": names.add(name), "source": sources.add(source),
           "instance": instances.add([v if type(v) is str else str(v) if v else "" for v in (e.instance_id for e in events)]),
           "id": ids, "ok_id": ok_id, "pid": pid,
           # What a parent's thread and core pass on is decided on the values as written (a thread
           # of 0 or none takes its parent's if that is set, a core that is absent takes its parent's).
           "tid_blank": np.array([v is None or v == 0 for v in tid], bool), "tid_set": np.array([bool(v) for v in tid], bool),
           "nc_none": np.array([v is None for v in nc], bool)}
    out["tid"] = valued_ints(tid)[0]  # 0 where not an integer
    out["nc"], out["ok_nc"] = valued_ints(nc)
    out["parent"], out["ok_parent"] = valued_ints([e.parent_id for e in events])
    out["pcore"], out["ok_pcore"] = valued_ints([e.device_core_idx if s == "neuron_hw" else None
                                             for e, s in zip(events, source, strict=True)])
    return out


def _times(scale: np.ndarray, start: np.ndarray, ok_ts: np.ndarray, dur: np.ndarray,
           ok_dur: np.ndarray) -> dict[str, np.ndarray]:
    """Times in nanoseconds from the values as written (0 where not usable) and their units."""
    # In nanoseconds, a time or duration past TS_LIMIT would wrap (seconds past 2^63 ns): such a time
    # drops its event, such a duration, or one ending past the limit, shows as zero; each counted.
    room = TS_LIMIT // scale
    far_ts = ok_ts & ((start > room) | (start < -room))
    ok_ts = ok_ts & ~far_ts
    start = np.where(ok_ts, start, 0) * scale
    far_dur = ok_dur & ((dur > room) | (dur < -room))
    dur = np.where(ok_dur & ~far_dur, dur, 0) * scale
    end = start + dur  # no wrap: both within TS_LIMIT
    far_dur |= ok_dur & ((end > TS_LIMIT) | (end < -TS_LIMIT))
    ok_dur = ok_dur & ~far_dur
    dur = np.where(far_dur, 0, dur)
    return {"start": start, "ok_ts": ok_ts, "far_ts": far_ts, "dur": dur, "ok_dur": ok_dur, "far_dur": far_dur}


def _group_number(pattern: re.Pattern[str], group: str) -> int | None:
    m = pattern.match(group)
    return int(m.group(1)) if m else None


def table(parts: list[dict[str, np.ndarray]], name_dict: list[str], source_dict: list[str], instance_dict: list[str],
          instance: str, warnings: LoadWarnings, origin: str) -> pa.Table:
    """The events table from the batches' arrays; rows without a usable timestamp are counted and dropped."""
    # Each array is joined and its batches' pieces let go at once: the batches and the whole columns
    # are never held together.
    c = {}
    many = len(parts) > 1
    for k in list(parts[0]):
        c[k] = np.concatenate([p.pop(k) for p in parts])
        if many:  # the pieces' pages back at once (in glibc's heap they would stay, scattered)
            trim()
    ok_ts, far_ts, far_dur = c.pop("ok_ts"), c.pop("far_ts"), c.pop("far_dur")
    warnings.add(f"{origin}: events whose timestamp is past 146 years from the clock's zero (int64 nanoseconds), dropped",
                 int(far_ts.sum()))
    warnings.add(f"{origin}: events without a usable timestamp, dropped", int((~ok_ts & ~far_ts).sum()))
    warnings.add(f"{origin}: events whose duration ends past 146 years from the clock's zero (int64 nanoseconds), "
                 "shown with zero duration", int((far_dur & ok_ts).sum()))
    warnings.add(f"{origin}: events without a usable duration, shown with zero duration",
                 int((~c.pop("ok_dur") & ~far_dur & ok_ts).sum()))
    del far_ts, far_dur
    _inherit_from_parents(c)
    for k in ("tid_blank", "tid_set", "nc_none"):
        del c[k]
    n = c["start"].size
    cols: dict[str, Any] = {}
    cols["id"] = _masked(c, "id", "ok_id")
    cols["name"] = pa.DictionaryArray.from_arrays(pa.array(c.pop("name"), pa.int32()), pa.array(name_dict, pa.string()))
    start, dur = c.pop("start"), c.pop("dur")
    cols["start_ts"], cols["end_ts"], cols["duration_ns"] = start, start + dur, dur
    cols["trace_event_source"] = pa.DictionaryArray.from_arrays(pa.array(c.pop("source"), pa.int32()),
                                                                pa.array(source_dict, pa.string()))
    # An event with no instance of its own (none, or empty) is on the document's; the dictionary
    # holds each name once, in order of first appearance (as `dictionary_encode` would give it).
    named, same = pd.factorize(pd.Series([v or instance for v in instance_dict], dtype=object))
    codes, order = pd.factorize(named[c.pop("instance")] if named.size else np.zeros(0, np.int64))
    cols["instance_id"] = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32), pa.int32()),
                                                         pa.array(np.asarray(same, dtype=object)[order], pa.string()))
    cols["process_id"], cols["thread_id"] = c.pop("pid"), c.pop("tid")
    cols["nc_idx"] = _masked(c, "nc", "ok_nc")
    cols["pcore_idx"] = _masked(c, "pcore", "ok_pcore")
    cols["parent_id"] = _masked(c, "parent", "ok_parent")
    cols[ROW] = pa.array(np.arange(n, dtype=np.int32))
    out = pa.table(cols)
    del cols, start, dur
    return out if ok_ts.all() else out.filter(pa.array(ok_ts))


def _masked(c: dict[str, np.ndarray], key: str, ok: str) -> pa.Array:
    return pa.array(c.pop(key), mask=~c.pop(ok))


def _inherit_from_parents(c: dict[str, np.ndarray]) -> None:
    """A nested event without its own thread or core sits where its parent sits (rows in file order;
    of rows sharing an id, the last is the parent)."""
    children = np.flatnonzero(c["ok_parent"])
    if not children.size:
        return
    row_of = {int(i): r for r, i in enumerate(c["id"]) if c["ok_id"][r]}
    thread = ("tid", "tid_blank", "tid_set")
    core = ("nc", "ok_nc", "nc_none")
    for r in children.tolist():
        q = row_of.get(int(c["parent"][r]))
        if q is None:
            continue
        if c["tid_blank"][r] and c["tid_set"][q]:
            for k in thread:
                c[k][r] = c[k][q]
        if c["nc_none"][r]:
            for k in core:
                c[k][r] = c[k][q]
