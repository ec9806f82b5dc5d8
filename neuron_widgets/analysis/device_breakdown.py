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

from ..model.device.codes import encode, engine_key
from ..model.device.engines import (
    SEMAPHORE_WAIT,
    busy_ns,
    dma_directions,
    dma_queues,
    engine_codes,
    engine_times,
    grouped_busy,
    transfer_bytes,
    waiting,
)
from ..model.device.hierarchy import NO_LAYER, _chain, layer_column
from ..model.device.strip import execution_span
from ..model.device.trace import DeviceTrace
from ..model.timefmt import duration

GROUPINGS = {"layer": "layer", "hlo": "hlo_name", "hlo_name": "hlo_name", "opcode": "opcode", "engine": "engine",
             "nki": "nki_source_location"}
__all__ = ["SEMAPHORE_WAIT", "device_bound", "device_breakdown", "dma_traffic", "engine_time", "layer_utilisation",
           "semaphore_waits", "top_operators"]


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
    """Per engine (the viewer's engine order): active_ns, share (of the execution), wait_ns, wait_share,
    busy_ns, instructions, waits; active, waits and busy as model.device.engines defines them."""
    trace = device_trace_of(source)
    df = engine_times(trace)
    span = span_ns(trace)
    df["share"] = df["active_ns"] / span
    df["wait_share"] = df["wait_ns"] / span
    return df[["engine", "active_ns", "share", "wait_ns", "wait_share", "busy_ns", "instructions", "waits"]]


def top_operators(source: Any, by: str = "hlo", limit: int | None = 20) -> pd.DataFrame:
    """HLO operators, opcodes, NKI kernels or layers by engine time: their instructions' durations summed over
    the engines, which can exceed the execution's span when engines run side by side.

    Columns: the key, instructions, engine_ns, busy_ns (time any engine ran one of them), share
    (of all instructions' engine time), then `<engine>_ns` per engine. Worst first.

    `by="layer"` names each layer by its path in the hierarchy (`trace.hierarchy()`, one row per layer node)
    and says which count is which: `own_instructions`, `own_engine_ns`, `own_share` and `own_<engine>_ns`
    are the layer's own instructions (not its sublayers'), what the ranking is by, and the own shares add up
    to 1; `instructions`, `engine_ns` and `busy_ns` include its sublayers, as the hierarchy counts them.
    """
    trace = device_trace_of(source)
    ins = trace.instructions
    column = GROUPINGS.get(by)
    if column is None:
        raise ValueError(f"by must be one of {sorted(GROUPINGS)}, not {by!r}")
    if column == "layer":
        return _layers(trace, limit)
    key = ins.get(column, None)
    if key is None and not ins.empty:
        key = pd.Series(None, index=ins.index, dtype=object)  # no such attribution: one "(none)" row
    if ins.empty or key is None:
        return pd.DataFrame(columns=[by, "instructions", "engine_ns", "busy_ns", "share"])
    codes, names = encode(key)
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
    return sorted(range(len(engines)), key=lambda j: engine_key(engines[j]))


LAYER_COLUMNS = ["layer", "own_instructions", "instructions", "own_engine_ns", "engine_ns", "busy_ns", "own_share"]


def _layers(trace: DeviceTrace, limit: int | None) -> pd.DataFrame:
    """top_operators(by="layer"): a row per layer node of the hierarchy, own and inclusive counts side by side."""
    ins = trace.instructions
    if ins.empty or not {"start_ts", "end_ts"} <= set(ins.columns):
        return pd.DataFrame(columns=LAYER_COLUMNS)
    key = layer_column(ins)
    codes, names = encode(key if key is not None else pd.Series(None, index=ins.index, dtype=object))
    # Each own layer's chain of paths as the hierarchy builds them (`/sg00`, `/sg00/_dot.3`). Instructions with
    # no layer are one row, "(no layer)": no node of the tree (which files them under their HLO operator).
    paths: dict[str, int] = {}
    chains = []
    for name in names:
        chain = [path for path, _, _ in _chain(name, "", "")] if name and name.strip("/ ") else [NO_LAYER]
        chains.append([paths.setdefault(path, len(paths)) for path in chain])
    n, depth = len(paths), max(len(c) for c in chains)
    table = np.full((len(names), depth), -1, np.int64)
    for i, c in enumerate(chains):
        table[i, :len(c)] = c
    own_node = table[np.arange(len(names)), [len(c) - 1 for c in chains]]
    start, end = ins["start_ts"].to_numpy(np.int64), ins["end_ts"].to_numpy(np.int64)
    dur = np.maximum(end - start, 0)
    ec, engines = engine_codes(ins)
    node = own_node[codes]
    # Every instruction counts for its own layer and each layer above it (its column of the chain table).
    up = table[codes]
    inside = up >= 0
    rows = np.repeat(np.arange(len(ins)), inside.sum(axis=1))
    above = up[inside]
    out = pd.DataFrame({"layer": list(paths), "own_instructions": np.bincount(node, minlength=n),
                        "instructions": np.bincount(above, minlength=n),
                        "own_engine_ns": np.bincount(node, weights=dur, minlength=n).round().astype(np.int64),
                        "engine_ns": np.bincount(above, weights=dur[rows], minlength=n).round().astype(np.int64),
                        "busy_ns": grouped_busy(above, start[rows], end[rows], n)})
    out["own_share"] = out["own_engine_ns"] / max(int(dur.sum()), 1)
    per = np.bincount(node * len(engines) + ec, weights=dur, minlength=n * len(engines))
    per = per.reshape(n, len(engines)).round().astype(np.int64)
    for j in _engine_order(engines):
        out[f"own_{engines[j] or 'engine'}_ns"] = per[:, j]
    out = out.sort_values(["own_engine_ns", "engine_ns", "layer"], ascending=[False, False, True]).reset_index(drop=True)
    return out.head(limit) if limit else out


def layer_utilisation(source: Any) -> pd.DataFrame:
    """Per layer of the hierarchy: its span and each engine's active share of that span (`<engine>_util`)."""
    trace = device_trace_of(source)
    h = trace.hierarchy()
    layers = h[h["kind"] == "layer"].reset_index(drop=True)
    out = layers[["path", "name", "level", "start_ts", "end_ts", "duration_ns", "instructions"]].copy()
    for c in [c for c in layers.columns if c.endswith("_active_ns")]:
        out[c.replace("_active_ns", "_util")] = layers[c] / layers["duration_ns"].clip(lower=1)
    return out


def dma_traffic(source: Any) -> pd.DataFrame:
    """Per DMA queue and direction: packets, bytes, busy ns (some packet moving), bandwidth (GB/s while busy),
    share of the execution. Most bytes first. Queue and direction as model.device.engines reads them
    (`dma_queues`, `dma_directions`)."""
    trace = device_trace_of(source)
    dma = trace.dma
    cols = ["queue", "direction", "packets", "bytes", "busy_ns", "bandwidth_gbps", "share"]
    if dma.empty or not {"start_ts", "end_ts"} <= set(dma.columns):
        return pd.DataFrame(columns=cols)
    qc, qn = encode(dma_queues(dma))
    dc, dn = encode(dma_directions(dma))
    key = qc.astype(np.int64) * len(dn) + dc
    uniq, inv = np.unique(key, return_inverse=True)
    moved = transfer_bytes(dma)
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
    """Per engine: how many semaphore-wait instructions it ran, how long it sat in them while running
    nothing else (wait_ns, as model.device.engines defines it), share of the execution, and the
    event-wait time its instructions report (`evt_wait_time_ns`) where the profile has it."""
    trace = device_trace_of(source)
    ins = trace.instructions
    cols = ["engine", "waits", "wait_ns", "share", "event_wait_ns"]
    times = engine_times(trace)
    if ins.empty or "opcode" not in ins or times.empty:
        return pd.DataFrame(columns=cols)
    wait_col = next((c for c in ("evt_wait_time_ns", "evt_wait_time") if c in ins), None)
    out = times[["engine", "waits", "wait_ns"]].copy()
    if wait_col:
        ec, engines = engine_codes(ins)
        reported = pd.to_numeric(ins[wait_col], errors="coerce").fillna(0).to_numpy(np.float64)
        per = dict(zip(engines, np.bincount(ec, weights=reported, minlength=len(engines)), strict=True))
        out["event_wait_ns"] = [per.get(e, 0.0) for e in out["engine"]]
    else:
        out["event_wait_ns"] = np.nan
    out["share"] = out["wait_ns"] / span_ns(trace)
    return out.reset_index(drop=True)[cols]


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
    kind = max(signals, key=lambda k: signals[k])
    share = signals[kind]
    of = f"of the {duration(span)} execution"
    if share < 0.3:
        return (f"Latency-bound: no engine or DMA queue is busy more than {share:.0%} {of}; "
                "the time goes to dependencies and gaps between instructions.")
    # A share of 0.3 or more is a signal's own: compute's needs a top engine, waits' a worst wait.
    if kind == "compute" and top is not None:
        return (f"Compute-bound on {top['engine']}: active {share:.0%} {of} (DMA busy {signals['dma']:.0%}).")
    if kind == "waits" and worst_wait is not None:
        return (f"Bound by semaphore waits: {worst_wait['engine']} sits in semaphore waits {share:.0%} {of} "
                f"(busiest engine {signals['compute']:.0%}, DMA {signals['dma']:.0%}).")
    return (f"DMA-bound: some DMA queue is moving data {share:.0%} {of}, more than any engine computes "
            f"({signals['compute']:.0%}).")


def _waiting(ins: pd.DataFrame) -> np.ndarray:
    return waiting(ins)


def _compute_time(trace: DeviceTrace) -> pd.DataFrame:
    """Per compute engine (not the Sync engine), its active time; busiest first."""
    out = engine_times(trace)[["engine", "active_ns"]]
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
