"""Kineto (PyTorch profiler) JSON: neuron-widgets vs HTA's TraceAnalysis vs a bare parse.

All three read the same file in the same script, each repeated, median reported:
- bare: gunzip + orjson.loads (the floor for any JSON reader);
- neuron-widgets: load_profile (columns, flows bound, ready for grouping);
- HTA: TraceAnalysis(trace_dir=...) on a directory holding only that file.

    python bench/bench_kineto.py [--trace PATH] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, machine, timeit

DEFAULT = Path(__file__).resolve().parents[1] / "tests/data/traces/hta/trace_diff_control_rank3of8.json.gz"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--hta-repeat", type=int, default=3)
    args = ap.parse_args()
    import neuron_widgets as nw

    bare, bare_runs = timeit(lambda: orjson.loads(gzip.decompress(args.trace.read_bytes())), args.repeat)
    ours, ours_runs = timeit(lambda: nw.load_profile(args.trace), args.repeat)
    events = len(nw.load_profile(args.trace))
    result = {"machine": machine(), "trace": args.trace.name, "events": events,
              "bare_gunzip_orjson_s": bare, "neuron_widgets_s": ours, "ratio_to_bare": ours / bare,
              "bare_runs": bare_runs, "neuron_widgets_runs": ours_runs}
    try:
        from hta.trace_analysis import TraceAnalysis
    except ImportError:
        result["hta_s"] = None
        result["hta_note"] = "HolisticTraceAnalysis not installed: pip install -e '.[bench]'"
    else:
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / args.trace.name).symlink_to(args.trace)
            hta, hta_runs = timeit(lambda: TraceAnalysis(trace_dir=d), args.hta_repeat)
        result.update(hta_s=hta, hta_runs=hta_runs, speedup_vs_hta=hta / ours)
    print(json.dumps(result, indent=2))
    OUT.mkdir(exist_ok=True)
    (OUT / "kineto.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
