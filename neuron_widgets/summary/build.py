"""The Summary's charts from the analyses: built once, then updated in place (a brushed range).

Every clickable source carries what a click means: `event_id` (an event to select, as text:
ids pass 2^53), and for steps `t0`/`t1` (a window, ns from the profile's origin). The widget
and the exported page read the same columns.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, Div, FactorRange

from ..analysis import compare as compare_profiles
from ..analysis import temporal_breakdown
from ..analysis.device_profiles import device_profile_summary
from ..analysis.frame import frame_of
from ..analysis.rank_labels import rank_labels
from ..model.profile import Profile
from ..model.worker_labels import core_label
from . import charts as C
from . import data as D
from .compare import FixSection
from .critical import CriticalSection
from .findings import FindingsSection

# Problems not looked for yet: the table says so, not "none found" before the search has run.
NOT_YET = pd.DataFrame()
EMPTY = {"kind": "neuron", "temporal": pd.DataFrame(), "idle": pd.DataFrame(), "launches": pd.DataFrame(),
         "kernels": (pd.DataFrame(), pd.DataFrame()),
         "stragglers": pd.DataFrame(), "straggler_steps": pd.DataFrame(), "problems": NOT_YET}


def _wrap(*children: Any, min_width: int = 320) -> Any:
    """Side by side when there is room, one under the other when not (400 to 1600 px)."""
    for c in children:
        c.min_width = min_width  # 320: two side by side from ~660 px, one under the other below
    return row(*children, sizing_mode="stretch_width", styles={"flex-wrap": "wrap", "gap": "8px"})


class SummaryCharts:
    """Every chart of the Summary, and the data behind each click."""

    def __init__(self, profile: Profile, results: dict[str, Any] | None = None, *, dark: bool = False,
                 range_note: str = "", device_numbers: int | None = 16, compare: Profile | None = None,
                 kind: str | None = None, ranks: int | None = None) -> None:
        self.profile = profile
        # The kind decides the charts: given (a widget that has no results yet), else the results'.
        self.kind = kind or (results or EMPTY)["kind"]
        self.dark = dark
        # How many ranks, given or as the results say (an export rebuilds from them): one rank has no stragglers.
        ranks = ranks if ranks is not None else int((results or {}).get("ranks", 2))
        r = {**EMPTY, **(results or {}), "kind": self.kind, "ranks": ranks}
        self.ranks = ranks
        self._rank_names: dict[Any, str] | None = None  # read once a chart or sentence names a rank
        self.head = C.headline_div(self._headline(profile, r, range_note))
        # Findings lead (None until looked for: the table says so), the critical path after them.
        self.findings = FindingsSection(r.get("findings"), profile.origin_ts,
                                        int(r.get("findings_span") or profile.duration_ns))
        self.critical = CriticalSection(r.get("critical"))
        tcols = self._named(D.temporal_columns(r["temporal"], self.kind, D.summarised_span(profile, r),
                                               r.get("track_parts")), "device", "track")
        self.temporal = C.temporal_chart(self._temporal_click(tcols, r), self.kind, title=
                                         "Busy time per thread (% of the span summarised), busiest first"
                                         if self.kind == "chrome" else "Where the time goes (% of each device's span)")
        self.idle = C.idle_chart(self._named(D.idle_columns(r["idle"], tcols["device"])))
        first, second = self._top_cols(r)
        titles = {"neuron": ("Top NEFFs by execution time (ms)", "Top events by total time (ms)"),
                  "kineto": ("Top kernels by total time (ms)", "Kernel time by type (ms)"),
                  "chrome": ("Top events by total time (ms)", "Top events by self time (ms)")}[self.kind]
        self.top_a = C.top_chart(first, titles[0], "nw-top-a")
        self.top_b = C.top_chart(second, titles[1], "nw-top-b", color="#8bbc21")
        self.stragglers = C.straggler_chart(self._straggler_cols(r))
        self.steps = C.straggler_steps_chart(self._step_cols(r))
        self.problems = C.problems_table(self._problem_cols(r, profile), neuron=self.kind == "neuron")
        self.longest = C.longest_table(self._longest_cols(r)) if self.kind == "chrome" else None
        self.launches = C.launch_chart(self._named(D.launch_columns(r["launches"]))) if self.kind == "kineto" else None
        # Charts that do not apply to this kind of trace are not drawn (the headline says why); charts
        # with nothing to draw (no launch calls in an MTIA trace, no collective in a brushed range) neither.
        self.applies = {"idle": self.kind != "chrome",
                        "stragglers": self.kind == "neuron" or (self.kind == "kineto" and ranks >= 2)}
        self.idle.visible = self.applies["idle"]
        self.stragglers.visible = self.steps.visible = self.applies["stragglers"]
        self.devices = None
        if self.kind == "neuron" and len(profile.device_profiles):
            self.devices = C.device_table(device_profile_summary(profile, limit=device_numbers)
                                          if device_numbers else profile.device_profiles)
        self.counters = C.counters_chart(profile) if not (profile.host_memory.empty and profile.hbm_usage.empty) else None
        self.compare = None
        self.compare_temporal = None
        self.compare_profile = compare
        if compare is not None and not isinstance(compare, Profile):
            raise TypeError(f"compare= takes a Profile (or a Timeline of one) beside a profile, not "
                            f"{type(compare).__name__}: compare two jobs with Summary(job, compare=other_job)")
        # Did the fix work: without results yet (a widget's first paint) the comparison comes last, in the background.
        self.fix = FixSection(compare, profile, later=results is None) if compare is not None else None
        if compare is not None:
            # before (compare=) against after (this profile): after - before, as the step chart below
            self.compare = C.compare_table(compare_profiles(compare, profile), roles=("before", "after"))
            other = temporal_breakdown(compare)
            kind_b = "neuron" if "nc_idx" in other.columns else "kineto"
            self.compare_temporal = C.temporal_chart(D.temporal_columns(other, kind_b), kind_b, name="nw-temporal-b",
                                                     title="Compared profile (before): where the time goes")
        self.layout = self._layout()
        self.figures = [f for f in (self.temporal, self.idle, self.top_a, self.top_b, self.stragglers, self.steps,
                                    self.launches, self.counters, self.compare_temporal, self.critical.chart)
                        if f is not None]
        # The source each chart's updates go to (the memory chart, a line per source, is never updated).
        self.sources = {id(f): next(iter(f.select({"type": ColumnDataSource})), None) for f in self.figures}
        self.figures += self.fix.figures if self.fix is not None else []
        self._show_filled(r, None)
        C.apply_theme(self.layout, dark, self.figures)

    def theme(self, dark: bool) -> None:
        C.apply_theme(self.layout, dark, self.figures)

    # -- layout ---------------------------------------------------------------------------
    def _layout(self) -> Any:
        label = {"color": "var(--jp-ui-font-color1, #1f2328)", "font-weight": "600", "font-size": "13px"}
        first = (_wrap(self.temporal, self.compare_temporal), _wrap(self.idle)) if self.compare_temporal is not None \
            else (_wrap(self.temporal, self.idle),)
        parts: list[Any] = [self.head, self.findings.layout, self.critical.layout, *first, _wrap(self.top_a, self.top_b)]
        self._rows: dict[int, Any] = {}  # a chart alone in its row: the row goes with it
        if self.launches is not None:
            parts.append(self._row_of(self.launches))
        if self.applies["stragglers"]:
            parts.append(self._row_of(self.stragglers, self.steps))
        if self.longest is not None:
            parts += [Div(text="Longest events", render_as_text=True, styles=label), self.longest]
        parts += [Div(text="Errors and hangs", render_as_text=True, styles=label), self.problems]
        if self.devices is not None:
            parts += [Div(text="Device profiles", render_as_text=True, styles=label), self.devices]
        if self.counters is not None:
            parts.append(self.counters)
        if self.compare is not None:
            parts += [Div(text="Compared with the other profile (before): change = after - before, below zero: faster",
                          render_as_text=True, styles=label),
                      self.compare]
            parts += self.fix.parts if self.fix is not None else []
        return column(*parts, sizing_mode="stretch_width", name="nw-summary")

    def _row_of(self, *charts: Any) -> Any:
        row_ = _wrap(*charts)
        for c in charts:
            self._rows[id(c)] = row_
        return row_

    def _show(self, charts: tuple[Any, ...], has: bool, applies: bool = True) -> None:
        """Charts shown when they apply and have something to draw (their row with them)."""
        for c in charts:
            c.visible = applies and has
            if id(c) in self._rows:
                self._rows[id(c)].visible = applies and has

    def _show_filled(self, r: dict[str, Any], parts: set[str] | None) -> None:
        """After an analysis ran, its charts show only with rows to draw."""
        def done(name: str) -> bool:
            return parts is None or name in parts

        if done("temporal"):
            self._show((self.temporal,), bool(self.sources[id(self.temporal)].data["device"]))
            idle = self.sources[id(self.idle)].data  # devices that never idle draw nothing either
            self._show((self.idle,), any(sum(v) > 0 for v in zip(idle["host_wait"], idle["kernel_wait"], idle["other"],
                                                                  strict=True)), self.applies["idle"])
            if self.launches is not None:
                self._show((self.launches,), bool(self.sources[id(self.launches)].data["device"]))
        if done("kernels"):
            for f in (self.top_a, self.top_b):
                self._show((f,), bool(self.sources[id(f)].data["label"]))
        if done("stragglers"):
            self._show((self.stragglers, self.steps), bool(self.sources[id(self.stragglers)].data["device"]),
                       self.applies["stragglers"])

    # -- updates ----------------------------------------------------------------------------
    def update(self, results: dict[str, Any], range_note: str = "", parts: tuple[str, ...] | None = None,
               profile: Profile | None = None) -> None:
        """Point the charts at new results (those named in `parts`, or all) of `profile` (a range of ours)."""
        want = set(parts) if parts is not None else None

        def wanted(name: str) -> bool:
            return want is None or name in want

        r = {**EMPTY, **results, "kind": self.kind, "ranks": self.ranks}
        if wanted("headline"):
            h = self._headline(profile if profile is not None else self.profile, r, range_note)
            for (k, v), card in zip(h.cards(), self.head.children[0].children, strict=True):
                card.text = f"{k}\n{v}"
            self.head.children[1].text = h.sentence
            self.head.children[2].text = h.range_note
        if wanted("temporal"):
            tcols = self._named(D.temporal_columns(r["temporal"], self.kind,
                                                   D.summarised_span(profile or self.profile, r), r.get("track_parts")),
                                "device", "track")
            self._set(self.temporal, self._temporal_click(tcols, r), "device")
            self._set(self.idle, self._named(D.idle_columns(r["idle"], tcols["device"])), "device")
            if self.launches is not None:
                self._set(self.launches, self._named(D.launch_columns(r["launches"])), "device")
        if wanted("kernels"):
            a, b = self._top_cols(r)
            self._set(self.top_a, a, "label", reverse=False)
            self._set(self.top_b, b, "label", reverse=False)
        if wanted("stragglers"):
            self._set(self.stragglers, self._straggler_cols(r), "device")
            self.sources[id(self.steps)].data = self._step_cols(r)
        if wanted("problems"):
            self.problems.source.data = cols = self._problem_cols(r, profile or self.profile)
            self.problems.height = C.table_height(len(cols["kind"]))
        if wanted("findings"):
            p = profile if profile is not None else self.profile
            self.findings.update(results.get("findings"), self.profile.origin_ts,
                                 int(results.get("findings_span") or p.duration_ns))
        if wanted("critical"):
            self.critical.update(results.get("critical"))
        if wanted("fix") and self.fix is not None and "fix" in results:
            self.fix.fill(results["fix"])
        if wanted("kernels") and self.longest is not None:
            self.longest.source.data = cols = self._longest_cols(r)
            self.longest.height = C.table_height(len(cols["name"]), C.LONGEST_ROW_PX)
        self._show_filled(r, want)

    def set_devices(self, df: pd.DataFrame) -> None:
        """Fill the device-profile table with its numbers (read after the rest: it reads device tables)."""
        if self.devices is None:
            return
        cols, columns = C._device_columns(df)
        if [c.field for c in self.devices.columns] != [c.field for c in columns]:
            # New column models only when the fields change: a table view rebuilt under a data
            # patch in flight drew empty cells ("-", "(null)") in the live notebook.
            self.devices.columns = columns
        if dict(self.devices.source.data) != cols:
            self.devices.source.data = cols
            self.devices.height = C.table_height(len(df))

    def _set(self, fig: Any, cols: dict[str, list], factor: str, reverse: bool = True) -> None:
        src = self.sources[id(fig)]
        src.selected.indices = []
        factors = list(reversed(cols[factor])) if reverse else list(cols[factor])
        fig.y_range = FactorRange(factors=factors) if not isinstance(fig.y_range, FactorRange) else fig.y_range
        fig.y_range.factors = factors
        fig.height = C._bar_height(len(factors))
        src.data = cols

    # -- columns and their click targets -----------------------------------------------------
    def _ids(self, rows: Any) -> list[str]:
        ids = self.profile.array("id")
        return [str(int(ids[r])) if r is not None and r >= 0 else "" for r in rows]

    def _temporal_click(self, tcols: dict[str, list], r: dict[str, Any]) -> dict[str, list]:
        """A device's bar selects its longest execution (or kernel); the widget also highlights them all."""
        t = r["temporal"]
        out = dict(tcols)
        if t.empty:
            out["event_id"] = []
            return out
        fr = frame_of(self.profile)
        if self.kind == "neuron" and "nc_idx" in t.columns:
            codes, cores = fr.core_codes()
            rows = fr.rows_named("nc_exec_running")
            dev = codes[rows]
            core_of_key = {D.device_key(cores.loc[c]): c for c in cores.index}
            target = []
            for i in tcols["row"]:
                mine = rows[dev == core_of_key.get(D.device_key(t.loc[i]), -1)]
                target.append(int(mine[np.argmax(fr.end[mine] - fr.start[mine])]) if mine.size else -1)
        else:
            target = [-1] * len(tcols["row"])
        out["event_id"] = self._ids(target)
        return out

    def _top_cols(self, r: dict[str, Any]) -> tuple[dict[str, list], dict[str, list]]:
        first, second = r["kernels"]
        if self.kind == "chrome":
            if first is None or first.empty:
                first = pd.DataFrame(columns=["name", "total_ns", "self_ns", "count", "mean_ns"])
            own = first.assign(self_mean=first["self_ns"] / first["count"].clip(lower=1))
            return (D.top_columns(first, "name", "total_ns", "count", "mean_ns"),
                    D.top_columns(own, "name", "self_ns", "count", "self_mean"))
        if self.kind == "neuron":
            a = D.top_columns(first, "model_name", "sum_ns", "count", "mean_ns")
            b = D.top_columns(second, "name", "sum_ns", "count", "mean_ns")
        else:
            names = second.groupby("name", as_index=False).agg(total=("sum (us)", "sum"), count=("count", "sum")) \
                if len(second) else pd.DataFrame(columns=["name", "total", "count"])
            names["mean"] = names["total"] / names["count"].clip(lower=1)
            a = D.top_columns(names, "name", "total", "count", "mean", scale=1e3)
            types = first.assign(count=0, mean=0.0) if len(first) else pd.DataFrame(columns=["kernel_type", "sum",
                                                                                            "count", "mean"])
            b = D.top_columns(types, "kernel_type", "sum", "count", "mean", scale=1e3, shorten=False)
        return a, b

    @property
    def rank_names(self) -> dict[Any, str]:
        """A Kineto rank named as the Timeline labels its GPU, in every chart and sentence (findings say it so too)."""
        if self._rank_names is None:
            self._rank_names = rank_labels(self.profile) if self.kind == "kineto" and len(self.profile) else {}
        return self._rank_names

    def _named(self, cols: dict[str, list], *fields: str) -> dict[str, list]:
        """`fields` of chart columns (default: "device") with each Kineto rank named as its GPU's track."""
        if self.kind == "kineto" and any(cols.get(f) for f in fields or ("device",)) and self.rank_names:
            for f in fields or ("device",):
                if f in cols:
                    cols[f] = [D.named_ranks(str(x), self.rank_names) for x in cols[f]]
        return cols

    def _headline(self, profile: Profile, r: dict[str, Any], range_note: str) -> Any:
        h = D.headline(profile, r, range_note)
        if self.kind == "kineto" and D.RANK_WORDS.search(h.sentence):
            h.sentence = D.named_ranks(h.sentence, self.rank_names)
        return h

    def _straggler_cols(self, r: dict[str, Any]) -> dict[str, list]:
        s, steps = r["stragglers"], r["straggler_steps"]
        if s.empty:
            return {"device": [], "times_last": [], "steps": [], "mean_lag": [], "max_lag": [], "caused": [], "event_id": []}
        labels = D.device_labels(s)
        # A device's bar selects its barrier in the step where it was latest.
        known = steps[steps["id"] >= 0]
        worst = known.groupby(pd.Series(D.device_labels(known), index=known.index))["lag_ns"].idxmax() \
            if len(known) else pd.Series(dtype=object)
        target = [int(known.loc[worst[lab], "id"]) if lab in worst.index else -1 for lab in labels]
        return {"device": [D.named_ranks(x, self.rank_names) for x in labels],
                "times_last": [int(x) for x in s["times_last"]], "steps": [int(x) for x in s["steps"]],
                "mean_lag": [D.duration(x) for x in s["mean_lag_ns"]], "max_lag": [D.duration(x) for x in s["max_lag_ns"]],
                "caused": [D.duration(x) for x in s["wait_caused_ns"]],
                "event_id": [str(t) if t >= 0 else "" for t in target]}

    def _step_cols(self, r: dict[str, Any]) -> dict[str, list]:
        steps = r["straggler_steps"]
        origin = self.profile.origin_ts
        if steps.empty:
            return {"t_ms": [], "lag_us": [], "step": [], "device": [], "lag": [], "wait": [], "t0": [], "t1": [],
                    "event_id": []}
        start = steps["start_ts"].to_numpy(np.int64) - origin
        lag = steps["lag_ns"].to_numpy(np.int64)
        pad = np.maximum(lag * 4, 20_000)
        return {"t_ms": (start / 1e6).tolist(), "lag_us": (lag / 1e3).tolist(), "step": [str(x) for x in steps["step"]],
                "device": [D.named_ranks(x, self.rank_names) for x in D.device_labels(steps)],
                "lag": [D.duration(x) for x in lag],
                "wait": [D.duration(x) for x in steps["mean_wait_ns"]],
                "t0": (start - pad).astype(float).tolist(), "t1": (start + lag + pad).astype(float).tolist(),
                "event_id": [str(int(x)) if x >= 0 else "" for x in steps["id"]]}

    @staticmethod
    def _thread_tracks(r: dict[str, Any]) -> list[str]:
        t = r.get("temporal")
        return [str(x) for x in t["track"]] if t is not None and "track" in t.columns else []

    def _longest_cols(self, r: dict[str, Any]) -> dict[str, list]:
        df = r.get("longest", pd.DataFrame())
        if df is None or df.empty:
            return {"name": [], "thread": [], "t_ms": [], "duration": [], "event_id": []}
        return {"name": [str(x) for x in df["name"]], "thread": D.labels_among([str(x) for x in df["track"]],
                                                                              self._thread_tracks(r),
                                                                              r.get("track_parts")),
                "t_ms": ((df["start_ts"].to_numpy(np.int64) - self.profile.origin_ts) / 1e6).tolist(),
                "duration": [D.duration(x) for x in df["duration_ns"]], "event_id": [str(int(x)) for x in df["id"]]}

    def _problem_cols(self, r: dict[str, Any], profile: Profile) -> dict[str, list]:
        p = r["problems"]
        origin = self.profile.origin_ts
        if p.empty:  # said, not a blank table
            done = p is not NOT_YET
            return {"kind": ["none found" if done else "looking…"], "name": [""], "device": [""], "exec_id": [""],
                    "model": [""], "code": [""],
                    "meaning": ["no error, hang or unfinished event in this range" if done else
                                "errors, hangs and unfinished events are being looked for"],
                    "t_ms": [float("nan")], "event_id": [""]}

        def text(v: Any) -> str:
            return "" if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else str(v)

        # An event off the NeuronCores by its track, as the Timeline labels it (`row` is in `profile`).
        combo, combo_track, labels = profile.grouping_keys("default")
        tracks = D.labels_among([labels[combo_track[combo[int(row)]]] for row in p["row"]], self._thread_tracks(r),
                                r.get("track_parts"))
        # A core by its runtime track's label, as the device charts and findings name it.
        device = [core_label(x.instance_id, x.process_id, x.nc_idx, profile.track_names) if text(x.nc_idx) else track
                  for x, track in zip(p.itertuples(), tracks, strict=True)]
        return {"kind": p["kind"].tolist(), "name": [text(x) for x in p["name"]], "device": device,
                "exec_id": [text(x) for x in p["exec_id"]], "model": [text(x) for x in p["model_name"]],
                "code": [text(x) for x in p["code"]], "meaning": [text(x) for x in p["meaning"]],
                "t_ms": ((p["start_ts"].to_numpy(np.int64) - origin) / 1e6).tolist(),
                "event_id": [str(int(x)) for x in p["id"]]}
