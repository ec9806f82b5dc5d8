"""The Summary's "Did the fix work" section: `Summary(after, compare=before)`, the runs step by step.

Its headline, a bar per matched step with its change (after - before; green: faster), and the
findings gone, new and changed with the before-run's predicted gain beside the measured saving.
All text is data: the headline a Div rendered as text, titles in table cells through a text
formatter, step labels on hover.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, Div, HoverTool, StringFormatter, TableColumn

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
        self.head = Div(text=said, render_as_text=True, sizing_mode="stretch_width", name="nw-fix-headline",
                        styles={"color": "var(--jp-ui-font-color1, #1f2328)", "font-size": "13px"})
        self.chart = step_chart(self.result.steps, after.origin_ts) if self.result is not None else None
        self.table = findings_table(self.result.findings) if self.result is not None else None
        self.parts = [p for p in (title, self.head, self.chart, self.table) if p is not None]
        self.figures = [self.chart] if self.chart is not None else []
        self.layout = column(*self.parts, sizing_mode="stretch_width", name="nw-fix")


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


def findings_table(table: pd.DataFrame, name: str = "nw-fix-findings") -> Any:
    """The findings of either run: status, rule, who, predicted gain (before), measured saving, gain left (after)."""
    shown = table[table["status"] != "same"] if len(table) else table
    if shown.empty:
        cols = {"status": ["none"], "rule": [""], "who": [""], "predicted": [""], "measured": [""], "after": [""],
                "title": ["no finding is gone, new or changed"]}
    else:
        cols = findings_columns(shown)
    text = StringFormatter()
    columns = [TableColumn(field="status", title="status", formatter=text, width=70),
               TableColumn(field="rule", title="rule", formatter=text, width=120),
               TableColumn(field="who", title="who", formatter=text, width=160),
               TableColumn(field="predicted", title="predicted gain (before)", formatter=text, width=110),
               TableColumn(field="measured", title="measured saving", formatter=text, width=100),
               TableColumn(field="after", title="gain left (after)", formatter=text, width=100),
               TableColumn(field="title", title="finding", formatter=text, width=520)]
    return C.text_table(ColumnDataSource(data=cols, name=name), columns, len(cols["status"]), f"{name}-table")
