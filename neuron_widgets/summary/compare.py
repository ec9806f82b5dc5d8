"""The Summary's "Did the fix work" section: `Summary(after, compare=before)` (two profiles or two jobs), step by step.

Its headline, a bar per matched step with its change (after - before; green: faster), and the
findings gone, new and changed with the before-run's predicted gain beside the run's saving (on gone
findings only) and the evidence figures that moved. The comparison is the Summary's last analysis: the section
says it is comparing until it is in. All text is data: the headline a Div rendered as text,
titles in table cells through a text formatter, step labels on hover.
"""

from __future__ import annotations

import re
import threading
import weakref
from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Range1d
from bokeh.models.widgets import Div, StringFormatter, TableColumn

from ..analysis import compare as compare_runs
from ..model.timefmt import duration
from . import charts as C
from .findings import header_rule

FASTER, SLOWER = "#2ca02c", "#d62728"
LABEL: dict[str, str | None] = {"color": "var(--jp-ui-font-color1, #1f2328)", "font-weight": "600",
                                "font-size": "13px"}
PENDING = "Comparing the two runs step by step (their steps and findings), after the other sections…"
# An export rebuilds the Summary's charts: the comparison of the same two runs is kept, not run again.
_KEPT: weakref.WeakKeyDictionary[Any, dict[int, tuple[Any, Any]]] = weakref.WeakKeyDictionary()
_COMPUTING = threading.Lock()  # one comparison at a time: a brushed range's rerun waits for the first, then reuses it


def comparison_of(before: Any, after: Any, client: Any = None) -> Any:
    """`compare(before, after, by="step")`, once per pair of profiles or jobs (kept while `after` lives)."""
    with _COMPUTING:
        per = _KEPT.setdefault(after, {})
        key = id(before)
        got = per.get(key)
        if got is None or got[0]() is not before:
            kw = {"client": client} if client is not None else {}
            got = (weakref.ref(before), compare_runs(before, after, by="step", **kw))
            per[key] = got
        return got[1]


def fix_steps(charts: Any) -> tuple[tuple[str, Any, tuple[str, ...]], ...]:
    """The Summary's last analysis when it compares: the comparison, after every other section has painted."""
    fix = getattr(charts, "fix", None)
    if fix is None:
        return ()
    return (("comparison", lambda: {"fix": fix.compute()}, ("fix",)),)


class FixSection:
    """The section's bokeh parts (`parts`, in order) and its figures (`figures`, for the theme).

    Built at once with its comparison, or `later`: it says it is comparing until `fill` gets the comparison
    (`compute()` runs it; the Summary does so last, in the background).
    """

    def __init__(self, before: Any, after: Any, origin: int | None = None, *, later: bool = False,
                 client: Any = None, what: str = "profile") -> None:
        self.before, self.after, self.client = before, after, client
        self.origin = int(origin if origin is not None else getattr(after, "origin_ts", 0))
        self.result: Any = None
        self.filled = False
        title = Div(text=f"Did the fix work: this {what} (after) against the compared one (before)",
                    render_as_text=True, styles=LABEL, name="nw-fix-title")
        self.head = Div(text=PENDING, render_as_text=True, sizing_mode="stretch_width", name="nw-fix-headline",
                        styles={"color": "var(--jp-ui-font-color1, #1f2328)", "font-size": "13px"})
        # Drawn empty and hidden until there is something to draw: no matched step, no chart (an empty box with a
        # title says nothing the headline does not).
        self.chart = step_chart(pd.DataFrame(columns=["status"]), self.origin)
        self.chart.visible = False
        self.table = findings_table(pd.DataFrame(columns=["status"]))
        self.table.visible = False
        self.same = Div(text="", render_as_text=True, name="nw-fix-same", visible=False,
                        styles={"color": "var(--jp-ui-font-color2, #57606a)", "font-size": "12px"})
        self.parts = [title, self.head, self.chart, self.table, self.same]
        self.figures = [self.chart]
        self.layout = column(*self.parts, sizing_mode="stretch_width", name="nw-fix")
        if not later:
            self.fill(self.compute())

    def compute(self) -> Any:
        """The comparison, or the exception that stopped it (said in the section, never raised into the Summary)."""
        try:
            return comparison_of(self.before, self.after, self.client)
        except Exception as exc:  # the rest of the Summary goes on; the section says why it is empty
            return exc

    def fill(self, got: Any) -> None:
        """Show a comparison (or why there is none)."""
        self.filled = True
        if isinstance(got, BaseException) or got is None:
            self.result = None
            why = f"{type(got).__name__}: {got}" if got is not None else "nothing to compare"
            self.head.text = f"The two runs could not be compared step by step: {why}"
            self.chart.visible = self.table.visible = self.same.visible = False
            return
        self.result = got
        self.head.text = singular_steps(got.headline)
        fit_step_chart(self.chart, step_columns(got.steps, self.origin))
        self.chart.visible = matched_steps(got.steps) > 0
        fill_findings_table(self.table, got.findings)
        self.table.visible = True
        self.same.text = same_text(got.findings)
        self.same.visible = bool(self.same.text)


def singular_steps(said: str) -> str:
    """'1 steps matched' said as '1 step matched' (the analysis words every count in the plural)."""
    return re.sub(r"(?<![\d,.])1 steps\b", "1 step", said)


def matched_steps(steps: pd.DataFrame) -> int:
    return int((steps["status"] == "matched").sum()) if len(steps) and "status" in steps else 0


def same_text(table: pd.DataFrame) -> str:
    """'3 findings unchanged' (the rows the table leaves out), '' when none is."""
    n = int((table["status"] == "same").sum()) if len(table) and "status" in table else 0
    return f"{n} finding{'' if n == 1 else 's'} unchanged (not listed)" if n else ""


def step_columns(steps: pd.DataFrame, origin: int) -> dict[str, list[Any]]:
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
    f.x_range = Range1d(start=0, end=1)
    f.xaxis.ticker = FixedTicker(ticks=[])
    f.xaxis.minor_tick_line_color = None
    fit_step_chart(f, cols)
    return f


def fit_step_chart(f: Any, cols: dict[str, list[Any]]) -> None:
    """The bars' data, whole steps on the axis, and at least five steps' room so a lone bar is a bar."""
    src = f.select_one({"type": ColumnDataSource})
    if src.data is not cols:
        src.data = cols
    n = len(cols["x"])
    room = max(n, 5)
    f.x_range.start, f.x_range.end = (n - 1) / 2 - room / 2, (n - 1) / 2 + room / 2
    every = max(1, -(-n // 20))
    f.xaxis[0].ticker.ticks = list(range(0, n, every))


def figure_text(name: str, v: float) -> str:
    """An evidence figure as the titles write it: nanoseconds as a duration, shares in per cent."""
    if name.endswith("_ns"):
        return duration(v)
    if "share" in name:
        return f"{100 * v:.1f}%"
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.3g}"


def change_text(figures: Any) -> str:
    """'wait_ns 1 ms → 6 ms (6.0x)' per figure that moved, '' for none."""
    if not isinstance(figures, dict):
        return ""
    said = []
    for k, (b, a) in figures.items():
        times = f" ({a / b:.1f}x)" if b and np.isfinite(a / b) and a / b > 0 else ""
        said.append(f"{k} {figure_text(k, b)} → {figure_text(k, a)}{times}")
    return "; ".join(said)


def _text(v: Any) -> str:
    return "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)


def findings_columns(table: pd.DataFrame) -> dict[str, list[Any]]:
    """A row per finding, gone first: what it said (before's words; a new one's, after's) and the numbers."""
    def ns(v: Any) -> str:
        return "" if v is None or pd.isna(v) else duration(float(v))

    title = [a if s == "new" else b for s, b, a in zip(table["status"], table["title_before"], table["title_after"],
                                                        strict=True)]
    after = table["who_after"] if "who_after" in table else table["who"]
    # The same worker on other machines: both its labels, each as that run's Timeline shows it.
    who = [_text(w) if not _text(a) or _text(a) == _text(w) else f"{_text(w)} → {_text(a)}"
           for w, a in zip(table["who"], after, strict=True)]
    figures = table["figures_changed"] if "figures_changed" in table else [None] * len(table)
    notes = table["note"] if "note" in table else [""] * len(table)  # against the rule's bar in the other run
    return {"status": [str(s) for s in table["status"]], "rule": [str(r) for r in table["rule"]], "who": who,
            "predicted": [ns(v) for v in table["predicted_gain_ns"]],
            "run_saving": [ns(v) for v in table["run_saving_ns"]],
            "after": [ns(v) for v in table["gain_after_ns"]],
            "change": ["; ".join(t for t in (change_text(f), _text(n)) if t) for f, n in zip(figures, notes, strict=True)],
            "title": [_text(t) for t in title]}


# field: (header, width px); a width holds its header and its longest word ("comparable", "exposed_collectives"):
# neither wraps mid-word; "who" holds a core's track label (`i-0a88e4da06d80cbd2/PID:2624383/neuron_rt/NC:1`) on
# one line; a note (where a finding stood against its bar) takes a few lines. The sum (1,501 px) fits a 1,600 px
# page; in a narrower one the table scrolls sideways.
FINDING_COLUMNS = {"status": ("status", 80), "rule": ("rule", 130), "who": ("who", 324),
                   "predicted": ("predicted (before)", 132),
                   "run_saving": ("run saved (whole run)", 160), "after": ("gain left (after)", 125),
                   "change": ("evidence moved / note", 250), "title": ("finding", 300)}


def findings_data(table: pd.DataFrame) -> tuple[dict[str, list[Any]], int]:
    """The table's rows (those gone, new or changed) and their height: as tall as the longest wrapped cell."""
    shown = table[table["status"] != "same"] if len(table) else table
    if shown.empty:
        cols = {k: [""] for k in FINDING_COLUMNS}
        cols["status"], cols["title"] = ["none"], ["no finding is gone, new or changed"]
    else:
        cols = findings_columns(shown)
    lines = max((C.wrapped_lines(v, C.per_line(FINDING_COLUMNS[k][1])) for k in ("who", "change", "title")
                 for v in cols[k]), default=1)
    return cols, C.LINE_PX * min(max(lines, 2), 14) + 6


def findings_table(table: pd.DataFrame, name: str = "nw-fix-findings") -> Any:
    """The findings of either run: status, rule, who, predicted gain (before), the run's saving (on a gone finding
    only: no finding's own), gain left (after), the evidence figures that moved (a new one's: why it may be new)."""
    cols, row_px = findings_data(table)
    text = StringFormatter()
    columns = [TableColumn(field=k, title=t, formatter=text, width=w) for k, (t, w) in FINDING_COLUMNS.items()]
    # Widths kept as given (a fitted table rescales them, and from no width makes them all equal).
    t = C.text_table(ColumnDataSource(data=cols, name=name), columns, len(cols["status"]), f"{name}-table",
                     row_px=row_px, autosize="none")
    # Narrower than a wide page: the table (and its rule, its background) ends with its last column.
    t.stylesheets = [*t.stylesheets, header_rule()]
    t.max_width = sum(w for _, w in FINDING_COLUMNS.values()) + 2
    return t


def fill_findings_table(t: Any, table: pd.DataFrame) -> None:
    cols, row_px = findings_data(table)
    t.source.data = cols
    t.row_height = row_px
    t.height = C.table_height(len(cols["status"]), row_px)
