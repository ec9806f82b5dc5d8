"""What-if against the truth: a random job simulated with and without a change, both written as profiles.

The prediction from the unchanged profile must be within 1% of the changed profile's real span
(tests/schedule_neuron.py simulates the run forward in time; it shares no code with the model).
"""

from __future__ import annotations

import numpy as np
import pytest
from random_neuron import write_profile
from schedule_neuron import draw, simulate, span

from neuron_widgets import analysis as A

CASES = 100
CHUNKS = 4


def _case(seed: int):
    """A job and a change: a core's compute scaled, or one or more host gaps removed (as `what_if` selects them)."""
    job = draw(seed, hangs=False, mixed_ids=False)
    rng = np.random.default_rng(seed + 7)
    c = int(rng.integers(0, len(job.cores)))
    inst, pid, nc = job.cores[c]
    if rng.random() < .6:
        f = float(rng.choice([0.25, 0.5, 0.8, 1.5, 3.0]))
        return job, {"compute_scale": {c: f}}, ({"instance_id": inst, "process_id": pid, "nc_idx": nc,
                                                 "kind": "compute"}, f)
    steps = len(job.neff_of_step)
    # A step as the model numbers it: the exec_id (s + 1), else the run's ordinal among its core's runs of its NEFF.
    label = [s + 1 if job.exec_id_mode == "all" else job.neff_of_step[:s].count(job.neff_of_step[s]) for s in range(steps)]
    # The host gaps before the calls of some steps on core c (not the first call: its gap is from the job's start).
    picked = {label[int(s)] for s in rng.integers(1, max(steps, 2), int(rng.integers(1, 4))) if 0 < s < steps}
    picked = {x for x in picked if x >= 1}
    where = {"instance_id": inst, "process_id": pid, "thread_id": 1000 + nc, "kind": "gap", "step": sorted(picked)}
    return job, {"no_host_gap": {(c, s) for s in range(1, steps) if label[s] in picked}}, (where, 0.0)

@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_predicted_span_is_within_one_percent_of_the_changed_run(chunk, tmp_path):
    worst, moved = 0.0, 0
    for seed in range(chunk * CASES // CHUNKS, (chunk + 1) * CASES // CHUNKS):
        job, change, (where, scale) = _case(seed)
        before = simulate(job)
        after = simulate(job, **change)
        p = write_profile(tmp_path / f"j{seed}", before)
        got = A.what_if(p, where, scale)
        assert got.span_ns == span(before), seed
        truth = span(after)
        err = abs(got.predicted_span_ns - truth) / truth
        worst = max(worst, err)
        moved += truth != span(before)
        assert err <= 0.01, (seed, change, got, truth)
        # Each step's predicted end, against the changed run's (steps matched by NEFF and step).
        real = A.what_if(write_profile(tmp_path / f"k{seed}", after), {"kind": "compute"}, 1.0).steps
        both = got.steps.merge(real, on=["model_name", "step"], suffixes=("", "_real"))
        assert len(both) == len(got.steps) == len(real), seed
        off = (both["predicted_end_ts"] - both["end_ts_real"]).abs().max()
        assert off <= 0.01 * truth, (seed, off, truth)
        if change.get("no_host_gap") and where["step"]:
            assert got.selected > 0, seed
    assert moved > CASES // CHUNKS // 3  # most changes changed the run
    print(f"worst error {worst:.4%}")
