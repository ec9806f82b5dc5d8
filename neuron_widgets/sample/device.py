"""Device profiles of the sample: instruction and DMA tables per (core, model).

They are laid out as Neuron Explorer writes a processed device profile, one directory per
DeviceProfileList entry, so the drill-down from nc_exec_running has real data to open.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ENGINES = (("tensor", "TensorMatrix"), ("tensor", "Tensor"), ("vector", "Vector"), ("scalar", "Scalar"),
           ("gpsimd", "GpSimd"), ("sync", "Sync"))
OPCODES = {"tensor": ("MATMUL", "TRANSPOSE"), "vector": ("TENSOR_TENSOR", "TENSOR_REDUCE"),
           "scalar": ("ACTIVATE", "TENSOR_SCALAR"), "gpsimd": ("IOTA", "SHUFFLE"), "sync": ("SEM_WAIT", "EVENT_SET")}
DEVICE_CLOCK_OFFSET = 1_000_000_000 * 3600  # device clock counts from an hour before the host's


def write(directory: Path, rng: np.random.Generator, exec_starts: list[tuple[int, int, int]],
          instructions: int, model_name: str, nc: int) -> None:
    """One device profile covering the given executions (exec_id, host start, host end)."""
    directory.mkdir(parents=True, exist_ok=True)
    per_exec = max(instructions // max(len(exec_starts), 1), 1)
    rows = []
    info = []
    for index, (exec_id, h0, h1) in enumerate(exec_starts):
        d0, d1 = h0 - DEVICE_CLOCK_OFFSET, h1 - DEVICE_CLOCK_OFFSET
        engine = rng.integers(0, len(ENGINES), per_exec)
        start = np.sort(rng.integers(d0, d1 - 2_000, per_exec))
        dur = rng.integers(60, 1_800, per_exec)
        rows.append((engine, start, dur, exec_id))
        info.append({"execution_index": index, "neff_name": model_name, "execution_start_ts": d0,
                     "execution_end_ts": d1, "num_subgraphs": 1, "row_count": per_exec})
    engine = np.concatenate([r[0] for r in rows])
    start = np.concatenate([r[1] for r in rows])
    dur = np.concatenate([r[2] for r in rows])
    n = engine.size
    eng = [ENGINES[e][0] for e in engine]
    track = [ENGINES[e][1] for e in engine]
    opcode = [OPCODES[e][i % 2] for i, e in enumerate(eng)]
    layer = rng.integers(0, 6, n)
    pq.write_table(pa.table({
        "start_ts": start, "end_ts": start + dur, "duration_ns": dur, "engine": eng, "timeline_track": track,
        "pcore_idx": np.full(n, nc, np.int64), "opcode": opcode,
        "operands": [f"src=sb[{i % 128}:{i % 128 + 32}] dst=psum[{i % 8}]" for i in range(n)],
        "id": np.arange(n, dtype=np.int64) + (1 << 60), "pc": np.arange(n, dtype=np.int64) * 64,
        "bir_id": [f"I-{i % 997}" for i in range(n)],
        "hlo_name": [f"dot.{int(x)}" for x in layer],
        "layer": [f"model/layers.{int(x)}/mlp" for x in layer],
        "nki_source_location": [None] * n,
    }), directory / "Instruction.parquet")
    m = max(n // 3, 1)
    dstart = np.sort(rng.integers(int(start.min()), int(start.max()) + 1, m))
    ddur = rng.integers(200, 4_000, m)
    size = rng.integers(512, 65_536, m)
    pq.write_table(pa.table({
        "start_ts": dstart, "end_ts": dstart + ddur, "duration_ns": ddur, "pcore_idx": np.full(m, nc, np.int64),
        "id": np.arange(m, dtype=np.int64), "packet_idx": pa.array(np.arange(m) % 16, pa.int32()),
        "packet_aggregation_id": np.arange(m, dtype=np.int64) // 16,
        "engine_idx": np.arange(m, dtype=np.int64) % 16, "read_bytes": size, "write_bytes": size,
        "transfer_bytes": size, "throughput": pa.array(size / np.maximum(ddur, 1) * 1e9, pa.float32()),
        "queue_type": [("input", "output", "data")[i % 3] for i in range(m)],
        "queue_name": [f"qSyncIO{i % 4}-Q1-E{i % 16}" for i in range(m)],
        "queue_idx": np.arange(m, dtype=np.int64) % 4, "crc": np.zeros(m, np.int64),
    }), directory / "DmaPacket.parquet")
    pq.write_table(pa.Table.from_pylist(info), directory / "ExecutionInfo.parquet")
    pq.write_table(pa.Table.from_pylist([{
        "profile_schema_version": "7.4.0", "ntff_version": 4, "num_physical_cores": 1, "vnc_enabled": False,
        "first_hw_timestamp": int(start.min()), "last_hw_timestamp": int((start + dur).max()),
        "first_ts": "", "last_ts": "", "ticks_per_nanosec": 1, "neuroncore_idx": nc, "profile_name": directory.name,
    }]), directory / "Metadata.parquet")
