"""Findings of one execution's device trace, on Neuron Explorer's own conditions where it has them.

Neuron Explorer's Summary recommends on MFU, transpose FLOPs (over 10% of hardware FLOPs) and
spill/reload bytes (over 25% of HBM reads); the DMA, semaphore and DMA-size rules use this
package's device analyses (`analysis.device_breakdown`). A device trace has no dependency graph, so no
gain is predicted (NaN) and the title says so; the evidence carries the figures.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..model.device.engines import busy_ns, engine_codes, transfer_bytes
from ..model.device.strip import _exact, execution_span, summary_percent
from ..model.device.trace import DeviceTrace
from ..model.timefmt import duration
from .device_breakdown import _compute_time, semaphore_waits, span_ns
from .findings_rows import pct, row

MFU_OF_ACHIEVABLE = 0.5   # Neuron Explorer: model FLOPs below 50% of what the engine could do
TRANSPOSE_SHARE = 0.10    # Neuron Explorer: transpose FLOPs above 10% of hardware FLOPs
SPILL_SHARE = 0.25        # Neuron Explorer: spill/reload bytes above 25% of HBM reads
DMA_BOUND_SHARE = 0.30    # device_bound: below 30% busy nothing bounds the execution (latency-bound)
SEMAPHORE_SHARE = 0.20    # an engine in semaphore waits a fifth of the execution
SMALL_DMA_BYTES = 512     # average DMA packet below 512 bytes ...
SMALL_DMA_PACKETS = 1000  # ... over at least this many packets
NO_GAIN = "no gain can be predicted from a device trace"


def device_findings(trace: DeviceTrace) -> list[dict[str, Any]]:
    a, b = execution_span(trace)
    ctx = {"trace": trace, "start": a, "end": b, "span": span_ns(trace)}
    out: list[dict[str, Any]] = []
    for rule in (_mfu, _transpose, _dma_bound, _semaphores, _small_dma, _spill):
        out.extend(rule(ctx))
    return out


def _mfu(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    trace = ctx["trace"]
    mfu = summary_percent(trace, "mfu_estimated_percent")
    best = summary_percent(trace, "mfu_max_achievable_estimated_percent")
    if mfu is None or best is None or not best > 0 or mfu >= MFU_OF_ACHIEVABLE * best:
        return []
    title = (f"Measured MFU is {mfu:.3g}%, {pct(mfu / best)} of the {best:.3g}% this NEFF could reach over its "
             f"{duration(ctx['span'])} execution; {NO_GAIN}")
    return [row("mfu", "high" if mfu < 0.1 * best else "medium", title, np.nan, ctx["start"], ctx["end"],
                {"mfu_pct": mfu, "achievable_pct": best, "ratio": mfu / best},
                "Larger tiles and better pipelining keep the Tensor engine on model matmuls (the layers with "
                "the lowest MFU first).")]


def _is_tensor(engines: list[str]) -> np.ndarray:
    return np.array(["tensor" in str(e).lower() or str(e).lower() == "pe" for e in engines] or [False])


def _transpose(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    ins = ctx["trace"].instructions
    if ins.empty:
        return []
    flops = _flops_transpose(ins)
    if flops is not None:  # Neuron Explorer's own measure: transpose FLOPs of all hardware FLOPs
        share, n_t, n, engine, measure = flops
    else:
        if "opcode" not in ins:
            return []
        ec, engines = engine_codes(ins)
        tensor = _is_tensor(engines)
        on_tensor = tensor[ec]
        if not on_tensor.any():
            return []
        # As the trace names it: its `engine` column ("tensor"), else its tracks ("TensorMatrix/Tensor").
        named = ins.loc[on_tensor, "engine"].astype(str).unique() if "engine" in ins else \
            [str(e) for e, t in zip(engines, tensor, strict=False) if t]
        engine = "/".join(named[:3])
        op = ins["opcode"].astype(str).str.upper().to_numpy()[on_tensor]
        is_t = np.char.find(op.astype(str), "TRANSPOSE") >= 0
        if "adjusted_flops" in ins:
            w = pd.to_numeric(ins["adjusted_flops"], errors="coerce").fillna(0).clip(lower=0).to_numpy(float)[on_tensor]
            measure = "FLOPs (adjusted_flops)"
        else:
            w = np.maximum(ins["end_ts"].to_numpy(np.int64) - ins["start_ts"].to_numpy(np.int64), 0)[on_tensor]
            measure = "instruction time"
        total = float(w.sum())
        share = float(w[is_t].sum()) / total if total > 0 else 0.0
        n_t, n = int(is_t.sum()), int(on_tensor.sum())
    if share <= TRANSPOSE_SHARE:
        return []
    title = (f"Transposes are {pct(share)} of the {engine} engine's {measure} ({n_t:,} of {n:,} instructions); "
             f"{NO_GAIN}")
    return [row("transpose", "medium", title, np.nan, ctx["start"], ctx["end"],
                {"share": share, "measured_by": measure, "transposes": n_t, "tensor_instructions": n},
                "Lay tensors out so matmuls need no transpose (the layout the Tensor engine reads).")]


def _flops_transpose(ins: pd.DataFrame) -> tuple[float, int, int, str, str] | None:
    """Transpose FLOPs over all hardware FLOPs from the instructions' `flops_transpose` and `raw_flops` columns (Neuron
    Explorer's condition), with the instructions that carry any; None where the trace has no such columns."""
    if not {"flops_transpose", "raw_flops"} <= set(ins.columns):
        return None
    t = pd.to_numeric(ins["flops_transpose"], errors="coerce").fillna(0).clip(lower=0).to_numpy(float)
    raw = pd.to_numeric(ins["raw_flops"], errors="coerce").fillna(0).clip(lower=0).to_numpy(float)
    if not raw.sum() > 0:
        return None
    engine = "Tensor"
    if "engine" in ins:
        named = ins.loc[raw > 0, "engine"].astype(str).unique()
        engine = "/".join(named[:3]) if len(named) else engine
    return float(t.sum() / raw.sum()), int((t > 0).sum()), int((raw > 0).sum()), engine, "hardware FLOPs (raw_flops)"


def _dma_bound(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    trace, span = ctx["trace"], ctx["span"]
    dma = trace.dma
    if dma.empty or not {"start_ts", "end_ts"} <= set(dma.columns):
        return []
    dma_share = busy_ns(dma["start_ts"].to_numpy(), dma["end_ts"].to_numpy()) / span
    comp = _compute_time(trace) if len(trace) else pd.DataFrame(columns=["engine", "active_ns"])
    top_share = float(comp.iloc[0]["active_ns"]) / span if len(comp) else 0.0
    top = str(comp.iloc[0]["engine"]) if len(comp) else "no engine"
    if dma_share < DMA_BOUND_SHARE or dma_share <= top_share:
        return []
    title = (f"DMA-bound: some DMA queue is moving data {pct(dma_share)} of the {duration(span)} execution, more than "
             f"the busiest engine ({top}) computes, {pct(top_share)}; {NO_GAIN}")
    return [row("dma_bound", "high" if dma_share >= 0.6 else "medium", title, np.nan, ctx["start"], ctx["end"],
                {"dma_busy_share": dma_share, "busiest_engine": top, "engine_share": top_share},
                "Move less: keep tensors in SBUF across operators, larger transfers, fewer reloads.")]


def _semaphores(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    waits = semaphore_waits(ctx["trace"])
    out = []
    for _, w in waits[waits["share"] >= SEMAPHORE_SHARE].sort_values("share", ascending=False).iterrows():
        title = (f"{w['engine']} sits in semaphore waits {pct(float(w['share']))} of the {duration(ctx['span'])} "
                 f"execution ({int(w['waits']):,} waits, {duration(w['wait_ns'])}); {NO_GAIN}")
        out.append(row("semaphore_waits", "medium", title, np.nan, ctx["start"], ctx["end"],
                       {"engine": w["engine"], "waits": int(w["waits"]), "wait_ns": int(w["wait_ns"]),
                        "share": float(w["share"])},
                       "That engine waits for another engine or a DMA: see what it waits on in the device "
                       "timeline and overlap it."))
    return out


def _small_dma(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    dma = ctx["trace"].dma
    if len(dma) < SMALL_DMA_PACKETS:
        return []
    moved = transfer_bytes(dma)
    avg = float(np.mean(moved)) if len(moved) else 0.0
    if avg >= SMALL_DMA_BYTES:
        return []
    title = (f"{len(dma):,} DMA packets move {avg:,.0f} bytes on average (under {SMALL_DMA_BYTES} bytes); "
             f"{NO_GAIN}")
    return [row("small_dma", "low", title, np.nan, ctx["start"], ctx["end"],
                {"packets": len(dma), "average_bytes": avg, "bytes": float(np.sum(moved))},
                "Larger, contiguous transfers (tile sizes, layouts that keep each DMA row long).")]


def _spill(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    trace = ctx["trace"]
    read = _exact(trace.summary, "hbm_read_bytes")
    reload = _exact(trace.summary, "hbm_reload_bytes")
    if read is None or reload is None or not read > 0:
        return []
    share = reload / read
    if share <= SPILL_SHARE:
        return []
    title = (f"Spill/reload is {pct(share)} of the execution's HBM reads ({reload:,.0f} of {read:,.0f} bytes); "
             f"{NO_GAIN}")
    return [row("spill_reload", "high" if share >= 0.5 else "medium", title, np.nan, ctx["start"], ctx["end"],
                {"hbm_read_bytes": read, "hbm_reload_bytes": reload, "share": share},
                "Reduce live tensors in SBUF (smaller tiles, recompute instead of spilling).")]
