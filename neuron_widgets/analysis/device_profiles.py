"""The device profiles of a capture with their summary numbers (Neuron Explorer's system-mode summary list)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.device.engines import transfer_bytes
from ..model.device.strip import engine_active, execution_span, summary_percent
from ..model.device.trace import DeviceTrace
from ..model.interval_union import busy_ns
from ..model.profile import Profile
from .frame import notes_of

# Reading a device profile costs what its tables hold: past this many, numbers are left out.
DEFAULT_LIMIT = 16


def device_profile_summary(profile: Profile, limit: int | None = DEFAULT_LIMIT) -> pd.DataFrame:
    """One row per device profile: its keys and, read from its tables, `execution_ns`, `mfu_pctg`,
    `hfu_pctg`, `mbu_pctg` (as its Summary table reports them), `dma_bytes`, `dma_busy_pctg`, and
    `<engine>_active_pctg` per engine (active time over the execution's span).

    Each profile is read once and cached with the Profile (as a drill-down would). Past `limit`
    profiles (None: no limit) the rest are listed without numbers, and the notes say so.
    """
    listed = profile.device_profiles.copy()
    notes: list[str] = []
    if listed.empty:
        return notes_of(listed.assign(execution_ns=pd.Series(dtype="Int64")), ["no device profiles in this capture"])
    rows: list[dict[str, float]] = []
    for k, name in enumerate(listed["device_profile_name"].astype(str)):
        if limit is not None and k >= limit:
            rows.append({})
            continue
        try:
            trace = profile.device_trace(name)
        except Exception as exc:  # a missing or damaged device profile: listed, with why
            notes.append(f"{name}: {exc}")
            rows.append({})
            continue
        rows.append(_numbers(trace))
    if limit is not None and len(listed) > limit:
        notes.append(f"numbers for the first {limit} of {len(listed)} device profiles "
                     "(device_profile_summary(profile, limit=None) reads them all)")
    numbers = pd.DataFrame(rows, index=listed.index)
    return notes_of(pd.concat([listed, numbers], axis=1), notes)


def _numbers(trace: DeviceTrace) -> dict[str, float]:
    a, b = execution_span(trace)
    span = max(b - a, 1)
    out: dict[str, float] = {"execution_ns": float(b - a)}
    for name, key in (("mfu_estimated_percent", "mfu"), ("mfu_max_achievable_estimated_percent", "mfu_achievable"),
                      ("hfu_estimated_percent", "hfu"), ("mbu_estimated_percent", "mbu")):
        v = summary_percent(trace, name)
        if v is not None:
            out[f"{key}_pctg"] = v
    dma = trace.dma
    if not dma.empty:
        if "transfer_bytes" in dma:
            out["dma_bytes"] = float(transfer_bytes(dma).sum())
        out["dma_busy_pctg"] = 100.0 * busy_ns(dma["start_ts"].to_numpy(np.int64), dma["end_ts"].to_numpy(np.int64)) / span
    for r in engine_active(trace).itertuples():
        out[f"{r.engine}_active_pctg"] = 100.0 * min(r.active_ns / span, 1.0)
    return out
