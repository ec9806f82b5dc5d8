"""A job's per-profile findings: each part's rules run in its own task, their rows named by part, gains job-wide.

A part's own what-if gain is not the job's (collectives couple the parts: a part that gets faster
may then wait on the others). Where the rule says which change its fix makes, that change is
replayed on the whole job (`what_if(job)`, the parts' graphs joined at the collectives); where it
cannot be (a Kineto job, a rule with no change) the gain is NaN and the part-alone figure is in the
evidence and the title. A rule that fires on several parts in the same way (the host keeps every
node waiting) is one row naming them all, each part's figures in its evidence.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..model.timefmt import duration
from .across import INTERNAL, run_parts
from .critical_path_job import job_savings
from .findings import profile_findings
from .findings_rows import plain, severity_of

TASK = "findings:part:1"  # the number changes when a part's findings change shape: stored results are not reused
INTERNAL[TASK] = profile_findings  # a building block `across` runs in its part tasks

# The job's errors and hangs come from `across(errors_and_hangs)`, job-wide: a part's own would repeat them.
JOB_WIDE_RULES = ("error", "hang")
# A rule about the run as a whole (not one core): fired on several parts, it reads as one row.
MERGED = ("host_wait", "launch_overhead", "exposed_collectives", "gpu_idle", "low_overlap", "launch_delay", "sync_memcpy")
LABEL_KEYS = ("core", "worst_core", "gpu")  # the worker labels (a Kineto `rank` is a number: not replaced in text)
SAVED = re.compile(r"(would save|saves) (\S+ \S+) \((\d+(?:\.\d+)?)% of the run\)")
NOT_SHORTER = "would not shorten the run (that time is not on the critical path)"
UNKNOWN = "what a fix would save is not known"


def part_rows(job: Any, notes: list[str], client: Any = None, *, scheduler: str | None = None,
              num_workers: int | None = None, cache: bool = True, run_ns: int = 0) -> list[dict[str, Any]]:
    """Every readable part's findings as rows with `part` set, merged per rule where that reads better.

    `run_ns`: the job's recorded span (its parts' first start to last end), what a title's share is of, as the
    job's Summary reads it; what_if(job)'s span where it is not known."""
    got = run_parts(job, [TASK], client, scheduler=scheduler, num_workers=num_workers, cache=cache)
    n_parts = len(got)
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for g in got:
        if g["error"] is not None:
            continue  # named by the job's `unread_part` finding
        df = g["tables"][TASK]
        notes.extend(f"{g['part']}: {n}" for n in df.attrs.get("notes", []))
        for r in df.to_dict("records"):
            if r["rule"] in JOB_WIDE_RULES:
                continue
            by_rule.setdefault(str(r["rule"]), []).append(_named(r, str(g["part"])))
    what = {"client": client, "scheduler": scheduler, "num_workers": num_workers, "cache": cache, "run_ns": run_ns}
    # Every row's change first, then their job-wide gains in one pass over the parts (each part replays all of them).
    plans: list[tuple[str, list[dict[str, Any]], list[tuple[dict[str, Any], float]] | None]] = []
    for rule, rows in by_rule.items():
        if rule in MERGED and len(rows) > 1:
            changes = [c for c in (_change(r) for r in rows) if c is not None]
            plans.append((rule, rows, changes if changes and len(changes) == len(rows) else None))
        else:
            for r in rows:
                one = _change(r)
                plans.append((rule, [r], [one] if one is not None else None))
    gains = _job_gains(job, [c for _, _, c in plans if c is not None], what, notes)
    out: list[dict[str, Any]] = []
    k = 0
    for rule, rows, wanted in plans:
        gain = gains[k] if wanted is not None else (float("nan"), 0)
        k += wanted is not None
        if rule in MERGED and len(rows) > 1:
            out.append(_merged(rule, rows, n_parts, gain))
        else:
            out.append(_alone(rows[0], gain))
    return out


def _named(r: dict[str, Any], part: str) -> dict[str, Any]:
    """A part's row with its part set and its title's workers named as the JobTimeline names their tracks."""
    ev = dict(r["evidence"] or {})
    title = str(r["title"])
    for k in LABEL_KEYS:  # the evidence keeps the part's own label (with `part`), as the job's rules' evidence does
        v = ev.get(k)
        if isinstance(v, str) and v:
            title = title.replace(v, f"{part}/{v}")
    gain = float(r["gain_ns"]) if pd.notna(r["gain_ns"]) else float("nan")
    ev["part_alone_gain_ns"] = gain if np.isfinite(gain) else None
    ev["part"] = part
    return {**r, "title": title, "evidence": ev, "part": part, "gain_ns": gain}


def _change(r: dict[str, Any]) -> tuple[dict[str, Any], float] | None:
    """The change the row's fix makes, as a job's what-if selects it (None: the rule names none)."""
    ev, part, rule = r["evidence"], r["part"], r["rule"]
    if rule == "host_wait" and ev.get("runtime_threads"):
        return {"part": part, "kind": "gap", "thread_id": list(ev["runtime_threads"])}, 0.0
    if rule == "launch_overhead":
        return {"part": part, "kind": "launch"}, 0.0
    if rule == "exposed_collectives":
        return {"part": part, "kind": "collective"}, 0.0
    if rule == "straggler" and isinstance(ev.get("where"), dict) and ev.get("compute_scale"):
        return {**ev["where"], "part": part}, float(ev["compute_scale"])
    if rule == "straggler" and ev.get("runtime_threads"):
        return {"part": part, "kind": "gap", "thread_id": list(ev["runtime_threads"])}, 0.0
    if rule == "compute_imbalance" and isinstance(ev.get("where"), dict) and ev.get("ratio"):
        return {**ev["where"], "part": part}, 1.0 / float(ev["ratio"])
    return None


def _job_gains(job: Any, variants: list[list[tuple[dict[str, Any], float]]], what: dict[str, Any],
               notes: list[str]) -> list[tuple[float, int]]:
    """What each list of changes saves the job (within 0 and its span) and the job's span, from one pass over its
    parts (`job_savings`); NaN where the job cannot be replayed."""
    if not variants:
        return []
    try:
        with warnings.catch_warnings():  # a change selecting nothing saves nothing: said by the gain
            warnings.simplefilter("ignore")
            got = job_savings(job, variants, what["client"], scheduler=what["scheduler"],
                              num_workers=what["num_workers"], cache=what["cache"])
    except Exception as exc:  # a job the what-if cannot replay (parts of two kinds): the gains are not known
        note = f"a part's finding has no job-wide gain: what_if(job) cannot replay it ({type(exc).__name__}: {exc})"
        if note not in notes:
            notes.append(note)
        return [(float("nan"), 0)] * len(variants)
    out = []
    for w in got:
        span = int(w.span_ns)
        gain = float(min(max(int(w.saved_ns), 0), span)) if span > 0 else float("nan")
        out.append((gain, int(what["run_ns"]) if what["run_ns"] > 0 else span))
    return out


def _retitle(title: str, gain: float, span: int, alone: float | None, where: str, job_known: bool = False) -> str:
    """The title's saving as the job's (what_if(job)) or, where that is not known, as the part's alone."""
    if np.isfinite(gain) and span > 0:
        now = (f"would save {duration(gain)} ({100.0 * gain / span:.1f}% of the run) in the job as a whole "
               f"(what_if(job))"
               if gain > 0 else "would not shorten the job's run (what_if(job))")
    elif alone is not None and alone > 0:
        now = f"would save {duration(alone)} {where} alone"
        if not job_known:
            now += " (the job's gain is not known: collectives couple the parts)"
    else:
        now = "what a fix would save the job is not known"
    if SAVED.search(title):
        return SAVED.sub(now, title, count=1)
    for old in (NOT_SHORTER, UNKNOWN):
        if old in title:
            return title.replace(old, now, 1)
    return f"{title}; {now}"


def _alone(r: dict[str, Any], job_gain: tuple[float, int]) -> dict[str, Any]:
    gain, span = job_gain
    alone = r["evidence"]["part_alone_gain_ns"]
    title = _retitle(str(r["title"]), gain, span, alone, "in that part")
    if f"{r['part']}/" not in title:  # the worker's label names the part already
        title = f"{r['part']}: {title}"
    sev = severity_of(gain, span, str(r["severity"])) if np.isfinite(gain) else str(r["severity"])
    return {**r, "title": title, "gain_ns": gain, "severity": sev, "evidence": plain(r["evidence"])}


def _merged(rule: str, rows: list[dict[str, Any]], n_parts: int, job_gain: tuple[float, int]) -> dict[str, Any]:
    """One row for a rule fired on several parts: the job's gain of all their fixes, each part's figures kept."""
    rows = sorted(rows, key=lambda r: -(r["evidence"]["part_alone_gain_ns"] or 0.0))
    worst = rows[0]
    gain, span = job_gain
    names = [str(r["part"]) for r in rows]
    alone = worst["evidence"]["part_alone_gain_ns"]
    head = (f"{rule} on {len(rows)} of {n_parts} parts ({', '.join(names)}); most {worst['part']}: "
            f"{_retitle(str(worst['title']), float('nan'), 0, alone, 'in that part', bool(np.isfinite(gain)))}")
    if np.isfinite(gain):
        head += f"; fixing it on all of them {_retitle('', gain, span, None, '').lstrip('; ')}"
    evidence = {"parts": names, "by_part": {str(r["part"]): r["evidence"] for r in rows}}
    sev = severity_of(gain, span, str(worst["severity"])) if np.isfinite(gain) else str(worst["severity"])
    return {**worst, "title": head, "gain_ns": gain, "severity": sev, "evidence": plain(evidence)}
