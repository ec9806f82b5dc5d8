"""The Neuron runtime's `nrt_sys_trace_fetch_events()` JSON.

`{"data_version": 2, "events": [{"event_type", "phase": "start"|"stop", "tracking_id",
"nc_idx", "timestamp_ns", "data": {...}}]}`: a start and its stop share a tracking_id and
become one event; other phases are instants. A start with no stop is kept as an incomplete
event (a possible hang), never dropped.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ...errors import LoadWarnings
from ...model.filters import Filters
from ...model.profile import Profile
from ...model.schema import check_ids, normalise
from ..columns import document
from ..sniff import head, looks_like_json
from . import runtime_json_fast as fast
from . import runtime_json_rows as rows
from .scan import Malformed, Packed, read_events, trim_large

# Bumped when the columns this reader builds change: parse-cache entries of other versions are not used.
VERSION = 1
KEYS = ("events",)
WHAT = "nrt_sys_trace_fetch_events output"


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    data = head(path)
    return looks_like_json(data) and b'"data_version"' in data and b'"traceEvents"' not in data


def read(path: Path, filters: Filters) -> Profile:
    del filters  # applied after the load by load_profile
    origin = path.name
    warnings = LoadWarnings()
    try:
        doc, packed, _, reader = read_events(path, KEYS, WHAT, fast.SPEC, fast.Reader)
    except Malformed:  # not met on text msgspec has checked; read as before if it is
        doc, raws = document(path, KEYS, WHAT)
        kept, c, names, instances = rows.decode(raws, doc.get("pid", 0))
        skipped = len(raws) - len(kept)
        args: list[msgspec.Raw] | Packed = kept
        del raws
    else:
        trim_large(path)
        c, names, instances = reader.result(doc.get("pid", 0))
        skipped, args = reader.entries - reader.objects, packed
        del reader
    # Between the steps, freed scratch is handed back (glibc keeps it otherwise): the steps' peaks do not add up.
    trim_large(path)
    warnings.add(f"{origin}: entries of the event list that are not objects, skipped", skipped)
    start, stop = rows.pair(c, warnings, origin)
    trim_large(path)
    named = doc.get("instance_id")
    instance = named if isinstance(named, str) else path.parent.name or "instance"
    table = rows.table(c, start, stop, names, instances, instance, ordered=True)
    del c
    trim_large(path)
    table = normalise(table, warnings, origin)
    check_ids(table, warnings, origin)
    return Profile(table, source=str(path), format="neuron-runtime-json", warnings=warnings,
                   lazy=rows.PairArgs(args, start, stop), metadata=doc, extra={"filters_applied": False})
