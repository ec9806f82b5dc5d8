"""A worker (a NeuronCore) named as the Timeline names its track, so that what a finding names the track filter finds.

The label is the Default grouping's label of the core's runtime track (`<instance>/PID:<pid>/neuron_rt/NC:<n>`),
made by the grouping's own `combo_label`; a job part's instances carry the part first (`<part>/<instance>/...`),
as the job's Timeline renames them when a part is opened. A Kineto rank is its GPU process's label
(`rank0/GPU 0`, the hostname where the trace names one): the prefix of each of its streams' tracks.
"""

from __future__ import annotations

from typing import Any

from .grouping_labels import combo_label
from .track_names import TrackNames


def part_instance(part: Any, inst: Any) -> str:
    """An instance of a job's part as the job's Timeline names it (job/view.py `under` renames them so)."""
    if part is None or part == "":
        return str(inst)
    return f"{part}/{inst}" if inst not in (None, "") else str(part)


def core_label(inst: Any, pid: Any, nc: Any, names: TrackNames | None = None, part: Any = None) -> str:
    """`i-0a88.../PID:2624383/neuron_rt/NC:1`: the Default grouping's label of that core's runtime track."""
    row = {"instance_id": part_instance(part, inst), "process_id": _int(pid), "thread_id": None,
           "trace_event_source": "neuron_rt", "nc_idx": _int(nc), "pcore_idx": None, "worker_gid": None,
           "framework_stream_id": None}
    label, _ = combo_label(row, "default", names if names is not None else TrackNames(), True, (None, (0,)))
    return label


def gpu_label(inst: Any, pid: Any, names: TrackNames | None = None, part: Any = None) -> str:
    """`rank0/GPU 0`: the Process grouping's label of a Kineto rank's GPU, which starts each of its streams' tracks."""
    row = {"instance_id": part_instance(part, inst), "process_id": _int(pid), "thread_id": None,
           "trace_event_source": "device", "nc_idx": None, "pcore_idx": None, "worker_gid": None,
           "framework_stream_id": None}
    label, _ = combo_label(row, "process", names if names is not None else TrackNames(), False, (None, (0,)))
    return label


def rank_text(rank: Any) -> str:
    """'rank 3' (ids handed over as floats read as integers): a rank with no GPU track to name it by."""
    return f"rank {_int(rank)}"


def _int(v: Any) -> Any:
    """An id as the grouping sees it: an integer where the value is one (pandas hands ids over as floats)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return v
    return int(f) if f.is_integer() else v
