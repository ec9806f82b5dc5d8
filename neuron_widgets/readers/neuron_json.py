"""Legacy Neuron JSON (`neuron-explorer view --output-format json`): system_profile.json.

Runtime and framework events under `trace_event` (also `trace_events` / `events`), host
memory (`mem_usage`), host CPU (`cpu_util`) and device memory (`device_mem_usage`) series;
the per-model `device_profile_model_<id>.json` files beside it are listed as device profiles.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import LoadWarnings, ProfileError
from ..model.filters import Filters
from ..model.profile import Counters, Profile
from ..model.schema import HARDWARE_EVENTS, ROW, check_ids, normalise
from .columns import ArgsLazy, event_list, ints, optional_ints, packed, read_json, strings
from .sniff import head, looks_like_json

KEYS = ("trace_event", "trace_events", "events")
FRAMEWORK_TYPE = 99999
_MAPPED = {"id", "name", "timestamp", "duration", "instance_id", "process_id", "thread_id", "nc_idx", "lnc_idx",
           "parent_id", "timestamp_unit"}
_NC_GROUP = re.compile(r"nrt-nc-(\d+)$")
_FW_GROUP = re.compile(r"framework-(\d+)$")
_DEVICE_FILE = re.compile(r"device_profile_model_(\d+)\.json(\.gz)?$")
_UNIT = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}

# Bumped when the columns this reader builds change: parse-cache entries of other versions are not used.
VERSION = 1


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    data = head(path)
    if not looks_like_json(data) or b'"traceEvents"' in data or b'"data_version"' in data:
        return False
    return b'"trace_event' in data or b'"mem_usage"' in data or b'"cpu_util"' in data or _is_device_json(path, data)


def _is_device_json(path: Path, data: bytes) -> bool:
    return bool(_DEVICE_FILE.search(path.name)) or (b'"instruction"' in data and b'"summary"' in data)


def read(path: Path, filters: Filters) -> Profile:
    del filters  # applied after the load by load_profile
    if _is_device_json(path, head(path)):
        raise ProfileError(path, "is a device profile (one model's execution on one NeuronCore), not a system profile",
                           f"Open it with nw.load_device_trace({str(path)!r}) or DeviceTraceViewer({str(path)!r}). "
                           + ("If the system profile was exported too, load_profile() on the system_profile.json "
                              "beside it lists this device profile in Profile.device_profiles"
                              if (path.parent / "system_profile.json").exists() else
                              "(no system_profile.json is beside it: only the device view is available)"))
    doc = read_json(path)
    raw_events = event_list(doc, path, KEYS, "system_profile.json")
    warnings = LoadWarnings()
    origin = path.name
    events = [e for e in raw_events if isinstance(e, dict)]
    warnings.add(f"{origin}: entries of the event list that are not objects, skipped", len(raw_events) - len(events))
    table, args = _events_table(events, warnings, origin, instance=_default_instance(doc, path))
    table = normalise(table, warnings, origin)
    check_ids(table, warnings, origin)
    counters = Counters({name: df for name, df in _series(doc, warnings, origin).items()})
    return Profile(table, source=str(path), format="neuron-json", warnings=warnings, lazy=ArgsLazy(args),
                   counters=counters, device_profiles=_device_profiles(path.parent),
                   metadata={k: v for k, v in doc.items() if k not in (*KEYS, "mem_usage", "cpu_util", "device_mem_usage")},
                   extra={"filters_applied": False})


def _default_instance(doc: dict, path: Path) -> str:
    v = doc.get("instance_id")
    return v if isinstance(v, str) and v else path.parent.name or "instance"


def _events_table(events: list[dict], warnings: LoadWarnings, origin: str, instance: str) -> tuple[pa.Table, list]:
    n = len(events)
    units = [e.get("timestamp_unit") for e in events]
    scale = np.array([_UNIT.get(u, 1) if isinstance(u, str) else 1 for u in units], dtype=np.int64)
    start, ok_ts = ints([e.get("timestamp") for e in events], LoadWarnings(), "")
    dur, ok_dur = ints([e.get("duration", 0) for e in events], LoadWarnings(), "")
    warnings.add(f"{origin}: events without a usable timestamp, dropped", int((~ok_ts).sum()))
    warnings.add(f"{origin}: events without a usable duration, shown with zero duration", int((~ok_dur & ok_ts).sum()))
    start = start * scale
    dur = np.where(ok_dur, dur, 0) * scale
    names = [n if type(n) is str else ("" if n is None else str(n)) for n in (e.get("name") for e in events)]
    types = [e.get("type") for e in events]
    groups = [e.get("group") if isinstance(e.get("group"), str) else "" for e in events]
    source = ["framework" if t == FRAMEWORK_TYPE or g.startswith("framework-")
              else "neuron_hw" if n_ in HARDWARE_EVENTS else "neuron_rt"
              for n_, t, g in zip(names, types, groups, strict=True)]
    # Groups name the core (`nrt-nc-000`) or the framework thread (`framework-80375131`).
    nc = [_first(e.get("nc_idx"), e.get("lnc_idx"), _group_number(_NC_GROUP, g)) for e, g in zip(events, groups, strict=True)]
    tid = [_first(e.get("thread_id"), _group_number(_FW_GROUP, g), 0) for e, g in zip(events, groups, strict=True)]
    ids, ok_id = ints([e.get("id") for e in events], LoadWarnings(), "")
    parent = optional_ints([e.get("parent_id") for e in events])
    _inherit_from_parents(ids, ok_id, parent, tid, nc)
    args = packed({k: v for k, v in e.items() if k not in _MAPPED} or None for e in events)
    pid, _ = ints([e.get("process_id", 0) for e in events], LoadWarnings(), "")
    table = pa.table({
        "id": pa.array(ids, mask=~ok_id),
        "name": strings(names),
        "start_ts": start, "end_ts": start + dur, "duration_ns": dur,
        "trace_event_source": strings(source),
        "instance_id": strings([e.get("instance_id") or instance for e in events]),
        "process_id": pid,
        "thread_id": optional_ints(tid).fill_null(0),
        "nc_idx": optional_ints(nc),
        "pcore_idx": optional_ints([e.get("device_core_idx") if s == "neuron_hw" else None
                                    for e, s in zip(events, source, strict=True)]),
        "parent_id": parent,
        ROW: pa.array(np.arange(n, dtype=np.int32)),
    })
    if not ok_ts.all():
        table = table.filter(pa.array(ok_ts))
    return table, args


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _group_number(pattern: re.Pattern[str], group: str) -> int | None:
    m = pattern.match(group)
    return int(m.group(1)) if m else None


def _inherit_from_parents(ids: np.ndarray, ok_id: np.ndarray, parent: pa.Array, tid: list, nc: list) -> None:
    """A nested event without its own thread or core sits where its parent sits."""
    if parent.null_count == len(parent):
        return
    row_of = {int(i): r for r, i in enumerate(ids) if ok_id[r]}
    for r, p in enumerate(parent.to_pylist()):
        if p is None or p not in row_of:
            continue
        q = row_of[p]
        if tid[r] in (None, 0) and tid[q]:
            tid[r] = tid[q]
        if nc[r] is None:
            nc[r] = nc[q]


def _series(doc: dict, warnings: LoadWarnings, origin: str) -> dict[str, pd.DataFrame]:
    out = {}
    for key, name, rename in (("mem_usage", "host_memory", {"usage": "used_bytes", "percent_usage": "used_percent"}),
                              ("cpu_util", "cpu_usage", {"util": "util_percent"}),
                              ("device_mem_usage", "hbm_usage", {})):
        rows = doc.get(key)
        if not isinstance(rows, list) or not rows:
            continue
        good = [r for r in rows if isinstance(r, dict)]
        warnings.add(f"{origin}: {key} entries that are not objects, skipped", len(rows) - len(good))
        df = pd.DataFrame(good).rename(columns=rename)
        if "cpu_id" in df:
            df["cpu_id"] = df["cpu_id"].astype(str)
        if "timestamp" in df:
            df["timestamp"] = pd.to_numeric(df["timestamp"], errors="coerce")
            bad = int(df["timestamp"].isna().sum())
            warnings.add(f"{origin}: {key} entries without a usable timestamp, skipped", bad)
            df = df.dropna(subset=["timestamp"]).astype({"timestamp": np.int64})
        out[name] = df.reset_index(drop=True)
    return out


def _device_profiles(directory: Path) -> pd.DataFrame | None:
    rows = []
    for f in sorted(directory.iterdir()):
        m = _DEVICE_FILE.match(f.name)
        if m and f.is_file():
            rows.append({"device_profile_name": f.name.split(".json")[0], "instance_id": None, "process_id": None,
                         "nc_id": None, "session_id": None, "model_id": int(m.group(1)), "path": str(f)})
    return pd.DataFrame(rows) if rows else None
