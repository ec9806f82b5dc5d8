"""The Device Trace Viewer's summary strip: per-engine active time and share, DMA traffic, MFU."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ..timefmt import duration
from .engines import busy_ns, engine_times, transfer_bytes

if TYPE_CHECKING:
    from .trace import DeviceTrace


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


def _bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:,.3g} {unit}"
    return f"{n:,.0f} B"


def engine_active(trace: DeviceTrace) -> pd.DataFrame:
    """Per engine: active_ns, wait_ns, busy_ns and instructions, as engines.py defines them."""
    return engine_times(trace)


def engine_strip(trace: DeviceTrace) -> list[dict[str, Any]]:
    """Chips for the viewer: execution time, each engine's active time and share, DMA bytes, MFU."""
    a, b = execution_span(trace)
    span = max(b - a, 1)
    chips: list[dict[str, Any]] = [{"label": "Execution", "value": duration(span), "share": None,
                                    "title": f"{span:,} ns"}]
    for r in engine_times(trace).itertuples():
        share, waits = min(r.active_ns / span, 1.0), min(r.wait_ns / span, 1.0)
        value = f"{duration(r.active_ns)} · {share:.0%}" + (f" · waits {waits:.0%}" if r.wait_ns else "")
        chips.append({"label": str(r.engine), "value": value, "share": share,
                      "title": f"active {r.active_ns:,} ns, in semaphore waits {r.wait_ns:,} ns, busy "
                               f"{r.busy_ns:,} ns of {span:,} ns ({r.instructions:,} instructions)"})
    dma = trace.dma
    if not dma.empty:
        moved = float(transfer_bytes(dma).sum()) if "transfer_bytes" in dma else None
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
