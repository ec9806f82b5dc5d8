"""Randomly generated Neuron system profiles, seeded, in the Neuron Explorer Parquet layout.

Shapes the analyses must survive: 1 to 64 cores over several instances and processes, several
NEFFs, steps with 0 to 3 collectives, barriers present, absent or zero-length per core and step,
cc_running sometimes missing, exec_id on every, no or some events, executions that overlap or
never end, host launches linked by flow id or not, errors (return codes, numerical_err) and
framework events whose names merely contain "error".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import neuron_widgets as nw

BASE = 1_700_000_000_000_000_000
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("start_ts", pa.int64()), ("end_ts", pa.int64()),
                    ("duration_ns", pa.int64()), ("trace_event_source", pa.string()), ("instance_id", pa.string()),
                    ("process_id", pa.int64()), ("thread_id", pa.int64()), ("nc_idx", pa.int64()),
                    ("pcore_idx", pa.int64()), ("worker_gid", pa.int64()), ("flow_id", pa.list_(pa.string())),
                    ("extra_attributes_json", pa.string())])


class _Events:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.flow = 0

    def add(self, name: str, source: str, core: tuple[str, int, int] | None, start: int, end: int | None,
            args: dict | None = None, flow: list[int] | None = None, thread: int | None = None,
            where: tuple[str, int] | None = None) -> None:
        inst, pid = (core[0], core[1]) if core else where  # type: ignore[misc]
        nc = core[2] if core else None
        self.rows.append({
            "id": len(self.rows) + 1, "name": name, "start_ts": start, "end_ts": end,
            "duration_ns": None if end is None else end - start, "trace_event_source": source,
            "instance_id": inst, "process_id": pid,
            "thread_id": thread if thread is not None else (1000 + (nc or 0) if source == "neuron_rt" else 2000 + (nc or 0)),
            "nc_idx": nc, "pcore_idx": nc if source == "neuron_hw" else None,
            "worker_gid": None, "flow_id": [str(f) for f in flow] if flow else None,
            "extra_attributes_json": json.dumps(args) if args else None})


def random_events(seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    n_cores = int(rng.choice([1, 2, 3, 4, 8, 16, 32, 64], p=[.1, .2, .15, .2, .15, .1, .05, .05]))
    n_inst = int(rng.integers(1, 4))
    cores: list[tuple[str, int, int]] = []
    for c in range(n_cores):
        inst = c % n_inst
        pid = 100 + (c // n_inst) % int(rng.integers(1, 3))
        cores.append((f"i-{inst:017x}", pid, len([k for k in cores if k[:2] == (f"i-{inst:017x}", pid)])))
    gid = {c: i for i, c in enumerate(cores)}
    neffs = [f"neff_{k}" for k in range(int(rng.integers(1, 4)))]
    exec_mode = rng.choice(["all", "none", "mixed"], p=[.5, .25, .25])
    flows = bool(rng.random() < .6)
    no_model_name = bool(rng.random() < .1)
    ev = _Events()
    t = BASE + int(rng.integers(0, 10**6))
    late_core = int(rng.integers(0, n_cores))
    hung: set[int] = set()
    for step in range(int(rng.integers(1, 7))):
        neff = str(rng.choice(neffs))
        taking = [c for c in range(n_cores) if c not in hung and rng.random() < .92] or [int(rng.integers(0, n_cores))]
        taking = [c for c in taking if c not in hung]
        if not taking:
            break
        n_coll = int(rng.choice([0, 1, 2, 3], p=[.15, .5, .25, .1]))
        exec_id = step + 1
        start = {c: t + int(rng.integers(0, 400)) for c in taking}
        cursor = dict(start)
        barrier_done: dict[int, list[tuple]] = {c: [] for c in taking}
        for _ in range(n_coll):
            arrive = {c: cursor[c] + int(rng.integers(10, 3000)) + (int(rng.integers(0, 5000)) if c == late_core else 0)
                      for c in taking}
            release = max(arrive.values()) + int(rng.integers(0, 4))
            for c in taking:
                mode = rng.choice(["present", "absent", "zero"], p=[.65, .2, .15])
                if c == late_core and rng.random() < .6:
                    mode = "absent"  # the one who is last waits 0 and often records no barrier
                has_id = exec_mode == "all" or (exec_mode == "mixed" and rng.random() < .5)
                args = {"exec_id": exec_id, "cc_op": "all_reduce"} if has_id else {"cc_op": "all_reduce"}
                if mode == "present":
                    barrier_done[c].append(("cc_exec_barrier", arrive[c], release, args))
                elif mode == "zero":
                    barrier_done[c].append(("cc_exec_barrier", release, release, args))
                end = release + int(rng.integers(5, 800))
                if rng.random() < .9:
                    barrier_done[c].append(("cc_running", release, end, args))
                cursor[c] = end
        for c in taking:
            core = cores[c]
            has_id = exec_mode == "all" or (exec_mode == "mixed" and rng.random() < .5)
            ex_args: dict[str, Any] = {"nc_idx": core[2]}
            if not no_model_name:
                ex_args["model_name"] = neff
            if has_id:
                ex_args["exec_id"] = exec_id
            never_ends = rng.random() < .02
            end = None if never_ends else cursor[c] + int(rng.integers(10, 2000))
            flow = [ev.flow + 1] if flows else None
            ev.flow += 1
            launch = start[c] - int(rng.integers(1, 300)) if rng.random() < .8 else start[c] + int(rng.integers(0, 50))
            ret = int(rng.choice([0, 1003, 5, 1004], p=[.94, .03, .02, .01]))
            rt_args = {"exec_id": exec_id, "ret": ret} if has_id else {"ret": ret}
            ev.add("nrt_execute", "neuron_rt", core, launch, None if never_ends else (end or 0) + int(rng.integers(1, 100)),
                   rt_args, flow)
            ev.add("nc_exec_running", "neuron_hw", core, start[c], end, ex_args, flow)
            for name, s, e, a in barrier_done[c]:
                ev.add(name, "neuron_hw", core, s, e, a)
            if ret == 1003 and rng.random() < .7:
                ev.add("numerical_err", "neuron_hw", core, cursor[c], cursor[c] + 1, {"exec_id": exec_id})
            if rng.random() < .05:  # a second execution at once (another NEFF), overlapping this one
                other = str(rng.choice(neffs))
                s2 = start[c] + int(rng.integers(0, 500))
                ev.add("nc_exec_running", "neuron_hw", core, s2, s2 + int(rng.integers(100, 4000)),
                       {"model_name": other, "nc_idx": core[2]}, None)
            if never_ends:
                hung.add(c)
        t = max(cursor.values()) + int(rng.integers(2000, 20000))
    # Framework events: names with "error" in them are functions, not errors; some open at the end.
    where = (cores[0][0], cores[0][1])
    for k in range(int(rng.integers(0, 4))):
        s = BASE + int(rng.integers(0, max(t - BASE, 1)))
        ev.add("<built-in function set_fullgraph_error_on_nested_compile>", "framework", None, s, s + 50, None,
               thread=7, where=where)
        ev.add("aten::add", "framework", None, s + k, None if rng.random() < .3 else s + 60,
               {"error": "device-side assert"} if rng.random() < .2 else None, thread=7, where=where)
    del gid
    return ev.rows


def write_profile(directory: Path, rows: list[dict[str, Any]]) -> nw.Profile:
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), directory / "SystemProfileEvents.parquet")
    return nw.load_profile(directory, cache=False)


def random_profile(seed: int, directory: Path) -> nw.Profile:
    """A generated profile, sometimes filtered to some cores or a time range (as a brushed Summary sees it)."""
    rows = random_events(seed)
    p = write_profile(directory, rows)
    rng = np.random.default_rng(seed + 10_000)
    pick = rng.random()
    if pick < .15 and len(p):
        lo, hi = p.start_ts, p.end_ts
        a = lo + int((hi - lo) * rng.random() * .5)
        p = p.filter(time_range=(a, a + max((hi - lo) // 2, 1)))
    elif pick < .25:
        ncs = sorted({r["nc_idx"] for r in rows if r["nc_idx"] is not None})
        if len(ncs) > 1:
            p = p.filter(neuron_cores=",".join(str(n) for n in ncs[: max(1, len(ncs) // 2)]))
    return p
