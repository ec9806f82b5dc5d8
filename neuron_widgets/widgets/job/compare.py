"""Summary(job, compare=other_job): the two jobs compared step by step (`compare(before, after, by="step")`) after
the job's findings, into the Summary's "Did the fix work" section; never before the job's charts are out."""

from __future__ import annotations

from typing import Any

from ...summary.compare import comparison_of
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
