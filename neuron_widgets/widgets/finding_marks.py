"""The Timeline's finding marks: each of `analysis.findings` as a range on the overview strip, by severity.

A toolbar toggle (`Timeline.findings`) asks for them; they are computed in a thread once the first
view has been answered (the first paint never waits for the analyses), and kept per profile or job,
so a retarget of a job's timeline (a part opened) places the same findings on its new tracks.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import traitlets as t

# The package, not its `findings`: looked up at each call, so a test can stand in for the analysis.
from .. import analysis

MAX_MARKS = 500  # drawn on the strip: the first by gain, and the text says how many more
PAINT_WAIT_S = 5.0  # at most this long for the first view's answer before computing anyway
SEVERITY_ORDER = ("high", "medium", "low")


def _ns(v: Any) -> int | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else int(v)


def finding_marks(found: pd.DataFrame, origin: int,
                  spans: Mapping[str, tuple[int, int]] | None = None) -> tuple[list[dict[str, Any]], int]:
    """The marks of findings (in their order: by gain) as the strip draws them, and how many had no place.

    A mark: t0, t1 (ns from `origin`), severity, rule, title, gain_ns (None where the finding has no
    gain), part. A job's finding is kept within its part's span (`spans`), and placed on all of it where
    it has no range of its own.
    """
    spans = spans or {}
    marks: list[dict[str, Any]] = []
    unplaced = 0
    for r in found.to_dict("records"):
        named = r.get("part")
        part = named if isinstance(named, str) else None
        a, b = _ns(r.get("start_ts")), _ns(r.get("end_ts"))
        if (a is None or b is None) and part is not None and part in spans:
            a, b = spans[part]
        if a is None:
            unplaced += 1
            continue
        b = a if b is None or b < a else b
        if part is not None and part in spans and a <= spans[part][1] and b >= spans[part][0]:
            # Within its part (a hang's range runs to the job's end, past its own part's last event).
            a, b = max(a, spans[part][0]), min(b, spans[part][1])
        gain = r.get("gain_ns")
        gain = None if gain is None or (isinstance(gain, float) and math.isnan(gain)) else float(gain)
        marks.append({"t0": float(a - origin), "t1": float(b - origin), "severity": str(r.get("severity", "low")),
                      "rule": str(r.get("rule", "")), "title": str(r.get("title", "")), "gain_ns": gain,
                      "part": part})
    return marks, unplaced


def marks_text(marks: list[dict[str, Any]], unplaced: int, total: int) -> str:
    """The toolbar's line: how many findings are marked, of which severity."""
    if total == 0:
        return "findings: none (no rule fired)"
    counts = {s: sum(m["severity"] == s for m in marks) for s in SEVERITY_ORDER}
    said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    text = f"{len(marks)} finding{'s' if len(marks) != 1 else ''} marked ({said})" if marks else "findings: none to mark"
    if unplaced:
        text += f"; {unplaced} without a time range, in analysis.findings only"
    return text


class FindingMarks(t.HasTraits):
    """Mixin for the Timeline: the `findings` toggle, its computation in the background, its marks."""

    # The findings marked on the overview strip (toolbar toggle); hover names one, a click fits the view to it.
    findings = t.Bool(False).tag(sync=True)
    # The toolbar offers the toggle for a Profile's and a job's timeline. Not in the Device Trace Viewer:
    # a device trace's findings span its whole execution (no place to point at; its Summary lists
    # them), and its toolbar keeps to one line. `viewer.findings = True` still marks them.
    findings_available = t.Bool(True).tag(sync=True)
    # {state: "computing" | "shown" | "none", text, marks: [{t0, t1, severity, rule, title, gain_ns, part}]}
    findings_info = t.Dict({}).tag(sync=True)

    _findings_token = 0
    _findings_cache: tuple[Any, pd.DataFrame] | None = None

    @t.default("findings_available")
    def _findings_offered(self) -> bool:
        return not hasattr(type(self), "device_trace")

    def _findings_subject(self) -> tuple[Any, Callable[[], pd.DataFrame], Mapping[str, tuple[int, int]]]:
        """What the findings are of (the cache's key), how to compute them, and parts' spans (jobs)."""
        if hasattr(type(self), "device_trace"):  # a DeviceTraceViewer: the device trace's own rules
            trace = self.device_trace  # type: ignore[attr-defined]
            return trace, lambda: analysis.findings(trace), {}
        profile = self.profile  # type: ignore[attr-defined]
        return profile, lambda: analysis.findings(profile), {}

    @t.observe("findings")
    def _findings_toggled(self, change: dict[str, Any]) -> None:
        if change["new"]:
            if hasattr(self, "_painted"):  # else `Timeline(p, findings=True)`: showing the profile starts them
                self._start_findings()
        else:
            self._findings_token += 1
            if self.findings_info.get("state") != "none":
                self.findings_info = {}

    def _start_findings(self) -> None:
        """Compute in a thread (the click returns at once), after the first view is answered; then mark."""
        self._findings_token += 1
        token = self._findings_token
        self.findings_info = {"state": "computing", "text": "findings: computing…", "marks": []}

        def work() -> None:
            painted = getattr(self, "_painted", None)
            if painted is not None:
                painted.wait(PAINT_WAIT_S)
            try:
                key, compute, spans = self._findings_subject()
                # One computation per widget at a time: a second request waits for the first's answer.
                with self.__dict__.setdefault("_findings_lock", threading.Lock()):
                    cached = self._findings_cache
                    if cached is not None and cached[0] is key:
                        found = cached[1]
                    else:
                        found = compute()
                        self._findings_cache = (key, found)
                marks, unplaced = finding_marks(found, self.profile.origin_ts, spans)  # type: ignore[attr-defined]
            except Exception as exc:  # said in the widget; the toggle goes off
                if token == self._findings_token:
                    with self.hold_sync():  # type: ignore[attr-defined]  # a mixin: the widget it is mixed into has it
                        self.findings = False
                        self.findings_info = {"state": "none", "marks": [],
                                              "text": f"findings unavailable: {type(exc).__name__}: {exc}"}
                return
            if token != self._findings_token or not self.findings:
                return  # switched off, or another profile, meanwhile
            text = marks_text(marks, unplaced, len(found))
            if len(marks) > MAX_MARKS:
                text += f" (the first {MAX_MARKS} by gain drawn)"
            self.findings_info = {"state": "shown", "text": text, "marks": marks[:MAX_MARKS]}

        threading.Thread(target=work, name="neuron-widgets-findings", daemon=True).start()
