"""The Device Trace Viewer's summary strip: per-engine active time and share, DMA traffic, MFU."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import pandas as pd

from .device_trace import DeviceTrace


def busy_ns(start: np.ndarray, end: np.ndarray) -> int:
    """Length of the union of intervals (an engine running two overlapping instructions is busy once)."""
    if start.size == 0:
        return 0
    order = np.argsort(start, kind="stable")
    s, e = start[order].astype(np.int64), end[order].astype(np.int64)
    reach = np.maximum.accumulate(e)
    # An interval opens a new run when it starts after everything before it has ended.
    new = np.concatenate([[True], s[1:] > reach[:-1]])
    run_start = s[new]
    run_end = np.maximum.reduceat(e, np.flatnonzero(new))
    return int((run_end - run_start).sum())


def grouped_busy(group: np.ndarray, start: np.ndarray, end: np.ndarray, n_groups: int) -> np.ndarray:
    """busy_ns of each group's intervals at once (group codes 0..n_groups-1; negative codes are left out)."""
    keep = group >= 0
    g, s, e = group[keep].astype(np.int64), start[keep].astype(np.int64), end[keep].astype(np.int64)
    if s.size > 1 and np.any(s[1:] < s[:-1]):  # device tables usually come in time order: no sort then
        order = np.argsort(s, kind="stable")
        g, s, e = g[order], s[order], e[order]
    return _union_pass(g, s, e, n_groups)


@numba.njit(cache=True, nogil=True)
def _union_pass(group, start, end, n):  # pragma: no cover - numba
    """Intervals in start order: per group, the length of their union (one run kept open per group)."""
    out = np.zeros(n, np.int64)
    none = np.iinfo(np.int64).min
    run_start = np.zeros(n, np.int64)
    run_end = np.full(n, none)
    for i in range(start.size):
        g, s, e = group[i], start[i], max(end[i], start[i])
        if s > run_end[g]:
            if run_end[g] != none:
                out[g] += run_end[g] - run_start[g]
            run_start[g] = s
            run_end[g] = e
        elif e > run_end[g]:
            run_end[g] = e
    for g in range(n):
        if run_end[g] != none:
            out[g] += run_end[g] - run_start[g]
    return out


def execution_span(trace: DeviceTrace) -> tuple[int, int]:
    info = trace.execution_info
    if not info.empty and {"execution_start_ts", "execution_end_ts"} <= set(info.columns):
        a, b = info["execution_start_ts"].min(), info["execution_end_ts"].max()
        if pd.notna(a) and pd.notna(b) and int(b) > int(a):
            return int(a), int(b)
    tables = [df for df in (trace.instructions, trace.dma) if not df.empty]
    if not tables:
        return 0, 0
    return min(int(df["start_ts"].min()) for df in tables), max(int(df["end_ts"].max()) for df in tables)


def duration(ns: float) -> str:
    """A duration as a person reads it: 1.23 ms, 45.6 µs, 789 ns (1,234 s past a thousand seconds)."""
    ns = float(ns)
    if not np.isfinite(ns):
        return "–"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:,.3g} {unit}" if abs(ns) < 1000 * scale else f"{ns / scale:,.0f} {unit}"
    return f"{ns:,.0f} ns"


def _bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:,.3g} {unit}"
    return f"{n:,.0f} B"


def engine_active(trace: DeviceTrace) -> pd.DataFrame:
    """Per engine: active ns (from ActiveTime when the profile has it, else the union of its instructions)."""
    from .device_events import _encode, engine_tracks

    use_active = not trace.active_time.empty and "engine" in trace.active_time
    src = trace.active_time if use_active else trace.instructions
    if src.empty or not {"start_ts", "end_ts"} <= set(src.columns):
        return pd.DataFrame(columns=["engine", "active_ns", "instructions"])
    key = engine_tracks(src, trace)
    if key is None:
        key = pd.Series("engine", index=src.index)
    codes, engines = _encode(key)
    start, end = src["start_ts"].to_numpy(np.int64), src["end_ts"].to_numpy(np.int64)
    counts = np.bincount(codes, minlength=len(engines))
    # One stable pass groups the rows by engine, each group still in time order (no mask per engine).
    order = np.argsort(codes.astype(np.int16) if len(engines) < 2**15 else codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts)])
    rows = []
    for k, e in enumerate(engines):
        if counts[k]:
            mine = order[bounds[k]:bounds[k + 1]]
            rows.append({"engine": e, "active_ns": busy_ns(start[mine], end[mine]),
                         "instructions": None if use_active else int(counts[k])})
    return pd.DataFrame(rows)


def engine_strip(trace: DeviceTrace) -> list[dict[str, Any]]:
    """Chips for the viewer: execution time, each engine's active time and share, DMA bytes, MFU."""
    a, b = execution_span(trace)
    span = max(b - a, 1)
    chips: list[dict[str, Any]] = [{"label": "Execution", "value": duration(span), "share": None,
                                    "title": f"{span:,} ns"}]
    from .device_events import ENGINE_ORDER

    active = engine_active(trace)
    if not active.empty:
        active["rank"] = [ENGINE_ORDER.index(e) if e in ENGINE_ORDER else len(ENGINE_ORDER) for e in active["engine"]]
        for r in active.sort_values(["rank", "engine"]).itertuples():
            share = min(r.active_ns / span, 1.0)
            chips.append({"label": str(r.engine), "value": f"{duration(r.active_ns)} · {share:.0%}", "share": share,
                          "title": f"active {r.active_ns:,} ns of {span:,} ns"})
    dma = trace.dma
    if not dma.empty:
        moved = float(dma["transfer_bytes"].sum()) if "transfer_bytes" in dma else None
        busy = busy_ns(dma["start_ts"].to_numpy(), dma["end_ts"].to_numpy())
        value = f"{_bytes(moved)} · {busy / span:.0%} busy" if moved is not None else f"{busy / span:.0%} busy"
        chips.append({"label": "DMA", "value": value, "share": min(busy / span, 1.0),
                      "title": f"{len(dma):,} packets; some queue moving data {busy:,} ns of {span:,} ns"})
    for name, label, title in UTILISATION:
        v = summary_percent(trace, name)
        if v is not None:
            chips.append({"label": label, "value": _pct(v), "share": None, "title": f"{title} (summary metric {name})"})
    return chips


# The summary's utilisation metrics, by their exact names: the measured ones, and the ceiling the
# compiler estimates (never shown as the measured MFU: it can be hundreds of times higher).
UTILISATION = (
    ("mfu_estimated_percent", "MFU", "model FLOPs utilisation measured over the execution"),
    ("mfu_max_achievable_estimated_percent", "MFU achievable", "the highest MFU this NEFF could reach (an estimate)"),
    ("hfu_estimated_percent", "HFU", "hardware FLOPs utilisation measured over the execution"),
    ("mbu_estimated_percent", "MBU", "HBM bandwidth utilisation measured over the execution"),
)


def _pct(v: float) -> str:
    return f"{v:.3g}%" if v < 10 else f"{v:.1f}%"


def summary_percent(trace: DeviceTrace, name: str) -> float | None:
    """A `*_percent` summary metric, by its exact name, in percent.

    neuron-profile's device JSON writes these as fractions of 1 although they are named
    `_percent` (its layer_summary's `tensor_engine_mfu` agrees with the fraction); other sources
    write percent.
    """
    v = _exact(trace.summary, name)
    if v is None:
        return None
    return 100.0 * v if fractions(trace) else v


def fractions(trace: DeviceTrace) -> bool:
    """Whether the trace's summary writes `_percent` metrics as fractions (the device JSON does)."""
    return trace.format == "neuron-json"


def _exact(summary: pd.DataFrame, name: str) -> float | None:
    if summary.empty:
        return None
    if {"name", "value"} <= set(summary.columns):
        hits = summary[summary["name"].astype(str) == name]
        values = pd.to_numeric(hits["value"], errors="coerce").dropna()
        return float(values.iloc[0]) if len(values) else None
    if name in summary.columns:
        values = pd.to_numeric(summary[name], errors="coerce").dropna()
        return float(values.iloc[0]) if len(values) else None
    return None
