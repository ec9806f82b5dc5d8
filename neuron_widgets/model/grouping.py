"""Grouping modes: which track an event belongs to, with Neuron Explorer's labels.

Events are first reduced to "combos", the distinct tuples of (instance, source, process,
thread, NeuronCore, physical core, worker, stream). A profile has thousands of combos at most,
so each grouping mode is computed on that small table and mapped back to events with one
`take`, whatever the profile's size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

GROUPINGS: dict[str, str] = {
    "default": "Default",
    "cpu_device": "CPU vs Device",
    "neuron_core": "NeuronCore",
    "thread": "Thread",
    "process": "Process",
    "instance": "Instance",
}

COMBO_COLUMNS = ("instance_id", "trace_event_source", "process_id", "thread_id", "nc_idx",
                 "pcore_idx", "worker_gid", "framework_stream_id")

_SOURCE_RANK = {"framework": 0, "neuron_rt": 1, "neuron_hw": 2, "device": 3}
DEVICE_SOURCES = frozenset({"neuron_hw", "device"})


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
        combo, k = _dense(key, radix)
        # Any event of a combo can stand for it: all share the combo's columns.
        rep = np.zeros(k, dtype=np.int64)
        rep[combo] = np.arange(n)
        rows = table.select(list(COMBO_COLUMNS)).take(rep).to_pylist()
        frame = pd.DataFrame(rows, columns=list(COMBO_COLUMNS), dtype=object)
        return cls(combo, frame)


def _tier(row: dict) -> tuple[str, tuple]:
    """The last label segment of the Default mode, and its sort key."""
    src, nc, pcore, tid, stream = (row["trace_event_source"], row["nc_idx"], row["pcore_idx"],
                                   row["thread_id"], row["framework_stream_id"])
    if src == "neuron_hw" and nc is not None:
        if pcore is None:
            return f"NC:{nc}", (1, nc, -1, 0)
        return f"NC{nc}:{pcore}", (1, nc, pcore, 0)
    if src == "neuron_rt" and nc is not None:
        return f"NC:{nc}", (1, nc, -1, 0)
    if src == "device":
        return f"Stream:{tid}", (2, tid, 0, 0)
    if stream is not None:
        return f"Stream:{stream}", (3, 0, 0, str(stream))
    return f"TID:{tid}", (0, tid, 0, 0)


def _label(row: dict, mode: str) -> tuple[str, tuple]:
    inst, pid, tid, src = row["instance_id"], row["process_id"], row["thread_id"], row["trace_event_source"]
    rank = _SOURCE_RANK.get(src, 9)
    nc = row["nc_idx"]
    thread_key = (inst, pid, tid)
    if mode == "instance":
        return f"{inst}", (inst,)
    if mode == "process":
        return f"{inst}/PID:{pid}", (inst, pid)
    if mode == "thread":
        return f"{inst}/PID:{pid}/TID:{tid}", thread_key
    if mode == "neuron_core":
        if nc is None:
            return f"{inst}/PID:{pid}/TID:{tid}", (inst, 1, pid, tid)
        return f"{inst}/NC:{nc}", (inst, 0, nc, 0)
    if mode == "cpu_device":
        if src in DEVICE_SOURCES:
            worker = row["worker_gid"] if row["worker_gid"] is not None else nc
            if worker is None:
                return f"{inst}/PID:{pid}/Stream:{tid}/{src}", (inst, pid, 1, tid, rank)
            return f"{inst}/PID:{pid}/Worker:{worker}/{src}", (inst, pid, 1, worker, rank)
        return f"{inst}/PID:{pid}/TID:{tid}/{src}", (inst, pid, 0, tid, rank)
    tier, tier_key = _tier(row)
    return f"{inst}/PID:{pid}/{src}/{tier}", (inst, pid, rank, str(src), *tier_key)


def _sortable(key: tuple) -> tuple:
    # Nulls and mixed types must still sort: numbers before text, None first.
    return tuple((0, v, "") if isinstance(v, int | float) else (1, 0, str(v)) for v in key)


def tracks_of(combos: pd.DataFrame, mode: str) -> tuple[np.ndarray, pd.DataFrame]:
    """Track of each combo, and one row per track (label and the keys it groups by)."""
    check_grouping(mode)
    rows = combos.to_dict("records")
    labelled = [_label(r, mode) for r in rows]
    order = sorted(range(len(rows)), key=lambda i: (_sortable(labelled[i][1]), labelled[i][0]))
    track_of_label: dict[str, int] = {}
    track_rows: list[dict] = []
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
    # A track that mixes sources (Process, Instance modes) names none of them.
    srcs = pd.Series([r["trace_event_source"] for r in rows]).groupby(combo_track).nunique()
    tracks.loc[srcs[srcs > 1].index, "trace_event_source"] = None
    return combo_track, tracks
