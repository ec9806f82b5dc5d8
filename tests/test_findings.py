"""Findings of Neuron system profiles: each rule fires on a job built to have the problem (the right who and
numbers, the gain against the simulated truth) and stays silent on the same job without it."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from random_neuron import random_profile, write_profile
from schedule_neuron import Job, draw, simulate, span

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.findings_rows import COLUMNS


def _clean_job(cores: int = 4, steps: int = 12, on: list[tuple[str, int, int]] | None = None) -> Job:
    """A job with no problem: every core computes alike, takes part in one collective per step, is fed on time;
    `on`: the cores (instance, pid, nc) to run it on."""
    seed = next(s for s in range(1000) if len((j := draw(s, hangs=False, mixed_ids=False)).cores) >= cores
                and len(j.neff_of_step) >= steps)
    job = draw(seed, hangs=False, mixed_ids=False)
    if on is not None:
        job = dataclasses.replace(job, cores=on)
    n_c, n_s = len(job.cores), len(job.neff_of_step)
    return dataclasses.replace(
        job, n_coll=[1] * len(job.n_coll), takes_part=[[True] * n_c for _ in job.n_coll],
        compute=np.full((n_s, n_c, 4), 100_000, np.int64), cc_dur=np.full((n_s, 3), 3_000, np.int64),
        release_lat=np.full((n_s, 3), 500, np.int64), cc_gap=np.full((n_s, 3), 200, np.int64),
        host_gap=np.full((n_c, n_s), 2_000, np.int64), launch_lat=np.full((n_c, n_s), 2_000, np.int64),
        return_lat=np.full((n_c, n_s), 2_000, np.int64), drop_barrier=np.zeros((n_s, 3), bool), hang=None,
        flows=True, exec_id_mode="all")


def _profile(job: Job, tmp_path, name: str = "p", **change) -> nw.Profile:
    return write_profile(tmp_path / name, simulate(job, **change))


def _rules(f: pd.DataFrame) -> set[str]:
    return set(f["rule"])


def _check_frame(f: pd.DataFrame, span_ns: int) -> None:
    assert list(f.columns) == COLUMNS
    gains = f["gain_ns"].to_numpy(float)
    known = gains[np.isfinite(gains)]
    assert (known >= 0).all() and (known <= max(span_ns, 0)).all()
    # by gain, largest first; the findings without a gain after all of those with one
    assert (np.diff(known) <= 0).all()
    if np.isfinite(gains).any() and (~np.isfinite(gains)).any():
        assert np.flatnonzero(~np.isfinite(gains)).min() > np.flatnonzero(np.isfinite(gains)).max()
    assert f["severity"].isin(["high", "medium", "low"]).all()
    assert str(f["start_ts"].dtype) == "Int64" and str(f["end_ts"].dtype) == "Int64"
    json.dumps(f["evidence"].tolist())  # plain figures, as an export writes them
    for t, g in zip(f["title"], gains, strict=True):
        assert isinstance(t, str) and t and "nan" not in t.lower().split()
        if not np.isfinite(g):
            assert "no time gain" in t or "not known" in t or "no gain" in t


def test_a_clean_job_has_no_findings(tmp_path) -> None:
    f = A.findings(_profile(_clean_job(), tmp_path))
    assert f.empty, f["title"].tolist()
    assert list(f.columns) == COLUMNS


def test_a_slow_core_is_the_straggler_with_the_simulated_gain(tmp_path) -> None:
    job = _clean_job()
    k = 2
    job.compute[:, k, :] = 160_000  # 60% slower than its peers in every step
    p = _profile(job, tmp_path)
    f = A.findings(p)
    st = f[f["rule"] == "straggler"]
    assert len(st) == 1
    inst, pid, nc = job.cores[k]
    r = st.iloc[0]
    assert r["evidence"]["core"].endswith(f"NC:{nc}") and str(inst) in r["evidence"]["core"]
    steps = len(job.neff_of_step)
    assert r["evidence"]["times_last"] == steps and f"last at {steps} of {steps}" in r["title"]
    assert r["evidence"]["compute_scale"] == pytest.approx(100 / 160, rel=1e-3)
    # the gain is what_if's, and the simulated run with that core as fast as the others agrees
    wi = A.what_if(p, {"instance_id": inst, "process_id": pid, "nc_idx": nc, "kind": "compute"},
                   r["evidence"]["compute_scale"])
    assert r["gain_ns"] == wi.saved_ns
    truth = span(simulate(job)) - span(simulate(job, compute_scale={k: 100 / 160}))
    assert r["gain_ns"] == pytest.approx(truth, rel=0.02)
    assert "would save" in r["title"] and "60% longer" in r["title"]
    on, of = r["evidence"]["steps_on_path"]
    assert of == steps and on >= steps - 1 and f"on the critical path in {on} of {steps} steps" in r["title"]
    # the imbalance of the same core is not said twice
    assert "compute_imbalance" not in _rules(f)
    _check_frame(f, wi.span_ns)


def test_a_core_fed_late_is_the_straggler_and_its_host_the_fix(tmp_path) -> None:
    job = _clean_job()
    k = 1
    job.host_gap[k, :] = 150_000  # its host submits each execution late; its compute is as the others'
    p = _profile(job, tmp_path)
    r = A.findings(p).set_index("rule").loc["straggler"]
    assert r["evidence"]["core"].endswith(f"NC:{job.cores[k][2]}") and "start late" in r["title"]
    steps = len(job.neff_of_step)
    truth = span(simulate(job)) - span(simulate(job, no_host_gap={(k, s) for s in range(steps)}))
    assert r["gain_ns"] == pytest.approx(truth, rel=0.05) and r["gain_ns"] > 0


def test_imbalance_without_collectives(tmp_path) -> None:
    job = dataclasses.replace(_clean_job(), n_coll=[0] * 3)
    job.compute[:, 1, :] = 130_000
    f = A.findings(_profile(job, tmp_path))
    im = f[f["rule"] == "compute_imbalance"]
    assert len(im) == 1 and im.iloc[0]["evidence"]["ratio"] == pytest.approx(1.3, rel=1e-3)
    assert im.iloc[0]["evidence"]["core"].endswith(f"NC:{job.cores[1][2]}")
    assert "straggler" not in _rules(f)
    job.compute[:, 1, :] = 105_000  # 5%: under the 10% threshold
    assert "compute_imbalance" not in _rules(A.findings(_profile(job, tmp_path, "q")))


def test_devices_waiting_on_the_host(tmp_path) -> None:
    job = _clean_job()
    job.host_gap[:, :] = 300_000  # the host takes 3x the device's time between calls
    p = _profile(job, tmp_path)
    f = A.findings(p)
    hw = f[f["rule"] == "host_wait"]
    assert len(hw) == 1
    r = hw.iloc[0]
    n = len(job.cores)
    assert f"{n} of {n} NeuronCores" in r["title"] and r["evidence"]["share"] > 0.5
    truth = span(simulate(job)) - span(simulate(job, no_host_gap={(c, s) for c in range(n)
                                                                   for s in range(len(job.neff_of_step))}))
    assert r["gain_ns"] == pytest.approx(truth, rel=0.05)
    assert f.iloc[0]["rule"] == "host_wait" and r["severity"] == "high"
    job.host_gap[:, :] = 5_000
    assert "host_wait" not in _rules(A.findings(_profile(job, tmp_path, "q")))


def test_launch_overhead(tmp_path) -> None:
    job = _clean_job()
    job.launch_lat[:, :] = 60_000
    f = A.findings(_profile(job, tmp_path))
    la = f[f["rule"] == "launch_overhead"]
    assert len(la) == 1 and la.iloc[0]["evidence"]["median_delay_ns"] == pytest.approx(60_000, rel=0.01)
    assert "nrt_execute takes 60 µs (median" in la.iloc[0]["title"]
    assert la.iloc[0]["gain_ns"] > 0.02 * span(simulate(job))
    job.launch_lat[:, :] = 500
    assert "launch_overhead" not in _rules(A.findings(_profile(job, tmp_path, "q")))


def test_exposed_collectives(tmp_path) -> None:
    job = _clean_job()
    job.cc_dur[:, :] = 60_000
    f = A.findings(_profile(job, tmp_path))
    ex = f[f["rule"] == "exposed_collectives"]
    assert len(ex) == 1 and 0.1 <= ex.iloc[0]["evidence"]["share"] <= 0.3
    assert ex.iloc[0]["gain_ns"] > 0
    job.cc_dur[:, :] = 2_000
    assert "exposed_collectives" not in _rules(A.findings(_profile(job, tmp_path, "q")))


def test_a_hang_names_its_core_and_step(tmp_path) -> None:
    job = dataclasses.replace(_clean_job(), hang=(1, 5))
    f = A.findings(_profile(job, tmp_path))
    h = f[f["rule"] == "hang"]
    assert len(h) == 1
    assert h.iloc[0]["evidence"]["exec_id"] == 6 and h.iloc[0]["evidence"]["core"].endswith(f"NC:{job.cores[1][2]}")
    assert np.isnan(h.iloc[0]["gain_ns"]) and "never ended" in h.iloc[0]["title"]
    assert "error" not in _rules(f)


def test_the_sample() -> None:
    p = nw.sample_profile()
    f = A.findings(p)
    _check_frame(f, A.what_if(p, None, 1.0).span_ns)
    assert f.iloc[0]["rule"] == "host_wait"
    st = f[f["rule"] == "straggler"].iloc[0]
    # The Timeline's label of that core's track (what the track filter finds)
    assert st["evidence"]["core"] == "i-0a88e4da06d80cbd2/PID:2624383/neuron_rt/NC:1"
    err = f[f["rule"] == "error"]
    assert len(err) == 1 and "1003" in err.iloc[0]["title"] and "numerical error" in err.iloc[0]["title"]
    assert set(err.iloc[0]["evidence"]["names"]) == {"nrt_execute", "numerical_err"}
    assert (f["rule"] == "hang").sum() == 1


@pytest.mark.parametrize("seed", range(0, 40, 3))
def test_random_profiles_never_crash_and_stay_in_bounds(seed: int, tmp_path) -> None:
    p = random_profile(seed, tmp_path / "r")
    f = A.findings(p)
    _check_frame(f, A.what_if(p, None, 1.0).span_ns if len(p) else 0)
    job = draw(seed)
    q = write_profile(tmp_path / "s", simulate(job))
    _check_frame(A.findings(q), A.what_if(q, None, 1.0).span_ns)


def _write_job(job: Job, root, cut: str | None = None) -> nw.Job:
    """The job's events written as one part per instance (a node), `cut` short as a failed copy."""
    rows = simulate(job)
    for inst in sorted({c[0] for c in job.cores}):
        write_profile(root / "run" / inst, [r for r in rows if r["instance_id"] == inst])
    if cut:
        f = root / "run" / cut / "SystemProfileEvents.parquet"
        f.write_bytes(f.read_bytes()[: f.stat().st_size // 3])
    return nw.load_job(sorted((root / "run").iterdir()), results=root / "results")


NODES = [(f"i-{n:017x}", 100, c) for n in range(3) for c in range(3)]


def test_job_a_slow_node_and_its_last_core(tmp_path) -> None:
    job = _clean_job(on=NODES)
    job.compute[:, 6:, :] = 130_000  # every core of the third node, 30% slower; its NC1 the slowest
    job.compute[:, 7, :] = 140_000
    f = A.findings(_write_job(job, tmp_path), scheduler="sync")
    slow = f[f["rule"] == "slow_node"]
    assert len(slow) == 1 and slow.iloc[0]["part"] == NODES[6][0]
    assert slow.iloc[0]["evidence"]["ratio"] == pytest.approx(1.3, rel=1e-3) and "all its 3 cores" in slow.iloc[0]["title"]
    last = f[f["rule"] == "job_straggler"].iloc[0]
    steps = len(job.neff_of_step)
    assert last["part"] == NODES[7][0] and last["evidence"]["core"] == f"{NODES[7][0]}/PID:100/neuron_rt/NC:1"
    assert f"last at {steps} of {steps} collective steps across the job's 9 cores" in last["title"]
    job_wide = f[f["rule"].isin(["slow_node", "job_straggler"])]
    assert job_wide["gain_ns"].isna().all() and "not modelled" in last["title"]
    # That node's own straggler rule (its part alone) runs too, its gain the job's what-if of matching its compute.
    own = f[f["rule"] == "straggler"]
    assert own["part"].tolist() == [NODES[6][0]] and "what_if(job)" in own.iloc[0]["title"]
    assert f"{NODES[6][0]}/{NODES[7][0]}/PID:100/neuron_rt/NC:1 arrives last" in own.iloc[0]["title"]


def test_job_without_problems_and_with_an_unreadable_part(tmp_path) -> None:
    assert A.findings(_write_job(_clean_job(on=NODES), tmp_path / "a"), scheduler="sync").empty
    f = A.findings(_write_job(_clean_job(on=NODES), tmp_path / "b", cut=NODES[3][0]), scheduler="sync")
    assert f["rule"].tolist() == ["unread_part"] and f.iloc[0]["part"] == NODES[3][0]
    assert "could not be read" in f.iloc[0]["title"]


def test_a_kineto_job_names_its_late_rank(tmp_path) -> None:
    from neuron_widgets.sample.kineto import write_kineto

    write_kineto(tmp_path / "ranks", ranks=4, late_rank=2)
    f = A.findings(nw.load_job(tmp_path / "ranks", results=tmp_path / "results"), scheduler="sync")
    last = f[f["rule"] == "job_straggler"].iloc[0]
    assert last["part"] == "rank-2" and last["title"].startswith("rank-2 rank 2 is last at")
    assert "across the job's 4 ranks" in last["title"]
    json.dumps(f["evidence"].tolist())


def test_what_it_takes() -> None:
    with pytest.raises(TypeError, match="findings takes a Profile"):
        A.findings(42)
