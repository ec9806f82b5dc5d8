"""Drill-down to a device trace: first open (read + align) and a second open of the same execution.

    python bench/bench_device.py [--instructions 1000000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, machine


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instructions", type=int, default=1_000_000)
    ap.add_argument("--events", type=int, default=1_000_000)
    args = ap.parse_args()
    import neuron_widgets as nw

    path = OUT / f"device_{args.instructions}"
    if not (path / "SystemProfileEvents.parquet").exists():
        nw.write_sample(path, events=args.events, instances=1, processes=1, cores=1,
                        device_instructions=args.instructions)
    p = nw.load_profile(path)
    ev = p.core.to_pandas()
    first = int(ev[ev["name"] == "nc_exec_running"].iloc[0]["id"])
    t = time.perf_counter()
    d = p.device_trace(first)
    cold = time.perf_counter() - t
    t = time.perf_counter()
    p.device_trace(first)
    warm = time.perf_counter() - t
    result = {"machine": machine(), "instructions": len(d), "dma_rows": len(d.dma), "system_events": len(p),
              "first_open_s": cold, "second_open_ms": 1e3 * warm, "alignment": d.alignment,
              "residual_ns": d.residual_ns}
    print(json.dumps(result, indent=2))
    OUT.mkdir(exist_ok=True)
    (OUT / f"device_{args.instructions}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
