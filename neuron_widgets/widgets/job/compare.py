"""Summary(job, compare=other_job): the two jobs compared step by step (`compare(before, after, by="step")`) after
the job's findings, into the Summary's "Did the fix work" section; never before the job's charts are out. A step's
bar fits the job's timeline (or opens a part) at that step."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...summary.compare import comparison_of
from ..bokeh_host import source_of
from .kind import is_job


def job_to_compare(compare: Any) -> Any:
    """The Job to compare with (given as one, or as a JobTimeline of one), None for none; a clear error for a Profile."""
    if compare is None:
        return None
    job = compare.job if is_job(getattr(compare, "job", None)) else compare
    if not is_job(job):
        raise TypeError(f"Summary(job, compare=...) takes another Job (or a JobTimeline of one), not "
                        f"{type(compare).__name__}: compare two profiles with Summary(profile, compare=other_profile)")
    return job


def compare_jobs(summary: Any, results: dict[str, Any]) -> str:
    """Compare `summary.compare_job` (before) with `summary.job` (after) into `results["compare"]` and the charts'
    section; what the status line adds ('' when it went well)."""
    try:
        got: Any = comparison_of(summary.compare_job, summary.job, summary.client)
    except Exception as exc:  # said in the section and the status line; the charts stay
        got = exc
    with summary._lock:
        results["compare"] = got
        fix = getattr(summary.charts, "fix", None)
        if fix is not None:
            fix.fill(got)
        summary._mark_patched()
    return f"; the jobs could not be compared ({type(got).__name__}: {got})" if isinstance(got, Exception) else ""


def wire_step_clicks(summary: Any, charts: Any) -> None:
    """A step's bar in the job's "Did the fix work": following a JobTimeline, it fits that timeline to the
    after-job's step; else it opens the first part (in the job's order) running at the step, fitted to it."""
    fix = getattr(charts, "fix", None)
    if fix is None or fix.chart is None:
        return
    src = source_of(fix.chart)
    src.selected.on_change("indices", lambda _a, _o, new: step_clicked(summary, charts, src, new))


def step_clicked(summary: Any, charts: Any, src: Any, indices: list[int]) -> None:
    if not indices or not 0 <= indices[0] < len(src.data["t0"]):
        return
    i = indices[0]
    window = (charts.origin + int(src.data["t0"][i]), charts.origin + int(src.data["t1"][i]))
    if summary.timeline is not None:
        summary.timeline.time_range = window
        return
    part = part_at(summary.results.get("parts"), window)
    if part is not None:
        summary.open_part(part, window, pad=False)


def part_at(parts: Any, window: tuple[int, int]) -> str | None:
    """The first part read (job order) whose span meets `window`, else the first part read."""
    if parts is None or len(parts) == 0:
        return None
    read = parts[parts["status"] != "left out"] if "status" in parts else parts
    if read.empty:
        return None
    if {"start_ts", "end_ts"} <= set(read.columns):
        s = pd.to_numeric(read["start_ts"], errors="coerce")
        e = pd.to_numeric(read["end_ts"], errors="coerce")
        meets = read[(s <= window[1]) & (e >= window[0])]
        if len(meets):
            return str(meets["part"].iloc[0])
    return str(read["part"].iloc[0])
