"""Did the fix work, its findings: two runs' findings matched on what two runs of one program share, their gains and
evidence compared.

Instance ids and process ids change from run to run, so a finding is matched on its rule and its worker's role: the
core's global worker id (`worker_gid`) where the trace carries one for every core, else its place: its node (a job's
part in the job's order, else the instance among the run's instances, by their smallest worker id, then by id),
its process among the node's processes (by pid: launched in order) and its `nc_idx`; a Kineto rank is a rank. A
finding naming no worker matches on its rule and its node; one naming an error code or an engine on that text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.worker_labels import core_label, rank_text

FINDING_COLUMNS = ["status", "rule", "part", "who", "who_after", "key", "matched_by", "severity_before",
                   "severity_after", "predicted_gain_ns", "gain_after_ns", "run_saving_ns", "figures_changed", "note",
                   "title_before", "title_after", "evidence_before", "evidence_after", "start_ts", "end_ts"]
STATUS_ORDER = ("gone", "changed", "new", "same")
CHANGED_SHARE = 0.10    # a finding in both runs whose gain moved by a tenth (or whose severity moved) changed ...
EVIDENCE_SHARE = 0.25   # ... or one of whose figures moved by a quarter (a timing's run-to-run noise stays under it)
# Evidence that names rather than measures: never compared as figures.
NOT_FIGURES = frozenset({"id", "exec_id", "process_id", "nc_idx", "rank", "worker_gid", "code"})


@dataclass
class Roles:
    """One run's workers: the label a finding names each by, and its role (the same in another run of the program)."""

    by_label: dict[str, str] = field(default_factory=dict)
    node_of_part: dict[str, str] = field(default_factory=dict)
    matched_by: str = "position"


def roles_of(x: Any, temporal: pd.DataFrame, part_order: list[str] | None = None) -> Roles:
    """`temporal`: x's temporal breakdown (a job's with `part`), a row per core; `part_order`: a job's parts in order."""
    out = Roles(node_of_part={str(p): f"node {i}" for i, p in enumerate(part_order or [])})
    if temporal is None or temporal.empty or not {"instance_id", "process_id", "nc_idx"} <= set(temporal.columns):
        return out
    t = temporal.reset_index(drop=True)
    names = x.track_names if isinstance(x, Profile) else None
    part = t["part"].astype(str) if "part" in t.columns else pd.Series([""] * len(t))
    gid = _floats(t["worker_gid"]) if "worker_gid" in t.columns else pd.Series(np.nan, t.index)
    inst = t["instance_id"].astype(str)
    pid, nc = _floats(t["process_id"]), _floats(t["nc_idx"])
    if gid.notna().all() and not gid.duplicated().any():
        roles = [f"worker {int(g)}" for g in gid]
        out.matched_by = "worker_gid"
    else:
        # Nodes: the part's place, then the instance's (its smallest worker id first, else its id).
        first_gid = gid.groupby([part, inst]).transform("min").fillna(np.inf)
        part_rank = part.map({p: i for i, p in enumerate(part_order or [])}).fillna(-1)
        nodes = pd.DataFrame({"p": part_rank, "g": first_gid, "i": inst}).drop_duplicates()
        nodes = nodes.sort_values(["p", "g", "i"], kind="stable").reset_index(drop=True)
        node_of = {(r.p, r.i): k for k, r in enumerate(nodes.itertuples())}
        procs = pd.DataFrame({"p": part_rank, "i": inst, "pid": pid}).drop_duplicates()
        procs = procs.sort_values(["p", "i", "pid"], kind="stable")
        proc_of = {(r.p, r.i, r.pid): k for k, r in
                   zip(procs.groupby(["p", "i"], sort=False).cumcount(), procs.itertuples(), strict=True)}
        roles = [f"node {node_of[(pr, i)]} process {proc_of[(pr, i, pd_)]} NC:{'?' if pd.isna(n) else int(n)}"
                 for pr, i, pd_, n in zip(part_rank, inst, pid, nc, strict=True)]
    for i, role in enumerate(roles):
        label = core_label(t.at[i, "instance_id"], t.at[i, "process_id"], t.at[i, "nc_idx"], names)
        out.by_label.setdefault(label, role)
    return out


def _floats(s: pd.Series) -> pd.Series:
    """Ids as floats, NaN where missing (nullable integer columns refuse NaN and inf)."""
    return pd.Series(pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan), index=s.index)


def subject(rule: str, evidence: Any) -> str | None:
    """Who a finding is about, when its rule can name several (a core, an error code, an engine)."""
    ev = evidence if isinstance(evidence, dict) else {}
    for k in ("core", "code", "engine"):
        if ev.get(k) is not None:
            return str(ev[k])
    if rule == "straggler" and ev.get("rank") is not None:
        return str(ev["gpu"]) if ev.get("gpu") is not None else rank_text(ev["rank"])
    return None


def rank_key(rule: str, evidence: Any) -> str | None:
    """A Kineto rank's run-independent key ('rank 3'): its GPU's label names the host, which a rerun may change."""
    ev = evidence if isinstance(evidence, dict) else {}
    return rank_text(ev["rank"]) if rule == "straggler" and ev.get("rank") is not None else None


def _in_part(who: str | None, part: Any) -> str | None:
    """A job finding's core as its part's Timeline names it: the JobTimeline's label less its `part/` prefix."""
    if who is not None and isinstance(part, str) and part and who.startswith(part + "/"):
        return who[len(part) + 1:]
    return who


def keyed(f: pd.DataFrame, roles: Roles) -> pd.DataFrame:
    """Each finding's `who`, its run-independent `key` and what kind of key it is (`matched_by`)."""
    who, key, by, node = [], [], [], []
    for rule, ev, part in zip(f["rule"], f["evidence"], f["part"], strict=True):
        w = subject(rule, ev)
        part_node = roles.node_of_part.get(str(part), str(part)) if isinstance(part, str) else ""
        rk = rank_key(rule, ev)
        bare = _in_part(w, part)
        if bare is not None and bare in roles.by_label:
            k, b, part_node = roles.by_label[bare], roles.matched_by, ""  # the role says the node
        elif rk is not None:
            k, b = rk, "rank"
        elif w is not None:
            k, b = w, "who"
        else:
            k, b = "", "rule"
        who.append(w)
        key.append(k)
        by.append(b)
        node.append(part_node)
    f = f.assign(who=pd.Series(who, index=f.index, dtype=object), key=key, matched_by=by, _node=node)
    return f.assign(_n=f.groupby(["rule", "_node", "key"], sort=False).cumcount())


def figures(evidence: Any) -> dict[str, float]:
    """The evidence's measured figures (numbers, not ids, flags or lists)."""
    ev = evidence if isinstance(evidence, dict) else {}
    return {k: float(v) for k, v in ev.items() if isinstance(v, int | float) and not isinstance(v, bool)
            and k not in NOT_FIGURES and not k.endswith("_id")}


def figures_changed(before: Any, after: Any) -> dict[str, list[float]]:
    """The figures in both whose value moved by EVIDENCE_SHARE of the larger or more: {name: [before, after]}."""
    b, a = figures(before), figures(after)
    out = {}
    for k in b.keys() & a.keys():
        x, y = b[k], a[k]
        if np.isfinite(x) and np.isfinite(y) and abs(y - x) > EVIDENCE_SHARE * max(abs(x), abs(y)):
            out[k] = [x, y]
    return dict(sorted(out.items()))


def match_findings(before: pd.DataFrame, after: pd.DataFrame, measured: int, roles_before: Roles | None = None,
                   roles_after: Roles | None = None, note: Callable[[str, str, str, str], str] | None = None
                   ) -> pd.DataFrame:
    """Findings matched by rule, node and key: gone (before only), new (after only), changed or same.

    `note(status, rule, node, key)`: a row's note (compare_bars: a new finding's figures against its bar in the
    before-run, a gone one's in the after-run)."""
    key = ["rule", "_node", "key", "_n"]
    m = keyed(before, roles_before or Roles()).merge(keyed(after, roles_after or Roles()), on=key, how="outer",
                                                      suffixes=("_b", "_a"), indicator=True)
    if m.empty:
        return pd.DataFrame(columns=FINDING_COLUMNS)
    both = (m["_merge"] == "both").to_numpy()
    gb, ga = m["gain_ns_b"].astype(float), m["gain_ns_a"].astype(float)
    moved = ((gb - ga).abs() > CHANGED_SHARE * np.fmax(gb.abs(), ga.abs())) | (gb.isna() != ga.isna())
    changed_figs = [figures_changed(b, a) if ok else {} for b, a, ok in zip(m["evidence_b"], m["evidence_a"], both,
                                                                           strict=True)]
    grew = np.array([bool(c) for c in changed_figs])
    status = np.where(m["_merge"] == "left_only", "gone", np.where(m["_merge"] == "right_only", "new",
                      np.where(moved | (m["severity_b"] != m["severity_a"]) | grew, "changed", "same")))
    # The run's saving is no finding's own: it goes beside a gone finding's prediction only (a changed one's
    # would read as that finding's saving).
    gone = status == "gone"

    def either(b: str, a: str) -> pd.Series:
        return m[b].where(m[b].notna(), m[a]).astype(object).where(lambda v: v.notna(), None)

    out = pd.DataFrame({
        "status": status, "rule": m["rule"], "part": either("part_b", "part_a"),
        "who": either("who_b", "who_a"), "who_after": m["who_a"].astype(object).where(m["who_a"].notna(), None),
        "key": m["key"], "matched_by": np.where(both, m["matched_by_b"].astype(object), None),
        "severity_before": m["severity_b"], "severity_after": m["severity_a"],
        "predicted_gain_ns": gb, "gain_after_ns": ga,
        "run_saving_ns": np.where(gone, float(measured), np.nan),
        "figures_changed": changed_figs,
        "note": [note(str(s), str(r), str(n), str(k)) if note is not None else ""
                 for s, r, n, k in zip(status, m["rule"], m["_node"], m["key"], strict=True)],
        "title_before": m["title_b"], "title_after": m["title_a"],
        "evidence_before": m["evidence_b"], "evidence_after": m["evidence_a"],
        "start_ts": m["start_ts_a"].where(m["start_ts_a"].notna(), m["start_ts_b"]).astype("Int64"),
        "end_ts": m["end_ts_a"].where(m["end_ts_a"].notna(), m["end_ts_b"]).astype("Int64")})
    rank = out["status"].map({s: i for i, s in enumerate(STATUS_ORDER)}).to_numpy()
    gain = np.fmax(out["predicted_gain_ns"].to_numpy(float), out["gain_after_ns"].to_numpy(float))
    order = np.lexsort((out["rule"].to_numpy(str), -np.nan_to_num(gain, nan=-1.0), rank))
    return out.iloc[order].reset_index(drop=True)[FINDING_COLUMNS]
