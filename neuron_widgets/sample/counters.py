"""Sampled series of the sample: host CPU per core, host memory, HBM by category."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

PERIOD_NS = 10_000_000
HBM_CATEGORIES = ("generic", "tensor_instructions", "scalar_instructions", "gpsimd_instructions", "io",
                  "dram_spill", "weights", "profiler_buffers", "scalar_table", "vector_instructions",
                  "sync_instructions", "shared_scratchpad", "tensors", "ucode_lib", "gpsimd_stdio",
                  "collectives", "scratchpad", "dma_rings_runtime", "dma_rings_spill", "dma_rings_io",
                  "dma_rings_collectives", "unknown")
CPUS = 8


def _times(t0: int, t1: int) -> np.ndarray:
    return np.arange(t0, max(t1, t0 + 1), PERIOD_NS, dtype=np.int64)


def cpu_usage(rng: np.random.Generator, instances: tuple[str, ...], t0: int, t1: int) -> pa.Table:
    ts = _times(t0, t1)
    parts = []
    for inst in instances:
        load = np.clip(55 + 25 * np.sin(ts / 7e8) [:, None] + rng.normal(0, 8, (ts.size, CPUS)), 0, 100)
        ids = [str(c) for c in range(CPUS)] + ["average"]
        values = np.concatenate([load, load.mean(axis=1, keepdims=True)], axis=1).astype(np.float32)
        parts.append(pa.table({
            "timestamp": np.repeat(ts, len(ids)),
            "util_percent": values.reshape(-1),
            "cpu_id": pa.array(ids * ts.size),
            "instance_id": pa.array([inst] * (ts.size * len(ids))),
        }))
    return pa.concat_tables(parts)


def host_memory(rng: np.random.Generator, instances: tuple[str, ...], t0: int, t1: int) -> pa.Table:
    ts = _times(t0, t1)
    total = 512 * 2**30
    parts = []
    for inst in instances:
        used = (180 * 2**30 + np.cumsum(rng.normal(0, 2**24, ts.size))).astype(np.int64)
        parts.append(pa.table({
            "timestamp": ts, "used_bytes": used,
            "used_percent": (used / total * 100).astype(np.float32),
            "instance_id": pa.array([inst] * ts.size),
        }))
    return pa.concat_tables(parts)


def hbm_usage(rng: np.random.Generator, instances: tuple[str, ...], devices: int, t0: int, t1: int) -> pa.Table:
    ts = _times(t0, t1)
    parts = []
    base = {c: int(rng.integers(2**20, 2**31)) for c in HBM_CATEGORIES}
    base["weights"] = 6 * 2**30
    base["tensors"] = 3 * 2**30
    for inst in instances:
        for dev in range(devices):
            for hbm in range(2):
                wave = 1 + 0.15 * np.sin(ts / 2e8 + dev)
                flat = np.ones(ts.size)
                cols = {f"{c}_bytes": (base[c] * (wave if c in ("tensors", "io", "dram_spill") else flat)).astype(np.int64)
                        for c in HBM_CATEGORIES}
                total = np.sum(np.stack(list(cols.values())), axis=0).astype(np.int64)
                parts.append(pa.table({"timestamp": ts, "total_bytes": total, **cols,
                                       "device_idx": np.full(ts.size, dev, np.int64),
                                       "hbm_idx": np.full(ts.size, hbm, np.int64),
                                       "instance_id": pa.array([inst] * ts.size)}))
    return pa.concat_tables(parts)
