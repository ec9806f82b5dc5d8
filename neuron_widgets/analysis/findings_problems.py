"""Findings every trace kind shares: errors with their meaning, and executions or events that never ended
(hangs, and events still open when the recording stopped)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..model.timefmt import duration
from .findings_rows import row
from .problems import errors_and_hangs


def problem_findings(ctx: dict[str, Any], probs: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """`ctx`: p (the profile), start, end (its span), label(instance, pid, nc) for a NeuronCore; `probs`:
    `errors_and_hangs` already at hand (a job's, with its `part` column)."""
    probs = errors_and_hangs(ctx["p"]) if probs is None else probs
    missing = [c for c in ("kind", "name", "code", "meaning", "exec_id", "model_name", "instance_id", "process_id",
                           "nc_idx", "thread_id", "id", "start_ts") if c not in probs.columns]
    if missing:  # a job's parts of other kinds (Kineto ranks) list fewer columns
        probs = probs.assign(**{c: pd.Series([None] * len(probs), index=probs.index, dtype=object) for c in missing})
    return _errors(ctx, probs) + _hangs(ctx, probs) + _unended(ctx, probs)


def _part(r: Any) -> Any:
    v = r.get("part") if hasattr(r, "get") else None
    return v if isinstance(v, str) else None


def _errors(ctx: dict[str, Any], probs: pd.DataFrame) -> list[dict[str, Any]]:
    errs = probs[probs["kind"] == "error"] if len(probs) else probs
    out: list[dict[str, Any]] = []
    if errs.empty:
        return out
    code = errs["code"].astype(object).where(errs["code"].notna(), None)
    meaning = errs["meaning"].astype(object).where(errs["meaning"].notna(), "")
    # One finding per error (its code and meaning): the runtime call and the device event of one failed
    # execution are one problem.
    parts = errs["part"].astype(str) if "part" in errs else pd.Series("", index=errs.index)
    key = [f"{p}|{c}|{m}" if c is not None else f"{p}|name|{n}"
           for p, c, m, n in zip(parts, code, meaning, errs["name"], strict=True)]
    for _, g in errs.assign(_key=key).groupby("_key", sort=False):
        first = g.iloc[0]
        c = first["code"]
        where = _placed(_part(first), _where(ctx, first), first)
        text = str(first["meaning"]) if isinstance(first["meaning"], str) and first["meaning"] else ""
        names = list(dict.fromkeys(str(n) for n in g["name"]))
        what = f"returned {c}" if c is not None and not pd.isna(c) else "reported an error"
        execs = g.drop_duplicates(["instance_id", "process_id", "nc_idx", "exec_id"]) if g["exec_id"].notna().any() \
            else g
        n = len(execs)
        cores = g.drop_duplicates(["instance_id", "process_id", "nc_idx", "thread_id"])
        if len(cores) > 1 and where:
            where = f"{len(cores)} cores or threads (first {where})"
        step = f", {'in' if n == 1 else 'first in'} execution {int(first['exec_id'])}" if pd.notna(first["exec_id"]) else ""
        neff = f" of {first['model_name']}" if isinstance(first["model_name"], str) else ""
        title = (f"{' and '.join(names[:3])} {what}{f' ({text})' if text else ''} {'once' if n == 1 else f'{n} times'}"
                 f"{f' on {where}' if where else ''}{step}{neff}; a correctness problem, no time gain")
        evidence = {"names": names, "code": None if c is None or pd.isna(c) else c, "meaning": text,
                    "count": n, "events": len(g), "ids": [int(v) for v in g["id"].head(20)]}
        out.append(row("error", "high", title, float("nan"), first["start_ts"], g["start_ts"].max(), evidence,
                       "Read the runtime log at that time; a numerical error means NaN or Inf: check the inputs "
                       "and the loss scale.", _part(first)))
    return out


def _placed(part: str | None, where: str, r: Any) -> str:
    """`where` in a job's part: a core as the job's Timeline labels its track (`node-03/i-0.../PID:1/neuron_rt/NC:3`),
    anything else after the part's name."""
    if not part:
        return where
    if not where:
        return part
    return f"{part}/{where}" if pd.notna(r.get("nc_idx")) else f"{part} {where}"


def _where(ctx: dict[str, Any], r: Any) -> str:
    if pd.notna(r.get("nc_idx")) and r.get("instance_id") is not None:
        return ctx["label"](r["instance_id"], r["process_id"], int(r["nc_idx"]))
    if r.get("instance_id") is not None and pd.notna(r.get("thread_id")):
        return f"{r['instance_id']} pid {r['process_id']} thread {r['thread_id']}"
    return ""


def _hangs(ctx: dict[str, Any], probs: pd.DataFrame) -> list[dict[str, Any]]:
    hangs = probs[probs["kind"] == "hang"] if len(probs) else probs
    out = []
    for _, h in hangs.iterrows():
        where = _where(ctx, h)
        shown = _placed(_part(h), where, h)
        neff = f" of {h['model_name']}" if isinstance(h["model_name"], str) else ""
        step = f" (execution {int(h['exec_id'])})" if pd.notna(h["exec_id"]) else ""
        title = (f"{h['name']}{neff}{step}{f' on {shown}' if shown else ''} started at "
                 f"{duration(int(h['start_ts']) - int(ctx['start']))} into the run and never ended: a possible "
                 "hang; no time gain can be predicted")
        evidence = {"name": h["name"], "id": int(h["id"]), "exec_id": None if pd.isna(h["exec_id"]) else int(h["exec_id"]),
                    "model_name": h["model_name"], "core": where}
        out.append(row("hang", "high", title, float("nan"), h["start_ts"], ctx["end"], evidence,
                       "Look at the core's last events (analysis.last_events) and at the other cores' collectives "
                       "then: one waiting for a peer that never came.", _part(h)))
    return out


def _thread_words(ctx: dict[str, Any], r: Any) -> str:
    """Where the event is: its track as the Timeline labels it (`track_label`, when ctx has one: what the track filter
    finds), else the thread as the trace names it ("CrBrowserMain (pid 12308 tid 12308)"), else its ids."""
    track = ctx.get("track_label")
    if track is not None and pd.notna(r.get("row")):
        try:
            got = track(int(r["row"]))
        except (IndexError, KeyError, TypeError, ValueError):
            got = None
        if got:
            return str(got)
    where = _where(ctx, r)
    names = getattr(ctx["p"], "track_names", None)
    try:
        label = names.thread_label(r["instance_id"], r["process_id"], r["thread_id"]) if names else None
        proc = names.process_label(r["instance_id"], r["process_id"]) if names else None
    except (KeyError, TypeError, ValueError):
        label = proc = None
    if label:
        return f"{label} ({f'{proc}, ' if proc else ''}pid {r['process_id']} tid {r['thread_id']})"
    return where


def _unended(ctx: dict[str, Any], probs: pd.DataFrame) -> list[dict[str, Any]]:
    """Events still open when the recording stopped, one finding per part: their durations end at the trace's end,
    so they are cut short and what they hold is not all in the trace."""
    inc = probs[probs["kind"] == "incomplete"] if len(probs) else probs
    out: list[dict[str, Any]] = []
    if inc.empty:
        return out
    parts = inc["part"].astype(str) if "part" in inc else pd.Series("", index=inc.index)
    for _, g in inc.groupby(parts, sort=False):
        g = g.sort_values("start_ts", kind="stable")
        first = g.iloc[0]
        by_place: dict[str, list[str]] = {}  # the first three, their names gathered by where they are
        for _, r in g.head(3).iterrows():
            by_place.setdefault(_thread_words(ctx, r), []).append(str(r["name"]))
        shown = [f"{', '.join(names)} on {w}" if w else ", ".join(names) for w, names in by_place.items()]
        more = f" and {len(g) - 3:,} more" if len(g) > 3 else ""
        part = f"{_part(first)}: " if _part(first) else ""
        at = duration(int(first["start_ts"]) - int(ctx["start"]))
        one = len(g) == 1
        title = (f"{part}{len(g):,} event{'' if one else 's'} still open when the recording stopped "
                 f"({'; '.join(shown)}{more}, {'from' if one else 'the first from'} {at} into the trace): "
                 f"{'its duration ends' if one else 'their durations end'} at the trace's end, cut short; not a hang, "
                 "no time gain")
        evidence = {"events": len(g), "names": list(dict.fromkeys(str(n) for n in g["name"])),
                    "ids": [int(v) for v in g["id"].head(20)]}
        out.append(row("incomplete", "low", title, float("nan"), first["start_ts"], ctx["end"], evidence,
                       "Record longer (stop the trace after the work ends), or read these events as lasting at least "
                       "until the trace's end.", _part(first)))
    return out
