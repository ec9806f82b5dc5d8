"""Did the fix work: two runs aligned step by step, and their findings gone, new or changed beside the measured saving.

`compare(before, after, by="step")` (analysis/compare.py) lands here. A step is what `what_if`
calls one: a NEFF's execution (its `exec_id`, else its ordinal) from its first start to its
last end over the cores (Kineto: a `ProfilerStep#N`). The runs are aligned by each NEFF's k-th
step in time order, so a run whose exec_ids start elsewhere still lines up. Runs that are not like
for like (one covers far fewer steps, or a job part is missing from one) are compared over what both
cover only (compare_coverage).
"""

from __future__ import annotations

import copy
import html
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.timefmt import duration
from .across import across
from .compare import STEP_COMPARE
from .compare_bars import keyed_measures, note_maker, run_measures
from .compare_coverage import Coverage, coverage, mark_not_comparable, readable_parts
from .compare_findings import (
    CHANGED_SHARE,
    EVIDENCE_SHARE,
    FINDING_COLUMNS,
    STATUS_ORDER,
    Roles,
    match_findings,
    roles_of,
    subject,
)
from .devices import _STEP
from .findings import findings
from .frame import frame_of
from .temporal import temporal_breakdown
from .what_if import what_if

STEP_COLUMNS = ["model_name", "ordinal", "step_before", "step_after", "start_before_ts", "start_after_ts",
                "duration_before_ns", "duration_after_ns", "delta_ns", "delta_pct", "status"]
__all__ = ["CHANGED_SHARE", "EVIDENCE_SHARE", "FINDING_COLUMNS", "STATUS_ORDER", "STEP_COLUMNS", "Comparison",
           "compare_steps", "match_findings", "subject"]


@dataclass
class Comparison:
    """Two runs step by step. `steps`: a row per aligned step (before and after durations, `delta_ns` =
    after - before); `findings`: each finding of either run, `gone` / `new` / `changed` / `same`, with
    the before-run's predicted gain beside the measured saving (matched as compare_findings says);
    `headline`: one sentence."""

    steps: pd.DataFrame
    findings: pd.DataFrame
    headline: str
    span_before_ns: int
    span_after_ns: int
    notes: list[str] = field(default_factory=list)
    # Not like for like (steps or parts differ): what both runs cover, and the spans of the matched steps.
    coverage: Coverage = field(default_factory=lambda: Coverage())

    @property
    def like_for_like(self) -> bool:
        """Both runs cover about the same steps and the same job parts."""
        return self.coverage.like_for_like

    @property
    def saved_ns(self) -> int:
        """The measured saving: before's span less after's (negative: after is slower); when the runs are not
        like for like, over the matched steps only (from the first one's start to the last one's end)."""
        if not self.coverage.like_for_like and self.coverage.matched_span_before_ns > 0:
            return self.coverage.matched_span_before_ns - self.coverage.matched_span_after_ns
        return self.span_before_ns - self.span_after_ns

    @property
    def predicted_ns(self) -> float:
        """What the before-run's findings that are gone predicted, summed (NaN when none had a gain)."""
        g = self.findings.loc[self.findings["status"] == "gone", "predicted_gain_ns"].dropna()
        return float(g.sum()) if len(g) else float("nan")

    def __repr__(self) -> str:
        return f"Comparison({self.headline!r}, {len(self.steps)} steps, {len(self.findings)} findings)"

    def _repr_html_(self) -> str:
        """The headline, the findings and the first steps; every text escaped (it comes from the profiles)."""
        steps = self.steps.head(20)
        more = f"<p>… {len(self.steps) - 20:,} more steps in .steps</p>" if len(self.steps) > 20 else ""
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        shown = self.findings.drop(columns=["start_ts", "end_ts", "evidence_before", "evidence_after"])
        return (f"<div class='nw-comparison'><p><b>{html.escape(self.headline)}</b></p>"
                f"{shown.to_html(escape=True, index=False)}"
                f"{steps.to_html(escape=True, index=False)}{more}"
                f"{f'<ul>{notes}</ul>' if notes else ''}</div>")


def compare_steps(before: Any, after: Any, client: Any = None, **job_kw: Any) -> Comparison:
    """`before` against `after` (two Profiles, or two Jobs: `job_kw` such as `scheduler` go to their analyses)."""
    kinds = [type(x).__name__ if not (isinstance(x, Profile) or _is_job(x)) else None for x in (before, after)]
    if any(kinds) or isinstance(before, Profile) != isinstance(after, Profile):
        got = " and ".join(type(x).__name__ for x in (before, after))
        raise TypeError(f"compare(before, after, by='step') compares two Profiles or two Jobs (nw.load_job), not {got}: "
                        "load both runs the same way")
    notes: list[str] = []
    fb, fa = (findings(x, **_job_args(x, client, job_kw)) for x in (before, after))
    notes += [f"before: {n}" for n in fb.attrs.get("notes", [])] + [f"after: {n}" for n in fa.attrs.get("notes", [])]
    parts_b, parts_a = readable_parts(before, fb), readable_parts(after, fa)
    common = [p for p in parts_b if p in set(parts_a)]
    sub_b, sub_a = before, after
    if parts_b != parts_a and common:  # steps over the parts both runs have: a missing part's cores are not "faster"
        sub_b, sub_a = _sub_job(before, common), _sub_job(after, common)
    sb, span_b = run_steps(sub_b, notes, "before", client, job_kw)
    sa, span_a = run_steps(sub_a, notes, "after", client, job_kw)
    steps = align(sb, sa)
    cov = coverage(steps, parts_b, parts_a)
    notes += cov.notes
    tb, ta = (job_tables(x, notes, which, client, job_kw) for x, which in ((before, "before"), (after, "after")))
    rb, ra = run_roles(before, notes, "before", tb), run_roles(after, notes, "after", ta)
    measured = span_b - span_a if cov.like_for_like or cov.matched_span_before_ns <= 0 else \
        cov.matched_span_before_ns - cov.matched_span_after_ns
    bars_b, bars_a = (keyed_measures(run_measures(x, f, client, job_kw, notes, t), r)
                      for x, f, r, t in ((before, fb, rb, tb), (after, fa, ra, ta)))
    table = mark_not_comparable(match_findings(fb, fa, measured, rb, ra, note_maker(bars_b, bars_a, measured)), cov)
    return Comparison(steps, table, headline(steps, table, span_b, span_a, cov), span_b, span_a, notes, cov)


def _is_job(x: Any) -> bool:
    return not isinstance(x, Profile) and hasattr(x, "specs") and hasattr(x, "parts")


def _sub_job(job: Any, keep: list[str]) -> Any:
    """The job's parts named in `keep` only, their names unchanged (a new Job would rename them)."""
    sub = copy.copy(job)
    sub.specs = [s for s in job.specs if s.name in set(keep)]
    sub.parts = job.parts[job.parts["part"].astype(str).isin(keep)].reset_index(drop=True)
    sub._loaded = OrderedDict()
    return sub


# What findings(job) reads from `across`: asked for the same, the parts' stored results are read, not computed again.
JOB_TABLES = ["temporal_breakdown", "stragglers", "errors_and_hangs"]


def job_tables(x: Any, notes: list[str], which: str, client: Any = None,
               job_kw: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A Job's `across` tables as its findings read them (None for a Profile, or when they cannot be read: said)."""
    if isinstance(x, Profile):
        return None
    try:
        return across(x, JOB_TABLES, **_job_args(x, client, job_kw or {}))
    except Exception as exc:  # findings still match, on the workers' labels; the notes say why
        notes.append(f"{which}: the job's analyses could not be read ({type(exc).__name__}: {exc})")
        return None


def run_roles(x: Any, notes: list[str], which: str, tables: dict[str, Any] | None = None) -> Roles:
    """The run's workers by the labels findings name them, with their run-independent roles (compare_findings);
    `tables`: a Job's `job_tables`."""
    try:
        if isinstance(x, Profile):
            return roles_of(x, temporal_breakdown(x))
        if tables is None:
            raise ValueError("the job's temporal breakdown is not at hand")
        return roles_of(x, tables["temporal_breakdown"], [str(p) for p in x.parts["part"]])
    except Exception as exc:  # findings still match, on the workers' labels (ids and all)
        notes.append(f"{which}: the workers' roles could not be read ({type(exc).__name__}: {exc}); findings are "
                     "matched on the labels they name")
        return Roles()


def _job_args(x: Any, client: Any, job_kw: dict[str, Any]) -> dict[str, Any]:
    """A Job's analyses take the client and keyword arguments; a Profile's none."""
    if isinstance(x, Profile):
        return {}
    return {**job_kw, **({"client": client} if client is not None else {})}


STEP_COMPARE["step"] = compare_steps


# ---- steps ------------------------------------------------------------------------------------------------

def run_steps(x: Any, notes: list[str], which: str, client: Any = None,
              job_kw: dict[str, Any] | None = None) -> tuple[pd.DataFrame, int]:
    """A run's steps (`model_name`, `step`, `start_ts`, `duration_ns`) in time order, and its span."""
    empty = pd.DataFrame({"model_name": pd.Series(dtype=object), "step": pd.Series(dtype=np.int64),
                          "start_ts": pd.Series(dtype=np.int64), "duration_ns": pd.Series(dtype=np.int64)})
    if isinstance(x, Profile) and len(x) == 0:
        notes.append(f"{which}: the profile has no events")
        return empty, 0
    try:
        wi = what_if(x, None, 1.0, **_job_args(x, client, job_kw or {}))
    except TypeError as exc:  # a job of Kineto / Chrome traces: no what-if graph, its ProfilerStep markers are its steps
        if isinstance(x, Profile) or "Neuron profiles only" not in str(exc):
            raise
        notes.append(f"{which}: a job of Kineto or Chrome traces: its steps are the ProfilerStep#N markers over its "
                     "ranks and its span their first start to last end; the what-if graph and the critical path are "
                     "Neuron-only part by part, so they were left out")
        steps, span = job_profiler_steps(x)
        if steps.empty:
            notes.append(f"{which}: no executions or ProfilerStep markers: no steps to align")
            return empty, span
        return steps.sort_values(["start_ts", "step"], kind="stable", ignore_index=True), span
    steps = wi.steps[["model_name", "step", "start_ts", "duration_ns"]] if len(wi.steps) else empty
    span = int(wi.span_ns)
    if steps.empty and isinstance(x, Profile):
        steps = profiler_steps(x)
        if span <= 0:
            span = int(x.duration_ns)
    if steps.empty:
        notes.append(f"{which}: no executions or ProfilerStep markers: no steps to align")
    return steps.sort_values(["start_ts", "step"], kind="stable", ignore_index=True), span


def profiler_steps(p: Profile) -> pd.DataFrame:
    """Kineto's `ProfilerStep#N` annotations as steps (model_name "ProfilerStep", step N, over every rank)."""
    fr = frame_of(p)
    number = {n: int(m.group(1)) for n in fr.names if isinstance(n, str) and (m := _STEP.match(n))}
    rows = fr.rows_named(*number) if number else np.zeros(0, np.int64)
    names = np.asarray(fr.names, dtype=object)[fr.name[rows]] if rows.size else np.zeros(0, object)
    # One step over the ranks, as an execution's step is one over the cores: first start to last end.
    df = pd.DataFrame({"step": np.array([number[n] for n in names], np.int64),
                       "start_ts": fr.start[rows].astype(np.int64),
                       "end_ts": np.maximum(fr.end[rows], fr.start[rows]).astype(np.int64)})
    df = df.groupby("step", as_index=False).agg(start_ts=("start_ts", "min"), end_ts=("end_ts", "max"))
    return pd.DataFrame({"model_name": pd.Series(["ProfilerStep"] * len(df), dtype=object), "step": df["step"],
                         "start_ts": df["start_ts"], "duration_ns": df["end_ts"] - df["start_ts"]})


def job_profiler_steps(job: Any) -> tuple[pd.DataFrame, int]:
    """A Kineto job's steps: each part's ProfilerStep#N, one step over the parts (first start to last end), and the
    job's span (its readable parts' first event to last end)."""
    frames, lo, hi = [], None, None
    for spec in job.specs:
        try:
            p = job.load(spec.name)
        except Exception:  # an unreadable part: findings name it (unread_part); its steps are not there
            continue
        fr = frame_of(p)
        if len(p) == 0 or fr.start.size == 0:
            continue
        lo = int(fr.start.min()) if lo is None else min(lo, int(fr.start.min()))
        end = int(np.maximum(fr.end, fr.start).max())
        hi = end if hi is None else max(hi, end)
        s = profiler_steps(p)
        frames.append(s.assign(end_ts=s["start_ts"] + s["duration_ns"]))
    span = hi - lo if lo is not None and hi is not None else 0
    if not frames:
        return profiler_steps_empty(), span
    df = pd.concat(frames).groupby(["model_name", "step"], as_index=False).agg(start_ts=("start_ts", "min"),
                                                                                 end_ts=("end_ts", "max"))
    return pd.DataFrame({"model_name": df["model_name"].astype(object), "step": df["step"].astype(np.int64),
                         "start_ts": df["start_ts"].astype(np.int64),
                         "duration_ns": (df["end_ts"] - df["start_ts"]).astype(np.int64)}), span


def profiler_steps_empty() -> pd.DataFrame:
    return pd.DataFrame({"model_name": pd.Series(dtype=object), "step": pd.Series(dtype=np.int64),
                         "start_ts": pd.Series(dtype=np.int64), "duration_ns": pd.Series(dtype=np.int64)})


def align(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Each NEFF's k-th step of one run beside its k-th of the other; a step in one run only has NA for the other."""
    def keyed(s: pd.DataFrame) -> pd.DataFrame:
        s = s.assign(model_name=s["model_name"].astype(object).where(s["model_name"].notna(), None))
        # Nullable before the outer merge: a plain int64 column with a missing side becomes float64 there, and
        # epoch nanoseconds past 2^53 lose up to a few hundred ns.
        s = s.assign(_neff=s["model_name"].fillna("\0none"),
                     **{c: s[c].astype("Int64") for c in ("step", "start_ts", "duration_ns")})
        return s.assign(ordinal=s.groupby("_neff", sort=False).cumcount().astype(np.int64))

    b, a = keyed(before), keyed(after)
    m = b.merge(a, on=["_neff", "ordinal"], how="outer", suffixes=("_before", "_after"), sort=False)
    out = pd.DataFrame({
        "model_name": m["model_name_before"].where(m["model_name_before"].notna(), m["model_name_after"])
        .astype(object).where(lambda v: v.notna(), None),
        "ordinal": m["ordinal"].astype(np.int64),
        "step_before": m["step_before"].astype("Int64"), "step_after": m["step_after"].astype("Int64"),
        "start_before_ts": m["start_ts_before"].astype("Int64"), "start_after_ts": m["start_ts_after"].astype("Int64"),
        "duration_before_ns": m["duration_ns_before"].astype("Int64"),
        "duration_after_ns": m["duration_ns_after"].astype("Int64")})
    out["delta_ns"] = out["duration_after_ns"] - out["duration_before_ns"]
    with np.errstate(divide="ignore", invalid="ignore"):
        b_ns = out["duration_before_ns"].astype("Float64")
        out["delta_pct"] = (100.0 * out["delta_ns"].astype("Float64") / b_ns.where(b_ns > 0)).astype(float)
    both = out["step_before"].notna() & out["step_after"].notna()
    out["status"] = np.where(both, "matched", np.where(out["step_before"].notna(), "before only", "after only"))
    # Before's order, then steps after only in after's order (int64 keys: float64 ties steps ns apart).
    last = np.iinfo(np.int64).max
    key_b = out["start_before_ts"].fillna(last).to_numpy(np.int64)
    key_a = out["start_after_ts"].fillna(last).to_numpy(np.int64)
    order = np.lexsort((out["ordinal"].to_numpy(), key_a, key_b))
    return out.iloc[order].reset_index(drop=True)[STEP_COLUMNS]


# ---- the sentence -----------------------------------------------------------------------------------------

def headline(steps: pd.DataFrame, table: pd.DataFrame, span_b: int, span_a: int, cov: Coverage | None = None) -> str:
    cov = cov if cov is not None else Coverage()
    lead = cov.sentence(span_b, span_a)
    if cov.fewer_after or cov.fewer_before:  # a shorter capture is not a faster run: the matched steps' window only
        span_b, span_a = cov.matched_span_before_ns, cov.matched_span_after_ns
    saved = span_b - span_a
    if lead and (cov.fewer_after or cov.fewer_before):
        run = (f"{lead}. Over the {cov.matched:,} matched steps the run is "
               + (f"as long as before ({duration(span_a)})" if saved == 0 else
                  f"{duration(abs(saved))} {'shorter' if saved > 0 else 'longer'} ({100 * abs(saved) / span_b:.1f}%): "
                  f"{duration(span_b)} before, {duration(span_a)} after") if span_b > 0 and span_a > 0 else
               f"{lead}. The matched steps' spans could not be measured")
    elif span_b <= 0 or span_a <= 0:
        run = "The runs' spans could not be measured"
    elif saved == 0:
        run = f"The run takes as long as before ({duration(span_a)})"
    else:
        word = "shorter" if saved > 0 else "longer"
        run = (f"The run is {duration(abs(saved))} {word} ({100 * abs(saved) / span_b:.1f}%): "
               f"{duration(span_b)} before, {duration(span_a)} after")
    if lead and not (cov.fewer_after or cov.fewer_before):
        run = f"{lead}. {run}"
    matched = steps[steps["status"] == "matched"]
    if len(matched):
        mb = float(matched["duration_before_ns"].astype(float).median())
        ma = float(matched["duration_after_ns"].astype(float).median())
        change = f", {100 * (ma - mb) / mb:+.1f}%" if mb > 0 else ""
        run += f"; {len(matched):,} steps matched (median step {duration(mb)} before, {duration(ma)} after{change})"
    only = [f"{n:,} {s}" for s, n in steps["status"].value_counts().items() if s != "matched"]
    if only:
        run += f" ({', '.join(only)})"
    gone = table[table["status"] == "gone"]
    if len(gone):
        said = []
        for r in gone.itertuples():
            g = r.predicted_gain_ns
            said.append(f"{r.rule}{f' ({r.who})' if isinstance(r.who, str) else ''}" +
                        (f", predicted {duration(g)}" if np.isfinite(g) else ", no gain predicted"))
        pred = gone["predicted_gain_ns"].dropna()
        tally = ""
        if len(pred) and float(pred.sum()) > 0 and span_b > 0 and span_a > 0:
            tally = f"; measured {duration(saved)}, {100 * saved / float(pred.sum()):.0f}% of the predicted"
        run += f". Gone: {'; '.join(said)}{tally}"
    else:
        run += ". No finding is gone"
    new = table[table["status"] == "new"]
    # A new finding whose own time did not grow crossed its bar as the rest of the run changed (compare_bars).
    said_new = [f"{r} (its own time did not grow)" if "not grown" in str(n) else str(r)
                for r, n in zip(new["rule"], new["note"], strict=True)]
    run += f". New: {', '.join(dict.fromkeys(said_new))}." if len(new) else ". Nothing new."
    changed = int((table["status"] == "changed").sum())
    if changed:
        run = run[:-1] + f"; {changed} changed."
    off = table[table["status"] == "not comparable"]
    if len(off):
        why = dict.fromkeys(str(t).removeprefix("not comparable: ") for t in off["note"])
        run += f" Not comparable: {', '.join(dict.fromkeys(off['rule']))} ({'; '.join(why)})."
    return run
