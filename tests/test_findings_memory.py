"""HBM near capacity and host-device transfers while the NeuronCore is idle: each fires on a profile built to
have the problem (the right who and numbers, the gain against the simulated run) and stays silent without it."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from random_neuron import SCHEMA, _Events, random_events
from schedule_neuron import Job, simulate, span
from test_findings import _check_frame, _clean_job

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.findings_memory import (
    HBM_CAPACITY_SHARE,
    TRANSFER_IDLE_SHARE,
    device_hbm_peaks,
    device_total,
)

GIB = 2**30


def _write(directory: Path, rows: list[dict[str, Any]], hbm: list[dict[str, Any]] | None = None,
           capacity: int | None = None) -> nw.Profile:
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), directory / "SystemProfileEvents.parquet")
    if hbm is not None:
        pq.write_table(pa.Table.from_pylist(hbm), directory / "SystemProfileHbmUsage.parquet")
    if capacity is not None:
        t0 = min(r["start_ts"] for r in rows)
        pq.write_table(pa.Table.from_pylist([{"first_ts_ns": str(t0), "last_ts_ns": str(t0 + 1), "ntff_version": 4,
                                              "hbm_capacity_bytes": capacity}]),
                       directory / "SystemProfileMetadata.parquet")
    return nw.load_profile(directory, cache=False)


def _hbm(rows: list[dict[str, Any]], peaks: dict[tuple[str, int, int], float], n: int = 20) -> list[dict[str, Any]]:
    """Samples over the run per (instance, device, hbm): flat at half the peak, the peak at the middle sample."""
    t0, t1 = min(r["start_ts"] for r in rows), max(r["end_ts"] or 0 for r in rows)
    out = []
    for (inst, dev, h), peak in peaks.items():
        for i, t in enumerate(np.linspace(t0, t1, n).astype(np.int64).tolist()):
            total = int(peak if i == n // 2 else peak / 2)
            out.append({"timestamp": t, "total_bytes": total, "weights_bytes": total * 3 // 4,
                        "tensors_bytes": total - total * 3 // 4, "dram_spill_bytes": 0, "device_idx": dev,
                        "hbm_idx": h, "instance_id": inst})
    return out


def _hbm_findings(f: Any) -> Any:
    return f[f["rule"] == "hbm_capacity"]


def test_hbm_near_capacity_names_the_fullest_device(tmp_path) -> None:
    job = _clean_job()
    rows = simulate(job)
    inst = job.cores[0][0]
    peaks = {(inst, 0, 0): 20 * GIB, (inst, 0, 1): 21 * GIB, (inst, 1, 0): 45 * GIB, (inst, 1, 1): 44 * GIB}
    p = _write(tmp_path / "full", rows, _hbm(rows, peaks), capacity=96 * GIB)
    f = A.findings(p)
    h = _hbm_findings(f)
    assert len(h) == 1
    r = h.iloc[0]
    # Device 1's two HBMs at their peak together: 89 GiB of 96 (93%), read as the device's capacity.
    assert r["evidence"]["where"] == f"{inst}/HBM usage/Device:1" and r["evidence"]["capacity_per"] == "device"
    assert r["evidence"]["peak_bytes"] == 89 * GIB and r["evidence"]["share"] == pytest.approx(89 / 96)
    assert f"{inst}/HBM usage/Device:1 uses 89.0 GiB of its 96.0 GiB" in r["title"] and "93%" in r["title"]
    assert "weights 66.8 GiB" in r["title"] and "no time gain" in r["title"]
    assert np.isnan(r["gain_ns"]) and r["severity"] == "medium"
    mid = sorted({s["timestamp"] for s in _hbm(rows, peaks)})[10]
    assert r["start_ts"] == mid and r["end_ts"] == mid
    _check_frame(f, span(rows))


def test_hbm_capacity_per_hbm_when_a_device_uses_more_than_it(tmp_path) -> None:
    job = _clean_job()
    rows = simulate(job)
    inst = job.cores[0][0]
    peaks = {(inst, 0, h): v * GIB for h, v in enumerate((10, 23, 12, 11))}
    r = _hbm_findings(A.findings(_write(tmp_path / "h", rows, _hbm(rows, peaks), capacity=24 * GIB))).iloc[0]
    assert r["evidence"]["capacity_per"] == "HBM" and r["evidence"]["where"] == f"{inst}/HBM usage/Device:0/HBM:1"
    assert r["evidence"]["share"] == pytest.approx(23 / 24)


@pytest.mark.parametrize("case", ["under", "no_capacity", "no_usage"])
def test_hbm_with_headroom_or_unknown_capacity_is_silent(case: str, tmp_path) -> None:
    job = _clean_job()
    rows = simulate(job)
    inst = job.cores[0][0]
    under = HBM_CAPACITY_SHARE * 96 * GIB - GIB  # just under the bar, summed over the device's HBMs
    peaks = {(inst, 0, 0): under / 2, (inst, 0, 1): under / 2}
    if case == "no_capacity":
        peaks = {(inst, 0, 0): 95 * GIB}
    p = _write(tmp_path / case, rows, None if case == "no_usage" else _hbm(rows, peaks),
               capacity=None if case == "no_capacity" else 96 * GIB)
    f = A.findings(p)
    assert _hbm_findings(f).empty and f.empty, f["title"].tolist()


# ---- transfers while the core is idle --------------------------------------------------------------------

def _with_transfers(job: Job, rows: list[dict[str, Any]], length: np.ndarray, where: str = "before_call",
                    size: int = 2**20, thread: int | None = None) -> list[dict[str, Any]]:
    """The job's events plus a dmem_buf_copyin on each call's runtime thread: `length[c, s]` ns right before
    core c's call of step s (in its host gap), or inside its execution (`where="in_execution"`)."""
    ev = _Events()
    ev.rows = [dict(r) for r in rows]
    ev.flow = 10**6
    core_of = {c: k for k, c in enumerate(job.cores)}
    calls: dict[int, list[dict[str, Any]]] = {}
    runs: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        k = core_of.get((r["instance_id"], r["process_id"], r["nc_idx"]))
        if r["name"] == "nrt_execute":
            calls.setdefault(k, []).append(r)
        elif r["name"] == "nc_exec_running":
            runs.setdefault(k, []).append(r)
    for k, mine in calls.items():
        for s, (call, run) in enumerate(zip(mine, runs[k], strict=True)):
            d = int(length[k, s])
            if d <= 0:
                continue
            a = call["start_ts"] - d if where == "before_call" else run["start_ts"] + 10
            ev.add("dmem_buf_copyin", "neuron_rt", job.cores[k], a, a + d, {"size": size},
                   thread=call["thread_id"] if thread is None else thread)
    return ev.rows


def _transfer_job() -> tuple[Job, np.ndarray, int]:
    job = _clean_job()
    n_c, n_s = len(job.cores), len(job.neff_of_step)
    length = np.full((n_c, n_s), 60_000, np.int64)
    k = 2
    length[k, :] = 90_000  # the worst core
    # The host gap before each call holds its transfer, and 2 µs of other host work.
    return dataclasses.replace(job, host_gap=job.host_gap + length), length, k


def test_transfers_while_the_core_is_idle_with_the_simulated_gain(tmp_path) -> None:
    job, length, k = _transfer_job()
    rows = _with_transfers(job, simulate(job), length)
    p = _write(tmp_path / "t", rows)
    f = A.findings(p)
    got = f[f["rule"] == "idle_transfers"]
    assert len(got) == 1
    r = got.iloc[0]
    ev = r["evidence"]
    assert ev["idle_transfer_ns"] == int(length.sum()) and ev["transfers"] == length.size
    assert ev["bytes"] == length.size * 2**20 and f"{length.size} transfers" in r["title"]
    inst, _pid, nc = job.cores[k]
    assert ev["worst_core"].endswith(f"NC:{nc}") and str(inst) in ev["worst_core"]
    assert ev["worst_core_ns"] == int(length[k].sum())
    assert r["title"].startswith("dmem_buf_copyin run while their NeuronCore executes nothing")
    # The fix the title names, simulated: each host gap without its transfer.
    truth = span(simulate(job)) - span(simulate(dataclasses.replace(job, host_gap=job.host_gap - length)))
    assert truth > 0 and r["gain_ns"] == pytest.approx(truth, rel=0.02) and "would save" in r["title"]
    _check_frame(f, span(rows))


def test_transfers_on_a_thread_the_model_lacks_predict_nothing(tmp_path) -> None:
    job, length, _ = _transfer_job()
    p = _write(tmp_path / "other", _with_transfers(job, simulate(job), length, thread=4242))
    f = A.findings(p)
    r = f[f["rule"] == "idle_transfers"].iloc[0]
    assert np.isnan(r["gain_ns"]) and r["evidence"]["hidden_in_model_ns"] == 0
    assert "would save is not known" in r["title"] and r["evidence"]["idle_transfer_ns"] == int(length.sum())
    _check_frame(f, span(simulate(job)))


def test_transfers_under_executions_or_small_are_silent(tmp_path) -> None:
    job = _clean_job()
    n_c, n_s = len(job.cores), len(job.neff_of_step)
    inside = _with_transfers(job, simulate(job), np.full((n_c, n_s), 60_000, np.int64), where="in_execution")
    assert "idle_transfers" not in set(A.findings(_write(tmp_path / "in", inside))["rule"])
    # Idle, but a few per cent of the cores' time: under the bar.
    small = np.full((n_c, n_s), 6_000, np.int64)
    job2 = dataclasses.replace(job, host_gap=job.host_gap + small)
    rows = _with_transfers(job2, simulate(job2), small)
    p = _write(tmp_path / "small", rows)
    t = A.temporal_breakdown(p)
    assert small.sum() / t["span_ns"].sum() < TRANSFER_IDLE_SHARE
    assert "idle_transfers" not in set(A.findings(p)["rule"])


def _reference_idle_transfer_ns(rows: list[dict[str, Any]]) -> int:
    """Per core, the time some transfer runs while no execution does, counted nanosecond-range by range."""
    total = 0
    cores = {(r["instance_id"], r["process_id"], r["nc_idx"]) for r in rows if r["nc_idx"] is not None}
    for c in cores:
        mine = [r for r in rows if (r["instance_id"], r["process_id"], r["nc_idx"]) == c]
        moves = [(r["start_ts"], r["end_ts"]) for r in mine if r["name"] == "dmem_buf_copyout" and r["end_ts"]]
        end_all = max([r["end_ts"] or r["start_ts"] for r in rows])
        runs = [(r["start_ts"], r["end_ts"] if r["end_ts"] is not None else end_all) for r in mine
                if r["name"] == "nc_exec_running"]
        points = sorted({t for iv in moves + runs for t in iv})
        for a, b in itertools.pairwise(points):  # each piece lies wholly inside an interval or not
            if any(s <= a and b <= e for s, e in moves) and not any(s <= a and b <= e for s, e in runs):
                total += b - a
    return total


@pytest.mark.parametrize("seed", range(12))
def test_random_profiles_with_transfers_match_the_reference(seed: int, tmp_path) -> None:
    rows = random_events(seed)
    rng = np.random.default_rng(seed + 77)
    ev = _Events()
    ev.rows = [dict(r) for r in rows]
    t0, t1 = min(r["start_ts"] for r in rows), max(r["end_ts"] or r["start_ts"] for r in rows)
    cores = sorted({(r["instance_id"], r["process_id"], r["nc_idx"]) for r in rows if r["nc_idx"] is not None})
    for _ in range(int(rng.integers(0, 40))):
        c = cores[int(rng.integers(0, len(cores)))]
        a = int(rng.integers(t0, t1 + 1))
        ev.add("dmem_buf_copyout", "neuron_rt", c, a, a + int(rng.integers(1, max((t1 - t0) // 5, 2))),
               {"size": int(rng.integers(1, 2**22))}, thread=1000 + c[2])
    p = _write(tmp_path / "r", ev.rows)
    f = A.findings(p)
    got = f[f["rule"] == "idle_transfers"]
    want = _reference_idle_transfer_ns(ev.rows)
    t = A.temporal_breakdown(p)
    fires = len(t) and want / t["span_ns"].sum() >= TRANSFER_IDLE_SHARE
    assert len(got) == (1 if fires else 0)
    if fires:
        assert got.iloc[0]["evidence"]["idle_transfer_ns"] == want
    wi = A.what_if(p, None, 1.0)
    _check_frame(f, wi.span_ns)
    json.dumps(f["evidence"].tolist())


def _peaks_reference(hbm: Any) -> Any:
    """The slow, plainly right device peaks: per device a pivot of its HBMs' last samples at each time, filled
    forward and summed; per HBM its largest sample (the first such row)."""
    cols = ["instance_id", "device_idx", "hbm_idx", "peak_bytes", "peak_ts", "first_ts", "last_ts", "row"]
    df = hbm.assign(instance_id=hbm["instance_id"].astype(str),
                    device_idx=pd.to_numeric(hbm["device_idx"], errors="coerce").fillna(-1).astype(np.int64),
                    hbm_idx=pd.to_numeric(hbm["hbm_idx"], errors="coerce").fillna(-1).astype(np.int64),
                    total_bytes=pd.to_numeric(hbm["total_bytes"], errors="coerce"))
    df = df[df["total_bytes"].notna()].assign(_row=lambda d: d.index)
    out = []
    for (inst, dev), d in df.groupby(["instance_id", "device_idx"], sort=True):
        total = device_total(d)
        span = {"first_ts": int(total.index.min()), "last_ts": int(total.index.max())}
        out.append({"instance_id": inst, "device_idx": int(dev), "hbm_idx": -1, "peak_bytes": float(total.max()),
                    "peak_ts": int(total.idxmax()), **span, "row": None})
        for h, dh in d.groupby("hbm_idx", sort=True):
            i = dh["total_bytes"].idxmax()
            out.append({"instance_id": inst, "device_idx": int(dev), "hbm_idx": int(h),
                        "peak_bytes": float(dh.loc[i, "total_bytes"]), "peak_ts": int(dh.loc[i, "timestamp"]), **span,
                        "row": dh.loc[i, "_row"]})
    return pd.DataFrame(out, columns=cols)


@pytest.mark.parametrize("seed", range(0, 300, 7))
def test_device_peaks_against_a_pivot_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    # Samples of several devices' HBMs at shared and unshared times, repeated times, missing totals, any row order.
    df = pd.DataFrame({"timestamp": 1_772_323_206_570_000_000 + rng.integers(0, 12, n) * 10,
                       "total_bytes": rng.integers(0, 100, n).astype(float), "device_idx": rng.integers(0, 3, n),
                       "hbm_idx": rng.integers(0, 3, n), "instance_id": rng.choice(["i-b", "i-a"], n)})
    df.loc[rng.random(n) < .1, "total_bytes"] = np.nan
    df.index = rng.permutation(np.arange(100, 100 + n))
    pd.testing.assert_frame_equal(device_hbm_peaks(df), _peaks_reference(df), check_dtype=False)


def test_device_peaks_of_the_sample_against_the_reference() -> None:
    hbm = nw.sample_profile().hbm_usage
    pd.testing.assert_frame_equal(device_hbm_peaks(hbm), _peaks_reference(hbm), check_dtype=False)
