"""Timeline: the System Trace Viewer as an anywidget, drawing what the kernel's viewport query returns."""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import anywidget
import numpy as np
import pandas as pd
import traitlets as t

from ..bundle import asset
from ..model.color_keys import color_codes
from ..model.counter_series import CounterSeries, add_bandwidth, counter_series
from ..model.filters import parse_time
from ..model.overview import overview
from ..model.problem_rows import error_rows, incomplete_rows
from ..model.profile import Profile
from . import messages as M
from . import wire
from .delivery import Delivered
from .finding_marks import FindingMarks
from .job.kind import is_job
from .messages import request_class
from .range_summary import range_summary
from .timeline_critical import CriticalShown, critical_shown, rows_of_ids
from .timeline_switch import GroupingSwitch, Shown

PREVIEW_STATUS = "preview: {n:,} of {total:,} events (the longest, errors, and an even sample); preparing all of them…"
FULL_VIEW_FAILED = "could not prepare the full view"


class Timeline(Delivered, FindingMarks, anywidget.AnyWidget):
    """A zoomable, pannable timeline of a profile's events, grouped into tracks.

    The view state (grouping, visible range, brush, selection) lives here; GroupingSelector,
    EventDetails and link() bind to it, so a click in one cell shows in widgets of other cells.
    Times on the traitlets are float nanoseconds from the profile's first timestamp; the Python
    properties (`time_range`, `brush_range`) speak absolute nanoseconds.
    """

    # What export_html makes of this widget (the exporter dispatches on it, never on widget classes).
    export_role = "timeline"

    _esm = asset("timeline.js")
    _css = asset("timeline.css")

    grouping = t.Unicode("default").tag(sync=True)
    groupings = t.Dict().tag(sync=True)
    tracks = t.List().tag(sync=True)  # [{label, lanes, events}] of the current grouping
    names = t.List().tag(sync=True)  # the name dictionary viewport replies index into
    span = t.List([0.0, 1.0]).tag(sync=True)  # the profile's extent, ns from its start
    origin_ns = t.Unicode("0").tag(sync=True)  # the profile's first timestamp (a string: exact)
    view = t.List([0.0, 1.0]).tag(sync=True)
    # Where the view opens and Reset goes: the span, or its dense part when a few events sit on a far clock.
    home = t.List([0.0, 1.0]).tag(sync=True)
    # The overview strip: events per bin over the dense part, far-clock outliers apart (model.overview).
    overview = t.Dict({}).tag(sync=True)
    brush = t.List([]).tag(sync=True)
    selected_row = t.Int(-1).tag(sync=True)
    selection_detail = t.Dict().tag(sync=True)
    brush_summary = t.Dict().tag(sync=True)
    counters = t.List().tag(sync=True)  # series metadata; values come by request
    show_cpu = t.Bool(False).tag(sync=True)
    color_by = t.Unicode("name").tag(sync=True)
    height = t.Int(480).tag(sync=True)
    status = t.Unicode("").tag(sync=True)
    error = t.Unicode("").tag(sync=True)
    revision = t.Int(0).tag(sync=True)  # bumped when what replies hold changes (markers, colours)
    generation = t.Int(0).tag(sync=True)  # bumped when the widget shows another profile (a retarget)
    title = t.Unicode("").tag(sync=True)  # a heading above the toolbar (the Device Trace Viewer's)
    notes = t.List(t.Unicode()).tag(sync=True)  # lines under the heading: alignment, warnings
    strip = t.List(t.Dict()).tag(sync=True)  # summary chips: [{label, value, share (0..1 or null)}]
    loading = t.Bool(False).tag(sync=True)  # work under way that will change what is shown
    # The critical path drawn (toolbar toggle): its events become the highlight set, the rest dim.
    critical_path = t.Bool(False).tag(sync=True)
    # The toolbar offers the toggle only where a path exists: a device trace has none (its engines run
    # one NEFF, whose bounds the hierarchy and the device analyses give).
    critical_available = t.Bool(True).tag(sync=True)
    # {state: "computing" | "shown" | "none", text, jumps: [t_from, track, lane, t_to, track, lane, ...]}
    critical_info = t.Dict({}).tag(sync=True)
    # Linked to another run's timeline on a step (widgets/timeline_align.py): {} when not; the page reads the
    # group it shares with its partner, each run's step starts and windows, and sets `step` or {} (its picker, Unlink).
    aligned = t.Dict({}).tag(sync=True)
    # The browser's PNG of its last view, kept so that a notebook reopened without its kernel shows it. It
    # comes back as a buffer (a memoryview), which a Bytes trait refuses: every save raised a TraitError
    # whose traceback the kernel spent a quarter of a second of CPU formatting.
    _snapshot = t.Bytes(b"").tag(sync=True, from_json=lambda value, _widget: bytes(value))

    def __init__(self, profile: Profile, grouping: str | None = None, *, height: int = 480, color_by: str = "name",
                 time_range: tuple[int, int] | None = None, **kwargs: Any) -> None:
        if is_job(profile):  # a job is drawn by its own class, said here rather than swapped in quietly
            raise TypeError("Timeline takes one profile; for a job (nw.load_job) use nw.JobTimeline(job)")
        grouping = profile.check_grouping(grouping or profile.default_grouping)
        self.profile = profile
        self._counter_data: CounterSeries | None = None
        self._marked: dict[str, np.ndarray] = {}
        self._marks_lock = threading.Lock()  # marks are set from threads (scan, critical path) and by the user
        self._color: np.ndarray | None = None
        self._color_keys: list[str] = []
        self._node: np.ndarray | None = None  # per event its device hierarchy node (DeviceTraceViewer)
        self._select_callbacks: list[Callable[[int], None]] = []
        # What the grouping shown is drawn from (the profile, or its preview while that grouping is built).
        self._switch = GroupingSwitch(self._full_ready, self._full_failed)
        self._critical: CriticalShown | None = None
        self._critical_saved: np.ndarray | None = None
        self._critical_ticket = 0  # the latest computation of the path; an older one's result is dropped
        self._bandwidth: threading.Thread | None = None  # adds the transfers' bandwidth to the counters
        super().__init__(height=height, **kwargs)
        self._show_profile(profile, grouping)
        if color_by != "name":
            self.color_by = color_by
        if time_range is not None:
            self.time_range = time_range
        self.on_msg(self._on_msg)

    def _show_profile(self, profile: Profile, grouping: str) -> None:
        """Point the widget at a profile: its names, extent, tracks and markers; the view shows all of it.

        A large profile whose grouping is still being built (load_profile prepares it in the
        background) is drawn from its preview meanwhile, then from all of it (`_show_grouping`).
        """
        self.profile = profile
        marked = {"error": error_rows(profile, scan_args=False), "incomplete": incomplete_rows(profile)}
        with self._marks_lock:
            self._marked = marked
        self._critical = None
        origin = profile.origin_ts
        # From the first event to the last, on the origin's clock (far-clock events before it are negative).
        span = [float(profile.start_ts - origin), float(max(profile.end_ts - origin, 1))] if len(profile) else [0.0, 1.0]
        h0, h1 = profile.home_range
        home = [float(h0 - origin), float(max(h1 - origin, h0 - origin + 1))] if len(profile) else list(span)
        with self.hold_sync():
            self.selected_row = -1
            self.brush = []
            self.groupings = profile.groupings
            self.names = profile.name_dictionary()
            self.span = span
            self.home = home
            self.overview = overview(profile)
            self.origin_ns = str(origin)
            self.view = list(home)
            if self.grouping == grouping:
                self._show_grouping()
            else:
                self.grouping = grouping  # its observer shows it
            self._load_counters()
            if self.color_by != "name":
                self._color, self._color_keys = color_codes(profile, self.color_by)
            self.generation += 1
        self._scan_args_in_background()
        if self.critical_path:  # the new profile's path
            self._start_critical()
        if self.findings:  # placed on the new profile's clock (kept per profile or job: no second computation)
            self._start_findings()

    @property
    def _drawn(self) -> Profile:
        """What replies of the grouping shown are drawn from: the profile, or its preview while that grouping is built."""
        return self._switch.shown.drawn

    def _show_grouping(self) -> None:
        """Draw the grouping chosen: from the whole profile if it is built, else at once from the profile's
        preview in that grouping while a thread builds it; `_full_ready` then swaps (or `_full_failed` says why not)."""
        with self._switch.lock:  # a build finishing meanwhile waits: it must not swap in a grouping left
            shown = self._switch.show(self.profile, self.grouping)
            with self.hold_sync():
                self._refresh_tracks()
                if self.error.startswith(FULL_VIEW_FAILED):  # said of a grouping left
                    self.error = ""
                if shown.is_preview:
                    self.status = PREVIEW_STATUS.format(n=len(shown.drawn), total=len(shown.profile))
                    self.loading = True
                elif self.status.startswith("preview:"):
                    self.status, self.loading = "", False
        if not shown.is_preview:
            self._refresh_brush()

    def _full_ready(self, shown: Shown) -> None:
        """(The build thread, the switch's lock held.) The grouping shown is built on every event: draw from it."""
        with self.hold_sync():
            self._refresh_tracks()  # the same tracks with every event's lanes; the selection placed anew
            if self.status.startswith("preview:"):
                self.status, self.loading = "", False
            self.revision += 1  # the browser asks again, now for every event
        self._refresh_brush()

    def _full_failed(self, shown: Shown, exc: BaseException) -> None:
        """(The build thread.) Shown in the widget: the preview stays, and says why it is one."""
        self.loading = False
        self.error = f"{FULL_VIEW_FAILED}: {type(exc).__name__}: {exc}"

    # -- state from the browser -------------------------------------------------------
    @t.validate("grouping")
    def _valid_grouping(self, proposal: dict[str, Any]) -> str:
        return self.profile.check_grouping(proposal["value"])

    @t.observe("grouping")
    def _grouping_changed(self, change: dict[str, Any]) -> None:
        self._show_grouping()
        if self.critical_path:
            self._start_critical()  # the jumps' tracks are the grouping's (one computing meanwhile is dropped)

    @t.observe("critical_path")
    def _critical_toggled(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self._start_critical()
        else:
            self._clear_critical()

    def _refresh_tracks(self) -> None:
        shown = self._switch.shown
        tracks = shown.drawn.tracks(shown.grouping)
        # Whole columns, not itertuples: 18 s less for a trace of 10^6 threads.
        self.tracks = [{"label": str(label), "lanes": int(lanes), "events": int(events)} for label, lanes, events
                       in zip(tracks["label"].tolist(), tracks["lanes"].tolist(), tracks["events"].tolist(), strict=True)]
        if self.selected_row >= 0:
            self._refresh_detail(self.selected_row)  # placed anew; not a new selection for on_select

    def on_select(self, callback: Callable[[int], None], remove: bool = False) -> None:
        """Call `callback(row)` on each selection (-1: none), before the event's details are read.

        For work that starts from a click and should not wait for the details panel: a drill-down
        started here reads the device profile while the details are computed.
        """
        if remove:
            if callback in self._select_callbacks:
                self._select_callbacks.remove(callback)
        elif callback not in self._select_callbacks:
            self._select_callbacks.append(callback)

    @t.observe("selected_row")
    def _selection_changed(self, change: dict[str, Any]) -> None:
        row = int(change["new"])
        for callback in list(self._select_callbacks):
            callback(row)
        self._refresh_detail(row)

    def _refresh_detail(self, row: int) -> None:
        self.selection_detail = self._detail(row) if 0 <= row < len(self.profile) else {}

    def _refresh_brush(self) -> None:
        """The range table of the brush again, per track of the grouping shown (after a switch)."""
        if len(self.brush) == 2:
            self._brush_changed({"new": self.brush})

    @t.observe("brush")
    def _brush_changed(self, change: dict[str, Any]) -> None:
        b = change["new"]
        if len(b) == 2 and b[1] > b[0]:
            origin = self.profile.origin_ts
            self.brush_summary = range_summary(self.profile, self.grouping, origin + int(b[0]), origin + int(b[1]))
        else:
            self.brush_summary = {}

    @t.observe("color_by")
    def _color_by_changed(self, change: dict[str, Any]) -> None:
        self._color, self._color_keys = color_codes(self.profile, change["new"])
        self.revision += 1

    # -- requests from the browser ------------------------------------------------------
    def _on_msg(self, _widget: Any, content: dict[str, Any], _buffers: list[Any]) -> None:
        answers: dict[type | None, Callable[[Any, Any, int], None]] = {
            M.ViewportRequest: self._viewport, M.CountersRequest: self._counters, M.CounterAtRequest: self._counter_at,
            M.HoverRequest: self._hover_reply, M.FindRequest: self._find_reply}
        answer = answers.get(request_class(content))
        if answer is None:  # not a Timeline request (a resync, or nothing declared): others' handlers take it
            return
        uuid = content.get("uuid")
        generation = self.generation  # read before the profile: a retarget sets the profile first
        try:
            answer(content, uuid, generation)
        except Exception as exc:  # the view shows it: a failed request must not kill the widget
            self.send(M.ErrorReply(type="error", uuid=uuid, message=f"{type(exc).__name__}: {exc}"))
            self.error = "".join(traceback.format_exception_only(type(exc), exc)).strip()

    # The handlers read the request with .get and defaults: a page built before a field was added still gets
    # an answer (the fields are declared in messages.py, which js/src/common/messages.ts is made from).
    def _viewport(self, content: M.ViewportRequest, uuid: str, generation: int) -> None:
        # The revision before what is drawn from: a swap to every event sets that first, then bumps the
        # revision, so a reply drawn from a preview never carries the revision the browser keeps.
        revision = self.revision
        grouping = content.get("grouping", self.grouping)
        drawn = self._switch.source(grouping)
        meta, buffers = wire.viewport_reply(drawn, grouping,
                                            float(content["t0"]), float(content["t1"]), int(content["width"]),
                                            content.get("tracks"), self._marked, self._color,
                                            drawn.source_rows, self._node)
        reply = cast(M.ViewportReply, {**meta, "uuid": uuid, "revision": revision, "generation": generation})
        if self._color is not None:
            reply["color_keys"] = self._color_keys
        self.send(reply, buffers)
        self._painted.set()
        self._switch.replied()  # a build waiting for this first reply goes ahead

    def _counters(self, content: M.CountersRequest, uuid: str, generation: int) -> None:
        data = self._counter_data or CounterSeries()
        keys = set(content.get("keys") or [])
        series = [s for s in data.series if s["key"] in keys]
        meta, buffers = wire.counters_reply(series, data.data, float(content["t0"]), float(content["t1"]),
                                            int(content["width"]))
        self.send(cast(M.CountersReply, {**meta, "uuid": uuid, "generation": generation}), buffers)

    def _counter_at(self, content: M.CounterAtRequest, uuid: str, _generation: int) -> None:
        data = self._counter_data or CounterSeries()
        at = float(content.get("t", 0))
        self.send(cast(M.CounterAtReply, {"type": "counter_at", "uuid": uuid, "key": content.get("key"), "at": at,
                                          **data.at(str(content.get("key")), at)}))

    def _hover_reply(self, content: M.HoverRequest, uuid: str, _generation: int) -> None:
        self.send(cast(M.HoverReply, {"type": "hover", "uuid": uuid, **self._hover(int(content["row"]))}))

    def _find_reply(self, content: M.FindRequest, uuid: str, _generation: int) -> None:
        self.send(cast(M.FindReply, {"type": "find", "uuid": uuid, **self._find(content)}))

    def _hover(self, row: int) -> dict[str, Any]:
        if not 0 <= row < len(self.profile):
            return {}
        args = self.profile.args_of_rows(np.array([row]))[0]
        shown = {str(k): _text(v) for k, v in list(args.items())[:8]}
        return {"row": row, "args": shown, "id": str(self.profile.array("id")[row])}

    def _find(self, content: M.FindRequest) -> dict[str, Any]:
        codes = np.asarray(content.get("codes") or [], dtype=np.int64)
        if codes.size == 0:
            return {"row": -1, "total": 0}
        hits = np.flatnonzero(np.isin(self.profile.name_codes(), codes))
        tracks = content.get("tracks")
        shown = self._switch.shown
        if tracks is not None and hits.size and not shown.is_preview:  # a preview searches every track
            idx = self.profile.track_index(shown.grouping)
            hits = hits[np.isin(idx.combo_track[idx.combo[hits]], np.asarray(tracks, dtype=np.int64))]
        if hits.size == 0:
            return {"row": -1, "total": 0}
        origin = self.profile.origin_ts
        start = self.profile.array("start_ts")[hits] - origin
        after = float(content.get("after", -1.0))
        if content.get("direction", 1) >= 0:
            i = int(np.searchsorted(start, after, side="right"))
            i = 0 if i >= hits.size else i
        else:
            i = int(np.searchsorted(start, after, side="left")) - 1
            i = hits.size - 1 if i < 0 else i
        row = int(hits[i])
        return {"row": row, "index": i, "total": int(hits.size), **self._place_row(row)}

    def _place_row(self, row: int) -> dict[str, Any]:
        """Where an event is drawn; while a preview is drawn, lane -1 for an event it does not hold (and track -1
        when the profile's tracks are not known yet, as while it loads)."""
        shown = self._switch.shown
        if shown.preview is not None:
            track, lane = shown.preview.place(row)
        else:
            idx = shown.profile.track_index(shown.grouping)
            track, lane = int(idx.combo_track[idx.combo[row]]), int(idx.lane[row])
        origin = self.profile.origin_ts
        return {"row": row, "start": float(self.profile.array("start_ts")[row] - origin),
                "end": float(self.profile.array("end_ts")[row] - origin), "track": track, "lane": lane,
                "name": str(self.profile.name_dictionary()[int(self.profile.name_codes()[row])])}

    def _detail(self, row: int) -> dict[str, Any]:
        event = self.profile.event(row=row)
        deps = self.profile.dependencies(row=row)
        out = {**self._place_row(row), "id": str(event["id"]), "source": str(event.get("trace_event_source") or ""),
               "incomplete": bool(event.get("incomplete"))}
        for side in ("upstream", "downstream"):
            rows = deps[side]["row"].to_numpy() if "row" in deps[side] else np.zeros(0, np.int64)
            out[side] = [self._place_row(int(r)) for r in rows[:200]]
        return out

    # -- background work ----------------------------------------------------------------
    def _load_counters(self) -> None:
        painted = self._painted = threading.Event()  # set once a view has been answered
        try:
            self._counter_data = counter_series(self.profile, transfers=False)
            # A copy: the bandwidth thread appends to the series list, the trait changes once it is done.
            self.counters = list(self._counter_data.series)
        except Exception as exc:  # counters are an extra: the timeline still works without them
            self.error = f"counter tracks unavailable: {type(exc).__name__}: {exc}"
            return
        profile, data = self.profile, self._counter_data

        def transfers() -> None:
            # Host-device bandwidth reads the transfers' arguments: added when ready, not awaited,
            # and begun once the first view is answered, so its CPU does not delay the first paint.
            painted.wait(3)
            try:
                add_bandwidth(data, profile)
            except Exception as exc:
                self.error = f"bandwidth tracks unavailable: {type(exc).__name__}: {exc}"
                return
            if self.profile is profile and self._counter_data is data:
                self.counters = list(data.series)

        self._bandwidth = threading.Thread(target=transfers, name="neuron-widgets-bandwidth", daemon=True)
        self._bandwidth.start()

    def _scan_args_in_background(self) -> None:
        profile = self.profile

        def scan() -> None:
            try:
                rows = error_rows(profile)
                if profile is self.profile and rows.size != self._marked["error"].size:
                    self._mark("error", rows)
                    self.revision += 1
            except Exception as exc:
                self.error = f"could not scan arguments for return codes: {exc}"

        self._arg_scan = threading.Thread(target=scan, name="neuron-widgets-error-scan", daemon=True)
        self._arg_scan.start()

    def _start_critical(self) -> None:
        """Compute the path in a thread (the click returns at once), then show it."""
        profile, grouping = self.profile, self.grouping
        self._critical_ticket += 1
        ticket = self._critical_ticket
        self.critical_info = {"state": "computing", "text": "critical path: computing…", "jumps": []}

        def work() -> None:
            try:
                shown = critical_shown(profile, grouping)
            except Exception as exc:  # said in the widget; the toggle goes off
                shown = CriticalShown(np.zeros(0, np.int64), np.zeros((0, 4), np.int64), [],
                                      f"critical path unavailable: {type(exc).__name__}: {exc}")
            if ticket != self._critical_ticket or profile is not self.profile or not self.critical_path:
                return  # switched off, another profile or grouping, meanwhile: its own computation shows it
            if shown.rows.size == 0:
                with self.hold_sync():
                    self.critical_path = False
                    self.critical_info = {"state": "none", "text": shown.text, "jumps": []}
                return
            with self.hold_sync():
                if self._critical is None:
                    self._critical_saved = self._marked.get("highlight")  # the user's own, back when off
                self._critical = shown
                self._mark("highlight", shown.rows)
                self.critical_info = shown.info()  # text, headline, jumps (and a job's spans)
                self.revision += 1

        threading.Thread(target=work, name="neuron-widgets-critical-path", daemon=True).start()

    def _clear_critical(self) -> None:
        with self.hold_sync():
            if self._critical is not None:
                self._mark("highlight", self._critical_saved)  # the user's own again, if any
                self._critical = None
                self.revision += 1
            if self.critical_info.get("state") != "none":
                self.critical_info = {}

    # -- Python API ---------------------------------------------------------------------
    @property
    def time_range(self) -> tuple[int, int]:
        """The visible range, absolute nanoseconds."""
        origin = self.profile.origin_ts
        return origin + round(self.view[0]), origin + round(self.view[1])

    @time_range.setter
    def time_range(self, value: tuple[Any, Any]) -> None:
        a, b = self._abs_range(value)
        origin = self.profile.origin_ts
        self.view = [float(a - origin), float(b - origin)]

    @property
    def brush_range(self) -> tuple[int, int] | None:
        """The brushed range (absolute ns), or None."""
        if len(self.brush) != 2:
            return None
        origin = self.profile.origin_ts
        return origin + round(self.brush[0]), origin + round(self.brush[1])

    @brush_range.setter
    def brush_range(self, value: tuple[Any, Any] | None) -> None:
        if value is None:
            self.brush = []
            return
        a, b = self._abs_range(value)
        origin = self.profile.origin_ts
        self.brush = [float(a - origin), float(b - origin)]

    def _abs_range(self, value: tuple[Any, Any]) -> tuple[int, int]:
        a, b = (parse_time(v, self.profile.origin_ts) for v in value)
        if b <= a:
            raise ValueError(f"a time range must end after it starts: {value!r}")
        return a, b

    @property
    def selection(self) -> dict[str, Any] | None:
        """The selected event with all its properties and arguments, or None."""
        if self.selected_row < 0:
            return None
        return self.profile.event(row=self.selected_row)

    def select(self, event_id: int | None = None, *, row: int | None = None, focus: bool = True) -> None:
        """Select an event (by id or row) and, with focus, bring it into view."""
        if row is None:
            if event_id is None:
                self.selected_row = -1
                return
            row = self.profile.row_of(event_id)
        self.selected_row = int(row)
        if focus:
            self.focus(row)

    def focus(self, row: int) -> None:
        """Centre the view on an event, zoomed so that it fills about a third of the width."""
        place = self._place_row(int(row))
        dur = max(place["end"] - place["start"], 1000.0)
        mid = (place["start"] + place["end"]) / 2
        self.view = [mid - 1.5 * dur, mid + 1.5 * dur]

    def selected_events(self) -> pd.DataFrame:
        """Events overlapping the brushed range (the visible range if nothing is brushed), with their track."""
        a, b = self.brush_range or self.time_range
        p = self.profile
        start, end = p.array("start_ts"), p.array("end_ts")
        hi = int(np.searchsorted(start, b, side="left"))
        rows = np.flatnonzero(end[:hi] >= a)
        df = p.core.take(rows).to_pandas()
        # The grouping's tracks without its lanes: no wait for a build under way.
        combo, combo_track, labels = p.grouping_keys(self.grouping)
        return df.assign(track=np.asarray(labels, dtype=object)[combo_track[combo[rows]]], row=rows)

    def highlight(self, events: Any) -> None:
        """Mark events (ids, or a DataFrame with an `id` or `row` column) on the timeline; None clears."""
        rows = np.zeros(0, np.int64)
        if events is not None:
            if isinstance(events, pd.DataFrame):
                if "row" in events.columns:
                    rows = events["row"].to_numpy(np.int64)
                else:
                    rows = rows_of_ids(self.profile, events["id"].to_numpy(np.int64))
            else:
                rows = rows_of_ids(self.profile, np.asarray(list(events), dtype=np.int64))
        self._mark("highlight", np.unique(rows))
        self.revision += 1

    def _mark(self, key: str, rows: np.ndarray | None) -> None:
        """Set one kind of marked rows (None drops it): one writer at a time, so that a mark set from a thread
        (the argument scan's errors, the critical path) and one set meanwhile (highlight()) are both kept."""
        with self._marks_lock:
            marked = dict(self._marked)
            if rows is None:
                marked.pop(key, None)
            else:
                marked[key] = rows
            self._marked = marked

    def close(self) -> None:
        """Close the widget; a grouping's build under way stops at its current stage and swaps nothing in."""
        switch = getattr(self, "_switch", None)  # (closed by ipywidgets on collection, maybe half made)
        if switch is not None:
            switch.close()
        super().close()

    def to_html(self, path: str | Path, *, time_range: tuple[Any, Any] | str | None = None, max_mb: float = 25.0,
                title: str | None = None) -> dict[str, Any]:
        """Write this view to one self-contained HTML file that works offline, without a kernel.

        `time_range`: None exports the visible range, "all" the whole profile, or (start, end)
        such as ("12.5ms", "40ms"). Past `max_mb` the shortest events are merged into blocks.
        """
        from ..export import export_html  # the export stack (~0.1 s) loads on a first export, not with every Timeline

        return export_html(path, self, time_range=time_range, max_mb=max_mb, title=title)


def _text(v: Any) -> str:
    s = v if isinstance(v, str) else repr(v)
    return s if len(s) <= 200 else s[:199] + "…"
