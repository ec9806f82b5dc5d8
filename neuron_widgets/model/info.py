"""A profile in numbers: what `neuron-widgets info` prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from .profile import Profile


def _counts(col: pa.ChunkedArray) -> dict[str, int]:
    vc = pc.value_counts(col.combine_chunks()).to_pylist()
    return {str(v["values"]): int(v["counts"]) for v in sorted(vc, key=lambda r: -r["counts"])}


def summarise(profile: Profile) -> dict[str, Any]:
    t = profile.core
    nc = t.column("nc_idx")
    cores = []
    if nc.null_count < len(nc):
        # nc_idx is process-local: a NeuronCore is (instance, process, nc_idx), as the analyses count them.
        keys = ["instance_id", "process_id", "nc_idx"]
        found = t.select(keys).filter(pc.is_valid(nc)).group_by(keys).aggregate([])
        cores = sorted((str(r["instance_id"]), str(r["process_id"]), int(r["nc_idx"])) for r in found.to_pylist())
    incomplete = int(np.asarray(t.column("incomplete").to_numpy(zero_copy_only=False)).sum()) \
        if "incomplete" in t.column_names else 0
    return {
        "source": profile.source,
        "format": profile.format,
        "events": len(profile),
        "start_ts": profile.start_ts,
        "end_ts": profile.end_ts,
        "duration_ms": profile.home_duration_ns / 1e6,  # the dense part's: far-clock events are counted apart
        "far_clock_events": profile.far_clock_events,
        "events_per_source": _counts(t.column("trace_event_source")) if len(profile) else {},
        "events_per_name": _counts(t.column("name")) if len(profile) else {},
        "instances": sorted(str(v) for v in t.column("instance_id").unique().to_pylist()),
        "processes": len(t.select(["instance_id", "process_id"]).group_by(["instance_id", "process_id"]).aggregate([])),
        "neuron_cores": cores,
        "incomplete_events": incomplete,
        "device_profiles": len(profile.device_profiles),
        "counters": profile.counters.names(),
        "warnings": profile.warnings.lines(),
    }


def format_summary(s: dict[str, Any], top: int = 15) -> str:
    lines = [
        f"profile      {s['source']}",
        f"format       {s['format']}",
        f"events       {s['events']:,}",
        f"time span    {s['duration_ms']:,.3f} ms  ({s['start_ts']} .. {s['end_ts']} ns)"
        + (f"; {s['far_clock_events']:,} events on a far clock are not in it" if s.get("far_clock_events") else ""),
        f"instances    {len(s['instances'])}: {', '.join(s['instances'][:8])}{' ...' if len(s['instances']) > 8 else ''}",
        f"processes    {s['processes']}",
        f"NeuronCores  {len(s['neuron_cores'])}",
        f"device profiles {s['device_profiles']}",
        f"incomplete events {s['incomplete_events']}",
        f"counters     {', '.join(s['counters']) or 'none'}",
        "events per source:",
        *[f"  {k:<24} {v:>12,}" for k, v in s["events_per_source"].items()],
        f"events per type (top {top}):",
        *[f"  {k[:60]:<60} {v:>12,}" for k, v in list(s["events_per_name"].items())[:top]],
    ]
    if s["warnings"]:
        lines.append("warnings:")
        lines += [f"  {w}" for w in s["warnings"]]
    else:
        lines.append("warnings:    none")
    return "\n".join(lines)
