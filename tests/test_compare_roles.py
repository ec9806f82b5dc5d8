"""Did the fix work, across runs on other machines: findings matched on the worker's role (not its instance or process
id), their evidence compared as well as their gain; and the matching against a slow reference on random findings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from random_neuron import write_profile
from schedule_neuron import simulate
from test_findings import _clean_job

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.compare_findings import EVIDENCE_SHARE, FINDING_COLUMNS, Roles, match_findings
from neuron_widgets.analysis.findings_rows import COLUMNS


def _renamed(rows: list[dict[str, Any]], inst: dict[str, str], pid: dict[int, int]) -> list[dict[str, Any]]:
    return [{**r, "instance_id": inst.get(r["instance_id"], r["instance_id"]),
             "process_id": pid.get(r["process_id"], r["process_id"])} for r in rows]


def _with_gid(rows: list[dict[str, Any]], cores: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    gid = {c: i for i, c in enumerate(cores)}
    return [{**r, "worker_gid": gid.get((r["instance_id"], r["process_id"], r["nc_idx"]))
             if r["trace_event_source"] == "neuron_hw" else None} for r in rows]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("roles")
    job = _clean_job()
    k = 2
    job.compute[:, k, :] = 160_000
    slow, fixed = simulate(job), simulate(job, compute_scale={k: 100 / 160})
    insts = sorted({c[0] for c in job.cores})
    # Another run of the same program: other instances (in the same order) and other pids.
    same_order = {i: f"i-0b{n:015x}" for n, i in enumerate(insts)}
    pids = {100: 7100, 101: 7101}
    return {"job": job, "k": k, "before": write_profile(tmp / "before", slow),
            "again": write_profile(tmp / "again", _renamed(slow, same_order, pids)),
            "fixed_elsewhere": write_profile(tmp / "fixed", _renamed(fixed, same_order, pids)),
            "gid_before": write_profile(tmp / "gid-b", _with_gid(slow, job.cores)),
            # With worker ids, instances may come in any order: their ids sort the other way round here.
            "gid_again": write_profile(tmp / "gid-a", _renamed(_with_gid(slow, job.cores),
                                                               {i: f"i-0{9 - n:016x}" for n, i in enumerate(insts)},
                                                               {100: 9101, 101: 9100}))}


def test_the_same_run_on_other_instances_and_pids_has_every_finding_the_same(runs) -> None:
    c = A.compare(runs["before"], runs["again"], by="step")
    f = c.findings
    assert list(f.columns) == FINDING_COLUMNS
    assert len(f) >= 1 and (f["status"] == "same").all(), f[["status", "rule", "who", "who_after"]]
    st = f[f["rule"] == "straggler"].iloc[0]
    inst, pid, nc = runs["job"].cores[runs["k"]]
    assert st["who"] == f"{inst}/PID:{pid}/neuron_rt/NC:{nc}"
    assert st["who_after"] == f"i-0b{int(inst[2:], 16):015x}/PID:{pid + 7000}/neuron_rt/NC:{nc}"
    # The key that matched: the core's node, process and NeuronCore in order, the same in both runs.
    assert st["matched_by"] == "position"
    assert st["key"] == f"node {sorted({c[0] for c in runs['job'].cores}).index(inst)} process {pid - 100} NC:{nc}"
    assert (f.loc[f["who"].isna(), "matched_by"] == "rule").all()
    assert "No finding is gone" in c.headline and "Nothing new" in c.headline


def test_a_fix_measured_on_other_instances_is_gone_not_gone_and_new(runs) -> None:
    c = A.compare(runs["before"], runs["fixed_elsewhere"], by="step")
    assert list(c.findings.loc[c.findings["status"] == "gone", "rule"]) == ["straggler"]
    assert not (c.findings["status"] == "new").any()


def test_worker_ids_match_whatever_order_the_instances_sort_in(runs) -> None:
    c = A.compare(runs["gid_before"], runs["gid_again"], by="step")
    f = c.findings
    assert (f["status"] == "same").all(), f[["status", "rule", "who", "who_after", "key"]]
    st = f[f["rule"] == "straggler"].iloc[0]
    assert st["matched_by"] == "worker_gid" and st["key"] == f"worker {runs['k']}"
    assert st["who"] != st["who_after"]


def test_jobs_on_other_instances_match_by_part_order(tmp_path) -> None:
    nodes = [(f"i-{n:017x}", 100, c) for n in range(3) for c in range(2)]
    job = _clean_job(on=nodes)
    job.compute[:, 3, :] = 150_000  # node 1's NC1: last at every step
    rows = simulate(job)

    def write(root, rename: dict[str, str]) -> nw.Job:
        for n, inst in enumerate(sorted({c[0] for c in nodes})):
            write_profile(root / "run" / f"node-{n}", _renamed([r for r in rows if r["instance_id"] == inst],
                                                               rename, {100: 100 + 5 * n}))
        return nw.load_job(sorted((root / "run").iterdir()), results=root / "results")

    before = write(tmp_path / "b", {})
    after = write(tmp_path / "a", {f"i-{n:017x}": f"i-0c{2 - n:015x}" for n in range(3)})
    c = A.compare(before, after, by="step", scheduler="sync")
    f = c.findings
    assert (f["status"] == "same").all(), f[["status", "rule", "part", "who", "who_after", "key"]]
    last = f[f["rule"] == "job_straggler"].iloc[0]
    assert last["part"] == "node-1" and last["key"] == "node 1 process 0 NC:1" and last["matched_by"] == "position"


# ---- evidence -----------------------------------------------------------------------------------------------

def _finding(rule: str, gain: float, evidence: dict[str, Any], part: Any = None, severity: str = "medium") -> dict:
    return {"rule": rule, "severity": severity, "title": f"{rule} {evidence}", "gain_ns": gain, "start_ts": 1,
            "end_ts": 2, "part": part, "evidence": evidence, "advice": ""}


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


def test_a_finding_without_gain_whose_evidence_grew_is_changed() -> None:
    before = _frame([_finding("device_sync", np.nan, {"wait_ns": 1_000_000, "calls": 40, "share": 0.06}),
                     _finding("fusion", np.nan, {"runs": 200, "mean_ns": 5_000})])
    after = _frame([_finding("device_sync", np.nan, {"wait_ns": 6_000_000, "calls": 40, "share": 0.36}),
                    _finding("fusion", np.nan, {"runs": 220, "mean_ns": 5_500})])  # moved, under a quarter
    t = match_findings(before, after, 0)
    sync = t[t["rule"] == "device_sync"].iloc[0]
    assert sync["status"] == "changed" and sync["matched_by"] == "rule"
    assert sync["figures_changed"] == {"share": [0.06, 0.36], "wait_ns": [1e6, 6e6]}
    assert sync["evidence_before"]["wait_ns"] == 1_000_000 and sync["evidence_after"]["wait_ns"] == 6_000_000
    assert t[t["rule"] == "fusion"].iloc[0]["status"] == "same"
    # Ids are not figures: an error's other event ids change nothing.
    err = [_finding("error", np.nan, {"code": "1003", "id": 5, "exec_id": 3, "count": 1})]
    again = [_finding("error", np.nan, {"code": "1003", "id": 9000, "exec_id": 70, "count": 1})]
    assert match_findings(_frame(err), _frame(again), 0)["status"].tolist() == ["same"]


# ---- the matching against a slow reference on random findings -----------------------------------------------

RULES = ("straggler", "host_wait", "error", "device_sync")


def _random_findings(rng: np.random.Generator, run: int) -> tuple[pd.DataFrame, Roles]:
    """Findings naming cores by labels with this run's ids; the roles map each label to its core's role."""
    roles = Roles(matched_by="position")
    for c in range(4):
        roles.by_label[f"run{run}-core{c}"] = f"node 0 process 0 NC:{c}"
    rows = []
    for _ in range(int(rng.integers(0, 9))):
        rule = str(rng.choice(RULES))
        ev: dict[str, Any] = {"wait_ns": float(rng.choice([100.0, 110.0, 200.0, 1000.0]))}
        if rule == "straggler":
            ev["core"] = f"run{run}-core{int(rng.integers(0, 4))}"
        elif rule == "error":
            ev["code"] = str(rng.choice(["1003", "5"]))
        gain = float(rng.choice([np.nan, 100.0, 105.0, 150.0]))
        rows.append(_finding(rule, gain, ev, severity=str(rng.choice(["high", "low"]))))
    return _frame(rows), roles


def _reference(before: pd.DataFrame, after: pd.DataFrame, rb: Roles, ra: Roles) -> list[tuple]:
    """(status, rule, key) per finding, one by one: the k-th finding of a rule and key in one run pairs with the
    k-th in the other; a pair is changed when its gain moved by a tenth (or appeared), its severity moved, or a
    figure moved by a quarter."""
    def key(r: dict, roles: Roles) -> str:
        ev = r["evidence"]
        if "core" in ev:
            return roles.by_label[ev["core"]]
        return ev.get("code", "")

    def listed(df: pd.DataFrame, roles: Roles) -> dict[tuple, list[dict]]:
        out: dict[tuple, list[dict]] = {}
        for r in df.to_dict("records"):
            out.setdefault((r["rule"], key(r, roles)), []).append(r)
        return out

    lb, la = listed(before, rb), listed(after, ra)
    got = []
    for k in set(lb) | set(la):
        b, a = lb.get(k, []), la.get(k, [])
        for i in range(max(len(b), len(a))):
            if i >= len(a):
                got.append(("gone", *k))
                continue
            if i >= len(b):
                got.append(("new", *k))
                continue
            x, y = b[i], a[i]
            gx, gy = x["gain_ns"], y["gain_ns"]
            moved = (np.isnan(gx) != np.isnan(gy)) or (not np.isnan(gx) and abs(gx - gy) > 0.1 * max(abs(gx), abs(gy)))
            fx, fy = x["evidence"]["wait_ns"], y["evidence"]["wait_ns"]
            grew = abs(fx - fy) > EVIDENCE_SHARE * max(fx, fy)
            got.append(("changed" if moved or grew or x["severity"] != y["severity"] else "same", *k))
    return sorted(got)


@pytest.mark.parametrize("seed", range(40))
def test_matching_agrees_with_the_reference_on_random_findings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    (fb, rb), (fa, ra) = _random_findings(rng, 0), _random_findings(rng, 1)
    t = match_findings(fb, fa, 0, rb, ra)
    assert sorted(zip(t["status"], t["rule"], t["key"], strict=True)) == _reference(fb, fa, rb, ra)
