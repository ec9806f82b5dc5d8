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

from ...errors import LoadWarnings, ProfileError
from ...model.filters import Filters
from ...model.profile import Counters, Profile
from ...model.schema import check_ids, normalise
from ..columns import TS_LIMIT, LeftoverArgs, document
from ..sniff import head, looks_like_json
from . import legacy_json_fast as fast
from . import legacy_json_rows as json_rows
from .scan import Malformed, read_events, trim_large

KEYS = ("trace_event", "trace_events", "events")
WHAT = "system_profile.json"
_DEVICE_FILE = re.compile(r"device_profile_model_(\d+)\.json(\.gz)?$")

# Bumped when the columns this reader builds change: parse-cache entries of other versions are not used.
VERSION = 1


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    data = head(path)
    if not looks_like_json(data) or b'"traceEvents"' in data or b'"data_version"' in data:
        return False
    return b'"trace_event' in data or b'"mem_usage"' in data or b'"cpu_util"' in data or is_device_json(path, data)


def is_device_json(path: Path, data: bytes) -> bool:
    return bool(_DEVICE_FILE.search(path.name)) or (b'"instruction"' in data and b'"summary"' in data)


def read(path: Path, filters: Filters) -> Profile:
    del filters  # applied after the load by load_profile
    if is_device_json(path, head(path)):
        raise ProfileError(path, "is a device profile (one model's execution on one NeuronCore), not a system profile",
                           f"Open it with nw.load_device_trace({str(path)!r}) or DeviceTraceViewer({str(path)!r}). "
                           + ("If the system profile was exported too, load_profile() on the system_profile.json "
                              "beside it lists this device profile in Profile.device_profiles"
                              if (path.parent / "system_profile.json").exists() else
                              "(no system_profile.json is beside it: only the device view is available)"))
    warnings = LoadWarnings()
    origin = path.name
    try:
        doc, packed, _, rows = read_events(path, KEYS, WHAT, fast.SPEC, fast.Reader)
    except Malformed:  # not met on text msgspec has checked; read as before if it is
        doc, raws = document(path, KEYS, WHAT)
        kept, parts, names, sources, instances = json_rows.decode(raws)
        args: LeftoverArgs = LeftoverArgs(kept, json_rows.MAPPED)
        skipped = len(raws) - len(kept)
        del raws
    else:
        parts, names, sources, instances = rows.result()
        args = fast.PackedLeftover(packed, json_rows.MAPPED)
        skipped = rows.entries - rows.objects
        del rows
    trim_large(path)
    warnings.add(f"{origin}: entries of the event list that are not objects, skipped", skipped)
    table = json_rows.table(parts, names, sources, instances, _default_instance(doc, path), warnings, origin)
    del parts
    trim_large(path)
    table = normalise(table, warnings, origin)
    check_ids(table, warnings, origin)
    counters = Counters({name: df for name, df in _series(doc, warnings, origin).items()})
    return Profile(table, source=str(path), format="neuron-json", warnings=warnings, lazy=args,
                   counters=counters, device_profiles=_device_profiles(path.parent),
                   metadata={k: v for k, v in doc.items() if k not in ("mem_usage", "cpu_util", "device_mem_usage")},
                   extra={"filters_applied": False})


def _default_instance(doc: dict[str, Any], path: Path) -> str:
    v = doc.get("instance_id")
    return v if isinstance(v, str) and v else path.parent.name or "instance"


def _series(doc: dict[str, Any], warnings: LoadWarnings, origin: str) -> dict[str, pd.DataFrame]:
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
            ts = pd.to_numeric(df["timestamp"], errors="coerce")
            # Past TS_LIMIT (1e300, say) a time would wrap when made an int64: unusable like text.
            df["timestamp"] = ts.where(ts.abs() <= TS_LIMIT)
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
