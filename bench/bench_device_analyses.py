"""Device hierarchy and analyses on a 1M-instruction trace (issue 25: under a second).

1. The drill-down sample's device trace (`common.device_sample`, its layers and HLO operators).
2. A generated trace with a deep, wide hierarchy: 3 levels of layers, 5,000 HLO operators,
   NKI locations, six engines, semaphore waits, 200k DMA packets over 64 queues.

Median of `--repeat` runs of `trace.hierarchy()` (its cache dropped before each) and of
`analysis.device_breakdown.device_breakdown(trace)` (every device analysis, the hierarchy included), of
the viewer's hierarchy panel (`tree_payload`: the hierarchy, each event's node, the rows sent)
and of its colour codes by HLO operator.

    python bench/bench_device_analyses.py [--instructions 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import device_sample, machine


def wide_trace(n: int, seed: int = 0):
    from neuron_widgets.model.device.trace import DeviceTrace

    rng = np.random.default_rng(seed)
    start = np.sort(rng.integers(0, 50_000_000, n))
    tracks = np.array(["Tensor", "TensorMatrix", "Vector", "Scalar", "GpSimd", "Sync"])
    layers = np.array([f"model/layers.{i // 40}/block.{i // 8 % 5}/{['attn', 'mlp'][i % 2]}" for i in range(400)])
    hlo = np.array([f"fusion.{i}" for i in range(5000)])
    opcodes = np.array(["MATMUL", "TRANSPOSE", "ACTIVATE", "TENSOR_TENSOR", "EVENT_SEMAPHORE", "IOTA"])
    k = rng.integers(0, 5000, n)
    ins = pd.DataFrame({"start_ts": start, "end_ts": start + rng.integers(0, 3000, n),
                        "timeline_track": pd.Categorical(tracks[rng.integers(0, 6, n)]),
                        "opcode": pd.Categorical(opcodes[rng.integers(0, 6, n)]),
                        "layer": pd.Categorical(layers[k % 400]), "hlo_name": pd.Categorical(hlo[k]),
                        "nki_source_location": pd.Categorical(np.where(k % 7 == 0, "kernels/attn.py:88", None)),
                        "adjusted_flops": rng.integers(0, 1 << 20, n)})
    m = n // 5
    ds = rng.integers(0, 50_000_000, m)
    dma = pd.DataFrame({"start_ts": ds, "end_ts": ds + rng.integers(0, 5000, m),
                        "queue_name": pd.Categorical(np.array([f"qSyncIO{i}-Q1-E{i}" for i in range(64)])[
                            rng.integers(0, 64, m)]),
                        "queue_type": pd.Categorical(np.array(["input", "output", "data"])[rng.integers(0, 3, m)]),
                        "transfer_bytes": rng.integers(0, 65536, m)})
    return DeviceTrace("wide", "neuron-parquet", ins, dma=dma)


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instructions", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import neuron_widgets as nw
    from neuron_widgets.analysis.device_breakdown import device_breakdown
    from neuron_widgets.model.device.events import DeviceEvents
    from neuron_widgets.widgets.device_tree import tree_payload

    p = nw.load_profile(device_sample(args.instructions, 1_000_000))
    ev = p.core.to_pandas()
    sample = p.device_trace(int(ev[ev["name"] == "nc_exec_running"].iloc[0]["id"]))
    results = []
    for label, trace in (("drill-down sample", sample), ("wide hierarchy", wide_trace(args.instructions))):
        def hierarchy(trace=trace):
            trace.__dict__.pop("_hierarchy", None)
            trace.__dict__.pop("_combos", None)
            return trace.hierarchy()

        def breakdown(trace=trace):
            trace.__dict__.pop("_hierarchy", None)
            trace.__dict__.pop("_combos", None)
            trace.__dict__.pop("_engine_times", None)  # the engine times the analyses share
            return device_breakdown(trace)

        events = DeviceEvents.of(trace)

        def panel(trace=trace, events=events):
            trace.__dict__.pop("_hierarchy", None)
            trace.__dict__.pop("_combos", None)
            return tree_payload(events)

        hierarchy()  # numpy / pandas warm
        results.append({"trace": label, "instructions": len(trace), "dma": len(trace.dma),
                        "nodes": len(trace.hierarchy()), "hierarchy_s": timed(hierarchy, args.repeat),
                        "all_device_analyses_s": timed(breakdown, args.repeat),
                        "viewer_panel_s": timed(panel, args.repeat),
                        "colour_by_hlo_s": timed(lambda events=events: events.color_codes("hlo"), args.repeat)})
    print(json.dumps({"machine": machine(), "results": results}, indent=2))


if __name__ == "__main__":
    main()
