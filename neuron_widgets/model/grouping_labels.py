"""The six grouping modes' track label and sort key of one combo, and the sources a track mixes.

grouping.py labels combos one at a time with it (the reference), grouping_many.py once per key
template; both import it, neither imports the other back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .track_names import TrackNames

COMBO_COLUMNS = ("instance_id", "trace_event_source", "process_id", "thread_id", "nc_idx",
                 "pcore_idx", "worker_gid", "framework_stream_id")

# Events that stand for many others not loaded (a job part's busy density): see job.view.
SUMMARY_SOURCE = "summary"

_SOURCE_RANK = {"framework": 0, "neuron_rt": 1, "neuron_hw": 2, "device": 3}
DEVICE_SOURCES = frozenset({"neuron_hw", "device"})


# framework_stream_id of a Chrome trace's async events: this prefix, then their category (readers/chrome/reader.py).
ASYNC_STREAM = "async:"


def _tier(row: dict[str, Any], thread: tuple[str | None, Any]) -> tuple[str, tuple[Any, ...]]:
    """The last label segment of the Default mode, and its sort key."""
    src, nc, pcore, tid, stream = (row["trace_event_source"], row["nc_idx"], row["pcore_idx"],
                                   row["thread_id"], row["framework_stream_id"])
    thread_name, thread_key = thread
    if src == "neuron_hw" and nc is not None:
        if pcore is None:
            return f"NC:{nc}", (1, nc, -1, 0)
        return f"NC{nc}:{pcore}", (1, nc, pcore, 0)
    if src == "neuron_rt" and nc is not None:
        return f"NC:{nc}", (1, nc, -1, 0)
    if src == "device":
        return thread_name or f"Stream:{tid}", (2, thread_key, 0, 0)
    if isinstance(stream, str) and stream.startswith(ASYNC_STREAM):
        # A Chrome trace's async events, a row per category as Perfetto gives them (not a framework stream).
        return f"{stream[len(ASYNC_STREAM):]} (async)", (3, 0, 0, str(stream))
    if stream is not None:
        return f"Stream:{stream}", (3, 0, 0, str(stream))
    return thread_name or f"TID:{tid}", (0, thread_key, 0, 0)


def combo_label(row: dict[str, Any], mode: str, names: TrackNames, neuron: bool,
           thread: tuple[str | None, Any]) -> tuple[str, tuple[Any, ...]]:
    """A combo's track label and sort key; `thread`: its thread's name (None: unnamed) and sort key."""
    inst, pid, tid, src = row["instance_id"], row["process_id"], row["thread_id"], row["trace_event_source"]
    if src == SUMMARY_SOURCE:
        # One track per summarised part in every mode, placed before the part's own tracks once loaded.
        return f"{inst}", (inst,)
    rank = _SOURCE_RANK.get(src, 9)
    nc = row["nc_idx"]
    proc = names.process_label(inst, pid) or f"PID:{pid}"
    pkey = names.process_key(inst, pid)
    thread_name, tkey = thread
    # A device's unnamed stream (an MTIA trace's kernels) is the same "Stream:7" in every mode, as the Default one names it.
    thread_text = thread_name or (f"Stream:{tid}" if src == "device" else f"TID:{tid}")
    thread_key = (inst, pkey, tkey)
    if mode == "instance":
        return f"{inst}", (inst,)
    if mode == "process":
        return f"{inst}/{proc}", (inst, pkey)
    if mode == "thread":
        return f"{inst}/{proc}/{thread_text}", thread_key
    if mode == "neuron_core":
        if nc is None:
            return f"{inst}/{proc}/{thread_text}", (inst, 1, pkey, thread_key[2])
        return f"{inst}/NC:{nc}", (inst, 0, nc, 0)
    if mode == "cpu_device":
        if src in DEVICE_SOURCES:
            worker = row["worker_gid"] if row["worker_gid"] is not None else nc
            if worker is None:
                stream = thread_name or f"Stream:{tid}"
                return f"{inst}/{proc}/{stream}/{src}", (inst, pkey, 1, thread_key[2], rank)
            return f"{inst}/{proc}/Worker:{worker}/{src}", (inst, pkey, 1, worker, rank)
        return f"{inst}/{proc}/{thread_text}/{src}", (inst, pkey, 0, thread_key[2], rank)
    transfer = row.get("transfer")
    if transfer is not None and nc is not None:
        return f"{inst}/NC:{nc}/{transfer}_transfers", (inst, (3, 0), 9, str(src), nc, 0 if transfer == "host_to_device" else 1)
    tier, tier_key = _tier(row, thread)
    if not neuron:
        # A trace from another program: its sources (framework, device) are not Neuron's tiers, and
        # its own process and thread names say what a row is.
        return f"{inst}/{proc}/{tier}", (inst, pkey, rank, *tier_key)
    return f"{inst}/{proc}/{src}/{tier}", (inst, pkey, rank, str(src), *tier_key)


def mixed_sources(tracks: pd.DataFrame, combo_track: np.ndarray, sources: pd.Series) -> pd.DataFrame:
    """A track that mixes sources (Process, Instance modes) names none of them."""
    srcs = pd.Series(sources.to_numpy(dtype=object)).groupby(combo_track).nunique()
    tracks.loc[srcs[srcs > 1].index, "trace_event_source"] = None
    return tracks
