"""What a job's timeline shows: one track per part drawn from its busy density, and the events of
the parts the user opened, under the part's name.

A part's density (analysis.density, computed in the part's Dask task and kept with its other
results) becomes a few events per part: runs of bins at the same busy level, each saying its
share. A part not summarised yet shows its time span from the job's metadata. An opened part's
events replace its density track; its instances are renamed `<part>/<instance>` so that every
track of the part sorts under the part's name and two parts' instances never merge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import LoadWarnings
from ..model.grouping import SUMMARY_SOURCE
from ..model.profile import Counters, Profile
from ..model.schema import ROW, normalise
from ..readers.multi import merge

# Upper bounds of the busy levels a density run is drawn at, and their names (the colour legend).
LEVELS: tuple[tuple[float, str], ...] = ((0.25, "busy < 25%"), (0.5, "busy 25-50%"), (0.75, "busy 50-75%"),
                                         (np.inf, "busy >= 75%"))
PENDING = "not summarised yet"
IDLE = "idle"


def level_of(share: np.ndarray) -> np.ndarray:
    """Level code per bin: -1 idle (nothing ran), else the index into LEVELS."""
    share = np.asarray(share, np.float64)
    code = np.searchsorted(np.array([b for b, _ in LEVELS[:-1]]), share, side="left").astype(np.int64)
    return np.where(share > 0, code, -1)


def density_runs(density: pd.DataFrame) -> pd.DataFrame:
    """Consecutive bins at one busy level as one run: start_ts, end_ts, level, busy_share (time-weighted)."""
    cols = ["start_ts", "end_ts", "level", "busy_share", "devices"]
    if density.empty:
        return pd.DataFrame(columns=cols)
    level = level_of(density["busy_share"].to_numpy())
    start = density["start_ts"].to_numpy(np.int64)
    end = density["end_ts"].to_numpy(np.int64)
    busy = density["busy_ns"].to_numpy(np.float64)
    # A run starts where the level changes or the bins stop touching.
    new = np.ones(level.size, bool)
    new[1:] = (level[1:] != level[:-1]) | (start[1:] != end[:-1])
    run = np.cumsum(new) - 1
    firsts = np.flatnonzero(new)
    lasts = np.r_[firsts[1:] - 1, level.size - 1]
    devices = int(density["devices"].iloc[0])
    r_start, r_end = start[firsts], end[lasts]
    r_busy = np.bincount(run, weights=busy)
    share = r_busy / (max(devices, 1) * np.maximum(r_end - r_start, 1))
    out = pd.DataFrame({"start_ts": r_start, "end_ts": r_end, "level": level[firsts], "busy_share": share,
                        "devices": devices})
    return out[out["level"] >= 0].reset_index(drop=True)


def overview_profile(order: list[str], density: Mapping[str, pd.DataFrame], spans: Mapping[str, tuple[int, int]]) -> Profile:
    """One summary track per part: its density runs, or its span (from metadata) while it is not summarised."""
    names = [n for _, n in LEVELS] + [PENDING]
    rows: dict[str, list[Any]] = {"name": [], "start_ts": [], "end_ts": [], "instance_id": [], "args": []}
    for part in order:
        if part in density:
            runs = density_runs(density[part])
            what = str(density[part]["device_kind"].iloc[0]) if len(density[part]) else "devices"
            for r in runs.itertuples():
                rows["name"].append(int(r.level))
                rows["start_ts"].append(int(r.start_ts))
                rows["end_ts"].append(int(r.end_ts))
                rows["instance_id"].append(part)
                rows["args"].append({"part": part, "busy": f"{r.busy_share:.1%}", what: int(r.devices),
                                     "open": "click to load this part's events"})
        elif part in spans:
            lo, hi = spans[part]
            rows["name"].append(len(LEVELS))
            rows["start_ts"].append(int(lo))
            rows["end_ts"].append(int(hi))
            rows["instance_id"].append(part)
            rows["args"].append({"part": part, "open": "click to load this part's events"})
    n = len(rows["name"])
    start = np.array(rows["start_ts"], np.int64)
    end = np.array(rows["end_ts"], np.int64)
    part_codes = pd.Categorical(rows["instance_id"], categories=list(order))
    table = pa.table({
        "id": np.arange(n, dtype=np.int64),
        "name": pa.DictionaryArray.from_arrays(pa.array(np.array(rows["name"], np.int32)), pa.array(names)),
        "start_ts": start, "end_ts": end, "duration_ns": end - start,
        "trace_event_source": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([SUMMARY_SOURCE])),
        "instance_id": pa.DictionaryArray.from_arrays(pa.array(part_codes.codes.astype(np.int32)),
                                                      pa.array([str(p) for p in order] or [""])),
        "process_id": np.zeros(n, np.int64), "thread_id": np.zeros(n, np.int64),
    })
    args = HeldColumns({"extra_attributes_json": pa.array([orjson.dumps(a).decode() for a in rows["args"]], pa.string())})
    # Built in time order: the rows of the held arguments stay the events' rows.
    order_ = np.lexsort((end, start))
    table = normalise(table.take(pa.array(order_)), LoadWarnings(), "job overview")
    return Profile(table.append_column(ROW, pa.array(order_.astype(np.int64))), source="job overview", format="job",
                   lazy=args, metadata={"parts": list(order)}, _ordered=True)


class HeldColumns:
    """Lazy-column provider over columns already in memory (so they merge with other parts' lazy columns)."""

    def __init__(self, columns: Mapping[str, pa.Array]) -> None:
        self._columns = dict(columns)

    def names(self) -> list[str]:
        return list(self._columns)

    def column(self, name: str) -> pa.ChunkedArray:
        return pa.chunked_array([self._columns[name]])

    def take(self, name: str, rows: np.ndarray) -> pa.Array:
        return self._columns[name].take(pa.array(np.asarray(rows, np.int64)))

    def value(self, name: str, event: Mapping[str, Any]) -> object:
        return self._columns[name][int(event[ROW])].as_py()


def under(profile: Profile, part: str) -> Profile:
    """The same events with every instance id renamed `<part>/<instance>` (tables, counters, names, device list)."""
    def rename(value: object) -> str:
        return f"{part}/{value}" if value not in (None, "") else part

    table = profile._table
    col = table.column("instance_id").combine_chunks()
    if not pa.types.is_dictionary(col.type):
        col = col.dictionary_encode()
    renamed = pa.DictionaryArray.from_arrays(col.indices, pa.array([rename(v) for v in col.dictionary.to_pylist()],
                                                                    pa.string()))
    table = table.set_column(table.schema.get_field_index("instance_id"), "instance_id", renamed)
    counters = Counters({name: _renamed_frame(profile.counter(name), rename) for name in profile.counters.names()})
    devices = profile.device_profiles
    devices = _renamed_frame(devices, rename) if len(devices) else None
    metadata = dict(profile.metadata)
    names = metadata.get("track_names")
    if isinstance(names, Mapping):
        metadata["track_names"] = {kind: [[rename(r[0]), *r[1:]] for r in rows] for kind, rows in names.items()}
    return Profile(table, source=profile.source, format=profile.format, warnings=profile.warnings, lazy=profile._lazy,
                   counters=counters, device_profiles=devices, metadata=metadata, extra=profile.extra, _ordered=True)


def _renamed_frame(df: pd.DataFrame, rename: Callable[[object], str]) -> pd.DataFrame:
    if "instance_id" not in df.columns:
        return df
    return df.assign(instance_id=[rename(v) for v in df["instance_id"].tolist()])


def job_view(overview: Profile, opened: Mapping[str, Profile]) -> Profile:
    """The overview with the opened parts' events in place of their density tracks."""
    if not opened:
        return overview
    shown = list(opened)
    keep = pc.invert(pc.is_in(overview.column("instance_id").cast(pa.string()), value_set=pa.array(shown, pa.string())))
    rest = Profile(overview._table.filter(keep), source=overview.source, format=overview.format,
                   lazy=overview._lazy, metadata=overview.metadata, _ordered=True)
    profiles = [under(opened[p], p) for p in shown]
    parts = ([rest] if len(rest) else []) + profiles
    names = (["job overview"] if len(rest) else []) + shown
    return merge(parts, names, source=overview.source)
