"""The Neuron runtime's `nrt_sys_trace_fetch_events()` JSON.

`{"data_version": 2, "events": [{"event_type", "phase": "start"|"stop", "tracking_id",
"nc_idx", "timestamp_ns", "data": {...}}]}`: a start and its stop share a tracking_id and
become one event; other phases are instants. A start with no stop is kept as an incomplete
event (a possible hang), never dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import LoadWarnings
from ..model.filters import Filters
from ..model.profile import Profile
from ..model.schema import HARDWARE_EVENTS, INCOMPLETE, ROW, check_ids, normalise
from .columns import ArgsLazy, event_list, ints, optional_ints, packed, read_json, strings
from .sniff import head, looks_like_json

# Bumped when the columns this reader builds change: parse-cache entries of other versions are not used.
VERSION = 1


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    data = head(path)
    return looks_like_json(data) and b'"data_version"' in data and b'"traceEvents"' not in data


def _key(e: dict) -> Any:
    tid = e.get("tracking_id")
    return (str(e.get("event_type")), tid if isinstance(tid, int | str) else repr(tid))


def read(path: Path, filters: Filters) -> Profile:
    del filters  # applied after the load by load_profile
    doc = read_json(path)
    raw = event_list(doc, path, ("events",), "nrt_sys_trace_fetch_events output")
    origin = path.name
    warnings = LoadWarnings()
    events = [e for e in raw if isinstance(e, dict)]
    warnings.add(f"{origin}: entries of the event list that are not objects, skipped", len(raw) - len(events))
    ts, ok = ints([e.get("timestamp_ns") for e in events], LoadWarnings(), "")
    warnings.add(f"{origin}: events without a usable timestamp_ns, dropped", int((~ok).sum()))
    order = sorted((i for i in range(len(events)) if ok[i]), key=lambda i: ts[i])
    open_: dict[Any, list[int]] = {}
    rows: list[tuple[int, int | None]] = []  # (start event, stop event or None)
    unmatched_stop = 0
    for i in order:
        phase = events[i].get("phase")
        if phase == "start":
            open_.setdefault(_key(events[i]), []).append(i)
        elif phase == "stop":
            stack = open_.get(_key(events[i]))
            if stack:
                rows.append((stack.pop(), i))
            else:
                unmatched_stop += 1
        else:
            rows.append((i, i))
    hanging = [(i, None) for stack in open_.values() for i in stack]
    rows += hanging
    warnings.add(f"{origin}: 'stop' events with no open 'start' of the same tracking_id, ignored", unmatched_stop)
    warnings.add(f"{origin}: 'start' events that never stopped (shown open to the trace end, marked incomplete)",
                 len(hanging))
    starts = [events[a] for a, _ in rows]
    stops = [events[b] if b is not None else None for _, b in rows]
    args = packed(_merged(a, b) for a, b in zip(starts, stops, strict=True))
    instance = doc.get("instance_id") if isinstance(doc.get("instance_id"), str) else path.parent.name or "instance"
    names = [n if type(n) is str else ("" if n is None else str(n)) for n in (e.get("event_type") for e in starts)]
    start_ts = ts[[a for a, _ in rows]] if rows else np.zeros(0, np.int64)
    end_ts = pa.array([int(ts[b]) if b is not None else None for _, b in rows], pa.int64())
    table = pa.table({
        "id": np.arange(len(rows), dtype=np.int64),
        "name": strings(names),
        "start_ts": start_ts, "end_ts": end_ts, "duration_ns": pa.nulls(len(rows), pa.int64()),
        "trace_event_source": strings(["neuron_hw" if n in HARDWARE_EVENTS else "neuron_rt" for n in names]),
        "instance_id": strings([_data(e).get("instance_id") or instance for e in starts]),
        "process_id": optional_ints([_data(e).get("pid", doc.get("pid", 0)) for e in starts]).fill_null(0),
        "thread_id": optional_ints([_data(e).get("tid", 0) for e in starts]).fill_null(0),
        "nc_idx": optional_ints([e.get("nc_idx") for e in starts]),
        "pcore_idx": optional_ints([_data(e).get("device_core_idx") for e in starts]),
        INCOMPLETE: pa.array([b is None for _, b in rows], pa.bool_()),
        ROW: pa.array(np.arange(len(rows), dtype=np.int32)),
    })
    table = normalise(table, warnings, origin)
    check_ids(table, warnings, origin)
    return Profile(table, source=str(path), format="neuron-runtime-json", warnings=warnings, lazy=ArgsLazy(args),
                   metadata={k: v for k, v in doc.items() if k != "events"}, extra={"filters_applied": False})


def _data(e: dict) -> dict:
    d = e.get("data")
    return d if isinstance(d, dict) else {}


def _merged(start: dict, stop: dict | None) -> dict:
    out = {"tracking_id": start.get("tracking_id"), **_data(start)}
    if stop is not None and stop is not start:
        out.update(_data(stop))
    if not isinstance(start.get("data"), dict | None):
        out["data"] = start.get("data")
    return out
