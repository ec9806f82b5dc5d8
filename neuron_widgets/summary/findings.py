"""The Summary's findings: the top findings as lines (severity, the title as text, the gain a fix would buy),
each with the window a click fits the timeline to, and a toggle that shows them all.

Built from `analysis.findings` (one frame, largest gain first). The table's source holds every
finding; a view filter shows the first TOP until the toggle (`<name>-more`) asks for all: the widget
wires the toggle to `expand` (a Python callback, never put in an export), an exported page does
the same in js/src/export/summary.ts. `t0`/`t1` are ns from
the origin the widget's timeline counts from (NaN: the finding has no place), `part` names a job's
part. Titles are profile text: they reach the page only as column data, drawn as text.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from bokeh.layouts import column
from bokeh.models import CDSView, ColumnDataSource, IndexFilter, InlineStyleSheet
from bokeh.models.widgets import DataTable, Div, StringFormatter, TableColumn, Toggle

from ..model.timefmt import duration
from . import charts as C

TOP = 5  # findings shown before "show all"
LINE_PX = 15  # a line of wrapped text in a cell (charts.TABLE_CSS)
# Each column's width in px, kept as given (autosize "none"): a table fitted to its width scales the columns
# from whatever widths it had, and a first layout at no width leaves them all equal (severity a quarter of
# the table, titles cut). Fixed widths let the rows be as tall as the wrapped text really is.
WIDTHS = {"severity": 76, "finding": 500, "gain": 150, "advice": 300}
MAX_LINES = 14  # a row taller than this scrolls inside the table's rows (a title is 2-6 lines)
SHOWN_ROWS = 12  # all shown: rows before the table scrolls
# A table whose columns keep their widths (autosize "none") is narrower than a wide page: SlickGrid draws the header's
# rule under its whole header strip (thousands of px), past the last column. The rule goes under each header cell,
# drawn inside it (a border there is refused by SlickGrid's own `!important`, and would change the header's height).
HEADER_RULE_CSS = """.slick-header-columns { border-bottom: none !important; }
.slick-header-column { box-shadow: inset 0 -1px 0 var(--nw-line, #d0d7de); }"""
SEVERITY_COLORS = {"high": "#d62728", "medium": "#e07b00", "low": "#8a8f98"}
LABEL: dict[str, str | None] = {"color": "var(--jp-ui-font-color1, #1f2328)", "font-weight": "600",
                                "font-size": "13px"}
# The toggle in the page's colours (JupyterLab's, or the exported page's), light or dark.
BUTTON_CSS = """.bk-btn { color: var(--jp-ui-font-color1, #1f2328) !important;
  background: var(--jp-layout-color2, #f6f8fa) !important; border: 1px solid var(--jp-border-color2, #d0d7de) !important; }
.bk-btn:hover, .bk-btn.bk-active { background: var(--jp-layout-color1, #eaeef2) !important; box-shadow: none !important; }"""


def gain_text(gain_ns: float, span_ns: int) -> str:
    """'saves ~80.7 ms (61.3%)' of the run's span; 'gain not modelled' where the rule cannot predict one."""
    if gain_ns is None or not math.isfinite(float(gain_ns)):
        return "gain not modelled"
    if gain_ns <= 0:
        return "saves nothing (off the critical path)"
    share = f" ({100.0 * gain_ns / span_ns:.1f}%)" if span_ns > 0 else ""
    return f"saves ~{duration(gain_ns)}{share}"


def finding_columns(f: pd.DataFrame | None, origin: int, span_ns: int,
                    clip: tuple[int, int] | None = None) -> dict[str, list[Any]]:
    """One row per finding in the frame's order (None: not looked for yet, said in one row); windows within
    `clip` (absolute ns) when given."""
    if f is None or f.empty:
        said = "looking for findings…" if f is None else "no finding: no rule's threshold was crossed in what is summarised"
        return {"severity": [""], "color": ["#8a8f98"], "finding": [said], "gain": [""], "advice": [""],
                "t0": [float("nan")], "t1": [float("nan")], "part": [""], "rule": [""]}

    # The window a click fits (an instant widened), as the widget's own click does: the page reads these.
    windows = [window_of(f, i, clip) for i in range(len(f))]
    nan = float("nan")

    def text(v: Any) -> str:
        return "" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v)

    sev = [text(s) for s in f["severity"]]
    return {"severity": sev, "color": [SEVERITY_COLORS.get(s, "#8a8f98") for s in sev],
            "finding": [text(t) for t in f["title"]], "gain": [gain_text(g, span_ns) for g in f["gain_ns"]],
            "advice": [text(a) for a in f["advice"]], "t0": [float(w[0] - origin) if w else nan for w in windows],
            "t1": [float(w[1] - origin) if w else nan for w in windows],
            "part": [text(p) for p in f["part"]], "rule": [text(r) for r in f["rule"]]}


def window_of(f: pd.DataFrame, i: int, clip: tuple[int, int] | None = None) -> tuple[int, int] | None:
    """Finding i's place (absolute ns), widened to a few microseconds when it is an instant, within `clip` (what a
    viewer can show: a device execution's recorded end may pass its last instruction); None without one."""
    if not 0 <= i < len(f):
        return None
    a, b = f["start_ts"].iloc[i], f["end_ts"].iloc[i]
    if a is None or pd.isna(a):
        return None
    a = int(a)
    b = int(b) if b is not None and not pd.isna(b) else a
    a, b = (a, b) if b > a else (a - 10_000, a + 10_000)
    if clip is not None and clip[1] > clip[0]:
        a, b = max(a, clip[0]), min(b, clip[1])
        if b <= a:  # wholly outside: the nearest edge of what can be shown
            a, b = (clip[0], min(clip[0] + 20_000, clip[1])) if b <= clip[0] else (max(clip[1] - 20_000, clip[0]),
                                                                                      clip[1])
    return a, b


class FindingsSection:
    """The findings lines: a label, the table, the toggle to show all, and what could not be decided."""

    def __init__(self, findings: pd.DataFrame | None, origin: int, span_ns: int, name: str = "nw-findings",
                 clip: tuple[int, int] | None = None) -> None:
        self.name = name
        self.frame = findings
        self.clip = clip
        text = StringFormatter()
        cols = finding_columns(findings, origin, span_ns, clip)
        self.source = ColumnDataSource(cols, name=name)
        n = len(cols["finding"])
        self.filter = IndexFilter(indices=list(range(min(n, TOP))), name=f"{name}-filter")
        columns = [TableColumn(field="severity", title="severity", formatter=StringFormatter(text_color="color",
                                                                                             font_style="bold"),
                               width=WIDTHS["severity"]),
                   TableColumn(field="finding", title="finding", formatter=text, width=WIDTHS["finding"]),
                   TableColumn(field="gain", title="what a fix buys", formatter=text, width=WIDTHS["gain"]),
                   TableColumn(field="advice", title="what to try", formatter=text, width=WIDTHS["advice"])]
        self.row_px = row_px(cols)
        self.table = DataTable(reorderable=False, source=self.source, columns=columns, view=CDSView(filter=self.filter),
                               height=self._height(min(n, TOP)), row_height=self.row_px, sizing_mode="stretch_width",
                               autosize_mode="none", index_position=None, stylesheets=[C._table_css(), header_rule()],
                               name=f"{name}-table", css_classes=[f"{name}-table"],
                               max_width=sum(WIDTHS.values()) + 2)  # on a wide page, it ends with its last column
        self.more = Toggle(label=self._label(n, False), active=False, visible=n > TOP, name=f"{name}-more",
                           width=220, tags=[self._states(n)], stylesheets=[InlineStyleSheet(css=BUTTON_CSS)])
        self.notes = Div(text=_notes(findings), render_as_text=True, name=f"{name}-notes", sizing_mode="stretch_width",
                         styles={"color": "var(--jp-ui-font-color2, #57606a)", "font-size": "12px"})
        self.label = Div(text="What to fix first (click a finding to see where it happens)", render_as_text=True,
                         styles=LABEL, name=f"{name}-label")
        self.layout = column(self.label, self.table, self.more, self.notes, sizing_mode="stretch_width",
                             name=f"{name}-section")

    def _height(self, rows: int) -> int:
        return C.HEADER_PX + self.row_px * min(max(rows, 1), SHOWN_ROWS) + 4

    @staticmethod
    def _label(n: int, shown: bool) -> str:
        return f"Show the top {TOP}" if shown else f"Show all {n} findings"

    def _states(self, n: int) -> dict[str, dict[str, Any]]:
        """What the toggle's two states show (an exported page reads them from the toggle's tags)."""
        return {str(shown).lower(): {"rows": rows, "height": self._height(rows), "label": self._label(n, shown)}
                for shown, rows in ((False, min(n, TOP)), (True, n))}

    def update(self, findings: pd.DataFrame | None, origin: int, span_ns: int) -> None:
        """New findings (a brushed range's, or the whole profile's once they are in)."""
        self.frame = findings
        self.source.selected.indices = []
        cols = finding_columns(findings, origin, span_ns, self.clip)
        n = len(cols["finding"])
        self.row_px = row_px(cols)
        self.table.row_height = self.row_px
        self.more.visible = n > TOP
        self.more.active = False  # collapses the table (expand runs on the change)
        # The browser applies each change in turn: indices past the rows it holds (or rows past the indices)
        # are out-of-bounds reads in BokehJS, so the view is emptied, the rows replaced, then the view set.
        self.filter.indices = []
        self.source.data = cols
        self.filter.indices = list(range(min(n, TOP)))
        self.table.height = self._height(min(n, TOP))
        self.more.label = self._label(n, False)
        self.more.tags = [self._states(n)]
        self.notes.text = _notes(findings)

    def window(self, i: int) -> tuple[int, int] | None:
        """Where finding i's click goes (absolute ns), as the page's columns say."""
        return window_of(self.frame, i, self.clip) if self.frame is not None else None

    def expand(self, shown: bool) -> None:
        """All findings (shown) or the top TOP."""
        n = len(self.source.data["finding"])
        rows = n if shown else min(n, TOP)
        self.filter.indices = list(range(rows))
        self.table.height = self._height(rows)
        self.more.label = self._label(n, shown)


def header_rule() -> InlineStyleSheet:
    """The header's rule under its columns only (a model belongs to one document: one per table)."""
    return InlineStyleSheet(css=HEADER_RULE_CSS)


def per_line(col: str) -> int:
    """Characters a line of column `col` holds at its fixed width."""
    return C.per_line(WIDTHS[col])


def row_px(cols: dict[str, list[Any]]) -> int:
    """The rows' height (one for all, as the grid draws them): the lines the longest wrapped cell needs."""
    lines = max((C.wrapped_lines(v, per_line(col)) for col in ("finding", "gain", "advice") for v in cols[col]),
                default=1)
    return LINE_PX * min(max(lines, 2), MAX_LINES) + 6


def _notes(f: pd.DataFrame | None) -> str:
    notes = [str(n) for n in (f.attrs.get("notes", []) if f is not None else []) if str(n).strip()]
    return ("Notes: " + "; ".join(dict.fromkeys(notes)) + ".") if notes else ""

