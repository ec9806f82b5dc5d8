"""The Summary's critical-path section: the headline sentence and the path's share per worker and kind.

Built from `analysis.critical_path_breakdown` and `critical_path_headline` (given as one dict:
`breakdown`, `headline`, and for a job `part_of`, each instance's part). Shown only where a path
exists: a device trace, a profile without executions or threads, or a job of Kineto parts has
none, and the section is left out rather than drawn empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from bokeh.layouts import column
from bokeh.models import FactorRange, HoverTool
from bokeh.models.annotations.legends import Legend, LegendItem  # (where mypy sees them: bokeh.models re-exports them)
from bokeh.models.widgets.markups import Div

from ..analysis.critical_path_graph import KINDS
from ..analysis.critical_path_workers import worker_key
from ..model.timefmt import duration
from ..model.worker_labels import core_label
from . import charts as C

MAX_WORKERS = 12  # bars; the rest share one
KIND_COLORS = {"compute": "#2f7ed8", "collective": "#8bbc21", "host": "#9467bd", "launch": "#f28f43",
               "gap": "#c7c7c7", "kernel": "#1aadce", "memcpy": "#77a1e5"}
TITLE = "The critical path: its time per worker and kind (% of the run)"


def _text(v: Any) -> str | None:
    return None if v is None or pd.isna(v) else str(v)


def worker_labels(b: pd.DataFrame, part_of: dict[str, str] | None = None,
                  tracks: Mapping[Any, str] | None = None) -> list[str]:
    """Each worker as the Timeline labels its track (`tracks`: the breakdown's, by worker: a core
    `i-0a88.../PID:2624383/neuron_rt/NC:1`, a thread `i-0a88.../PID:2624383/TID:2624400`, a job's part first: what
    findings name and the track filter finds); a worker the breakdown does not label, by its ids (`i-0a88 thread
    2624400`, the part first in a job)."""
    pids = b.groupby(b["instance_id"].astype(str))["process_id"].nunique() if len(b) else pd.Series(dtype=int)
    out = []
    for r in b.itertuples():
        known = (tracks or {}).get(worker_key(None, r.instance_id, r.process_id, r.nc_idx, r.thread_id))
        if known:
            out.append(known)
            continue
        inst, pid, nc, tid = _text(r.instance_id), _text(r.process_id), _text(r.nc_idx), _text(r.thread_id)
        where = inst or (f"pid {pid}" if pid else "")
        if inst and pid and pids.get(str(r.instance_id), 1) > 1:
            where = f"{inst}/{pid}"
        part = (part_of or {}).get(inst or "")
        if tid is None and nc is not None and inst is not None:
            out.append(core_label(r.instance_id, r.process_id, r.nc_idx, part=part or None))
            continue
        who = f"thread {tid}" if tid is not None else f"NC{nc}" if nc is not None else ""
        label = " ".join(x for x in (where, who) if x) or "(no worker)"
        out.append(f"{part} {label}" if part and not label.startswith(part) else label)
    return C.unique_labels(out)


def critical_columns(critical: dict[str, Any] | None, n: int = MAX_WORKERS) -> dict[str, list[Any]]:
    """One bar per worker (most time on the path first), one stacked column per kind (% of the path)."""
    b = (critical or {}).get("breakdown")
    cols: dict[str, list[Any]] = {"worker": [], "total": [], "steps": [], **{k: [] for k in KINDS}}
    if b is None or b.empty:
        return cols
    keys = ["instance_id", "process_id", "nc_idx", "thread_id"]
    key = b[keys].astype(object).where(b[keys].notna(), None)
    worker = pd.MultiIndex.from_frame(key.astype(str)).factorize()[0]
    first = ~pd.Series(worker).duplicated().to_numpy()
    workers = b[first].reset_index(drop=True)
    labels = worker_labels(workers, (critical or {}).get("part_of"), b.attrs.get("tracks"))
    shares = b.assign(worker=worker).pivot_table(index="worker", columns="kind", values="share_pct", aggfunc="sum",
                                                 observed=True).fillna(0.0)
    order = list(pd.unique(worker))
    kept, rest = order[:n], order[n:]
    for w, lab in zip(kept, labels[:n], strict=True):
        row_ = workers.iloc[order.index(w)]
        cols["worker"].append(lab)
        cols["total"].append(f"{row_['worker_share_pct']:.1f}% ({duration(row_['worker_ns'])})")
        steps = int(row_["steps"])
        cols["steps"].append(f"on it in {int(row_['steps_on_path']):,} of {steps:,} step{'' if steps == 1 else 's'}"
                            if steps else "")
        for k in KINDS:
            cols[k].append(float(shares.loc[w, k]) if k in shares.columns else 0.0)
    if rest:
        others = shares.loc[rest]
        total = float(workers.iloc[len(kept):]["worker_share_pct"].sum())
        ns = float(workers.iloc[len(kept):]["worker_ns"].sum())
        cols["worker"].append(f"{len(rest)} other workers")
        cols["total"].append(f"{total:.1f}% ({duration(ns)})")
        cols["steps"].append("")
        for k in KINDS:
            cols[k].append(float(others[k].sum()) if k in others.columns else 0.0)
    return cols


def _x_end(cols: dict[str, list[Any]]) -> float:
    """The axis to a little past the longest bar (a share of the run, at most 100%)."""
    longest = max((sum(v) for v in zip(*(cols[k] for k in KINDS), strict=True)), default=0.0)
    return float(min(100.0, max(longest * 1.08, 1.0)))


def sentence_of(critical: dict[str, Any] | None) -> str:
    head = (critical or {}).get("headline") or {}
    said = str(head.get("sentence", ""))
    return (said + ("" if said.endswith(".") else ".")) if said else ""  # it starts with a name: kept as written


class CriticalSection:
    """The headline sentence over a stacked bar per worker; hidden where there is no path."""

    def __init__(self, critical: dict[str, Any] | None, name: str = "nw-critical") -> None:
        cols = critical_columns(critical)
        self.source = C._source(name, cols)
        workers = list(reversed(cols["worker"]))
        f = C._figure(TITLE, C._bar_height(len(workers)), name, y_range=FactorRange(factors=workers),
                      x_range=(0, _x_end(cols)))
        rs = f.hbar_stack(list(KINDS), y="worker", height=0.72, source=self.source,
                          color=[KIND_COLORS[k] for k in KINDS], line_color=None)
        self.renderers = dict(zip(KINDS, rs, strict=True))
        f.add_tools(HoverTool(renderers=rs, tooltips=[("worker", "@worker"), ("kind", "$name"),
                                                      ("share of the path", "@$name{0.0}%"),
                                                      ("worker's share", "@total"), ("", "@steps")]))
        self.legend = Legend(items=self._legend_items(cols), orientation="horizontal", location="top_left",
                             click_policy="none")
        f.add_layout(self.legend, "above")
        f.xaxis.axis_label = "% of the run on the critical path"
        self.chart = f
        self.sentence = Div(text=sentence_of(critical), render_as_text=True, name=f"{name}-sentence",
                            sizing_mode="stretch_width",
                            styles={"color": "var(--jp-ui-font-color1, #1f2328)", "font-size": "13px"})
        self.layout = column(self.sentence, f, sizing_mode="stretch_width", name=f"{name}-section")
        self.layout.visible = bool(cols["worker"])

    def _legend_items(self, cols: dict[str, list[Any]]) -> list[LegendItem]:
        # Only the kinds the path has (a Neuron path has no kernels, a Kineto one no compute).
        return [LegendItem(label=k, renderers=[self.renderers[k]]) for k in KINDS if any(v > 0 for v in cols[k])]

    def update(self, critical: dict[str, Any] | None) -> None:
        cols = critical_columns(critical)
        workers = list(reversed(cols["worker"]))
        self.chart.y_range.factors = workers
        self.chart.height = C._bar_height(len(workers))
        self.chart.x_range.end = _x_end(cols)
        self.source.data = cols
        self.legend.items = self._legend_items(cols)
        self.sentence.text = sentence_of(critical)
        self.layout.visible = bool(cols["worker"])
