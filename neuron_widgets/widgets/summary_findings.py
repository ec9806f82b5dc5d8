"""The Summary's findings and critical path in the widget: computed in the background after the other analyses,
and a click on a finding shows where it happens: the linked Timeline fitted to its range, a job's part opened
at it, the device viewer fitted to the execution.

Findings and the path follow the brush as every other section does: a brushed range's findings are that
range's, with gains as shares of the range's run (README "Summary").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pandas as pd

from ..analysis import critical_path_breakdown, critical_path_headline, findings
from ..analysis.findings_rows import finish, run_span
from ..model.profile import Profile


def _failed(what: str, exc: Exception) -> pd.DataFrame:
    """No findings, and why (said under the table), rather than no Summary at all."""
    return finish([], [f"{what} could not be computed: {type(exc).__name__}: {exc}"])


def profile_findings(p: Profile) -> dict[str, Any]:
    """The findings of p (a profile, or a brushed range of one) and the run span their gains are shares of."""
    try:
        f = findings(p)
    except Exception as exc:  # one rule's failure must not take the Summary down
        return {"findings": _failed("Findings", exc), "findings_span": int(p.duration_ns)}
    try:
        span = run_span(p) or int(p.duration_ns)
    except Exception:
        span = int(p.duration_ns)
    return {"findings": f, "findings_span": int(span)}


def critical_of(x: Any, client: Any = None, part_of: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The path's breakdown and headline, or None where x has no path (or it cannot be computed)."""
    try:
        b = critical_path_breakdown(x, client) if client is not None else critical_path_breakdown(x)
    except Exception:  # a job of Kineto parts, a kind without a graph: no section (and never no Summary)
        return None
    if b.empty:
        return None
    try:
        head = critical_path_headline(x)
    except Exception:
        head = {}
    return {"breakdown": b, "headline": head, "part_of": part_of or {}}


# A Summary's stage: (name, what computes it, the results it fills).
Step = tuple[str, Callable[[], dict[str, Any]], tuple[str, ...]]


def findings_steps(p: Profile) -> tuple[Step, ...]:
    """The Summary's last two analyses (the costliest: the dependency graph and what-if replays)."""
    return (("findings", lambda: profile_findings(p), ("findings",)),
            ("critical path", lambda: {"critical": critical_of(p)}, ("critical",)))


class FindingsMixin:
    """A Summary's findings: their clicks, and their background work for a device trace and a job."""

    # What the Summary it is mixed into holds (widgets/summary.py), declared for the type checker only.
    charts: Any
    timeline: Any
    results: dict[str, Any]
    done: threading.Event
    client: Any
    job: Any
    _lock: Any
    open_part: Callable[..., Any]
    _say: Callable[..., Any]

    # -- clicks ---------------------------------------------------------------------------
    def _finding_clicked(self, src: Any, indices: list[int]) -> None:
        charts = getattr(self, "charts", None)
        section = getattr(charts, "findings", None)
        f = section.frame if section is not None else None
        if not indices or section is None or f is None or f.empty:
            return
        i = indices[0]
        window = section.window(i)
        if window is None:
            return
        part = f["part"].iloc[i] if "part" in f.columns else None
        if getattr(self, "kind", "") == "job":
            if part is not None and not pd.isna(part):
                # In the job's Timeline when following one, else below the charts as the heat map opens a part;
                # at the finding's range exactly.
                opener = (self._open_in_timeline if self.timeline is not None else
                          lambda p, w: self.open_part(p, w, pad=False))
                threading.Thread(target=opener, args=(str(part), window), daemon=True,
                                 name="neuron-widgets-open-part").start()
            return
        if self.timeline is not None:
            self.timeline.time_range = window

    def _open_in_timeline(self, part: str, window: tuple[int, int]) -> None:
        try:
            self.timeline.open_part(part)
        except Exception as exc:  # the timeline says why too
            self._say(f"Could not open {part}: {type(exc).__name__}: {exc}", busy=False, error=True)
            return
        self.timeline.time_range = window

    def _wire_findings(self, charts: Any) -> None:
        section = charts.findings
        src = section.source
        src.selected.on_change("indices", lambda _a, _o, new: self._finding_clicked(src, new))
        section.more.on_change("active", lambda _a, _o, new: section.expand(bool(new)))

    # -- a device trace -------------------------------------------------------------------
    def _device_findings(self, trace: Any, charts: Any) -> None:
        """The trace's findings in a thread; the Summary is done when they are in (an export waits for that)."""
        def run() -> None:
            try:
                f = findings(trace)
            except Exception as exc:
                f = _failed("Findings", exc)
            with self._lock:
                if self.charts is not charts:  # the viewer moved on to another trace
                    return
                self.results["findings"] = f
                charts.findings.update(f, charts.origin, int(self.results.get("span_ns") or 0))
                self._mark_patched()
            self.done.set()

        threading.Thread(target=run, daemon=True, name="neuron-widgets-device-findings").start()

    # -- a job ------------------------------------------------------------------------------
    def _job_findings(self, results: dict[str, Any]) -> None:
        """The job's findings and critical path, after its charts are out (the parts' results are in the store)."""
        charts = self.charts
        kw = {"client": self.client} if self.client is not None else {}
        try:
            f = findings(self.job, **kw)
        except Exception as exc:
            f = _failed("Findings", exc)
        with self._lock:
            results["findings"] = f
            charts.findings.update(f, charts.origin, charts.span_ns)
            self._mark_patched()
        t = results.get("temporal_breakdown", pd.DataFrame())
        part_of = ({str(i): str(p) for i, p in zip(t["instance_id"], t["part"], strict=True)}
                   if {"instance_id", "part"} <= set(t.columns) else {})
        critical = critical_of(self.job, self.client, part_of)
        with self._lock:
            results["critical"] = critical
            charts.critical.update(critical)
            self._mark_patched()

    def _mark_patched(self) -> None:
        """Called under the lock after a chart changed: a view not drawn yet is drawn anew when it reports in."""
        ready = getattr(self, "_view_ready", None)
        if ready is not None and not ready.is_set():
            self._patched = True
