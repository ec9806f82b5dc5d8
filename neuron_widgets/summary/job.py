"""A job's Summary charts: who holds the job back, in which steps, and where each node's time goes.

Built from `analysis.across` results. The lag heat map has a row per core (per node when a
job has more cores than a chart can show) and a column per collective step (steps binned when
there are more than fit), coloured by how long after the step's first arrival the core arrived.
A click on the map (a selected cell) or on a core's bar tells the widget (part, step start). No chart
carries code to compile in the page (an export's content security policy forbids it). Profile text
reaches the charts only as column data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    Div,
    FixedTicker,
    HoverTool,
    LinearColorMapper,
    TableColumn,
    TapTool,
)
from bokeh.palettes import Inferno256

from ..model.worker_labels import core_label
from . import charts as C
from . import data as D
from .build import _wrap
from .compare import FixSection
from .critical import CriticalSection
from .findings import FindingsSection

MAX_ROWS = 512
MAX_COLS = 600


def core_labels(df: pd.DataFrame) -> list[str]:
    """A Neuron core as the job's Timeline labels its track once its part is open
    (`node-03/i-0a88.../PID:1930725/neuron_rt/NC:3`, what the job's findings name under the part), `node-03 rank 5`
    (Kineto)."""
    if df.empty:
        return []
    if "rank" in df.columns:
        return [f"{p} rank {r}" for p, r in zip(df["part"], df["rank"], strict=True)]
    if "instance_id" in df.columns:
        return [core_label(i, pid, nc, part=p) for p, i, pid, nc in
                zip(df["part"], df["instance_id"], df["process_id"], df["nc_idx"], strict=True)]
    return [f"{p}/{pid} NC{nc}" for p, pid, nc in zip(df["part"], df["process_id"], df["nc_idx"], strict=True)]


@dataclass
class LagMatrix:
    """Lag (µs) per row (core or node) and column (step or bin of steps); NaN: not in that step."""

    values: np.ndarray
    rows: list[str]
    row_part: list[str]
    row_keys: pd.DataFrame  # the device keys of each row (a node's row: its part only)
    col_start: np.ndarray  # each column's first step start (ns)
    col_end: np.ndarray  # each column's last arrival (ns)
    col_label: list[str]
    col_step: list[int] = field(default_factory=list)  # each column's first step number
    per_node: bool = False
    binned: int = 1
    notes: list[str] = field(default_factory=list)


def lag_matrix(lag: pd.DataFrame, max_rows: int = MAX_ROWS, max_cols: int = MAX_COLS) -> LagMatrix:
    keys = [c for c in ("part", "instance_id", "process_id", "nc_idx", "rank") if c in lag.columns]
    if lag.empty:
        return LagMatrix(np.zeros((0, 0)), [], [], pd.DataFrame(columns=keys), np.zeros(0, np.int64), np.zeros(0, np.int64),
                         [], [])
    lag = lag.copy()
    lag["arrive"] = lag["start_ts"] + lag["lag_ns"]
    cores = lag[keys].drop_duplicates().sort_values(keys, kind="stable", ignore_index=True)
    per_node = len(cores) > max_rows
    notes: list[str] = []
    if per_node:
        cores = cores[["part"]].drop_duplicates(ignore_index=True)
        notes.append(f"{len(lag[keys].drop_duplicates()):,} cores: one row per node, its latest core's lag")
    row_keys = list(cores.columns)
    row = pd.MultiIndex.from_frame(cores.astype(object)).get_indexer(pd.MultiIndex.from_frame(lag[row_keys].astype(object)))
    step_cols = [c for c in ("model_name", "step", "collective") if c in lag.columns]
    steps = lag.groupby(step_cols, dropna=False, sort=False).agg(start=("start_ts", "min"), end=("arrive", "max"))
    steps = steps.sort_values("start").reset_index()
    step_of = pd.MultiIndex.from_frame(steps[step_cols].astype(object)).get_indexer(
        pd.MultiIndex.from_frame(lag[step_cols].astype(object)))
    binned = max(1, -(-len(steps) // max_cols))
    if binned > 1:
        notes.append(f"{len(steps):,} steps: each column is {binned} consecutive steps, their largest lag")
    col = step_of // binned
    n_cols = -(-len(steps) // binned)
    values = np.full((len(cores), n_cols), np.nan)
    # The largest lag of each cell (max over the node's cores and the bin's steps).
    flat = row * n_cols + col
    order = np.argsort(lag["lag_ns"].to_numpy(), kind="stable")
    values.reshape(-1)[flat[order]] = lag["lag_ns"].to_numpy()[order] / 1e3
    starts = steps["start"].to_numpy(np.int64)
    ends = steps["end"].to_numpy(np.int64)
    col_start = starts[::binned]
    col_end = np.maximum.reduceat(ends, np.arange(0, len(steps), binned)) if len(steps) else ends
    label = [f"{r.get('model_name') or ''} step {r['step']}".strip() if "step" in r else str(i)
             for i, r in enumerate(steps.to_dict("records"))]
    col_label = label[::binned] if binned == 1 else [f"{label[i]} to {label[min(i + binned, len(label)) - 1]}"
                                                     for i in range(0, len(label), binned)]
    rows = list(cores["part"]) if per_node else core_labels(cores)
    numbers = pd.to_numeric(steps["step"], errors="coerce").fillna(-1).to_numpy(np.int64) if "step" in steps.columns \
        else np.arange(len(steps))
    col_step = [int(x) for x in numbers[::binned]]
    return LagMatrix(values, rows, list(cores["part"]), cores, col_start, col_end, col_label, col_step, per_node, binned,
                     notes)


def heat_map(m: LagMatrix, name: str = "nw-job-lag") -> tuple[Any, ColumnDataSource]:
    """The lag heat map (rows top to bottom in node order) and its cells' source; a tap selects a cell
    (`selected.image_indices`: the row is the image, `i` the column).

    Each row is an image of its own, so hover reads the row's label from a column of text and the step
    from a column of step numbers, all by bokeh's templates: no code compiled in the page, which an
    exported page's content security policy forbids (no eval).
    """
    n_rows, n_cols = m.values.shape
    height = int(min(max(n_rows * 6, 220), 720))
    f = C._figure("How late each core arrived at each collective (µs after the first)", height, name,
                  x_range=(0, max(n_cols, 1)), y_range=(max(n_rows, 1), 0), tools="tap,xwheel_zoom,xpan,reset")
    finite = m.values[np.isfinite(m.values)]
    high = float(np.percentile(finite, 99)) if finite.size else 1.0
    mapper = LinearColorMapper(palette=Inferno256, low=0.0, high=max(high, 1e-3), nan_color="rgba(0,0,0,0)")
    rows = [np.ascontiguousarray(m.values[r:r + 1]) for r in range(n_rows)] or [np.zeros((1, 1))]
    steps = np.asarray(m.col_step, np.int64).reshape(1, -1) if n_cols else np.zeros((1, 1), np.int64)
    # Image row r spans y in [r, r + 1]; the y axis runs downwards, so row 0 (the first node's first core) is on top.
    src = ColumnDataSource({"image": rows, "y": list(range(len(rows))), "row_label": list(m.rows) or [""],
                            "step": [steps] * len(rows)}, name=f"{name}-image")
    img = f.image(image="image", x=0, y="y", dw=max(n_cols, 1), dh=1, color_mapper=mapper, source=src)
    img.nonselection_glyph = None  # a tapped cell opens its part; the map is not dimmed around it
    f.add_layout(ColorBar(color_mapper=mapper, title="µs", width=10), "right")
    step = "@step{0}" + (f" and the next {m.binned - 1}" if m.binned > 1 else "")
    f.add_tools(HoverTool(renderers=[img], tooltips=[("core" if not m.per_node else "node", "@row_label"),
                                                     ("step", step), ("lag", "@image{0,0.0} µs")]))
    # Ticks at each node's first row, labelled with the node.
    first = [i for i, p in enumerate(m.row_part) if i == 0 or m.row_part[i - 1] != p]
    every = max(1, len(first) // 40)
    ticks = first[::every]
    f.yaxis.ticker = FixedTicker(ticks=[t + 0.5 for t in ticks])
    f.yaxis.major_label_overrides = {t + 0.5: m.row_part[t] for t in ticks}
    f.xaxis.axis_label = "collective steps in time order" + (f" ({m.binned} per column)" if m.binned > 1 else "")
    f.select_one(TapTool).renderers = [img]
    return f, src


def node_columns(t: pd.DataFrame, kind: str = "neuron") -> dict[str, list]:
    """The temporal breakdown summed per part (shares of the summed spans), worst first."""
    parts = D.parts_of(kind)
    if t.empty:
        return D.temporal_columns(t, kind)
    cols = [f"{p}_time_ns" for p in parts] + ["span_ns"]
    g = t.groupby("part", sort=False)[cols].sum().reset_index()
    for p in parts:
        g[f"{p}_time_pctg"] = np.where(g["span_ns"] > 0, 100.0 * g[f"{p}_time_ns"] / g["span_ns"].clip(lower=1), 0.0)
    out = D.temporal_columns(g.assign(rank=g["part"]), kind)
    out["device"] = [str(lab).removeprefix("rank ") for lab in out["device"]]
    return out


def short_core(label: str) -> str:
    """A core's track label for an axis, its instance left out (`node-03/…/PID:1930725/neuron_rt/NC:3`): what
    follows the … is the track's text (*Filter tracks* finds it); the whole label is on hover."""
    segs = label.split("/")
    return f"{segs[0]}/…/{'/'.join(segs[-3:])}" if len(segs) > 4 and segs[-1].startswith("NC:") else label


def short_cores(labels: list[str]) -> list[str]:
    """`short_core` of each, or the labels whole where two would read alike (a part of several instances)."""
    short = [short_core(x) for x in labels]
    return short if len(set(short)) == len(set(labels)) else list(labels)


def core_columns(t: pd.DataFrame, kind: str = "neuron", n: int = 30) -> dict[str, list]:
    cols = D.temporal_columns(t, kind)
    labels = dict(zip(t.index, core_labels(t), strict=True))
    cols["full"] = [labels[r] for r in cols["row"]]
    cols["device"] = short_cores(cols["full"])
    return {k: v[:n] for k, v in cols.items()}


def straggler_columns(s: pd.DataFrame, n: int = 20) -> dict[str, list]:
    s = s.head(n)
    full = core_labels(s)
    return {"device": short_cores(full), "full": full, "times_last": [int(x) for x in s["times_last"]],
            "steps": [int(x) for x in s["steps"]],
            "mean_lag": [D.duration(x) for x in s["mean_lag_ns"]], "max_lag": [D.duration(x) for x in s["max_lag_ns"]],
            "caused": [D.duration(x) for x in s["wait_caused_ns"]], "part": [str(p) for p in s["part"]]}


def headline(results: dict[str, Any]) -> str:
    s, parts = results["stragglers"], results["parts"]
    ok = parts[parts["status"] != "left out"]
    said = f"{len(ok)} of {len(parts)} parts analysed" if len(ok) < len(parts) else f"{len(parts)} parts"
    events = int(ok["events"].fillna(0).sum())
    if s.empty or int(s["times_last"].iloc[0]) == 0:
        return f"Across {said} ({events:,} events): no collective matched across cores, so no straggler to name."
    top = s.iloc[0]
    who = f"rank {top['rank']}" if "rank" in s.columns else f"process {top['process_id']}, NeuronCore {top['nc_idx']}"
    return (f"Across {said} ({events:,} events), the job waits most on {top['part']} ({who}): last to arrive at "
            f"{int(top['times_last'])} of {int(top['steps'])} collectives, {D.duration(top['mean_lag_ns'])} late on "
            f"average; the others waited {D.duration(top['wait_caused_ns'])} for it in all.")


def problems_sentence(problems: pd.DataFrame) -> str:
    """How many errors and hangs the parts hold, and where (the table under the charts lists them)."""
    if problems is None or problems.empty:
        return "No error or hang in any part."
    said = []
    for kind, word in (("error", "error"), ("hang", "hang"), ("incomplete", "unfinished event")):
        mine = problems[problems["kind"] == kind]
        if len(mine):
            where = ", ".join(dict.fromkeys(str(p) for p in mine["part"]))
            said.append(f"{len(mine)} {word}{'s' if len(mine) > 1 else ''} ({where})")
    return "Found " + " and ".join(said) + ": see Errors and hangs below."


def problem_columns(problems: pd.DataFrame, parts: pd.DataFrame) -> dict[str, list]:
    """The parts' errors and hangs as the Summary's problems table shows them; times from the job's start."""
    if problems is None or problems.empty:
        return {"kind": ["none found"], "name": [""], "device": [""], "exec_id": [""], "model": [""], "code": [""],
                "meaning": ["no error, hang or unfinished event in any part"], "t_ms": [float("nan")], "event_id": [""],
                "part": [""]}

    def text(v: Any) -> str:
        return "" if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else str(v)

    starts = pd.to_numeric(parts.get("start_ts"), errors="coerce").dropna()
    origin = int(starts.min()) if len(starts) else int(problems["start_ts"].min())
    inst = problems["instance_id"] if "instance_id" in problems.columns else pd.Series([None] * len(problems))
    # A core as the job's Timeline labels its track under the part (and findings name it).
    device = [core_label(i, x.process_id, x.nc_idx, part=x.part) if text(x.nc_idx) and text(i) else
              f"{x.part}/{text(x.process_id)} NC{text(x.nc_idx)}" if text(x.nc_idx) else
              f"{x.part}/PID:{text(x.process_id)}/TID:{text(x.thread_id)}"
              for x, i in zip(problems.itertuples(), inst, strict=True)]
    return {"kind": problems["kind"].astype(str).tolist(), "name": [text(x) for x in problems["name"]], "device": device,
            "exec_id": [text(x) for x in problems["exec_id"]], "model": [text(x) for x in problems["model_name"]],
            "code": [text(x) for x in problems["code"]], "meaning": [text(x) for x in problems["meaning"]],
            "t_ms": ((problems["start_ts"].to_numpy(np.int64) - origin) / 1e6).tolist(),
            "event_id": [str(int(x)) for x in problems["id"]], "part": problems["part"].astype(str).tolist()}


def parts_table_columns(parts: pd.DataFrame) -> dict[str, list]:
    return {"part": parts["part"].astype(str).tolist(), "status": parts["status"].astype(str).tolist(),
            "events": ["" if pd.isna(e) else f"{int(e):,}" for e in parts["events"]],
            "seconds": [f"{s:.2f}" for s in parts["seconds"]],
            "error": ["" if e is None or (isinstance(e, float) and np.isnan(e)) else str(e) for e in parts["error"]]}


class JobSummaryCharts:
    """Every chart of a job's Summary; a tap on the heat map selects a cell of `cells` (image_indices)."""

    def __init__(self, results: dict[str, Any], kind: str = "neuron") -> None:
        self.results = results
        self.kind = kind
        self.matrix = lag_matrix(results["straggler_lag"])
        problems = results.get("errors_and_hangs")
        self.sentence = Div(text=f"{headline(results)} {problems_sentence(problems)}", render_as_text=True,
                            name="nw-job-headline", sizing_mode="stretch_width",
                            styles={"color": "var(--jp-ui-font-color1, #1f2328)", "font-size": "13px", "font-weight": "600"})
        notes = self.matrix.notes + [n for n in results["parts"].attrs.get("notes", [])]
        self.notes = Div(text="\n".join(notes), render_as_text=True, name="nw-job-notes", sizing_mode="stretch_width",
                         styles={"color": "var(--jp-ui-font-color2, #57606a)", "font-size": "12px", "white-space": "pre-line"})
        self.heat, self.cells = heat_map(self.matrix)
        # Findings and the critical path come after the rest (None: being looked for); times from the job's start.
        ok = results["parts"]
        starts = pd.to_numeric(ok.get("start_ts"), errors="coerce").dropna()
        ends = pd.to_numeric(ok.get("end_ts"), errors="coerce").dropna()
        self.origin = int(starts.min()) if len(starts) else 0
        self.span_ns = int(ends.max()) - self.origin if len(starts) and len(ends) else 0
        self.findings = FindingsSection(results.get("findings"), self.origin, self.span_ns)
        self.critical = CriticalSection(results.get("critical"))
        t = results.get("temporal_breakdown", pd.DataFrame())
        # Titles and legends in a few words: two charts share a row from about 960 px.
        self.nodes = C.temporal_chart(node_columns(t, kind), kind, name="nw-job-nodes",
                                      title="Each node's time (% of its cores' spans)")
        worst = core_columns(t, kind)
        shown = len(worst["device"])
        self.cores = C.temporal_chart(worst, kind, name="nw-job-cores",
                                      title=f"Least compute: {shown} of {len(t)} cores (% of span)" if shown < len(t)
                                      else "Cores, least compute first (% of span)")
        self.stragglers = C.straggler_chart(straggler_columns(results["stragglers"]), name="nw-job-stragglers")
        pcols = problem_columns(problems, results["parts"])
        self.problems = C.problems_table(pcols, name="nw-job-problems", neuron=kind == "neuron")
        pt = parts_table_columns(results["parts"])
        self.parts = C.text_table(ColumnDataSource(pt, name="nw-job-parts"), [TableColumn(field=k, title=k) for k in pt],
                                  len(pt["part"]), "nw-job-parts", row_px=28)
        # Summary(job, compare=other_job): the section once asked for (results["compare"] None: still comparing).
        self.fix = None
        if "compare" in results:
            self.fix = FixSection(None, None, self.origin, later=True, what="job")
            if results["compare"] is not None:
                self.fix.fill(results["compare"])
        self.figures = [self.heat, self.nodes, self.cores, self.stragglers, self.critical.chart,
                        *(self.fix.figures if self.fix is not None else [])]
        self.heat.sizing_mode = "stretch_width"
        C.fit_legends(self.figures)  # an exported page is never themed here: its legends fit as built
        label = {"color": "var(--jp-ui-font-color1, #1f2328)", "font-weight": "600", "font-size": "13px"}
        self.layout = column(self.sentence, self.notes, self.findings.layout, self.heat, self.critical.layout,
                             _wrap(self.stragglers, self.nodes, min_width=460),
                             _wrap(self.cores, min_width=460),
                             Div(text="Errors and hangs", render_as_text=True, styles=label), self.problems,
                             Div(text="Parts", render_as_text=True, styles=label), self.parts,
                             *(self.fix.parts if self.fix is not None else []),
                             sizing_mode="stretch_width")
