"""The device-trace Summary: one execution's engines, DMA queues, layers and opcodes as bokeh charts.

Built from `analysis.device_breakdown`. Layer bars carry their span (`t0`/`t1`, absolute
ns) so a click fits the DeviceTraceViewer to that layer. Profile text reaches the charts only as
column data (drawn as text), as in the system Summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from bokeh.layouts import column
from bokeh.models import FactorRange, HoverTool, Legend, LegendItem

from ..model.device.strip import _bytes, summary_percent
from ..model.device.trace import DeviceTrace
from ..model.timefmt import duration
from . import charts as C
from .build import _wrap
from .findings import FindingsSection

ENGINE_PARTS = (("running", "#2f7ed8", "running instructions"), ("waiting", "#f28f43", "in semaphore waits"))


def _cards(trace: DeviceTrace, r: dict[str, Any]) -> list[tuple[str, str]]:
    moved = int(r["dma"]["bytes"].sum()) if len(r["dma"]) else 0
    cards = [("Execution", duration(r["span_ns"])), ("Instructions", f"{r['instructions']:,}"),
             ("DMA", f"{_bytes(moved)} in {r['dma_packets']:,} packets")]
    mfu = summary_percent(trace, "mfu_estimated_percent")
    if mfu is not None:
        cards.append(("MFU", f"{mfu:.3g}%"))
    return cards


def engine_columns(r: dict[str, Any]) -> dict[str, list]:
    """Per engine its active time and its semaphore waits (model.device.engines): the two stack to its busy time."""
    e = r["engines"]
    span = max(int(r["span_ns"]), 1)
    return {"engine": [str(x) for x in e["engine"]],
            "running": [100.0 * a / span for a in e["active_ns"]],
            "waiting": [100.0 * w / span for w in e["wait_ns"]],
            "active": [f"{duration(a)} ({100 * a / span:.1f}%)" for a in e["active_ns"]],
            "wait": [f"{duration(w)} ({100 * w / span:.1f}%)" for w in e["wait_ns"]],
            "instructions": ["" if pd.isna(n) else f"{int(n):,}" for n in e["instructions"]]}


def dma_columns(r: dict[str, Any], limit: int = 15) -> dict[str, list]:
    d = r["dma"].head(limit)
    label = [f"{q} {dr}".strip() or "(queue)" for q, dr in zip(d["queue"], d["direction"], strict=True)]
    return {"queue": C.unique_labels(label), "mb": [b / 1e6 for b in d["bytes"]], "bytes": [_bytes(b) for b in d["bytes"]],
            "bandwidth": [f"{g:,.1f} GB/s" for g in d["bandwidth_gbps"]],
            "busy": [f"{duration(b)} ({100 * s:.1f}%)" for b, s in zip(d["busy_ns"], d["share"], strict=True)],
            "packets": [f"{p:,}" for p in d["packets"]]}


def top_columns(df: pd.DataFrame, key: str, spans: dict[str, tuple[int, int]] | None = None,
                origin: int = 0) -> dict[str, list]:
    labels = C.unique_labels([str(x) for x in df[key]])
    out = {"label": labels, "ms": [v / 1e6 for v in df["engine_ns"]], "time": [duration(v) for v in df["engine_ns"]],
           "share": [f"{100 * s:.1f}%" for s in df["share"]], "instructions": [f"{n:,}" for n in df["instructions"]]}
    if spans is not None:  # bars a click fits the viewer to: their window, ns from the viewer's origin
        window = [spans.get(str(name), (origin, origin)) for name in df[key]]
        out["t0"] = [a - origin for a, _ in window]
        out["t1"] = [b - origin for _, b in window]
    return out


def layer_columns(df: pd.DataFrame, spans: dict[str, tuple[int, int]], origin: int) -> dict[str, list]:
    """Layers by their own engine time (top_operators(by="layer"): a layer's own instructions, its sublayers' not),
    what they hold with their sublayers (as the hierarchy counts) on hover. A layer with no instructions of its
    own (`/model` over `/model/layers.0`) has no bar: its time is its sublayers'."""
    if "own_instructions" in df.columns:
        df = df[df["own_instructions"] > 0]
    own = df.rename(columns={"own_engine_ns": "engine_ns", "own_share": "share", "own_instructions": "instructions",
                             "engine_ns": "all_engine_ns", "instructions": "all_instructions"})
    out = top_columns(own, "layer", spans, origin)
    out["all_time"] = [duration(v) for v in own["all_engine_ns"]]
    out["all_instructions"] = [f"{n:,}" for n in own["all_instructions"]]
    return out


def sentences(notes: list[str]) -> str:
    """Notes as sentences, each its own: a capital first letter (the rest as written: FLOPs, MFU) and a full stop."""
    out = []
    for n in notes:
        n = str(n).strip()
        if n:
            out.append(n[0].upper() + n[1:] + ("" if n.endswith((".", "!", "?")) else "."))
    return " ".join(out)


def warning_notes(trace: DeviceTrace) -> list[str]:
    """What the reader dropped or clamped, one note per kind."""
    return [f"Reader warning: {line}" for line in trace.warnings.lines()]


def _layer_spans(trace: DeviceTrace) -> dict[str, tuple[int, int]]:
    h = trace.hierarchy()
    spans: dict[str, tuple[int, int]] = {}
    for path, s, e in zip(h["path"], h["start_ts"], h["end_ts"], strict=True):
        spans[path.strip("/")] = (int(s), int(e))
        spans[path] = (int(s), int(e))
    return spans


@dataclass
class _Head:
    """What the shared headline needs (as D.Headline gives it): cards, a sentence, a note."""

    items: list[tuple[str, str]]
    sentence: str
    range_note: str

    def cards(self) -> list[tuple[str, str]]:
        return self.items


class DeviceSummaryCharts:
    """The device-trace Summary's charts (and what a click on a layer means)."""

    kind = "device"

    def __init__(self, trace: DeviceTrace, results: dict[str, Any], origin: int | None = None) -> None:
        self.trace = trace
        self.origin = int(origin if origin is not None else trace.span[0])
        self.results = results
        r = results
        notes = sentences([*trace.hierarchy().attrs.get("notes", []), *warning_notes(trace)])
        head = C.headline_div(_Head(_cards(trace, r), r["bound"], notes))
        self.sentence = head.children[1]
        self.engines = self._engine_chart(engine_columns(r))
        self.dma = self._bar(dma_columns(r), "queue", "mb", "DMA per queue and direction (MB)", "nw-device-dma",
                             [("queue", "@queue"), ("moved", "@bytes"), ("bandwidth", "@bandwidth"), ("busy", "@busy"),
                              ("packets", "@packets")], "#8bbc21")
        spans = _layer_spans(trace)
        # Engine time is a sum over the engines (they run side by side: it can exceed the execution), said on hover.
        tips = [("", "@label"), ("engine time", "@time (all engines added)"), ("share", "@share of all engine time"),
                ("instructions", "@instructions")]
        layer_tips = [("", "@label"), ("own engine time", "@time (all engines added)"),
                      ("own share", "@share of all engine time"), ("own instructions", "@instructions"),
                      ("with its sublayers", "@all_time, @all_instructions instructions")]
        self.layers = self._bar(layer_columns(r["layers"], spans, self.origin), "label", "ms",
                                "Top layers by own engine time (ms)", "nw-device-layers", layer_tips, "#492970",
                                tap=True)
        self.operators = self._bar(top_columns(r["operators"], "hlo"), "label", "ms",
                                   "Top HLO operators by engine time (ms)", "nw-device-operators", tips, "#1aadce")
        self.opcodes = self._bar(top_columns(r["opcodes"], "opcode"), "label", "ms",
                                 "Top opcodes by engine time (ms)", "nw-device-opcodes", tips, "#77a1e5")
        self.figures = [self.engines, self.dma, self.layers, self.operators, self.opcodes]
        C.fit_legends(self.figures)
        # A finding's place is the execution: a click fits the viewer to it (None: being looked for).
        self.findings = FindingsSection(r.get("findings"), self.origin, int(r.get("span_ns") or 0),
                                        clip=tuple(int(x) for x in trace.span))  # what the viewer can show
        self.layout = column(head, self.findings.layout, _wrap(self.engines, self.dma), _wrap(self.layers, self.operators),
                             _wrap(self.opcodes), sizing_mode="stretch_width", name="nw-summary")

    def theme(self, dark: bool) -> None:
        C.apply_theme(self.layout, dark, self.figures)

    @staticmethod
    def _engine_chart(cols: dict[str, list]) -> Any:
        engines = list(reversed(cols["engine"]))
        f = C._figure("Engines: active and waiting share of the execution (%)", C._bar_height(len(engines)), "nw-device-engines",
                      y_range=FactorRange(factors=engines), x_range=(0, 100))
        src = C._source("nw-device-engines", cols)
        rs = f.hbar_stack([p for p, _, _ in ENGINE_PARTS], y="engine", height=0.72, source=src,
                          color=[c for _, c, _ in ENGINE_PARTS])
        f.add_tools(HoverTool(renderers=rs, tooltips=[("engine", "@engine"), ("active", "@active"),
                                                      ("semaphore waits", "@wait"), ("instructions", "@instructions")]))
        f.add_layout(Legend(items=[LegendItem(label=t, renderers=[r]) for (_, _, t), r in zip(ENGINE_PARTS, rs,
                                                                                              strict=True)],
                            orientation="horizontal", location="bottom_right"), "below")
        return f

    @staticmethod
    def _bar(cols: dict[str, list], factor: str, value: str, title: str, name: str, tips: list, color: str,
             tap: bool = False) -> Any:
        factors = list(reversed(cols[factor]))
        f = C._figure(title, C._bar_height(len(factors)), name, y_range=FactorRange(factors=factors),
                      tools="tap" if tap else "")
        src = C._source(name, cols)
        r = f.hbar(y=factor, right=value, height=0.72, source=src, color=color)
        f.add_tools(HoverTool(renderers=[r], tooltips=tips))
        f.x_range.start = 0
        if "engine time" in title:
            f.xaxis.axis_label = "ms, all engines added"
        return f
