"""Grouping modes: which track an event belongs to, with Neuron Explorer's labels.

Events are first reduced to "combos", the distinct tuples of (instance, source, process,
thread, NeuronCore, physical core, worker, stream). A profile has thousands of combos at most,
so each grouping mode is computed on that small table and mapped back to events with one
`take`, whatever the profile's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

# Re-exported: readers, job, export import ASYNC_STREAM, SUMMARY_SOURCE from here.
from .grouping_labels import ASYNC_STREAM as ASYNC_STREAM
from .grouping_labels import COMBO_COLUMNS as COMBO_COLUMNS
from .grouping_labels import SUMMARY_SOURCE as SUMMARY_SOURCE
from .grouping_labels import combo_label, mixed_sources
from .grouping_many import tracks_by_templates
from .track_names import TrackNames
from .track_order import sortable

GROUPINGS: dict[str, str] = {
    "default": "Default",
    "cpu_device": "CPU vs Device",
    "neuron_core": "NeuronCore",
    "thread": "Thread",
    "process": "Process",
    "instance": "Instance",
}

# Runtime calls that move data between host and device: in the Default mode they get a track per
# instance and NeuronCore and direction, as Neuron Explorer's System Trace Viewer shows them.
TRANSFERS = {"dmem_buf_copyin": "host_to_device", "nrt_tensor_write": "host_to_device",
             "dmem_buf_copyout": "device_to_host", "nrt_tensor_read": "device_to_host"}
_DIRECTIONS = ("host_to_device", "device_to_host")


def transfer_codes(name: pa.ChunkedArray) -> np.ndarray:
    """Per event 0 (not a transfer), 1 (host to device) or 2 (device to host), through the name dictionary."""
    chunk = name.chunk(0) if name.num_chunks == 1 else name.combine_chunks()
    if not pa.types.is_dictionary(chunk.type):
        chunk = chunk.dictionary_encode()
    per_name = np.array([_DIRECTIONS.index(TRANSFERS[v]) + 1 if v in TRANSFERS else 0
                         for v in chunk.dictionary.to_pylist()] or [0], np.int8)
    return per_name[chunk.indices.fill_null(0).to_numpy(zero_copy_only=False)] if len(chunk) else np.zeros(0, np.int8)
def check_grouping(grouping: str) -> str:
    if grouping not in GROUPINGS:
        names = ", ".join(GROUPINGS)
        raise ValueError(f"unknown grouping {grouping!r}; choose one of: {names}")
    return grouping


def _codes(col: pa.ChunkedArray) -> tuple[np.ndarray, int]:
    """Dense integer codes for a column (nulls get their own code) and how many codes there are."""
    chunk = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    if pa.types.is_dictionary(chunk.type):
        card = len(chunk.dictionary)
        if chunk.null_count:
            # Nulls take the code after the last dictionary entry.
            return chunk.indices.fill_null(card).to_numpy(), card + 1
        return chunk.indices.to_numpy(), card
    bounds = pc.min_max(chunk).as_py()
    lo, hi = bounds["min"], bounds["max"]
    if lo is None:  # all null
        return np.zeros(len(chunk), dtype=np.int8), 1
    if hi - lo < 1 << 20:
        # Small ranges (core indices, workers) need no hashing: nulls become code 0.
        base = lo - 1 if chunk.null_count else lo
        arr = chunk.fill_null(base).to_numpy() if chunk.null_count else chunk.to_numpy()
        return arr - base, hi - base + 1
    arr = chunk.fill_null(lo - 1).to_numpy() if chunk.null_count else chunk.to_numpy()
    codes, uniques = pd.factorize(arr)
    return codes, len(uniques)


def _dense(key: np.ndarray, radix: int) -> tuple[np.ndarray, int]:
    """Renumber packed keys 0..k-1 (k distinct keys), by a lookup table when it is small."""
    if radix <= 1 << 24:
        present = np.bincount(key, minlength=radix) > 0
        lookup = np.cumsum(present, dtype=np.int32) - 1
        return lookup[key], int(present.sum())
    codes, uniques = pd.factorize(key)
    return codes.astype(np.int32), len(uniques)


@dataclass
class Combos:
    """Distinct grouping-relevant tuples and, per event, which tuple it has."""

    codes: np.ndarray  # int32 per event
    table: pd.DataFrame  # one row per combo, COMBO_COLUMNS as Python values (None for null)
    counts: np.ndarray | None = None  # events per combo (what a grouping's lanes split its tracks by)

    @classmethod
    def of(cls, table: pa.Table) -> Combos:
        n = table.num_rows
        key = np.zeros(n, dtype=np.int64)
        radix = 1
        for name in COMBO_COLUMNS:
            codes, card = _codes(table.column(name))
            card = max(card, 1)
            if radix * card >= 2**62:
                # Packing would overflow: renumber what we have densely, then go on.
                dense, radix = _dense(key, radix)
                key = dense.astype(np.int64)
            key *= card
            key += codes
            radix *= card
        transfer = transfer_codes(table.column("name")) if "name" in table.column_names else np.zeros(n, np.int8)
        if transfer.any():
            dense, radix = _dense(key, radix)
            key = dense.astype(np.int64) * 3 + transfer
            radix *= 3
        combo, k = _dense(key, radix)
        # Any event of a combo can stand for it: all share the combo's columns.
        rep = np.zeros(k, dtype=np.int64)
        rep[combo] = np.arange(n)
        frame = pd.DataFrame({name: _objects(table.column(name).take(pa.array(rep))) for name in COMBO_COLUMNS},
                             columns=list(COMBO_COLUMNS), dtype=object)
        frame["transfer"] = pd.Series([None if t == 0 else _DIRECTIONS[t - 1] for t in transfer[rep].tolist()],
                                      dtype=object)
        return cls(combo, frame, np.bincount(combo, minlength=k))


def _objects(col: pa.ChunkedArray) -> np.ndarray:
    """A column as Python values (None for null), a million rows in tens of milliseconds."""
    chunk = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_dictionary(chunk.type):
        values = np.fromiter([*chunk.dictionary.to_pylist(), None], dtype=object)
        return values[chunk.indices.fill_null(len(chunk.dictionary)).to_numpy(zero_copy_only=False)]
    if pa.types.is_integer(chunk.type) and chunk.null_count == 0:
        return chunk.to_numpy(zero_copy_only=False).astype(object)  # Python ints, as to_pylist gives
    return np.fromiter(chunk.to_pylist(), dtype=object, count=len(chunk))


def tracks_of(combos: pd.DataFrame, mode: str, names: TrackNames | None = None) -> tuple[np.ndarray, pd.DataFrame]:
    """Track of each combo, and one row per track (label and the keys it groups by).

    `names`: the process and thread names the trace carries (labels and order); Neuron
    profiles have none. The Default mode's source tier (framework, neuron_rt, neuron_hw) is
    shown for profiles with Neuron events, not for traces of other programs.
    Labels and order are those of `tracks_by_rows`, computed per key template (track_order.py)
    so that a trace with a million threads is grouped in seconds.
    """
    check_grouping(mode)
    names = names if names is not None else TrackNames()
    got = tracks_by_templates(combos, mode, names) if len(combos) else None
    return got if got is not None else tracks_by_rows(combos, mode, names)


def tracks_by_rows(combos: pd.DataFrame, mode: str, names: TrackNames) -> tuple[np.ndarray, pd.DataFrame]:
    """`tracks_of` one combo at a time: the reference, and the way for keys the templates cannot take."""
    rows = combos.to_dict("records")
    neuron = any(r["trace_event_source"] in ("neuron_rt", "neuron_hw") for r in rows)
    labelled = [combo_label(r, mode, names, neuron, (names.thread_label(r["instance_id"], r["process_id"], r["thread_id"]),
                                               names.thread_key(r["instance_id"], r["process_id"], r["thread_id"])))
                for r in rows]
    order = sorted(range(len(rows)), key=lambda i: (sortable(labelled[i][1]), labelled[i][0]))
    track_of_label: dict[str, int] = {}
    track_rows: list[dict[str, Any]] = []
    for i in order:
        label = labelled[i][0]
        if label not in track_of_label:
            track_of_label[label] = len(track_rows)
            r = rows[i]
            track_rows.append({"label": label, "instance_id": r["instance_id"],
                               "process_id": r["process_id"] if mode != "instance" else None,
                               "trace_event_source": r["trace_event_source"]})
    combo_track = np.array([track_of_label[lab] for lab, _ in labelled], dtype=np.int32)
    tracks = pd.DataFrame(track_rows, columns=["label", "instance_id", "process_id", "trace_event_source"])
    return combo_track, mixed_sources(tracks, combo_track, combos["trace_event_source"])
