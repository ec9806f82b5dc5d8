"""Bokeh charts of the analyses. Each builder returns a bokeh model usable alone (`show(temporal_chart(df))`).

Profile text (names, NEFFs, instance ids) reaches the charts only as column data, which bokeh
draws as text on a canvas or in table cells through its text formatters; Divs are rendered as
text (`render_as_text`). Sources carry stable names ("nw-<chart>") so the widget and the
exported page find them to link clicks to the timeline.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column, row
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    DataTable,
    Div,
    FactorRange,
    HoverTool,
    InlineStyleSheet,
    Legend,
    LegendItem,
    NumberFormatter,
    StringFormatter,
    TableColumn,
    TapTool,
)
from bokeh.plotting import figure

from ..model.profile import Profile
from . import data as D

COLORS = {"compute": "#2f7ed8", "collective": "#8bbc21", "barrier": "#f28f43", "idle": "#c7c7c7",
          "non_compute": "#8bbc21", "busy": "#2f7ed8", "host_wait": "#e4572e", "kernel_wait": "#f3a712", "other": "#a0a4a8"}
LINE_COLORS = ["#2f7ed8", "#e4572e", "#8bbc21", "#910000", "#1aadce", "#492970", "#f28f43", "#77a1e5"]
THEMES = {"light": {"text": "#1f2328", "muted": "#57606a", "grid": "#d0d7de"},
          "dark": {"text": "#e6edf3", "muted": "#9da7b3", "grid": "#3d444d"}}
# DOM parts (Divs, tables) take JupyterLab's own colours, so they follow its theme by themselves.
TABLE_CSS = """
:host { --nw-fg: var(--jp-ui-font-color1, #1f2328); --nw-bg: var(--jp-layout-color1, #fff);
        --nw-line: var(--jp-border-color2, #d0d7de); }
.slick-header-column, .slick-cell, .slick-row, .bk-data-table, .slick-viewport, .grid-canvas
  { color: var(--nw-fg) !important; background: var(--nw-bg) !important; border-color: var(--nw-line) !important; }
.slick-row.active .slick-cell, .slick-cell.selected { background: rgba(47, 126, 216, .25) !important; }
.slick-cell { white-space: normal !important; overflow-wrap: anywhere; line-height: 15px !important;
              padding-top: 2px !important; }
"""
# Rows hold three lines of wrapped text (a long NRT meaning, a device profile's name); a table shows
# up to TABLE_ROWS rows before it scrolls.
ROW_PX = 50
LONGEST_ROW_PX = 34  # event names and threads: two lines
TABLE_ROWS = 8
HEADER_PX = 30
MIN_CHART_PX = 300


LINE_PX = 15  # a line of wrapped text in a cell (TABLE_CSS)
CHAR_PX = 6.6  # a wide character of the cells' font (ASCII text averages ~6 px): lines are never undercounted
CELL_PAD_PX = 12  # a cell's padding and border


def per_line(width_px: int) -> int:
    """Characters a line of a cell `width_px` wide holds."""
    return max(int((width_px - CELL_PAD_PX) / CHAR_PX), 4)


def wrapped_lines(text: object, per: int) -> int:
    """Lines `text` takes wrapped at word boundaries into lines of `per` characters (a longer word broken, as the
    cells' `overflow-wrap: anywhere` does)."""
    return max(len(textwrap.wrap(str(text), width=per, break_long_words=True, break_on_hyphens=False)), 1)


def table_height(n: int, row_px: int = ROW_PX) -> int:
    """A table's height for `n` rows: all of them up to TABLE_ROWS, then TABLE_ROWS and a scroll bar."""
    return HEADER_PX + row_px * min(max(n, 1), TABLE_ROWS) + 4


def text_table(src: ColumnDataSource, columns: list, n: int, name: str, row_px: int = ROW_PX,
               autosize: str = "force_fit") -> DataTable:
    """A DataTable of wrapped text rows, tall enough for TABLE_ROWS of them (see table_height); `row_px` 28
    for a table of one-line cells; `autosize` "none" keeps the columns' widths as given."""
    return DataTable(reorderable=False, source=src, columns=columns, height=table_height(n, row_px), row_height=row_px,
                     sizing_mode="stretch_width", index_position=None, stylesheets=[_table_css()], name=name,
                     autosize_mode=autosize, css_classes=[name])  # the page (and a test) tells the tables apart by it


def _table_css() -> InlineStyleSheet:
    return InlineStyleSheet(css=TABLE_CSS)  # a model belongs to one document: one per table


# A chart's title and legends fit it at any width it is drawn at (issue 35.6). BokehJS lays them over the frame,
# which starts after the axis labels (a core's track label takes 330 px): aligned left, a title runs past the
# chart's right edge as soon as the labels are long or the chart narrow. Aligned right they end at the frame's
# right edge and have the whole chart to their left, so a title line or legend row narrower than the chart at
# its smallest (MIN_CHART_PX) always fits: titles are wrapped into lines of TITLE_LINE_CHARS (13 px bold text
# averages 7.2 px a character: 38 of them ~275 px) and legends set in rows of at most LEGEND_COLUMNS items.
TITLE_LINE_CHARS = 38
LEGEND_COLUMNS = 3
LEGEND_FONT = "11px"


def title_lines(text: str, width: int = TITLE_LINE_CHARS) -> str:
    """`text` in lines of at most `width` characters, broken before a parenthesis where that does it
    ("Last to arrive at collectives\n(steps)"), else at spaces (a longer word keeps its own line)."""
    if len(text) <= width:
        return text
    head, paren, tail = text.partition(" (")
    if paren and len(head) <= width and len(tail) + 1 <= width:
        return f"{head}\n({tail}"
    return "\n".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False))


def unique_labels(labels: list[str]) -> list[str]:
    """`labels` as a bar chart's factors, which must differ: a repeat gets a counter (`x (2)`), the first that is
    not a label already."""
    taken = set(labels)
    seen: dict[str, int] = {}
    out = []
    for x in labels:
        n = seen.get(x, 0) + 1
        while n > 1 and f"{x} ({n})" in taken:
            n += 1
        seen[x] = n
        if n > 1:
            taken.add(f"{x} ({n})")
        out.append(x if n == 1 else f"{x} ({n})")
    return out


def fit_legends(figures: list[Any]) -> None:
    """Lay every legend of `figures` out to fit its chart (see TITLE_LINE_CHARS): rows of LEGEND_COLUMNS items at
    most, at the frame's right. A builder adds its legends after `_figure`, so this runs over the finished charts
    (apply_theme does, and the job and device Summaries when built)."""
    for f in figures:
        for legend in f.legend:
            if legend.orientation == "horizontal":
                legend.ncols = LEGEND_COLUMNS
            where = legend.location if isinstance(legend.location, str) else ""
            legend.location = "bottom_right" if where.startswith("bottom") else "top_right"
            legend.label_text_font_size = LEGEND_FONT
            legend.glyph_width = legend.glyph_height = 14


def _figure(title: str, height: int, name: str = "", **kw: Any):
    # min_width: a chart first laid out at no width (legend above) leaves 1 px of that paint at its left edge.
    f = figure(title=title_lines(title), height=height, sizing_mode="stretch_width", min_width=MIN_CHART_PX,
               toolbar_location=None, name=f"{name}-fig",
               background_fill_color=None, border_fill_color=None, outline_line_color=None, **kw)
    f.xgrid.grid_line_alpha = 0.5
    f.ygrid.grid_line_color = None
    f.title.text_font_size = "13px"
    f.title.align = "right"  # ends at the frame's right edge, the chart's whole width before it (see above)
    return f


def _source(name: str, data: dict[str, list]) -> ColumnDataSource:
    return ColumnDataSource(data=data, name=name)


def headline_div(h: D.Headline, name: str = "nw-headline") -> Any:
    """The headline: a row of cards and the bottleneck sentence, all as text."""
    card = {"padding": "4px 10px", "border": "1px solid var(--jp-border-color2, #d0d7de)", "border-radius": "6px",
            "color": "var(--jp-ui-font-color1, #1f2328)", "font-size": "12px", "min-width": "88px"}
    # What a card measures (the Span and Busy cards) is on its hover: the element's title, no code runs for it.
    means = [h.means(k) if hasattr(h, "means") else "" for k, _ in h.cards()]
    cards = [Div(text=f"{k}\n{v}", render_as_text=True, name=f"{name}-{k.lower()}",
                 html_attributes={"title": m} if m else {},
                 styles={**card, "white-space": "pre-line", **({"cursor": "help"} if m else {})})
             for (k, v), m in zip(h.cards(), means, strict=True)]
    sentence = Div(text=h.sentence, render_as_text=True, name=f"{name}-sentence", sizing_mode="stretch_width",
                   styles={"color": "var(--jp-ui-font-color1, #1f2328)", "font-size": "13px", "font-weight": "600"})
    note = Div(text=h.range_note, render_as_text=True, name=f"{name}-note", sizing_mode="stretch_width",
               styles={"color": "var(--jp-ui-font-color2, #57606a)", "font-size": "12px"})
    cards_row = row(*cards, sizing_mode="stretch_width", styles={"flex-wrap": "wrap", "gap": "6px"})
    return column(cards_row, sentence, note, sizing_mode="stretch_width", name=name)


def temporal_chart(cols: dict[str, list], kind: str = "neuron", name: str = "nw-temporal",
                   title: str = "Where the time goes (% of each device's span)"):
    """Stacked bars per device, worst first: compute, collective, barrier, idle (shares of the span)."""
    parts = list(D.parts_of(kind))
    src = _source(name, cols)
    devices = list(reversed(cols["device"]))
    f = _figure(title, _bar_height(len(devices)), name,
                y_range=FactorRange(factors=devices), x_range=(0, 100), tools="tap")
    renderers = f.hbar_stack([f"{p}_pctg" for p in parts], y="device", height=0.72, source=src,
                             color=[COLORS[p] for p in parts], line_color=None)
    f.add_layout(Legend(items=[LegendItem(label=p.replace("_", " "), renderers=[r]) for p, r in zip(parts, renderers,
                                                                                                   strict=True)],
                        orientation="horizontal", location="top_left", click_policy="none"), "above")
    # A thread by its whole track label on hover (the axis shows its end, as the Timeline does).
    who = [("thread", "@track"), ("span summarised", "@span")] if kind == "chrome" else \
        [("device", "@full" if "full" in cols else "@device"), ("span", "@span")]
    f.add_tools(HoverTool(renderers=renderers, tooltips=who +
                          [(p.replace("_", " "), f"@{p}_ns (@{p}_pctg{{0.0}}%)") for p in parts]))
    f.xaxis.axis_label = "% of span"
    f.select_one(TapTool).renderers = renderers
    return f


def idle_chart(cols: dict[str, list], name: str = "nw-idle"):
    """Idle time per device (and stream) by cause: host wait, kernel wait, other (ms)."""
    parts = ["host_wait", "kernel_wait", "other"]
    src = _source(name, cols)
    f = _figure("Why devices idle (ms)", _bar_height(len(cols["device"])), name,
                y_range=FactorRange(factors=list(reversed(cols["device"]))))
    renderers = f.hbar_stack(parts, y="device", height=0.72, source=src, color=[COLORS[p] for p in parts],
                             line_color=None)
    f.add_layout(Legend(items=[LegendItem(label=p.replace("_", " "), renderers=[r]) for p, r in zip(parts, renderers,
                                                                                                   strict=True)],
                        orientation="horizontal", location="top_left"), "above")
    f.add_tools(HoverTool(renderers=renderers, tooltips=[("device", "@device"), ("idle", "@total"),
                                                         ("host wait", "@host_wait{0,0.000} ms"),
                                                         ("kernel wait", "@kernel_wait{0,0.000} ms"),
                                                         ("other", "@other{0,0.000} ms")]))
    f.xaxis.axis_label = "ms"
    return f


def top_chart(cols: dict[str, list], title: str, name: str, color: str = "#2f7ed8"):
    """Horizontal bars of the largest totals (ms), count, mean and share on hover."""
    src = _source(name, cols)
    f = _figure(title, _bar_height(len(cols["label"])), name, y_range=FactorRange(factors=list(cols["label"])),
                tools="tap")
    r = f.hbar(y="label", right="total_ms", height=0.7, source=src, color=color, line_color=None)
    f.add_tools(HoverTool(renderers=[r], tooltips=[("", "@full"), ("total", "@total_ms{0,0.000} ms (@share)"),
                                                   ("count", "@count{0,0}"), ("mean", "@mean")]))
    f.xaxis.axis_label = "ms"
    f.select_one(TapTool).renderers = [r]
    return f


def launch_chart(cols: dict[str, list], name: str = "nw-launches"):
    """Kineto: per rank and stream, the delay from a kernel's launch call to its start: median over p95 (µs)."""
    src = _source(name, cols)
    f = _figure("Launch delay per rank and stream (µs)", _bar_height(len(cols["device"])), name,
                y_range=FactorRange(factors=list(reversed(cols["device"]))))
    p95 = f.hbar(y="device", right="p95_us", height=0.7, source=src, color="#f3a712", alpha=0.45, line_color=None)
    med = f.hbar(y="device", right="median_us", height=0.4, source=src, color="#e4572e", line_color=None)
    f.add_tools(HoverTool(renderers=[p95, med], tooltips=[("", "@device"), ("median", "@median_us{0,0.0} µs"),
                                                          ("p95", "@p95_us{0,0.0} µs"), ("max", "@max_us{0,0.0} µs"),
                                                          ("launches", "@launches{0,0}")]))
    f.add_layout(Legend(items=[LegendItem(label="median", renderers=[med]), LegendItem(label="95th percentile",
                                                                                       renderers=[p95])],
                        orientation="horizontal", location="bottom_right"), "below")
    f.xaxis.axis_label = "µs"
    return f


def straggler_chart(cols: dict[str, list], name: str = "nw-stragglers"):
    """Per device, how often it arrived last at a collective (bars), its mean and largest lag on hover."""
    src = _source(name, cols)
    f = _figure("Last to arrive at collectives (steps)", _bar_height(len(cols["device"])), name,
                y_range=FactorRange(factors=list(reversed(cols["device"]))), tools="tap")
    r = f.hbar(y="device", right="times_last", height=0.7, source=src, color="#e4572e", line_color=None)
    # A short label on the axis (a job's core): its whole track label on hover.
    who = "@full" if "full" in cols else "@device"
    f.add_tools(HoverTool(renderers=[r], tooltips=[("device", who), ("last", "@times_last of @steps steps"),
                                                   ("mean lag", "@mean_lag"), ("largest lag", "@max_lag"),
                                                   ("others waited", "@caused")]))
    f.xaxis.axis_label = "steps where it was last"
    f.select_one(TapTool).renderers = [r]
    return f


def straggler_steps_chart(cols: dict[str, list], name: str = "nw-straggler-steps"):
    """Lag per step (last minus first arrival, µs) over time; a click moves the timeline to that step."""
    src = _source(name, cols)
    f = _figure("Lag per collective step (µs)", 220, name, tools="tap,xwheel_zoom,xpan,reset")
    f.line(x="t_ms", y="lag_us", source=src, color="#e4572e", line_width=1.5)
    r = f.scatter(x="t_ms", y="lag_us", source=src, size=6, color="#e4572e")
    f.add_tools(HoverTool(renderers=[r], tooltips=[("step", "@step"), ("at", "@t_ms{0,0.000} ms"),
                                                   ("last", "@device"), ("lag", "@lag"), ("others waited", "@wait")]))
    f.xaxis.axis_label = "ms from the profile's start"
    f.select_one(TapTool).renderers = [r]
    return f


def problems_table(cols: dict[str, list], name: str = "nw-problems", neuron: bool = True):
    """Errors and hangs, oldest first; a click selects the event in the timeline (execution and NEFF columns
    only for a Neuron profile)."""
    src = _source(name, cols)
    text = StringFormatter()
    columns = [TableColumn(field="kind", title="kind", formatter=text, width=80),
               TableColumn(field="name", title="event", formatter=text, width=120),
               TableColumn(field="device", title="device" if neuron else "thread", formatter=text, width=190),
               *([TableColumn(field="exec_id", title="execution", formatter=text, width=70),
                  TableColumn(field="model", title="NEFF", formatter=text, width=140)] if neuron else []),
               TableColumn(field="code", title="code", formatter=text, width=50),
               TableColumn(field="meaning", title="meaning", formatter=text, width=330),
               TableColumn(field="t_ms", title="at (ms)", formatter=NumberFormatter(format="0,0.000"), width=80)]
    return text_table(src, columns, len(cols["kind"]), f"{name}-table")


def longest_table(cols: dict[str, list], name: str = "nw-longest"):
    """The longest events of a plain trace: name, thread, start, duration; a row click selects the event."""
    text = StringFormatter()
    src = _source(name, cols)
    columns = [TableColumn(field="name", title="name", formatter=text, width=260),
               TableColumn(field="thread", title="thread", formatter=text, width=160),
               TableColumn(field="t_ms", title="start (ms)", formatter=NumberFormatter(format="0.000"), width=80),
               TableColumn(field="duration", title="duration", formatter=text, width=80)]
    return text_table(src, columns, len(cols["name"]), f"{name}-table", row_px=LONGEST_ROW_PX)


def device_table(df: pd.DataFrame, name: str = "nw-devices"):
    """Device profiles with their summary numbers (MFU, HFU, MBU, engine active shares, DMA)."""
    cols, columns = _device_columns(df)
    src = _source(name, cols)
    return text_table(src, columns, len(df), f"{name}-table")


def _device_columns(df: pd.DataFrame) -> tuple[dict[str, list], list[TableColumn]]:
    text = StringFormatter()
    pct = NumberFormatter(format="0.0")
    keys = [("device_profile_name", "device profile"), ("instance_id", "instance"), ("nc_id", "NC"), ("model_id", "model")]
    cols: dict[str, list] = {}
    columns = []
    # Relative widths (the table fits them to its width): names wide enough to wrap at their dashes, not per letter.
    widths = {"device_profile_name": 170, "instance_id": 170, "nc_id": 40, "model_id": 50}
    for c, title in keys:
        cols[c] = [("" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)) for v in df.get(c, [])]
        columns.append(TableColumn(field=c, title=title, formatter=text, width=widths[c]))
    cols["execution"] = [D.duration(v) if pd.notna(v) else "" for v in df.get("execution_ns", [np.nan] * len(df))]
    columns.append(TableColumn(field="execution", title="execution", formatter=text, width=80))
    numeric = [c for c in df.columns if c.endswith("_pctg")]
    numeric.sort(key=lambda c: (not c.startswith(("mfu", "hfu", "mbu")), c))
    for c in numeric:
        cols[c] = [float(v) if pd.notna(v) else float("nan") for v in df[c]]
        title = c.replace("_active_pctg", " %").replace("_pctg", " %")
        title = title.upper() if c.startswith(("mfu", "hfu", "mbu")) else title
        columns.append(TableColumn(field=c, title=title, formatter=pct, width=max(55, 7 * len(title) + 12)))
    if "dma_bytes" in df:
        cols["dma"] = [f"{v / 1e6:,.1f} MB" if pd.notna(v) else "" for v in df["dma_bytes"]]
        columns.append(TableColumn(field="dma", title="DMA", formatter=text, width=70))
    return cols, columns


def counters_chart(profile: Profile, name: str = "nw-counters", max_points: int = 1500):
    """Host memory and HBM in use over time, a line per instance (and device), in GB."""
    series = []
    origin = profile.origin_ts
    for what, df, value, keys in (("host memory", profile.host_memory, "used_bytes", ["instance_id"]),
                                  ("HBM", profile.hbm_usage, "total_bytes", ["instance_id", "device_idx"])):
        if df is None or df.empty or value not in df or "timestamp" not in df:
            continue
        keys = [k for k in keys if k in df]
        for key, part in (df.groupby(keys, observed=True, sort=True) if keys else [((), df)]):
            part = part.sort_values("timestamp")
            step = max(len(part) // max_points, 1)
            part = part.iloc[::step]
            key = key if isinstance(key, tuple) else (key,)
            label = f"{what} " + " ".join(f"device {v}" if k == "device_idx" else str(v)
                                          for k, v in zip(keys, key, strict=True))
            series.append((label, ((part["timestamp"] - origin) / 1e6).tolist(), (part[value] / 1e9).tolist()))
    series = series[:16]
    f = _figure("Memory in use (GB)", 240, name, tools="xwheel_zoom,xpan,reset")
    lines = []
    for i, (label, xs, ys) in enumerate(series):
        src = _source(f"{name}-{i}", {"x": xs, "y": ys, "label": [label] * len(xs)})
        lines.append(f.line(x="x", y="y", source=src, line_color=LINE_COLORS[i % len(LINE_COLORS)], line_width=1.5,
                            legend_label=label))
    if lines:
        # Which line is which: host memory per instance, HBM per instance and device; a click hides one.
        f.legend.location = "top_left"
        f.legend.click_policy = "hide"
        f.legend.label_text_font_size = "11px"
        f.legend.spacing = 0
        f.legend.padding = 4
        f.legend.background_fill_alpha = 0.6
        f.add_layout(f.legend[0], "right")
        f.add_tools(HoverTool(renderers=lines, tooltips=[("", "@label"), ("at", "@x{0,0.000} ms"),
                                                         ("in use", "@y{0,0.00} GB")]))
    f.xaxis.axis_label = "ms from the profile's start"
    return f


def compare_table(df: pd.DataFrame, name: str = "nw-compare", n: int = 25, roles: tuple[str, str] = ("a", "b")):
    """a beside b per event name (or NEFF), largest change first. `roles` name a and b in the headers
    (("before", "after") in a Summary given `compare=`: the deltas are after - before, as its step chart's)."""
    key = df.columns[0] if len(df.columns) else "name"
    top = df.head(n)
    cols = {"key": [str(x) for x in top.get(key, [])],
            **{c: [float(v) for v in top[c]] for c in ("count_a", "count_b") if c in top},
            **{c: [_signed(v) if c.startswith("delta") else D.duration(v) for v in top[c]]
               for c in ("total_ns_a", "total_ns_b", "delta_total_ns", "mean_ns_a", "mean_ns_b", "delta_mean_ns")
               if c in top}}
    text, num = StringFormatter(), NumberFormatter(format="0,0")
    a, b = roles
    delta = f"({b} - {a})"
    title = {"count_a": f"count {a}", "count_b": f"count {b}", "total_ns_a": f"total {a}", "total_ns_b": f"total {b}",
             "delta_total_ns": f"change in total {delta}", "mean_ns_a": f"mean {a}", "mean_ns_b": f"mean {b}",
             "delta_mean_ns": f"change in mean {delta}"}
    columns = [TableColumn(field="key", title=str(key), formatter=text, width=220)]
    columns += [TableColumn(field=c, title=title.get(c, c.replace("_", " ")),
                            formatter=num if c.startswith("count") else text)
                for c in cols if c != "key"]
    return text_table(_source(name, cols), columns, len(top), f"{name}-table")


def _signed(v: Any) -> str:
    """A change with its sign ('-1.2 ms' faster, '+1.2 ms' slower): a duration alone hides which way it went."""
    x = float(v)
    return ("-" if x < 0 else "+" if x > 0 else "") + D.duration(abs(x))


def apply_theme(root: Any, dark: bool, figures: list | None = None) -> None:
    """Colour the canvas-drawn parts (axes, titles, legends, grids) for a light or dark page.

    `figures`, when known, spares the walk over the whole model graph.
    """
    c = THEMES["dark" if dark else "light"]
    found = figures if figures is not None else (list(root.select({"type": figure})) if hasattr(root, "select") else [])
    fit_legends(found)
    for f in found:
        f.title.text_color = c["text"]
        for ax in (*f.xaxis, *f.yaxis):
            ax.major_label_text_color = c["muted"]
            ax.axis_label_text_color = c["muted"]
            ax.axis_line_color = c["grid"]
            ax.major_tick_line_color = c["grid"]
            ax.minor_tick_line_color = None
        for g in (*f.xgrid, *f.ygrid):
            if g.grid_line_color is not None:
                g.grid_line_color = c["grid"]
        for legend in f.legend:
            legend.label_text_color = c["text"]
            legend.background_fill_alpha = 0
            legend.border_line_alpha = 0
        for bar in f.select({"type": ColorBar}):  # the job's heat map scale: no white box on a dark page
            bar.background_fill_alpha = 0
            bar.major_label_text_color = bar.title_text_color = c["muted"]


def _bar_height(n: int) -> int:
    # 26 px a bar, and room around the frame for a title of two lines, a legend of two rows and the x axis
    # (title_lines, fit_legends): a narrow chart's wrapped title and legend leave its bars their height.
    return int(min(max(130 + 26 * n, 190), 900))
