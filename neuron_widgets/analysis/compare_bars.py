"""Did the fix work, against the rules' bars: what a new finding measured in the before-run (under its bar, or over
it but not reported, and why), what a gone one measures in the after-run, and whether a share moved with its own
time or with the run's length.

Each rule keeps what it measured, fired or not (`findings(x).attrs["measures"]`, made by
`findings_rows.measure`); they are keyed as the findings are (compare_findings: the rule, the node, the worker's
role), so a finding of one run is set beside its rule's figures in the other. A job's part rules keep theirs in
each part's stored result; its own rules (a core last across the job, a slow node) are measured here from
`across`, on the bars findings_job uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.timefmt import duration
from ..model.worker_labels import core_label
from .across import run_parts
from .compare_findings import Roles, keyed
from .findings_job import JOB_LAST_SHARE, SLOW_NODE_RATIO
from .findings_parts import TASK
from .findings_rows import check, plain

# Rules with no bar: any one is a finding (an error, a hang, an event still open, a part that could not be read).
NO_BAR = frozenset({"error", "hang", "incomplete", "unread_part"})
SAME_AMOUNT = 0.10  # a time within a tenth of the other run's has not grown (nor shrunk)
# A job's parts whose stored findings predate the measures (kept by an older version): their rules' figures unknown.
STALE = "*stale*"

Key = tuple[str, str, str]


def keyed_measures(measures: list[dict[str, Any]], roles: Roles) -> dict[Key, dict[str, Any]]:
    """A run's measures by (rule, node, key), as its findings are keyed (the first where several share one)."""
    out: dict[Key, dict[str, Any]] = {}
    stale = [m for m in measures if m.get("rule") == STALE]
    if stale:
        out[(STALE, "", "")] = stale[0]
    measures = [m for m in measures if m.get("rule") != STALE]
    if not measures:
        return out
    df = pd.DataFrame({"rule": [str(m.get("rule")) for m in measures],
                       "evidence": [m.get("evidence") or {} for m in measures],
                       "part": pd.Series([m.get("part") for m in measures], dtype=object)})
    k = keyed(df, roles)
    for m, rule, node, key in zip(measures, k["rule"], k["_node"], k["key"], strict=True):
        out.setdefault((str(rule), str(node), str(key)), m)
    return out


def run_measures(x: Any, found: pd.DataFrame, client: Any = None, job_kw: dict[str, Any] | None = None,
                 notes: list[str] | None = None, tables: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """What each rule measured on a run: a Profile's from its findings; a Job's from each part's stored findings
    (the part task's result, read again from the job's results store) and its own rules' from `tables` (its
    `across` tables as findings(job) reads them)."""
    if isinstance(x, Profile):
        return list(found.attrs.get("measures", []))
    kw = dict(job_kw or {})
    out: list[dict[str, Any]] = []
    old: list[str] = []
    try:
        for g in run_parts(x, [TASK], client, **{k: kw[k] for k in ("scheduler", "num_workers", "cache") if k in kw}):
            if g.get("error") is None:
                kept = g["tables"][TASK].attrs
                if "measures" not in kept:
                    old.append(str(g["part"]))
                out += [{**m, "part": str(g["part"])} for m in kept.get("measures", [])]
        if old:
            out.append({"rule": STALE, "evidence": {}, "part": None, "parts": old})
        if tables is not None:
            out += job_straggler_measures(tables["stragglers"]) + slow_node_measures(tables["temporal_breakdown"])
    except Exception as exc:  # the findings are still compared; the notes say the bars were not read
        if notes is not None:
            notes.append(f"the rules' figures could not be read ({type(exc).__name__}: {exc}): new and gone findings "
                         "are not set against their bars")
    return out


def job_straggler_measures(st: pd.DataFrame) -> list[dict[str, Any]]:
    """Each worker's figures on findings_job's `job_straggler` bars (last in half the steps, late on average)."""
    if st is None or st.empty:
        return []
    out = []
    kineto = "rank" in st.columns
    for i, r in enumerate(st.itertuples(index=False)):
        who = f"rank {r.rank}" if kineto else core_label(r.instance_id, r.process_id, r.nc_idx)
        steps = float(r.steps)
        checks = [check("share of the job's collective steps it is last at", r.times_last / steps if steps else 0,
                        JOB_LAST_SHARE),
                  check("its mean lateness", float(r.mean_lag_ns), 0, unit="ns", strict=True),
                  check("collective steps", steps, 2, unit="count"), check("workers", len(st), 2, unit="count")]
        met = all(c["met"] for c in checks)
        out.append(plain({"rule": "job_straggler", "evidence": {"core": who}, "part": str(r.part), "checks": checks,
                          "reported": met and i == 0, "why_not": "another worker is the one reported" if met and i else
                          None, "amount": ["others' wait", float(r.wait_caused_ns)], "unmeasured": None}))
    return out


def slow_node_measures(temporal: pd.DataFrame) -> list[dict[str, Any]]:
    """Each part's fastest core against the other parts' median core (findings_job's `slow_node` bar)."""
    if temporal is None or temporal.empty or "part" not in temporal or temporal["part"].nunique() < 2:
        return []
    out = []
    for part, mine in temporal.groupby("part", sort=True):
        others = float(temporal.loc[temporal["part"] != part, "compute_time_ns"].astype(float).median())
        fastest = float(mine["compute_time_ns"].min())
        c = check("its fastest core's compute against the other parts' median core", fastest / others if others > 0
                  else float("nan"), SLOW_NODE_RATIO, unit="ratio")
        out.append(plain({"rule": "slow_node", "evidence": {}, "part": str(part), "checks": [c], "reported": c["met"],
                          "why_not": None, "amount": ["fastest core's compute", fastest], "unmeasured": None}))
    return out


# ---- the notes ------------------------------------------------------------------------------------------------

def value_text(v: float, unit: str) -> str:
    """A figure as a title writes it."""
    if not np.isfinite(v):
        return "not known"
    if unit == "share":
        return f"{100 * v:.1f}%"
    if unit == "percent":
        return f"{v:.1f}%"
    if unit == "ratio":
        return f"{v:.2f}x"
    if unit == "ns":
        return duration(v)
    return f"{v:,.0f}"


def bar_text(c: dict[str, Any]) -> str:
    """'at least 10.0%', 'under 50.0%'."""
    word = ("under" if c["below"] else "over") if c.get("strict") else ("at most" if c["below"] else "at least")
    return f"{word} {value_text(c['bar'], c['unit'])}"


def _check_text(c: dict[str, Any], other: dict[str, Any] | None = None, other_run: str = "") -> str:
    """'its figure 8.2% (bar: at least 10.0%; after: 12.1%)'."""
    bound = "at most " if c.get("upper") else ""
    then = f"; {other_run}: {value_text(other['value'], other['unit'])}" if other is not None else ""
    return f"{c['figure']} {bound}{value_text(c['value'], c['unit'])} (bar: {bar_text(c)}{then})"


def _same_figure(m: dict[str, Any] | None, c: dict[str, Any]) -> dict[str, Any] | None:
    for o in (m or {}).get("checks") or []:
        if o.get("figure") == c.get("figure"):
            return dict(o)
    return None


def _amounts(mb: dict[str, Any] | None, ma: dict[str, Any] | None, measured: int, status: str) -> str:
    """Whether a share moved with its own time or with the run's length (the amounts both runs measured)."""
    ab, aa = (m.get("amount") if m else None for m in (mb, ma))
    if not ab or not aa or ab[0] != aa[0]:
        return ""
    b, a = float(ab[1]), float(aa[1])
    said = f"{ab[0]} {duration(b)} → {duration(a)}"
    if max(a, b) > 0 and abs(a - b) <= SAME_AMOUNT * max(a, b):
        if measured == 0:
            return f"{said}, not moved"
        run = f"the run got {duration(abs(measured))} {'shorter' if measured > 0 else 'longer'}"
        if status == "new":
            return f"{said}, not grown: it crossed its bar because {run}"
        if status == "gone":
            return f"{said}, not shrunk: it fell under its bar because {run}"
        return f"{said}, not moved: its shares moved because {run}"
    return f"{said} ({a / b:.2f}x)" if a > 0 and b > 0 else said


def bar_note(status: str, rule: str, mb: dict[str, Any] | None, ma: dict[str, Any] | None, measured: int,
             stale: dict[str, Any] | None = None) -> str:
    """A new finding's figures in the before-run, a gone one's in the after-run, a changed one's amounts; `stale`: the
    other run's parts whose stored findings kept no measures (then its figures are not known, not absent)."""
    if status == "changed":
        return _amounts(mb, ma, measured, status)
    if status not in ("new", "gone"):
        return ""
    other, mine = (mb, ma) if status == "new" else (ma, mb)
    run, mine_run = ("before", "after") if status == "new" else ("after", "before")
    if rule in NO_BAR:
        return f"none in the {run}-run (no bar: any one is a finding)"
    if other is None and stale is not None:
        return (f"its figures in the {run}-run are not known: the stored findings of {', '.join(stale['parts'])} "
                "predate the rules' kept measures (clear the job's results to compute them again)")
    if other is None:
        return f"nothing of it measured in the {run}-run (no such worker, or none of the events its rule reads)"
    if other.get("unmeasured"):
        return f"not measurable in the {run}-run: {other['unmeasured']}"
    checks = [dict(c) for c in other.get("checks") or []]
    failed = [c for c in checks if not c.get("met")]
    if failed:
        said = "; ".join(_check_text(c, _same_figure(mine, c), mine_run) for c in failed)
        amounts = _amounts(mb, ma, measured, status)
        return f"under its bar in the {run}-run: {said}" + (f"; {amounts}" if amounts else "")
    if other.get("reported"):
        return f"reported in the {run}-run too, under another worker's name"
    why = other.get("why_not") or "not reported"
    over = "; ".join(_check_text(c) for c in checks) or "its bar met"
    return (f"over its bar in the before-run too ({over}) but not reported there: {why}" if status == "new" else
            f"still over its bar in the after-run ({over}) but not reported: {why}")


def note_maker(before: dict[Key, dict[str, Any]], after: dict[Key, dict[str, Any]], measured: int
               ) -> Callable[[str, str, str, str], str]:
    """note(status, rule, node, key) for compare_findings.match_findings."""
    def note(status: str, rule: str, node: str, key: str) -> str:
        k = (rule, node, key)
        other = before if status == "new" else after
        return bar_note(status, rule, before.get(k), after.get(k), measured, other.get((STALE, "", "")))

    return note
