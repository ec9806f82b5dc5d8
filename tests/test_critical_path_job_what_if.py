"""A job's what-if against the truth: a random two-node job simulated with and without a change, each node a part.

As tests/test_critical_path_what_if.py does for a profile, with the unchanged run written as a job (one part
per instance) and the change selected by its part: `what_if(job)` replays part by part (each part's graph
reduced to what the other parts depend on), and must land within 1% of the changed run's real span.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from random_neuron import write_profile
from schedule_neuron import draw, simulate, span

import neuron_widgets as nw
from neuron_widgets import analysis as A


def _seeds(n: int) -> list[int]:
    """Seeds of jobs over two instances with a collective: two parts that meet at collectives."""
    out, seed = [], 0
    while len(out) < n:
        job = draw(seed, hangs=False, mixed_ids=False)
        if len({c[0] for c in job.cores}) == 2 and any(job.n_coll[k] for k in set(job.neff_of_step)):
            out.append(seed)
        seed += 1
    return out


def _case(seed: int):  # type: ignore[no-untyped-def]
    """A job and a change, as `what_if(job)` selects it: a core's compute scaled, or some of its host gaps removed."""
    job = draw(seed, hangs=False, mixed_ids=False)
    rng = np.random.default_rng(seed + 7)
    c = int(rng.integers(0, len(job.cores)))
    inst, pid, nc = job.cores[c]
    part = f"node-{sorted({k[0] for k in job.cores}).index(inst):02d}"
    if rng.random() < .6:
        f = float(rng.choice([0.25, 0.5, 0.8, 1.5, 3.0]))
        return job, {"compute_scale": {c: f}}, ({"part": part, "process_id": pid, "nc_idx": nc, "kind": "compute"}, f)
    steps = len(job.neff_of_step)
    label = [s + 1 if job.exec_id_mode == "all" else job.neff_of_step[:s].count(job.neff_of_step[s]) for s in range(steps)]
    picked = {label[int(s)] for s in rng.integers(1, max(steps, 2), int(rng.integers(1, 4))) if 0 < s < steps}
    picked = {x for x in picked if x >= 1}
    where = {"part": part, "process_id": pid, "thread_id": 1000 + nc, "kind": "gap", "step": sorted(picked)}
    return job, {"no_host_gap": {(c, s) for s in range(1, steps) if label[s] in picked}}, (where, 0.0)


def _as_job(rows: list[dict], directory: Path) -> nw.Job:
    for k, inst in enumerate(sorted({r["instance_id"] for r in rows})):
        write_profile(directory / f"node-{k:02d}", [r for r in rows if r["instance_id"] == inst])
    return nw.load_job(directory, results=directory.parent / f"{directory.name}-results")


@pytest.mark.parametrize("chunk", range(2))
def test_a_jobs_predicted_span_is_within_one_percent_of_the_changed_run(chunk: int, tmp_path: Path) -> None:
    worst, moved = 0.0, 0
    seeds = _seeds(40)[chunk * 20:(chunk + 1) * 20]
    for seed in seeds:
        job, change, (where, scale) = _case(seed)
        before, after = simulate(job), simulate(job, **change)
        got = A.what_if(_as_job(before, tmp_path / f"j{seed}"), where, scale, scheduler="sync")
        assert got.span_ns == span(before), seed
        truth = span(after)
        err = abs(got.predicted_span_ns - truth) / truth
        worst = max(worst, err)
        moved += truth != span(before)
        assert err <= 0.01, (seed, change, got, truth)
        # Each step's predicted end against the changed run's, the steps matched by NEFF and step.
        real = A.what_if(write_profile(tmp_path / f"k{seed}", after), {"kind": "compute"}, 1.0).steps
        both = got.steps.merge(real, on=["model_name", "step"], suffixes=("", "_real"))
        assert len(both) == len(got.steps) == len(real), seed
        assert (both["predicted_end_ts"] - both["end_ts_real"]).abs().max() <= 0.01 * truth, seed
    assert moved > len(seeds) // 3  # most changes changed the run
    print(f"worst error {worst:.4%}")
