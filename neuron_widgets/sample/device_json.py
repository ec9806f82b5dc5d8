"""A device profile JSON laid out as neuron-profile 2.27 writes it (see NEURON_FORMATS.md, "Device profile JSON").

Every key holds a list of objects, even where it is one row; instruction ids are uint64 past 2^53;
an instruction's `layer` is relative to its `fully_qualified_subgraph` (`_dot.3` under `/sg00`,
"" for the subgraph's own instructions, whose `hlo_name` is "" too); `layer_summary` names full
paths with the subgraph as root, each row's counts and times covering its descendants. Used by
the tests (fixed and random shapes) and by anyone who wants such a file without the Neuron tools.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import orjson

# Engine track -> the engine name ActiveTime and the summaries use.
TRACKS = {"Tensor": "tensor", "TensorMatrix": "tensor", "Vector": "vector", "Scalar": "scalar", "GpSimd": "gpsimd",
          "Sync": "sync"}
OPCODES = {"Tensor": ("LoadStationary", "MultiplyMoving"), "TensorMatrix": ("MATMUL", "Transpose"),
           "Vector": ("TensorTensor", "TensorReduce"), "Scalar": ("Activate", "TensorScalarPtr"),
           "GpSimd": ("Iota", "Memset"), "Sync": ("DmaTrigger", "Nop")}
# The engines' wait-on-semaphore instruction (what `model/device/engines.SEMAPHORE_WAIT` recognises).
WAIT_OPCODE = "EventSemaphore"
PLACES = ("WEIGHT", "INPUT", "OUTPUT", "SB", "PSUM", "HBM", "unknown")


def _layer_names(rng: np.random.Generator, count: int, depth: int) -> list[str]:
    """Layer paths relative to a subgraph: `_dot.3`, or nested as deep as `depth` (`blk.1/_add.4`)."""
    out: list[str] = []
    for k in range(count):
        levels = int(rng.integers(1, depth + 1)) if depth > 1 else 1
        parts = [f"blk.{int(rng.integers(0, 3))}" for _ in range(levels - 1)] + [f"_{('dot', 'add', 'exp')[k % 3]}.{k}"]
        out.append("/".join(parts))
    return list(dict.fromkeys(out))


def document(rng: np.random.Generator, *, subgraphs: int = 1, layers: int = 1, depth: int = 1,
             instructions: int = 133, dma: int = 356, own_share: float = 0.85, waits: bool = True,
             bad_places: float = 0.3) -> dict[str, Any]:
    """The JSON document (a dict) of one execution of a NEFF with `subgraphs` subgraphs.

    `layers` layers per subgraph (nested up to `depth`), `instructions` instructions of which about
    `own_share` belong to a subgraph itself (layer ""), `dma` DMA rows, some with source and
    destination "unknown". With `waits`, the Vector and Sync engines sit in long semaphore waits.
    """
    sgs = [f"/sg{k:02d}" for k in range(max(subgraphs, 1))]
    layer_of = {sg: _layer_names(rng, layers, depth) for sg in sgs}
    tracks = list(TRACKS)
    rows: list[dict[str, Any]] = []
    clock = {t: 7 for t in tracks}  # each engine runs one instruction after another
    counts = [len(part) for part in np.array_split(np.arange(instructions), len(sgs))]
    k = 0
    for sg, count in zip(sgs, counts, strict=True):
        names = layer_of[sg]
        for i in range(count):
            track = tracks[int(rng.integers(0, len(tracks)))]
            own = not names or rng.random() < own_share
            layer = "" if own else names[int(rng.integers(0, len(names)))]
            wait = waits and track in ("Vector", "Sync") and rng.random() < 0.15
            dur = int(rng.integers(2_000, 40_000)) if wait else int(rng.integers(10, 900))
            start = clock[track] + int(rng.integers(0, 60))
            clock[track] = start + dur
            leaf = layer.rsplit("/", 1)[-1]
            hlo = "" if own else f"%{leaf.lstrip('_')} = {leaf.lstrip('_').split('.')[0]}(%p0, %p1)"
            rows.append({
                "timestamp": start, "duration": dur, "label": track, "subgroup": "",
                "opcode": WAIT_OPCODE if wait else OPCODES[track][i % 2],
                "operands": f"src=sb[{i % 128}:{i % 128 + 32}] dst=psum[{i % 8}]", "pc": 64 * k,
                "id": 2**63 + 2**53 + 17 * k, "hlo_name": hlo, "layer": layer, "bir_id": f"I-{k % 997}",
                "raw_bir_id": k % 997, "bir_instruction_name": f"I-{k % 997}", "penguin_id": f"p{k % 311}",
                "raw_penguin_id": k % 311, "instruction_type": "WAIT" if wait else "COMPUTE",
                "activation_fn": "Identity" if track == "Scalar" else "",
                "evt_wait_time": int(rng.integers(0, dur)) if wait else 0, "crc_in": 0, "crc_out": 0,
                "hlo_attrs": "", "fully_qualified_subgraph": sg,
            })
            k += 1
    rows.sort(key=lambda r: (r["timestamp"], r["id"]))
    end = max((r["timestamp"] + r["duration"] for r in rows), default=7)
    return {
        "instruction": rows,
        "dma": _dma(rng, dma, end),
        "semaphore_update": [{"id": f"sem{j % 4}", "timestamp": int(t), "value": j % 3}
                             for j, t in enumerate(np.sort(rng.integers(7, end + 1, 12)))],
        "active_time": _active_time(rows),
        "dma_throughput": [{"timestamp": int(t), "transfer_rate": 1.5e9, "total_transfer_bytes": 4096 * j,
                            "hbm_read_bytes": 2048 * j, "hbm_write_bytes": 2048 * j}
                           for j, t in enumerate(range(7, end + 1, max(end // 8, 1)))],
        "pending_dma": [{"timestamp": 7, "value": 0}],
        "instruction_usage": [{"engine": e, "count": sum(r["label"] == e for r in rows)} for e in tracks],
        "nc_mem_usage": [{"nc": 0, "nd": 0, "usage_type": "weights", "amount_bytes": 65536}],
        "layer_summary": _layer_summary(rows, sgs, layer_of),
        "summary": [{"total_time": (end - 7) / 1e9, "event_count": len(rows) + dma,
                     "mfu_estimated_percent": 0.0004, "mfu_max_achievable_estimated_percent": 0.269,
                     "hfu_estimated_percent": 0.0005, "mbu_estimated_percent": 0.0123, "nc_idx": 0, "nd_idx": 0}],
        "summary_groups": [{"group": "time", "metrics": ["total_time"]}],
        "summary_group_order": [{"group": "time"}],
        "terminology": [{"name": "total_time", "description": "execution time in seconds"}],
        "metadata": [{"ntff_version": 4, "first_ts": "", "last_ts": "", "first_hw_timestamp": 7,
                      "last_hw_timestamp": end, "ticks_per_nanosec": 1, "num_physical_cores": 1, "vnc_enabled": False,
                      "is_simulation": False, "num_subgraphs": subgraphs}],
        "profile_info": [{"neff_name": "file.neff", "ntff_filename": "profile.ntff", "profile_name": "matmul",
                          "profile_type": "device", "profiler_version": "2.27"}],
        "neff_header": [{"hash": "0" * 32, "network_name": "matmul", "number_of_logical_neuroncores": 1}],
        "neff_node": [{"name": sg.lstrip("/")} for sg in sgs],
        "dma_queues_info": [{"name": f"qSyncSpillReload{q}", "type": "data", "idx": q, "engine_idx": q}
                            for q in range(4)],
        "model_info": [{"sg_name": sg.lstrip("/")} for sg in sgs],
        "warnings": [],
        "ham": [],
    }


def _dma(rng: np.random.Generator, count: int, end: int) -> list[dict[str, Any]]:
    out = []
    clock: dict[int, int] = defaultdict(lambda: 7)
    for j in range(count):
        q = int(rng.integers(0, 4))
        dur = int(rng.integers(20, 2_000))
        start = clock[q] + int(rng.integers(0, 200))
        clock[q] = start + dur
        size = int(rng.integers(64, 65_536))
        src, dst = PLACES[int(rng.integers(0, len(PLACES)))], PLACES[int(rng.integers(0, len(PLACES)))]
        out.append({"timestamp": min(start, end), "duration": dur, "subgroup": f"qSyncSpillReload{q}-Q1-E{q}",
                    "dma_queue": q, "dma_engine": q, "queue_type": ("data", "input", "output")[q % 3], "op": "copy",
                    "source": [[src]], "dest": [dst], "read_size": size, "write_size": size, "transfer_size": size,
                    "transfer_rate": size / dur, "variable": f"t{j % 5}", "semaphore_id": q, "block_id": j // 4,
                    "packet_idx": j % 16, "packet_aggregation_id": j // 16, "aggregated": False, "duplicate": False,
                    "is_cc_dma": "no" if j % 9 else "yes", "crc": 0, "id": 2**60 + j})
    out.sort(key=lambda r: r["timestamp"])
    return out


def _active_time(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per engine: what the profile's own ActiveTime table looks like (not used for our numbers)."""
    out = []
    for track in dict.fromkeys(r["label"] for r in rows):
        mine = [r for r in rows if r["label"] == track and r["opcode"] != WAIT_OPCODE]
        if mine:
            s, e = mine[0]["timestamp"], mine[-1]["timestamp"] + mine[-1]["duration"]
            out.append({"start_ts": s, "end_ts": e, "duration_ns": sum(r["duration"] for r in mine),
                        "engine": TRACKS[track], "pcore_idx": 0})
    return out


def layer_path(row: dict[str, Any]) -> str:
    """An instruction's layer path: its subgraph, then its (relative) layer."""
    return row["fully_qualified_subgraph"] + ("/" + row["layer"] if row["layer"] else "")


def _layer_summary(rows: list[dict[str, Any]], sgs: list[str], layer_of: dict[str, list[str]]) -> list[dict[str, Any]]:
    """A row per subgraph and per layer path (ancestors of nested layers too), each covering its descendants."""
    paths: list[str] = []
    for sg in sgs:
        paths.append(sg)
        for name in layer_of[sg]:
            segs = name.split("/")
            paths.extend(f"{sg}/{'/'.join(segs[:d + 1])}" for d in range(len(segs)))
    out = []
    for path in dict.fromkeys(paths):
        mine = [r for r in rows if layer_path(r) == path or layer_path(r).startswith(path + "/")]
        if not mine:
            continue
        start = min(r["timestamp"] for r in mine)
        end = max(r["timestamp"] + r["duration"] for r in mine)
        row: dict[str, Any] = {"name": path, "fully_qualified_subgraph": "/" + path.split("/")[1], "start": start,
                               "end": end, "duration": end - start}
        for track, engine in TRACKS.items():  # Tensor and TensorMatrix are both the tensor engine
            count = sum(r["label"] == track for r in mine)
            row[f"{engine}_instruction_count"] = row.get(f"{engine}_instruction_count", 0) + count
        row["tensor_engine_mfu"] = round(0.001 * (1 + len(path)) / 10, 6)
        out.append(row)
    return out


def write(path: Path, rng: np.random.Generator | None = None, **shape: Any) -> Path:
    """Write `document(rng, **shape)` to `path` (compact JSON, as the tool writes it)."""
    path = Path(path)
    path.write_bytes(orjson.dumps(document(rng if rng is not None else np.random.default_rng(0), **shape)))
    return path
