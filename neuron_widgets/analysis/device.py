"""Device analyses: where one execution's time went on the NeuronCore's engines and DMA queues.

Each takes a DeviceTrace (or a DeviceTraceViewer) and returns a
DataFrame: engine time per operator, engine use per layer, DMA traffic per queue, semaphore waits,
and `device_bound`, the sentence that says what bounds the execution. Times are int64 ns, shares
fractions of the execution's span.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ..model.device_events import _encode, _engine_key
from ..model.device_hierarchy import engine_codes, layer_column
from ..model.device_summary import busy_ns, duration, engine_active, execution_span, grouped_busy
from ..model.device_trace import DeviceTrace

GROUPINGS = {"layer": "layer", "hlo": "hlo_name", "hlo_name": "hlo_name", "opcode": "opcode", "engine": "engine",
             "nki": "nki_source_location"}
# Instructions in which an engine sits waiting on a semaphore (the ISA's wait-on-event instructions).
SEMAPHORE_WAIT = r"SEMAPHORE|SEM_WAIT|WAIT_EVENT"


def device_trace_of(source: Any) -> DeviceTrace:
    """The DeviceTrace behind a viewer or a DeviceEvents, or the trace itself."""
    if isinstance(source, DeviceTrace):
        return source
    for attr in ("device_trace", "trace"):
        t = getattr(source, attr, None)
        if isinstance(t, DeviceTrace):
            return t
    if isinstance(source, str | os.PathLike):  # analyses never read files: the reader is the user's call
        raise TypeError(f"a device analysis takes a DeviceTrace or a DeviceTraceViewer, not a path: "
                        f"nw.load_device_trace({os.fspath(source)!r}) reads it")
    raise TypeError(f"a device analysis takes a DeviceTrace or a DeviceTraceViewer, not {type(source).__name__}; "
                    "for a system profile use nw.analysis.temporal_breakdown and the like")


def span_ns(trace: DeviceTrace) -> int:
    a, b = execution_span(trace)
    return max(b - a, 1)


def engine_time(source: Any) -> pd.DataFrame:
    """Per engine: active ns (overlaps once), share of the execution, instructions; in the viewer's engine order."""
    trace = device_trace_of(source)
    df = engine_active(trace)
    if df.empty:
        return pd.DataFrame(columns=["engine", "active_ns", "share", "instructions"])
    df["share"] = df["active_ns"] / span_ns(trace)
    return df.iloc[sorted(range(len(df)), key=lambda i: _engine_key(str(df["engine"].iat[i])))].reset_index(drop=True)


def top_operators(source: Any, by: str = "hlo", limit: int | None = 20) -> pd.DataFrame:
    """Layers, HLO operators, opcodes or NKI kernels by engine time (the sum of their instructions' durations).

    Columns: the key, instructions, engine_ns, busy_ns (time any engine ran one of them), share
    (of all instructions' engine time), then `<engine>_ns` per engine. Worst first.
    """
    trace = device_trace_of(source)
    ins = trace.instructions
    column = GROUPINGS.get(by)
    if column is None:
        raise ValueError(f"by must be one of {sorted(GROUPINGS)}, not {by!r}")
    key = layer_column(ins) if column == "layer" else ins.get(column, None)
    if key is None and not ins.empty:
        key = pd.Series(None, index=ins.index, dtype=object)  # no such attribution: one "(none)" row
    if ins.empty or key is None:
        return pd.DataFrame(columns=[by, "instructions", "engine_ns", "busy_ns", "share"])
    codes, names = _encode(key)
    ec, engines = engine_codes(ins)
    start, end = ins["start_ts"].to_numpy(np.int64), ins["end_ts"].to_numpy(np.int64)
    dur = np.maximum(end - start, 0)
    n = len(names)
    out = pd.DataFrame({by: [x or "(none)" for x in names], "instructions": np.bincount(codes, minlength=n),
                        "engine_ns": np.bincount(codes, weights=dur, minlength=n).round().astype(np.int64),
                        "busy_ns": grouped_busy(codes.astype(np.int64), start, end, n)})
    out["share"] = out["engine_ns"] / max(int(dur.sum()), 1)
    per = np.bincount(codes.astype(np.int64) * len(engines) + ec, weights=dur, minlength=n * len(engines))
    per = per.reshape(n, len(engines)).round().astype(np.int64)
    for j in _engine_order(engines):
        out[f"{engines[j] or 'engine'}_ns"] = per[:, j]
    out = out[out["instructions"] > 0].sort_values(["engine_ns", by], ascending=[False, True]).reset_index(drop=True)
    return out.head(limit) if limit else out


def _engine_order(engines: list[str]) -> list[int]:
    return sorted(range(len(engines)), key=lambda j: _engine_key(engines[j]))


def layer_utilisation(source: Any) -> pd.DataFrame:
    """Per layer of the hierarchy: its span and each engine's active share of that span (`<engine>_util`)."""
    trace = device_trace_of(source)
    h = trace.hierarchy()
    layers = h[h["kind"] == "layer"].reset_index(drop=True)
    out = layers[["path", "name", "level", "start_ts", "end_ts", "duration_ns", "instructions"]].copy()
    for c in [c for c in layers.columns if c.endswith("_active_ns")]:
        out[c.replace("_active_ns", "_util")] = layers[c] / layers["duration_ns"].clip(lower=1)
    return out


def _direction(dma: pd.DataFrame) -> pd.Series:
    """Where a transfer goes: source -> destination where the profile says so, else its queue type."""
    def text(v: Any) -> str:
        while isinstance(v, list | tuple | np.ndarray) and len(v) == 1:
            v = v[0]
        if isinstance(v, list | tuple | np.ndarray):
            return "+".join(text(x) for x in v)
        return "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)

    if "source" in dma and "dest" in dma:
        pairs = pd.Series([f"{text(s)} → {text(d)}" for s, d in zip(dma["source"], dma["dest"], strict=True)],
                          index=dma.index)
        return pairs.where(pairs != " → ", "")
    if "queue_type" in dma:
        return dma["queue_type"].astype(str).where(dma["queue_type"].notna(), "")
    return pd.Series("", index=dma.index)


def dma_traffic(source: Any) -> pd.DataFrame:
    """Per DMA queue and direction: packets, bytes, busy ns (some packet moving), bandwidth (GB/s while busy),
    share of the execution. Most bytes first."""
    trace = device_trace_of(source)
    dma = trace.dma
    cols = ["queue", "direction", "packets", "bytes", "busy_ns", "bandwidth_gbps", "share"]
    if dma.empty or not {"start_ts", "end_ts"} <= set(dma.columns):
        return pd.DataFrame(columns=cols)
    queue = dma["queue_name"] if "queue_name" in dma else pd.Series("", index=dma.index)
    qc, qn = _encode(queue)
    dc, dn = _encode(_direction(dma))
    key = qc.astype(np.int64) * len(dn) + dc
    uniq, inv = np.unique(key, return_inverse=True)
    moved = pd.to_numeric(dma["transfer_bytes"], errors="coerce").fillna(0).to_numpy(np.float64) \
        if "transfer_bytes" in dma else np.zeros(len(dma))
    busy = grouped_busy(inv.astype(np.int64), dma["start_ts"].to_numpy(np.int64), dma["end_ts"].to_numpy(np.int64),
                        len(uniq))
    out = pd.DataFrame({"queue": [qn[u // len(dn)] for u in uniq], "direction": [dn[u % len(dn)] for u in uniq],
                        "packets": np.bincount(inv, minlength=len(uniq)),
                        "bytes": np.bincount(inv, weights=moved, minlength=len(uniq)).round().astype(np.int64),
                        "busy_ns": busy})
    out["bandwidth_gbps"] = out["bytes"] / out["busy_ns"].clip(lower=1)  # bytes per ns = GB/s
    out["share"] = out["busy_ns"] / span_ns(trace)
    return out.sort_values(["bytes", "queue", "direction"], ascending=[False, True, True]).reset_index(drop=True)[cols]


def semaphore_waits(source: Any) -> pd.DataFrame:
    """Per engine: how long it sat in semaphore-wait instructions (overlaps once), how many, share of the
    execution, and the event-wait time its instructions report (`evt_wait_time_ns`) where the profile has it."""
    trace = device_trace_of(source)
    ins = trace.instructions
    cols = ["engine", "waits", "wait_ns", "share", "event_wait_ns"]
    if ins.empty or "opcode" not in ins:
        return pd.DataFrame(columns=cols)
    ec, engines = engine_codes(ins)
    waiting = _waiting(ins)
    start, end = ins["start_ts"].to_numpy(np.int64), ins["end_ts"].to_numpy(np.int64)
    n = len(engines)
    wait_col = next((c for c in ("evt_wait_time_ns", "evt_wait_time") if c in ins), None)
    event_wait = np.bincount(ec, weights=pd.to_numeric(ins[wait_col], errors="coerce").fillna(0).to_numpy(np.float64),
                             minlength=n) if wait_col else np.full(n, np.nan)
    out = pd.DataFrame({"engine": engines, "waits": np.bincount(ec[waiting], minlength=n),
                        "wait_ns": grouped_busy(np.where(waiting, ec, -1).astype(np.int64), start, end, n),
                        "event_wait_ns": event_wait})
    out["share"] = out["wait_ns"] / span_ns(trace)
    return out.iloc[_engine_order(engines)].reset_index(drop=True)[cols]


def device_bound(source: Any, waits: pd.DataFrame | None = None) -> str:
    """What bounds the execution, in one sentence: an engine's compute, DMA, or engines waiting on semaphores."""
    trace = device_trace_of(source)
    span = span_ns(trace)
    if not len(trace) and trace.dma.empty:
        return "The device trace holds no instructions or DMA."
    waits = semaphore_waits(trace) if waits is None else waits
    dma_busy = busy_ns(trace.dma["start_ts"].to_numpy(), trace.dma["end_ts"].to_numpy()) if not trace.dma.empty else 0
    compute = _compute_time(trace)
    top = compute.iloc[0] if len(compute) else None
    worst_wait = waits.sort_values("wait_ns", ascending=False).iloc[0] if len(waits) and waits["wait_ns"].max() > 0 \
        else None
    signals = {"compute": (float(top["active_ns"]) / span if top is not None else 0.0),
               "dma": dma_busy / span,
               "waits": (float(worst_wait["share"]) if worst_wait is not None else 0.0)}
    kind = max(signals, key=signals.get)
    share = signals[kind]
    of = f"of the {duration(span)} execution"
    if share < 0.3:
        return (f"Latency-bound: no engine or DMA queue is busy more than {share:.0%} {of}; "
                "the time goes to dependencies and gaps between instructions.")
    if kind == "compute":
        return (f"Compute-bound on {top['engine']}: active {share:.0%} {of} (DMA busy {signals['dma']:.0%}).")
    if kind == "dma":
        return (f"DMA-bound: some DMA queue is moving data {share:.0%} {of}, more than any engine computes "
                f"({signals['compute']:.0%}).")
    return (f"Bound by semaphore waits: {worst_wait['engine']} sits in semaphore waits {share:.0%} {of} "
            f"(busiest engine {signals['compute']:.0%}, DMA {signals['dma']:.0%}).")


def _waiting(ins: pd.DataFrame) -> np.ndarray:
    """Which instructions are semaphore waits (the pattern tried once per opcode, not per row)."""
    if "opcode" not in ins or ins.empty:
        return np.zeros(len(ins), dtype=bool)
    codes, names = _encode(ins["opcode"])
    hit = pd.Series(names, dtype=object).str.contains(SEMAPHORE_WAIT, case=False, regex=True).to_numpy(bool)
    return hit[codes]


def _compute_time(trace: DeviceTrace) -> pd.DataFrame:
    """Per compute engine (not the Sync engine), the time it ran instructions other than semaphore waits; busiest first."""
    ins = trace.instructions
    if ins.empty:
        return pd.DataFrame(columns=["engine", "active_ns"])
    ec, engines = engine_codes(ins)
    waiting = _waiting(ins)
    busy = grouped_busy(np.where(waiting, -1, ec).astype(np.int64), ins["start_ts"].to_numpy(np.int64),
                        ins["end_ts"].to_numpy(np.int64), len(engines))
    out = pd.DataFrame({"engine": engines, "active_ns": busy})
    out = out[~out["engine"].str.contains("sync", case=False)]
    return out.sort_values(["active_ns", "engine"], ascending=[False, True]).reset_index(drop=True)


def device_breakdown(source: Any, limit: int = 15) -> dict[str, Any]:
    """Every device analysis at once (what the device-trace Summary shows)."""
    trace = device_trace_of(source)
    waits = semaphore_waits(trace)
    return {"kind": "device", "engines": engine_time(trace), "dma": dma_traffic(trace), "waits": waits,
            "layers": top_operators(trace, "layer", limit), "operators": top_operators(trace, "hlo", limit),
            "opcodes": top_operators(trace, "opcode", limit), "bound": device_bound(trace, waits),
            "span_ns": span_ns(trace), "instructions": len(trace), "dma_packets": len(trace.dma)}
