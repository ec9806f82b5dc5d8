"""The Summary's "Did the fix work" section: `Summary(after, compare=before)`, the runs step by step.

Its headline, a bar per matched step with its change (after - before; green: faster), and the
findings gone, new and changed with the before-run's predicted gain beside the measured saving.
All text is data: the headline a Div rendered as text, titles in table cells through a text
formatter, step labels on hover.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, Div, FixedTicker, HoverTool, Range1d, StringFormatter, TableColumn

from ..analysis import compare as compare_runs
from ..model.profile import Profile
from ..model.timefmt import duration
from . import charts as C

FASTER, SLOWER = "#2ca02c", "#d62728"
LABEL = {"color": "var(--jp-ui-font-color1, #1f2328)", "font-weight": "600", "font-size": "13px"}
# An export rebuilds the Summary's charts: the comparison of the same two profiles is kept, not run again.
_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def comparison_of(before: Profile, after: Profile) -> Any:
    """`compare(before, after, by="step")`, once per pair of profiles (kept while `after` lives)."""
    per = _KEPT.setdefault(after, {})
    key = id(before)
    got = per.get(key)
    if got is None or got[0]() is not before:
        got = (weakref.ref(before), compare_runs(before, after, by="step"))
        per[key] = got
    return got[1]


class FixSection:
    """The section's bokeh parts (`parts`, in order) and its figures (`figures`, for the theme)."""

    def __init__(self, before: Profile, after: Profile) -> None:
        title = Div(text="Did the fix work: this profile (after) against the compared one (before)",
                    render_as_text=True, styles=LABEL, name="nw-fix-title")
        try:
            self.result = comparison_of(before, after)
            said = self.result.headline
        except Exception as exc:  # the rest of the Summary goes on; the section says why it is empty
            self.result = None
            said = f"The two profiles could not be compared step by step: {type(exc).__name__}: {exc}"
        self.head = Div(text=singular_steps(said), render_as_text=True, sizing_mode="stretch_width", name="nw-fix-headline",
                        styles={"color": "var(--jp-ui-font-color1, #1f2328)", "font-size": "13px"})
        # No matched step: no chart (an empty box with a title says nothing the headline does not).
        self.chart = (step_chart(self.result.steps, after.origin_ts)
                      if self.result is not None and matched_steps(self.result.steps) else None)
        self.table = findings_table(self.result.findings) if self.result is not None else None
        self.same = Div(text=same_text(self.result.findings), render_as_text=True, name="nw-fix-same",
                        styles={"color": "var(--jp-ui-font-color2, #57606a)", "font-size": "12px"}) \
            if self.result is not None and same_text(self.result.findings) else None
        self.parts = [p for p in (title, self.head, self.chart, self.table, self.same) if p is not None]
        self.figures = [self.chart] if self.chart is not None else []
        self.layout = column(*self.parts, sizing_mode="stretch_width", name="nw-fix")


def singular_steps(said: str) -> str:
    """'1 steps matched' said as '1 step matched' (the analysis words every count in the plural)."""
    return re.sub(r"(?<![\d,.])1 steps\b", "1 step", said)


def matched_steps(steps: pd.DataFrame) -> int:
    return int((steps["status"] == "matched").sum()) if len(steps) and "status" in steps else 0


def same_text(table: pd.DataFrame) -> str:
    """'3 findings unchanged' (the rows the table leaves out), '' when none is."""
    n = int((table["status"] == "same").sum()) if len(table) and "status" in table else 0
    return f"{n} finding{'' if n == 1 else 's'} unchanged (not listed)" if n else ""


def step_columns(steps: pd.DataFrame, origin: int) -> dict[str, list]:
    """A bar per matched step, in the before-run's order: its change in µs, and what hover says."""
    m = steps[steps["status"] == "matched"] if len(steps) else steps
    n = len(m)
    if n == 0:
        return {k: [] for k in ("x", "delta_us", "color", "neff", "step", "before", "after", "delta", "t0", "t1",
                                "event_id")}
    delta = m["delta_ns"].astype(np.int64).to_numpy()
    start = m["start_after_ts"].astype(np.int64).to_numpy() - origin
    length = m["duration_after_ns"].astype(np.int64).to_numpy()
    pct = m["delta_pct"].to_numpy(float)
    return {"x": list(range(n)), "delta_us": (delta / 1e3).tolist(),
            "color": [FASTER if d < 0 else SLOWER for d in delta],
            "neff": ["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in m["model_name"]],
            "step": [f"{int(b)} → {int(a)}" if b != a else str(int(b)) for b, a in zip(m["step_before"],
                                                                                         m["step_after"], strict=True)],
            "before": [duration(v) for v in m["duration_before_ns"]],
            "after": [duration(v) for v in m["duration_after_ns"]],
            "delta": [("-" if d < 0 else "+") + duration(abs(d)) + (f" ({p:+.1f}%)" if np.isfinite(p) else "")
                      for d, p in zip(delta, pct, strict=True)],
            # the after-run's step, ns from its origin (the Summary's profile): where a click fits the Timeline
            "t0": start.astype(float).tolist(), "t1": (start + length).astype(float).tolist(),
            "event_id": [""] * n}  # a step selects no event (the Summary's step click reads the column)


def step_chart(steps: pd.DataFrame, origin: int, name: str = "nw-fix-steps") -> Any:
    """Each matched step's change in duration (µs, after - before): below zero it got faster. In the notebook a
    bar's click fits the Summary's Timeline to that step of the after-run."""
    cols = step_columns(steps, origin)
    src = ColumnDataSource(data=cols, name=name)
    f = C._figure("Change per step (after - before, µs; below zero: faster)", 240, name,
                  x_axis_label="step (in the before-run's order)", tools="tap")
    bars = f.vbar(x="x", top="delta_us", width=0.8, color="color", line_color=None, source=src)
    f.add_tools(HoverTool(renderers=[bars], tooltips=[("NEFF", "@neff"), ("step", "@step"), ("before", "@before"),
                                                      ("after", "@after"), ("change", "@delta")]))
    f.xgrid.grid_line_color = None
    f.ygrid.grid_line_color = C.THEMES["light"]["grid"]
    # Whole steps on the axis, at least five steps' room so a lone bar is a bar, not the whole chart.
    n = len(cols["x"])
    room = max(n, 5)
    f.x_range = Range1d(start=(n - 1) / 2 - room / 2, end=(n - 1) / 2 + room / 2)
    every = max(1, -(-n // 20))
    f.xaxis.ticker = FixedTicker(ticks=list(range(0, n, every)))
    f.xaxis.minor_tick_line_color = None
    return f


def findings_columns(table: pd.DataFrame) -> dict[str, list]:
    """A row per finding, gone first: what it said (before's words; a new one's, after's) and the numbers."""
    def ns(v: Any) -> str:
        return "" if v is None or pd.isna(v) else duration(float(v))

    title = [a if s == "new" else b for s, b, a in zip(table["status"], table["title_before"], table["title_after"],
                                                        strict=True)]
    return {"status": [str(s) for s in table["status"]], "rule": [str(r) for r in table["rule"]],
            "who": ["" if w is None or (isinstance(w, float) and np.isnan(w)) else str(w) for w in table["who"]],
            "predicted": [ns(v) for v in table["predicted_gain_ns"]],
            "measured": [ns(v) for v in table["measured_saving_ns"]],
            "after": [ns(v) for v in table["gain_after_ns"]],
            "title": ["" if t is None or (isinstance(t, float) and np.isnan(t)) else str(t) for t in title]}


# field: (header, width px); a width holds its header (headers do not wrap) and an instance/pid/core id whole.
FINDING_COLUMNS = {"status": ("status", 60), "rule": ("rule", 100), "who": ("who", 235),
                   "predicted": ("predicted gain (before)", 170), "measured": ("measured saving", 120),
                   "after": ("gain left (after)", 125), "title": ("finding", 420)}


def findings_table(table: pd.DataFrame, name: str = "nw-fix-findings") -> Any:
    """The findings of either run: status, rule, who, predicted gain (before), measured saving, gain left (after)."""
    shown = table[table["status"] != "same"] if len(table) else table
    if shown.empty:
        cols = {"status": ["none"], "rule": [""], "who": [""], "predicted": [""], "measured": [""], "after": [""],
                "title": ["no finding is gone, new or changed"]}
    else:
        cols = findings_columns(shown)
    text = StringFormatter()
    columns = [TableColumn(field=k, title=t, formatter=text, width=w) for k, (t, w) in FINDING_COLUMNS.items()]
    # Widths kept as given (a fitted table rescales them, and from no width makes them all equal); the rows
    # as tall as the longest wrapped cell.
    lines = max((C.wrapped_lines(v, C.per_line(FINDING_COLUMNS[k][1])) for k in ("who", "title") for v in cols[k]),
                default=1)
    return C.text_table(ColumnDataSource(data=cols, name=name), columns, len(cols["status"]), f"{name}-table",
                        row_px=C.LINE_PX * min(max(lines, 2), 14) + 6, autosize="none")
