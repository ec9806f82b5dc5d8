"""Critical path and what-if of a ~1M-event Kineto job loaded as one profile (launches, syncs, NCCL across ranks).

The job is `neuron_widgets.sample.kineto` with 8 ranks and `--steps` steps (4,000: about 990,000
events): per rank CPU ops launching kernels and copies by correlation id and `ac2g` flow, an NCCL
all-reduce per step matched across the 8 ranks. In a fresh child per run: `load_profile(files,
prepare=False)`, `critical_path` (reads the correlation ids, flow ids and NCCL process groups it
needs, builds the graph with the Kineto edges, walks the path), then `what_if` (a replay). Wall and
CPU seconds (the machine is shared: CPU time is the steadier number), medians over `--repeat` runs,
with the load average at the time. Goal (issue 37): the path of a 1M-event profile in 2 s or less,
a what-if replay in 1 s or less.

    python bench/bench_critical_path_kineto.py [--steps 4000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, in_child, machine

CODE = """
import json, time
import neuron_widgets as nw
from neuron_widgets import analysis as A
p = nw.load_profile({files!r}, prepare=False)
w0, c0 = time.perf_counter(), time.process_time()
path = A.critical_path(p)
w1, c1 = time.perf_counter(), time.process_time()
w = A.what_if(p, {{"kind": "host", "instance_id": path["instance_id"].iloc[0]}}, 0.5)
w2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({{"events": len(p), "segments": len(path), "path_s": w1 - w0, "path_cpu_s": c1 - c0,
                  "what_if_s": w2 - w1, "what_if_cpu_s": c2 - c1, "saved_pct": w.saved_pct,
                  "collectives_on_path": int((path["kind"].astype(str) == "collective").sum())}}))
"""


def job(steps: int) -> list[str]:
    from neuron_widgets.sample.kineto import write_kineto

    out = OUT / f"kineto_job_8x{steps}"
    files = sorted(out.glob("*.json.gz"))
    if len(files) < 8:
        out.mkdir(parents=True, exist_ok=True)
        files = write_kineto(out, 0, ranks=8, steps=steps, late_rank=3)
    return [str(f) for f in files]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = job(args.steps)
    in_child(CODE.format(files=files))  # numba's cache and the parse cache warm
    runs = []
    for _ in range(args.repeat):
        load = os.getloadavg()[0]
        runs.append({**in_child(CODE.format(files=files)), "load": load})
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"{med['events']:,.0f} events, {med['segments']:,.0f} segments ({med['collectives_on_path']:,.0f} "
          f"collective): critical_path {med['path_s']:.2f} s wall / {med['path_cpu_s']:.2f} s CPU, what_if "
          f"{med['what_if_s']:.2f} s / {med['what_if_cpu_s']:.2f} s CPU, load {med['load']:.1f}; {machine()}")
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_critical_path_kineto.json").write_text(json.dumps({"machine": machine(), **med}, indent=1))


if __name__ == "__main__":
    main()
