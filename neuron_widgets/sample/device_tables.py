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


def _in_sequence(rng: np.random.Generator, dur: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Starts for work done one item after another between lo and hi, with idle gaps.

    An engine (or a DMA queue) runs one instruction at a time; where the items cannot fit at
    their drawn durations, durations and gaps shrink together so that they do.
    """
    gap = rng.integers(0, 400, dur.size)
    need = int(dur.sum() + gap.sum())
    room = max(hi - lo, dur.size)
    if need > room:
        dur = np.maximum(dur * room // max(need, 1), 1)
        gap = gap * room // max(need, 1)
    start = lo + np.concatenate([[0], np.cumsum(dur + gap)[:-1]]) if dur.size else np.zeros(0, np.int64)
    return start.astype(np.int64), dur


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
        dur = rng.integers(60, 1_800, per_exec)
        start = np.empty(per_exec, dtype=np.int64)
        for e in range(len(ENGINES)):
            mine = np.flatnonzero(engine == e)
            start[mine], dur[mine] = _in_sequence(rng, dur[mine], d0, d1 - 2_000)
        order = np.argsort(start, kind="stable")
        engine, start, dur = engine[order], start[order], dur[order]
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
    # Each of the 16 queues moves one packet at a time, like an engine runs one instruction.
    queue = np.arange(m) % 16
    ddur = rng.integers(200, 4_000, m)
    dstart = np.empty(m, dtype=np.int64)
    for q in range(16):
        mine = np.flatnonzero(queue == q)
        dstart[mine], ddur[mine] = _in_sequence(rng, ddur[mine], int(start.min()), int((start + dur).max()))
    order = np.argsort(dstart, kind="stable")
    queue, dstart, ddur = queue[order], dstart[order], ddur[order]
    size = rng.integers(512, 65_536, m)
    pq.write_table(pa.table({
        "start_ts": dstart, "end_ts": dstart + ddur, "duration_ns": ddur, "pcore_idx": np.full(m, nc, np.int64),
        "id": np.arange(m, dtype=np.int64), "packet_idx": pa.array(np.arange(m) % 16, pa.int32()),
        "packet_aggregation_id": np.arange(m, dtype=np.int64) // 16,
        "engine_idx": queue.astype(np.int64), "read_bytes": size, "write_bytes": size,
        "transfer_bytes": size, "throughput": pa.array(size / np.maximum(ddur, 1) * 1e9, pa.float32()),
        "queue_type": [("input", "output", "data")[i % 3] for i in range(m)],
        "queue_name": [f"qSyncIO{q % 4}-Q1-E{q}" for q in queue],
        "queue_idx": (queue % 4).astype(np.int64), "crc": np.zeros(m, np.int64),
    }), directory / "DmaPacket.parquet")
    pq.write_table(pa.Table.from_pylist(info), directory / "ExecutionInfo.parquet")
    pq.write_table(pa.Table.from_pylist([{
        "profile_schema_version": "7.4.0", "ntff_version": 4, "num_physical_cores": 1, "vnc_enabled": False,
        "first_hw_timestamp": int(start.min()), "last_hw_timestamp": int((start + dur).max()),
        "first_ts": "", "last_ts": "", "ticks_per_nanosec": 1, "neuroncore_idx": nc, "profile_name": directory.name,
    }]), directory / "Metadata.parquet")
