"""Seeded random device traces: the shapes device analyses must survive (tests only)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from neuron_widgets.model.device.trace import DeviceTrace

ENGINES = {"Tensor": "tensor", "TensorMatrix": "tensor", "Vector": "vector", "Scalar": "scalar", "GpSimd": "gpsimd",
           "Sync": "sync"}
OPCODES = ["MATMUL", "TRANSPOSE", "ACTIVATE", "TENSOR_TENSOR", "EVENT_SEMAPHORE", "SEM_WAIT", "IOTA", "EVENT_SET"]


def random_device_trace(seed: int) -> DeviceTrace:
    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 5, 40, 300, 2000]))
    tracks = list(rng.choice(list(ENGINES), size=int(rng.integers(1, 7)), replace=False))
    base = int(rng.choice([0, 1_772_319_600_000_000_000]))
    start = base + np.sort(rng.integers(0, 200_000, n))
    # Zero-length, short and long instructions; the same engine may run two at once.
    dur = rng.choice([0, 1, 50, 400, 3000], size=n, p=[0.05, 0.1, 0.45, 0.3, 0.1])
    track = rng.choice(tracks, size=n)
    depth = int(rng.integers(0, 4))
    layers = ["/".join(f"{p}{rng.integers(0, 3)}" for p in ("model", "layers.", "mlp")[:depth]) for _ in range(6)]
    layer = rng.choice(layers, size=n).astype(object) if depth else np.full(n, None, dtype=object)
    if depth and rng.random() < 0.4:
        layer[rng.random(n) < 0.2] = None
    hlo = rng.choice([f"dot.{i}" for i in range(5)] + ["fusion.1"], size=n).astype(object)
    if rng.random() < 0.3:
        hlo[:] = None
    elif rng.random() < 0.3:
        hlo[rng.random(n) < 0.3] = None
    ins = pd.DataFrame({"start_ts": start.astype(np.int64), "end_ts": (start + dur).astype(np.int64),
                        "timeline_track": track, "engine": [ENGINES[t] for t in track],
                        "opcode": rng.choice(OPCODES, size=n), "layer": layer, "hlo_name": hlo})
    if depth and rng.random() < 0.5:
        # neuron-profile's JSON layout: layers relative to their subgraph ("" for the subgraph's own
        # instructions); some rows already full paths (older exports), some without a subgraph (Parquet).
        sub = rng.choice(["/sg00", "/sg01", "sg02"], size=n).astype(object)
        rel = np.array([str(v) if v is not None else "" for v in layer], dtype=object)
        rel[rng.random(n) < 0.3] = ""
        full = rng.random(n) < 0.2
        rel[full] = [f"{s.rstrip('/')}/{r}" if r else s for s, r in zip(sub[full], rel[full], strict=True)]
        sub[rng.random(n) < 0.15] = None
        ins["layer"], ins["fully_qualified_subgraph"] = rel, sub
    if rng.random() < 0.3:
        nki = rng.choice(["k.py:10", "k.py:22"], size=n).astype(object)
        nki[rng.random(n) < 0.5] = None
        ins["nki_source_location"] = nki
    if rng.random() < 0.5:
        ins["evt_wait_time_ns"] = rng.integers(0, 500, n)
    if rng.random() < 0.4:
        ins["adjusted_flops"] = rng.integers(0, 10_000, n)
    if rng.random() < 0.3:  # some rows know only their engine
        ins.loc[rng.random(n) < 0.3, "timeline_track"] = None
    if rng.random() < 0.5:
        for c in ("timeline_track", "engine", "opcode", "layer", "hlo_name"):
            ins[c] = ins[c].astype("category")
    m = int(rng.choice([0, 3, 100, 800]))
    ds = base + rng.integers(0, 200_000, m)
    dma = pd.DataFrame({"start_ts": ds.astype(np.int64), "end_ts": (ds + rng.integers(0, 2000, m)).astype(np.int64),
                        "queue_name": rng.choice([f"qSyncIO{i}-Q1-E{i}" for i in range(4)], size=m),
                        "transfer_bytes": rng.integers(0, 65536, m)})
    if rng.random() < 0.3:  # queues known by number only (or not at all) on some rows
        dma["queue_idx"] = rng.integers(0, 3, m)
        dma["engine_idx"] = rng.integers(0, 16, m)
        dma.loc[rng.random(m) < 0.5, "queue_name"] = rng.choice([None, ""])
    if rng.random() < 0.5:
        dma["source"] = [[[s]] for s in rng.choice(["WEIGHT", "HBM", "SB", "unknown"], size=m)]
        dma["dest"] = [[d] for d in rng.choice(["SB", "HBM", "unknown"], size=m)]
    if "source" not in dma or rng.random() < 0.5:
        dma["queue_type"] = rng.choice(["input", "output", "data", "unknown"], size=m)
    if m == 0:
        dma = pd.DataFrame()
    return DeviceTrace(f"random-{seed}", "neuron-parquet", ins, dma=dma)


def random_device_json(seed: int, directory: Path) -> DeviceTrace:
    """A device JSON in neuron-profile 2.27's layout (sample.device_json) of a random shape, read by the reader."""
    from neuron_widgets import load_device_trace
    from neuron_widgets.sample import device_json

    rng = np.random.default_rng(seed)
    shape = {"subgraphs": int(rng.integers(1, 4)), "layers": int(rng.integers(0, 6)), "depth": int(rng.integers(1, 4)),
             "instructions": int(rng.choice([0, 1, 7, 133, 800])), "dma": int(rng.choice([0, 3, 356])),
             "own_share": float(rng.choice([0.0, 0.5, 0.85, 1.0])), "waits": bool(rng.random() < 0.7)}
    path = device_json.write(directory / f"device_profile_model_{seed}.json", rng, **shape)
    return load_device_trace(path)
