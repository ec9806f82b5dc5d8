"""The Neuron runtime's `nrt_sys_trace_fetch_events()` JSON.

`{"data_version": 2, "events": [{"event_type", "phase": "start"|"stop", "tracking_id",
"nc_idx", "timestamp_ns", "data": {...}}]}`: a start and its stop share a tracking_id and
become one event; other phases are instants. A start with no stop is kept as an incomplete
event (a possible hang), never dropped.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import LoadWarnings
from ..model.filters import Filters
from ..model.profile import Profile
from ..model.schema import check_ids, normalise
from . import runtime_json_rows as rows
from .columns import document
from .sniff import head, looks_like_json

# Bumped when the columns this reader builds change: parse-cache entries of other versions are not used.
VERSION = 1


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    data = head(path)
    return looks_like_json(data) and b'"data_version"' in data and b'"traceEvents"' not in data


def read(path: Path, filters: Filters) -> Profile:
    del filters  # applied after the load by load_profile
    doc, raws = document(path, ("events",), "nrt_sys_trace_fetch_events output")
    origin = path.name
    warnings = LoadWarnings()
    kept, c, names, instances = rows.decode(raws, doc.get("pid", 0))
    warnings.add(f"{origin}: entries of the event list that are not objects, skipped", len(raws) - len(kept))
    del raws
    start, stop = rows.pair(c, warnings, origin)
    instance = doc.get("instance_id") if isinstance(doc.get("instance_id"), str) else path.parent.name or "instance"
    table = rows.table(c, start, stop, names, instances, instance)
    del c
    table = normalise(table, warnings, origin)
    check_ids(table, warnings, origin)
    return Profile(table, source=str(path), format="neuron-runtime-json", warnings=warnings,
                   lazy=rows.PairArgs(kept, start, stop), metadata=doc, extra={"filters_applied": False})
