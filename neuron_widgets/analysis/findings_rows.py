"""The findings' rows: their columns, order, severity by gain, and the phrases titles share."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.timefmt import duration
from .critical_path_build import graph_of
from .critical_path_graph import LAST_ARRIVAL
from .frame import frame_of
from .launches import launch_stats
from .what_if import saved_ns

COLUMNS = ["rule", "severity", "title", "gain_ns", "start_ts", "end_ts", "part", "evidence", "advice"]
SEVERITIES = ("high", "medium", "low")
# Among findings of one severity without a gain: what holds the run back first, then what is wrong, then the rest.
RULES = ("job_straggler", "slow_node", "straggler", "hang", "error", "unread_part", "mfu", "spill_reload", "dma_bound",
         "transpose", "semaphore_waits", "small_dma")

HIGH_GAIN, MEDIUM_GAIN = 0.10, 0.03  # severity by the share of the run a fix saves


def finish(rows: list[dict[str, Any]], notes: list[str], measures: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """The findings as a frame: by gain (largest first), then severity, then rule (RULES), then title.

    `attrs["notes"]`: what could not be decided; `attrs["measures"]`: what each rule measured against its bar,
    fired or not (`measure`), for "did the fix work" to say whether a new finding crossed its bar."""
    df = pd.DataFrame(rows, columns=COLUMNS)
    if len(df):
        df["gain_ns"] = pd.to_numeric(df["gain_ns"], errors="coerce").astype(float)
        sev = df["severity"].map({s: i for i, s in enumerate(SEVERITIES)})
        rule = df["rule"].map({r: i for i, r in enumerate(RULES)}).fillna(len(RULES))
        order = np.lexsort((df["title"].to_numpy(str), rule.to_numpy(), sev.to_numpy(),
                            -df["gain_ns"].fillna(-1.0).to_numpy()))
        df = df.iloc[order].reset_index(drop=True)
    else:
        df["gain_ns"] = df["gain_ns"].astype(float)
    for c in ("start_ts", "end_ts"):  # nanoseconds stay exact: nullable integers, never floats
        df[c] = pd.array([None if v is None or pd.isna(v) else int(v) for v in df[c]], dtype="Int64")
    df.attrs["notes"] = notes
    df.attrs["measures"] = measures or []
    return df


def check(figure: str, value: float, bar: float, *, unit: str = "share", below: bool = False, upper: bool = False,
          strict: bool = False) -> dict[str, Any]:
    """One condition a rule tests: `figure` (what it is, as a title would say it) at `value` against `bar`;
    met when value >= bar (`below`: <=; `strict`: > or <). `unit`: share (0-1), percent, ratio, count, ns,
    bytes. `upper`: the value is an upper bound (a replay skipped because even it stays under the bar)."""
    v = float(value) if value is not None and np.isfinite(float(value)) else float("nan")
    under, over = (v < bar, v > bar) if strict else (v <= bar, v >= bar)
    met = bool(under if below else over)
    return {"figure": figure, "value": v, "bar": float(bar), "unit": unit, "below": below, "strict": strict,
            "upper": upper, "met": met}


def straggler_checks(times_last: float, steps: float, wait_ns: float, span: int, workers: int, last: float,
                     wait: float) -> list[dict[str, Any]]:
    """The straggler rule's conditions on one worker (a core, a Kineto rank): last in at least `last` of its steps,
    the others waiting at least `wait` of the run, two steps and two workers at least."""
    return [check("share of its collective steps it is last at", times_last / steps if steps else 0.0, last),
            check("the others' wait it causes, as a share of the run", wait_ns / span if span > 0 else 0.0, wait),
            check("collective steps", steps, 2, unit="count"),
            check("workers at the collectives", workers, 2, unit="count")]


def measure(ctx: dict[str, Any], rule: str, checks: list[dict[str, Any]], *, who: dict[str, Any] | None = None,
            reported: bool = False, why_not: str | None = None, amount: tuple[str, float] | None = None,
            unmeasured: str | None = None) -> None:
    """Keep what a rule measured (reported or not) in `ctx["measures"]` (the frame's `attrs["measures"]`).

    `who`: the evidence keys a finding of it names its subject by (`core`, `rank`/`gpu`, `engine`), as compare keys
    findings; `why_not`: its checks met but no finding reported (e.g. its what-if saves nothing); `amount`: the time
    a share is of the run (name, ns), to tell a share grown by its own time from one grown as the run shrank;
    `unmeasured`: why nothing could be measured (no capacity in the metadata)."""
    ctx.setdefault("measures", []).append(plain({
        "rule": rule, "evidence": who or {}, "part": None, "checks": checks, "reported": reported,
        "why_not": why_not, "amount": list(amount) if amount else None, "unmeasured": unmeasured}))


def row(rule: str, severity: str, title: str, gain: float, start: Any, end: Any, evidence: dict[str, Any],
        advice: str, part: Any = None) -> dict[str, Any]:
    return {"rule": rule, "severity": severity, "title": title, "gain_ns": float(gain), "start_ts": _int(start),
            "end_ts": _int(end), "part": part, "evidence": plain(evidence), "advice": advice}


def plain(v: Any) -> Any:
    """Figures as Python numbers, text, lists and dicts (numpy scalars and pandas NA converted): JSON as they are."""
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [plain(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    try:
        return None if pd.isna(v) else str(v)
    except (TypeError, ValueError):
        return str(v)


def _int(v: Any) -> int | None:
    try:
        return None if v is None or pd.isna(v) else int(v)
    except (TypeError, ValueError):
        return None


def severity_of(gain: float, span: int, fallback: str = "medium") -> str:
    if not np.isfinite(gain) or span <= 0:
        return fallback
    share = gain / span
    return "high" if share >= HIGH_GAIN else "medium" if share >= MEDIUM_GAIN else "low"


def run_span(p: Profile) -> int:
    """The run's span as `what_if` sees it (its `span_ns`), from the dependency graph without a replay."""
    g, _ = graph_of(frame_of(p))
    if g is None or len(g) == 0:
        return 0
    real = g.role != LAST_ARRIVAL
    return int(g.t[real].max() - g.run_start) if real.any() else 0


def saved(gain: float, span: int) -> str:
    """'would save 4.23 ms (3.2% of the run)'."""
    if not np.isfinite(gain):
        return "what a fix would save is not known"
    if gain <= 0:
        return "would not shorten the run (that time is not on the critical path)"
    pct = 100.0 * gain / span if span > 0 else 0.0
    return f"would save {duration(gain)} ({pct:.1f}% of the run)"


def pct(v: float) -> str:
    return f"{100 * v:.0f}%" if v >= 0.1 else f"{100 * v:.1f}%"


def gain_of(p: Profile, where: Any, scale: float | None, span: int) -> float:
    """What the what-if of a change saves, within 0 and the span (NaN for an empty run)."""
    if span <= 0:
        return float("nan")
    return float(min(max(saved_ns(p, where, scale), 0), span))


def launch_gain(ctx: dict[str, Any], rule: str, share: float) -> tuple[pd.DataFrame, pd.Series, float] | None:
    """The launches, their delays and what removing them saves, or None under `share` of the span (measured
    either way: `measure`).

    The what-if's launch is the call's start to its work's start (a Kineto kernel's `launch_delay_ns` starts at
    the call's end: its call's time is added). Removing launches cannot save more than all of them together, so
    the replay is skipped when their sum is already under the threshold (the measure is then that sum, an upper
    bound).
    """
    p, span = ctx["p"], ctx["span"]
    ls = launch_stats(p)
    if ls.empty or span <= 0:
        return None
    delay = pd.to_numeric(ls["launch_delay_ns"], errors="coerce").dropna()
    if delay.empty:
        return None
    latency = delay + pd.to_numeric(ls.loc[delay.index, "cpu_duration_ns"], errors="coerce").fillna(0).clip(lower=0) \
        if "correlation" in ls.columns else delay
    total = float(latency.sum())
    if total < share * span:
        measure(ctx, rule, [check("saving without launch latency, as a share of the run", total / span, share,
                                  upper=True)], amount=("launch latency", total))
        return None
    gain = gain_of(p, {"kind": "launch"}, 0.0, span)
    ok = bool(np.isfinite(gain) and gain >= share * span)
    measure(ctx, rule, [check("saving without launch latency, as a share of the run", gain / span, share)], reported=ok,
            amount=("launch latency", total))
    return (ls, delay, gain) if ok else None
