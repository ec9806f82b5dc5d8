"""Random Neuron jobs simulated forward in time, written as profiles: the truth for the critical path's what-if.

A job is drawn once (`draw`): cores over instances and processes, one runtime thread per core,
steps each running one of several NEFFs, each NEFF with 0-3 collectives over its participating
cores (others run it without any), random compute per core, step and segment, host gaps before
each call (now and then a late submit), launch and return latencies, release latencies. It is
then simulated (`simulate`) with or without a change (a core's compute scaled, host gaps
removed) by the rules a run follows: a call starts after the thread's previous call and its host
gap; its execution starts after the call's launch latency and the core's previous execution;
each collective releases everyone a latency after its last participant arrives; the
`cc_running` follows the release; the call returns a latency after its execution ends. The last
core to arrive at a collective records no barrier now and then (as the runtime does), a core may
hang (its execution never ends and it leaves the job), flows and exec_ids may be missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from random_neuron import BASE, _Events, write_profile

import neuron_widgets as nw


@dataclass
class Job:
    cores: list[tuple[str, int, int]]
    neff_of_step: list[int]
    n_coll: list[int]  # per NEFF
    takes_part: list[list[bool]]  # per NEFF, per core
    compute: np.ndarray  # (steps, cores, 4): compute before collective j (j < n_coll), and after the last
    cc_dur: np.ndarray  # (steps, 3)
    release_lat: np.ndarray  # (steps, 3)
    cc_gap: np.ndarray  # (steps, 3): release -> cc_running start
    host_gap: np.ndarray  # (cores, steps): before each call (step 0: from the job's start)
    launch_lat: np.ndarray  # (cores, steps)
    return_lat: np.ndarray  # (cores, steps)
    drop_barrier: np.ndarray  # (steps, 3): the last to arrive records no barrier
    hang: tuple[int, int] | None  # (core, step)
    flows: bool
    exec_id_mode: str  # "all", "none", "mixed"
    seed: int


def draw(seed: int, hangs: bool = True, mixed_ids: bool = True) -> Job:
    """A random job; `mixed_ids=False`: exec_id on every event or on none (collectives then match across
    all cores, as the truth of a what-if needs)."""
    rng = np.random.default_rng(seed)
    n_cores = int(rng.integers(1, 17))
    n_inst, n_proc = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    cores = []
    for c in range(n_cores):
        inst, pid = f"i-{c % n_inst:017x}", 100 + (c // n_inst) % n_proc
        cores.append((inst, pid, sum(1 for k in cores if k[:2] == (inst, pid))))
    n_steps = int(rng.integers(1, 31))
    n_neffs = int(rng.integers(1, 4))
    n_coll = [int(rng.choice([0, 1, 2, 3], p=[.2, .4, .25, .15])) for _ in range(n_neffs)]
    takes_part = [[bool(rng.random() < .85) for _ in range(n_cores)] for _ in range(n_neffs)]
    slow = rng.uniform(0.5, 3.0, n_cores)  # some cores are slower than others
    compute = (rng.integers(20_000, 200_000, (n_steps, n_cores, 4)) * slow[None, :, None]).astype(np.int64)
    late = rng.random((n_cores, n_steps)) < .1
    host_gap = rng.integers(1_000, 30_000, (n_cores, n_steps)) + late * rng.integers(100_000, 600_000, (n_cores, n_steps))
    hang = (int(rng.integers(0, n_cores)), int(rng.integers(0, n_steps))) if hangs and rng.random() < .15 else None
    return Job(cores, [int(rng.integers(0, n_neffs)) for _ in range(n_steps)], n_coll, takes_part, compute,
               rng.integers(5_000, 40_000, (n_steps, 3)), rng.integers(100, 2_000, (n_steps, 3)),
               rng.integers(0, 1_500, (n_steps, 3)), host_gap.astype(np.int64),
               rng.integers(2_000, 20_000, (n_cores, n_steps)), rng.integers(2_000, 20_000, (n_cores, n_steps)),
               rng.random((n_steps, 3)) < .5, hang, bool(rng.random() < .6),
               str(rng.choice(["all", "none", "mixed"], p=[.6, .2, .2] if mixed_ids else [.7, .3, 0])), seed)


def simulate(job: Job, compute_scale: dict[int, float] | None = None,
             no_host_gap: set[tuple[int, int]] | None = None) -> list[dict[str, Any]]:
    """The job's events: with `compute_scale` {core: factor} applied to that core's compute, and the host
    gap before step s's call on core c removed for each (c, s) in `no_host_gap`."""
    compute_scale = compute_scale or {}
    no_host_gap = no_host_gap or set()
    rng = np.random.default_rng(job.seed + 1)  # what is written (ids, flows) is the same with or without a change
    n_cores, n_steps = len(job.cores), len(job.neff_of_step)
    ev = _Events()
    call_end = [BASE] * n_cores
    exec_end = [BASE] * n_cores
    gone: set[int] = set()
    for s in range(n_steps):
        neff = job.neff_of_step[s]
        running = [c for c in range(n_cores) if c not in gone]
        if not running:
            break
        call_start, ex_start, cursor = {}, {}, {}
        for c in running:
            gap = 0 if (c, s) in no_host_gap else int(job.host_gap[c, s])
            call_start[c] = call_end[c] + gap
            ex_start[c] = max(call_start[c] + int(job.launch_lat[c, s]), exec_end[c])
            cursor[c] = ex_start[c]

        def comp(c: int, j: int, s: int = s) -> int:
            return round(job.compute[s, c, j] * compute_scale.get(c, 1.0))

        hung = job.hang[0] if job.hang and job.hang[1] == s and job.hang[0] in running else None
        coll_events: dict[int, list[tuple]] = {c: [] for c in running}
        parts = [c for c in running if job.takes_part[neff][c]]
        has_id = {c: job.exec_id_mode == "all" or (job.exec_id_mode == "mixed" and rng.random() < .5) for c in running}
        for j in range(job.n_coll[neff]):
            arrive = {c: cursor[c] + comp(c, j) for c in parts if c != hung}
            if not arrive:
                break
            release = max(arrive.values()) + int(job.release_lat[s, j])
            last = max(arrive, key=lambda c: (arrive[c], -c))
            for c in arrive:
                args = {"exec_id": s + 1} if has_id[c] else {}
                if not (c == last and job.drop_barrier[s, j]):
                    coll_events[c].append(("cc_exec_barrier", arrive[c], release, args))
                cc0 = release + int(job.cc_gap[s, j])
                coll_events[c].append(("cc_running", cc0, cc0 + int(job.cc_dur[s, j]), args))
                cursor[c] = cc0 + int(job.cc_dur[s, j])
        for c in running:
            core = job.cores[c]
            # A participant's compute after its last collective; anyone else's compute is one piece.
            tail = comp(c, 3) if c in parts and c != hung else sum(comp(c, j) for j in range(job.n_coll[neff])) + comp(c, 3)
            ends = c != hung
            e_end = cursor[c] + tail if ends else None
            c_end = e_end + int(job.return_lat[c, s]) if e_end is not None else None
            flow = [ev.flow + 1] if job.flows else None
            ev.flow += 1
            args = {"exec_id": s + 1} if has_id[c] else {}
            ev.add("nrt_execute", "neuron_rt", core, call_start[c], c_end, {**args, "ret": 0}, flow,
                   thread=1000 + core[2])
            ev.add("nc_exec_running", "neuron_hw", core, ex_start[c], e_end, {**args, "model_name": f"neff_{neff}"}, flow)
            for name, a, b, cargs in coll_events[c]:
                ev.add(name, "neuron_hw", core, a, b, cargs)
            if ends:
                call_end[c], exec_end[c] = c_end, e_end
            else:
                gone.add(c)
    return ev.rows


def job_profile(job: Job, directory: Path, **change: Any) -> nw.Profile:
    return write_profile(directory, simulate(job, **change))


def span(rows: list[dict[str, Any]]) -> int:
    ends = [r["end_ts"] for r in rows if r["end_ts"] is not None]
    return max(ends) - min(r["start_ts"] for r in rows)
