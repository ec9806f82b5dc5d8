"""Summary: the analyses as bokeh charts in the notebook, bound to a Timeline like EventDetails.

The charts are one bokeh layout shown through jupyter_bokeh (bokeh models as an ipywidget, with
selections synced both ways). The analyses run in a thread, the cheapest first, and each chart
fills in as its numbers arrive, so a large profile's summary paints at once and completes in the
background. Following a timeline, a brushed range is summarised on its own (debounced; the newest
brush wins), and a click on a bar, a point or a row selects or highlights in the timeline.
"""

from __future__ import annotations

import html
import threading
import time
from pathlib import Path
from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd

from ..analysis import (
    comm_comp_overlap,
    errors_and_hangs,
    idle_time_breakdown,
    kernel_breakdown,
    launch_stats,
    stragglers,
    temporal_breakdown,
)
from ..analysis.device_breakdown import device_breakdown, device_trace_of
from ..analysis.device_profiles import device_profile_summary
from ..analysis.devices import rank_codes, trace_kind
from ..analysis.frame import frame_of
from ..analysis.threads import event_breakdown, longest_events, thread_breakdown
from ..model.device.trace import DeviceTrace
from ..model.profile import Profile
from ..summary import SummaryCharts
from ..summary.compare import fix_steps
from ..summary.data import duration, track_parts
from ..summary.device_charts import DeviceSummaryCharts
from .bokeh_host import ThemeProbe, bokehjs_here, load_bokehjs, source_of
from .delivery import Delivered, keep_in_order
from .job.summary import JobSummaryMixin, is_job
from .summary_findings import FindingsMixin, findings_steps
from .timeline import Timeline

DEBOUNCE_S = 0.3
class Summary(FindingsMixin, JobSummaryMixin, Delivered, W.VBox):
    """The analyses of a profile as charts and tables: `Summary(tl)`, `Summary(profile)`, `Summary(a, compare=b)`.

    Following a Timeline, it summarises the brushed range (the whole profile when nothing is
    brushed), and clicks select in the timeline: a device's bar highlights its executions and
    selects its longest, a NEFF's bar highlights that NEFF's executions, a straggler's bar selects
    its latest barrier, a step moves the view to that step, an error or hang row selects its event.
    `Summary(job)` (from `nw.load_job`) analyses every part on Dask (on `client` when given) and shows
    the job's lag heat map, stragglers and per-node breakdown; a click opens that part's Timeline.
    """

    # What export_html makes of this widget (the exporter dispatches on it, never on widget classes).
    export_role = "summary"

    def __init__(self, source: Timeline | Profile | DeviceTrace | Any, *, compare: Profile | Timeline | None = None,
                 device_numbers: int | None = 16, client: Any = None, **kwargs: Any) -> None:
        if is_job(source) or is_job(getattr(source, "job", None)):  # a Job, or Timeline(job): its parts open there
            self._job_init(source, client, compare=compare, **kwargs)
            return
        trace = _device_trace_in(source)
        if trace is not None:
            self._device_init(source, trace, **kwargs)
            return
        load_bokehjs()
        self.timeline = source if isinstance(source, Timeline) else None
        self.profile: Profile = source.profile if isinstance(source, Timeline) else source
        if not isinstance(self.profile, Profile):
            raise TypeError(f"Summary takes a Timeline or a Profile, not {type(source).__name__}")
        other = compare.profile if isinstance(compare, Timeline) else compare
        fr = frame_of(self.profile)
        self.kind = trace_kind(fr)
        self.ranks = len(rank_codes(fr)[1]) if self.kind == "kineto" else 0
        self.results: dict[str, Any] = {"kind": self.kind}
        self._lock = threading.Lock()
        self._generation = 0
        self._timer: threading.Timer | None = None
        self.device_numbers = device_numbers
        self.status = W.HTML(layout=W.Layout(min_height="22px"))
        self.probe = ThemeProbe()
        self.charts = SummaryCharts(self.profile, None, compare=other, device_numbers=None, kind=self.kind,
                                    ranks=self.ranks)
        self.bokeh = self._chart_view()
        self.probe.observe(lambda ch: self._themed(bool(ch["new"])), "dark")
        self._view_ready = threading.Event()
        self._patched = False  # chart updates sent before the browser drew the view are lost to it
        self.probe.observe(self._view_drawn, "bokeh_ready")
        self._wire_clicks()
        self._hook_probe()
        super().__init__(self._parts_shown(), **kwargs)
        self.add_class("nw-summary-widget")
        if self.timeline is not None:
            self.timeline.observe(self._brush_changed, "brush")
        self.done = threading.Event()
        self._start(self._range())

    # -- a device trace ---------------------------------------------------------------
    def _device_init(self, source: Any, trace: DeviceTrace, **kwargs: Any) -> None:
        """A device trace's Summary: engines, DMA queues, layers, operators and opcodes of one execution.

        Following a DeviceTraceViewer it summarises each trace the viewer shows, and a click on a
        layer fits the viewer to that layer.
        """
        load_bokehjs()
        self.kind = "device"
        self.timeline = source if isinstance(source, Timeline) else None
        self.profile = source.profile if isinstance(source, Timeline) else None
        self._lock = threading.Lock()
        self._device_shown = 0  # the newest trace asked for: an older one summarised later is dropped
        self.done = threading.Event()
        self.device_numbers = None
        self.status = W.HTML(layout=W.Layout(min_height="22px"))
        self.probe = ThemeProbe()
        self._dark = False
        self._view_ready, self._patched = threading.Event(), False  # findings come after the first paint
        self._show_device(trace, first=True)
        self.probe.observe(lambda ch: self._themed(bool(ch["new"])), "dark")
        self.probe.observe(self._view_drawn, "bokeh_ready")
        self._hook_probe()
        super().__init__(self._parts_shown(), **kwargs)
        self.add_class("nw-summary-widget")
        if self.timeline is not None and hasattr(self.timeline, "on_trace"):
            self.timeline.on_trace(lambda t: self._show_device(t))

    def _show_device(self, trace: DeviceTrace, first: bool = False) -> None:
        started = time.perf_counter()
        with self._lock:
            self._device_shown += 1
            me = self._device_shown
        self.done.clear()
        origin = self.timeline.profile.origin_ts if self.timeline is not None else None
        try:
            results = device_breakdown(trace)
            charts = DeviceSummaryCharts(trace, results, origin)
        except Exception as exc:  # shown in the widget: the kernel and the viewer go on
            if me == self._device_shown:
                self.device_trace = trace
                self._say(f"Could not summarise the device trace: {type(exc).__name__}: {exc}", busy=False, error=True)
                self.done.set()
            return
        with self._lock:
            if me != self._device_shown:
                return  # a newer trace came meanwhile (two drill-downs' loads told us out of order)
            self.device_trace = trace
            self.results, self.charts = results, charts
            charts.theme(self._dark)
            layers = source_of(charts.layers)
            layers.selected.on_change("indices", lambda _a, _o, new: self._layer_clicked(layers, new))
            self._wire_findings(charts)
            old = None if first else self.bokeh
            self.bokeh = self._chart_view()
            if old is not None:
                self._view_ready.clear()
                self.probe.bokeh_ready = False
                self._arrange()
                _drop_view(old)
        name = trace.metadata.get("profile_name") or Path(str(trace.source)).name or "device trace"
        self._say(f"Summarised: device trace {name}: {len(trace):,} instructions, {len(trace.dma):,} DMA packets "
                  f"in {time.perf_counter() - started:.2f} s.", busy=False)
        self._device_findings(trace, charts)  # sets done when they are in

    def _layer_clicked(self, src: Any, indices: list[int]) -> None:
        if self.timeline is None or not indices:
            return
        i = indices[0]
        t0, t1 = int(src.data["t0"][i]), int(src.data["t1"][i])
        if t1 > t0:
            origin = self.timeline.profile.origin_ts
            self.timeline.time_range = (origin + t0, origin + t1)

    # -- computing ----------------------------------------------------------------------
    def _range(self) -> tuple[int, int] | None:
        return self.timeline.brush_range if self.timeline is not None else None

    def _brush_changed(self, _change: dict[str, Any]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        # The results so far (or in flight) are another range's from now on, not after the debounce: an export or
        # a `done.wait()` meanwhile waits for the new range's, and a computation still running is dropped.
        with self._lock:
            self._generation += 1
        self.done.clear()
        self._timer = threading.Timer(DEBOUNCE_S, lambda: self._start(self._range()))
        self._timer.daemon = True
        self._timer.start()

    def _start(self, window: tuple[int, int] | None) -> None:
        with self._lock:
            self._generation += 1
            generation = self._generation
        self.done.clear()
        self._say(f"Summarising {self._describe(window)}…", busy=True)
        threading.Thread(target=self._compute, args=(window, generation), daemon=True,
                         name="neuron-widgets-summary").start()

    def _describe(self, window: tuple[int, int] | None) -> str:
        if window is None:
            far = self.profile.far_clock_events
            return (f"the whole profile ({far:,} events on a far clock left out: times and spans are the rest's)"
                    if far else "the whole profile")
        origin = self.profile.origin_ts
        return f"{duration(window[0] - origin)} to {duration(window[1] - origin)} (the timeline's brushed range)"

    def _range_note(self, window: tuple[int, int] | None, whole: dict[str, int] | None = None) -> str:
        """Under the headline: that a brushed range is shown, what the whole profile holds, how to see it."""
        if window is None:
            return ""
        origin = self.profile.origin_ts
        said = (f"This is the timeline's brushed range ({duration(window[0] - origin)} to "
                f"{duration(window[1] - origin)}), not the whole profile")
        if whole:
            e, h = whole["errors"], whole["hangs"]
            said += f", which has {e:,} error{'s' * (e != 1)} and {h:,} hang{'s' * (h != 1)}"
        return said + ". Clear the brush (Esc in the timeline, or tl.brush_range = None) to summarise all of it."

    def _track_parts(self) -> dict[str, tuple[str, ...]]:
        """The whole profile's track segments (summary.data.track_parts), cut once: a range's tracks are among them."""
        with self._lock:
            known = getattr(self, "_parts", None)
        if known is None:
            known = track_parts(self.profile)
            with self._lock:
                self._parts = known
        return known

    def _whole_counts(self) -> dict[str, int]:
        """The whole profile's errors and hangs (looked for once)."""
        with self._lock:
            known = getattr(self, "_whole", None)
        if known is None:
            problems = errors_and_hangs(self.profile)
            known = {"errors": int((problems["kind"] == "error").sum()), "hangs": int((problems["kind"] == "hang").sum())}
            with self._lock:
                self._whole = known
        return known

    def _compute(self, window: tuple[int, int] | None, generation: int) -> None:
        started = time.perf_counter()
        try:
            # A few events on a far clock would make every span a million seconds: the rest is summarised.
            whole = self.profile.home_range if window is None and self.profile.far_clock_events else None
            p = self.profile if window is None and whole is None else self.profile.filter(time_range=window or whole)
            fr = frame_of(p)
            kind = self.kind
            note = f"Summarised: {self._describe(window)}."
            # The time summarised (a brush, or the home range past a far clock) is the span the cards and charts
            # measure by; the tracks' segments name threads whose names hold "/" as the Timeline does: a plain
            # trace's first chart needs them, a Neuron or Kineto profile's errors table only (read before it: at
            # 1M events they cost 0.16 s CPU, kept off the first charts).
            r: dict[str, Any] = {"kind": kind, "ranks": self.ranks, "window": window or whole}
            if kind == "chrome":
                r["track_parts"] = self._track_parts()
            steps = _chrome_steps(p, window or whole) if kind == "chrome" else (
                     ("temporal", lambda: {"temporal": temporal_breakdown(p, kind)}, ("headline", "temporal")),
                     ("kernels", lambda: {"kernels": kernel_breakdown(p, kind)}, ("kernels",)),
                     ("idle", lambda: {"idle": idle_time_breakdown(p, kind), "overlap": comm_comp_overlap(p, kind),
                                       "launches": launch_stats(p, kind)}, ("temporal",)),
                     ("stragglers", lambda: {"stragglers": stragglers(p, kind),
                                             "straggler_steps": stragglers(p, kind, per_step=True)},
                      ("stragglers", "headline")),
                     ("problems", lambda: {"problems": errors_and_hangs(p)}, ("problems", "headline")))
            if kind == "kineto" and self.ranks < 2:  # one rank: stragglers do not apply, so are not computed
                steps = tuple(s for s in steps if s[0] != "stragglers")
            # The costliest last (an earlier range's findings go at once); comparing two runs after everything.
            steps = (*steps, *findings_steps(p), *fix_steps(self.charts))
            self._apply({}, self._range_note(window), ("findings", "critical"), generation, p)
            range_note = self._range_note(window)
            for label, work, parts in steps:
                if label == "problems" and "track_parts" not in r:
                    r["track_parts"] = self._track_parts()
                r.update(work())
                if label == "temporal" and kind == "neuron":
                    # The argument reads start once the first charts are out (they need none).
                    fr.prefetch()
                if not self._current(generation):
                    return
                self._apply(r, range_note, parts, generation, p)
                self._say(f"Summarising {self._describe(window)}… ({label} done)", busy=True)
            if window is not None:
                # A range's "Errors 0" must not read as the whole profile's: its counts go beside.
                r["whole"] = self._whole_counts()
                if not self._current(generation):
                    return
                self._apply(r, self._range_note(window, r["whole"]), ("headline",), generation, p)
            if not self._current(generation):
                return
            self.results = r
            if window is None and self.charts.devices is not None and self.device_numbers:
                numbers = device_profile_summary(self.profile, limit=self.device_numbers)
                if self._current(generation):
                    with self._lock:
                        self.charts.set_devices(numbers)
                        self._mark_patched()  # a view not drawn yet would drop the numbers' patch
            elapsed = time.perf_counter() - started
            self._say(f"{note} {len(p):,} events in {elapsed:.2f} s.", busy=False)
        except Exception as exc:  # shown in the widget: the kernel and the timeline go on
            self._say(f"Could not summarise: {type(exc).__name__}: {exc}", busy=False, error=True)
        finally:
            if self._current(generation):
                self.done.set()

    def _chart_view(self) -> Any:
        """The charts as a jupyter_bokeh widget, its messages kept in order as ours are."""
        from jupyter_bokeh import BokehModel  # its own modules (~15 ms): once charts are shown, not at import

        view = BokehModel(self.charts.layout, layout=W.Layout(width="100%"))
        keep_in_order(view.comm)
        return view

    def _renew_view(self) -> None:
        """A new BokehModel on the same charts, whose view draws their current state.

        jupyter_bokeh's view draws its bundle once and drops patches that come before it exists.
        """
        old = self.bokeh
        self.bokeh = self._chart_view()
        # The new view too must be drawn before patches reach it: until it reports in, changes
        # mark the charts as patched again (and it is renewed once more).
        if hasattr(self, "_view_ready"):
            self._view_ready.clear()
        self.probe.bokeh_ready = False
        self._arrange()
        _drop_view(old)

    def _parts_shown(self) -> list[W.Widget]:
        """Status, charts (once the page can draw their tables), probe, and a job's opened part."""
        bokeh = getattr(self, "bokeh", None)
        shown = [self.status, *([bokeh] if bokeh is not None and self.probe.tables_ready else []), self.probe]
        part_box = getattr(self, "part_box", None)
        return shown + [self.loader] + ([part_box] if part_box is not None else [])

    def _hook_probe(self) -> None:
        """What the page tells the probe rearranges the Summary: tables safe to draw, BokehJS missing."""
        self.loader = W.Output(layout=W.Layout(display="none"))
        self.probe.observe(lambda _ch: self._arrange(), "tables_ready")
        self.probe.observe(self._bokehjs_needed, "bokeh_missing")

    def _bokehjs_needed(self, change: dict[str, Any]) -> None:
        if change["new"]:
            bokehjs_here(self.loader)
        elif getattr(self, "bokeh", None) is not None and self.bokeh in self.children:
            # BokehJS came after the chart view was made (and failed for want of it): draw it anew.
            with self._lock:
                self._renew_view()

    def _arrange(self) -> None:
        self.children = self._parts_shown()

    def _current(self, generation: int) -> bool:
        with self._lock:
            return generation == self._generation

    def _apply(self, r: dict[str, Any], note: str, parts: tuple[str, ...], generation: int, p: Profile) -> None:
        # Never waits for a browser view (an exported or never displayed Summary has none): updates
        # made before the view is drawn are drawn by a fresh view when it reports in (_view_drawn).
        with self._lock:
            if generation != self._generation:
                return
            self.charts.update(r, note, parts, profile=p)
            self._mark_patched()

    def _view_drawn(self, change: dict[str, Any]) -> None:
        if not change["new"]:
            return
        with self._lock:
            # Drawn after updates went out (displayed late, or a slow page): draw again from now.
            if self._patched:
                self._patched = False
                self._renew_view()
                return
            self._view_ready.set()

    def _say(self, text: str, busy: bool, error: bool = False) -> None:
        spinner = '<span class="nw-spin" style="display:inline-block;width:10px;height:10px;margin-right:6px;' \
                  'border:2px solid currentColor;border-right-color:transparent;border-radius:50%;' \
                  'animation:nw-spin .8s linear infinite"></span><style>@keyframes nw-spin{to{transform:rotate(360deg)}}' \
                  '</style>' if busy else ""
        color = "#d62728" if error else "var(--jp-ui-font-color2, #57606a)"
        self.status.value = f'<div style="font-size:12px;color:{color}">{spinner}{html.escape(text)}</div>'

    def _themed(self, dark: bool) -> None:
        with self._lock:
            self._dark = dark
            self.charts.theme(dark)
            ready = getattr(self, "_view_ready", None)
            if ready is not None and not ready.is_set():
                self._patched = True  # recoloured before the view could hear it

    # -- clicks -------------------------------------------------------------------------
    def _wire_clicks(self) -> None:
        c = self.charts
        for fig, action in ((c.temporal, self._device_clicked), (c.stragglers, self._select_clicked),
                            (c.top_a, self._top_clicked), (c.steps, self._step_clicked)):
            src = source_of(fig)
            src.selected.on_change("indices", lambda _a, _o, new, src=src, action=action: action(src, new))
        c.problems.source.selected.on_change("indices", lambda _a, _o, new: self._select_clicked(c.problems.source, new))
        self._wire_findings(c)
        if getattr(c, "fix", None) is not None and c.fix.chart is not None:  # a step's bar: that step of this run
            fix = source_of(c.fix.chart)
            fix.selected.on_change("indices", lambda _a, _o, new: self._step_clicked(fix, new))

    def _select_clicked(self, src: Any, indices: list[int]) -> None:
        event_id = _clicked(src, indices, "event_id")
        if self.timeline is not None and event_id:
            self.timeline.select(int(event_id))

    def _device_clicked(self, src: Any, indices: list[int]) -> None:
        event_id = _clicked(src, indices, "event_id")
        if self.timeline is None or not event_id:
            return
        # Every execution of that core, marked; its longest selected (the view goes there).
        fr = frame_of(self.profile)
        codes, _ = fr.core_codes()
        row = self.profile.row_of(int(event_id))
        rows = fr.rows_named("nc_exec_running")
        self.timeline.highlight(pd.DataFrame({"row": rows[codes[rows] == codes[row]]}))
        self.timeline.select(int(event_id))

    def _top_clicked(self, src: Any, indices: list[int]) -> None:
        if self.timeline is None or not indices or self.kind != "neuron":
            return
        model = src.data["full"][indices[0]]
        fr = frame_of(self.profile)
        rows = fr.rows_named("nc_exec_running")
        mine = rows[np.array([m == model for m in fr.arg(rows, "model_name", "str")], dtype=bool)]
        if mine.size:
            self.timeline.highlight(pd.DataFrame({"row": mine}))
            self.timeline.select(row=int(mine[np.argmax(fr.end[mine] - fr.start[mine])]))

    def _step_clicked(self, src: Any, indices: list[int]) -> None:
        if self.timeline is None or not indices:
            return
        i = indices[0]
        origin = self.profile.origin_ts
        event_id = src.data["event_id"][i]
        if event_id:
            self.timeline.select(int(event_id), focus=False)
        self.timeline.time_range = (origin + int(src.data["t0"][i]), origin + int(src.data["t1"][i]))

    # -- export -------------------------------------------------------------------------
    def to_html(self, path: str | Path, *, title: str | None = None, max_mb: float = 25.0) -> dict[str, Any]:
        """Write the summary (with its timeline, when it follows one) to one self-contained HTML file."""
        from ..export import export_html  # the export stack (~0.1 s to import): only when a page is written

        widgets = (self.timeline, self) if self.timeline is not None else (self,)
        return export_html(path, *widgets, title=title, max_mb=max_mb)


def _drop_view(old: Any) -> None:
    """Close a replaced chart view, unhooking it from its document once: jupyter_bokeh's own close()
    does it again when the widget is collected, and fails then (the hook is gone)."""
    if old._document is not None:
        old._document.remove_on_change(old)
    old.close = lambda: W.DOMWidget.close(old)
    old.close()


def _device_trace_in(source: Any) -> DeviceTrace | None:
    """The device trace a Summary is asked for (a DeviceTrace, or a DeviceTraceViewer's), else None."""
    try:
        return device_trace_of(source)
    except TypeError:
        return None


def _chrome_steps(p: Profile, window: tuple[int, int] | None = None) -> tuple:
    """A plain trace's analyses, in the order the Summary draws them (busy time within `window`, a brushed range)."""
    return (("temporal", lambda: {"temporal": thread_breakdown(p, window)}, ("headline", "temporal")),
            ("kernels", lambda: {"kernels": (event_breakdown(p), None), "longest": longest_events(p)}, ("kernels",)),
            ("problems", lambda: {"problems": errors_and_hangs(p)}, ("problems", "headline")))



def _clicked(src: Any, indices: list[int], column: str) -> str | None:
    if not indices:
        return None
    values = src.data.get(column, [])
    return values[indices[0]] if indices[0] < len(values) else None
