"""DeviceTraceViewer: the instruction-level trace of one execution, on the system timeline's engine.

It is a Timeline over `DeviceEvents` (tracks per engine, DMA queue, CC stream, semaphore), so
zoom, search, the range summary, EventDetails and link() work on it as on the system view.
Bound to a system Timeline it follows clicks on hardware events: the device trace of the
clicked execution is read in a thread (the click returns at once) and then shown here.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import traitlets as t

from ..model.background import background_priority
from ..model.clusters import warm as warm_clusters
from ..model.device import colours as device_colors
from ..model.device.events import DeviceEvents
from ..model.device.hierarchy import instruction_nodes, subtree
from ..model.device.hierarchy import warm as warm_hierarchy
from ..model.device.loading import device_trace_of
from ..model.device.resolve import sync_rows
from ..model.device.rows import warm as warm_rows
from ..model.device.strip import engine_strip
from ..model.device.trace import DeviceTrace
from ..model.order import warm as warm_kernels
from ..model.profile import Profile
from ..readers.neuron.device_trace import load_device_trace
from . import messages as M
from . import wire
from .device_push import PUSHED, first_window
from .device_tree import tree_payload
from .messages import PaintedNotice, ViewportRequest, request_class
from .timeline import Timeline

# Hardware events that stand for one execution of a NEFF on a NeuronCore, and so have a device trace.
DRILL_DOWN_EVENTS = frozenset({"nc_exec_running"})

EMPTY_TITLE = "Device Trace Viewer"
# How long a drill-down's summary strip waits for the browser's first window to be answered.
STRIP_WAIT_S = 1.0
# How long a drill-down waits for the browser to draw its first window before reading the rest of the
# trace's tables (they shared the cores: reply to paint 59 -> 47 ms median in JupyterLab when apart).
PAINT_WAIT_S = 0.5
EMPTY_HINT = "Click an nc_exec_running event in the timeline, or pick a device profile, to show its device trace."


def _warm() -> None:
    """The compiled kernels a drill-down runs, loaded before the first click (from numba's cache)."""
    warm_kernels()
    warm_rows()
    warm_clusters()
    warm_hierarchy()


def _fetch(profile: Any, key: int | str, early: Callable[[DeviceTrace], None]) -> DeviceTrace:
    """`profile.device_trace(key)`; for a Profile, `early` gets the drawn part first (device_trace_of)."""
    if isinstance(profile, Profile) and not isinstance(profile, DeviceEvents):
        return device_trace_of(profile, key, early)
    return cast(DeviceTrace, profile.device_trace(key))


def _ready_for_clicks(profile: Any) -> None:
    """Build the followed profile's flow index and find its sync points ahead of the first click.

    A click on an execution shows its dependency chain in the timeline's details, which needs the
    index (the whole flow_id column read and indexed); built here, that click's details are a few
    look-ups and leave the cores to the drill-down the click starts, which then picks its sync point
    among a few rows. Not at background priority: a click meanwhile waits for these builds, and must
    not wait for a thread the scheduler holds back."""
    try:
        if "flow_id" in profile.column_names and len(profile):
            profile.flow_index()
    except Exception:  # the details build it again on a click, and say what fails there
        pass
    try:
        if len(profile) and not isinstance(profile, DeviceEvents):
            sync_rows(profile)
    except Exception:  # the drill-down finds them again, and says what fails there
        pass


def _empty_trace() -> DeviceTrace:
    return DeviceTrace(source="", format="none", instructions=pd.DataFrame())


class DeviceTraceViewer(Timeline):
    """A device trace on a timeline: engines, DMA queues, CC ops and semaphores, with a summary strip
    and the hierarchy panel (layer -> HLO operator -> NKI kernel).

    `DeviceTraceViewer(trace)` shows a DeviceTrace (or the path of a device profile);
    `DeviceTraceViewer(timeline)` starts empty and shows the device trace of each hardware event
    (nc_exec_running) clicked in that timeline. `show(trace)` and `open_event(event_id)` retarget it.
    `color_by`: "name" (the opcode), "layer", "hlo" or "nki". `pick_node(path)` highlights a
    hierarchy node's instructions and fits the view to it, as a click on it in the panel does.
    """

    # The hierarchy panel: {rows, notes, engines} (device_tree.tree_payload), and the node picked there.
    hierarchy = t.Dict({}).tag(sync=True)
    critical_available = t.Bool(False).tag(sync=True)
    picked_node = t.Unicode("").tag(sync=True)
    color_choices = t.List(t.Dict()).tag(sync=True)  # [{value, label}] for the toolbar's colour menu

    def __init__(self, source: DeviceTrace | Timeline | str | Path | None = None, *,
                 timeline: Timeline | None = None, height: int = 600, **kwargs: Any) -> None:
        if isinstance(source, Timeline):
            timeline, source = source, None
        if isinstance(source, str | Path):
            source = load_device_trace(source)
        trace = source if source is not None else _empty_trace()
        self._following: Timeline | None = None
        self._trace_listeners: list[Callable[[DeviceTrace], None]] = []
        self._request = 0  # the newest load; older ones that finish later are dropped
        self._lock = threading.Lock()
        # Held from a load's last check that it is the newest to the end of its state writes: a slower, older
        # load that built its events meanwhile cannot then replace a newer trace shown (with its strip).
        self._showing = threading.RLock()
        self._replied = threading.Event()  # the first window of the trace shown was answered
        # The browser drew the trace shown (a PaintedNotice of its generation); `_await_paint`: a first
        # window went out with it, so a drill-down reads the rest of its tables once it is drawn.
        self._paint_seen = threading.Event()
        self._await_paint = False
        # The width the browser asked with (this view's, else the followed timeline's): a drill-down's first
        # window is sent with its tracks at about it (device_push).
        self._asked_width: int | None = None
        self._timeline_width: int | None = None
        events = DeviceEvents.of(trace)
        self._set_color_choices(events)
        super().__init__(events, "engines", height=height, **kwargs)
        self._describe(trace)
        self.strip = self._strip_of(trace)
        self._set_tree(events)
        if timeline is not None:
            self.follow(timeline)

    @property
    def device_trace(self) -> DeviceTrace:
        """The DeviceTrace shown (its tables as DataFrames, host-clock times when aligned)."""
        return self.profile.trace  # type: ignore[attr-defined]

    # -- what is shown ----------------------------------------------------------------
    def show(self, trace: DeviceTrace, status: str = "") -> None:
        """Show another device trace (the view resets to its whole extent)."""
        with self._lock:
            self._request += 1
            me = self._request
        self._show_trace(trace, status, current=lambda: self._is_newest(me))

    def _is_newest(self, request: int) -> bool:
        with self._lock:
            return request == self._request

    def _show_trace(self, trace: DeviceTrace, status: str, loading: bool = False,
                    current: Callable[[], bool] | None = None) -> None:
        events = DeviceEvents.of(trace)
        if self._show_events(events, trace, status, loading, colours=True, current=current):
            self._finish(events, trace, loading)

    def _show_events(self, events: DeviceEvents, trace: DeviceTrace, status: str, loading: bool,
                     colours: bool, current: Callable[[], bool] | None = None) -> bool:
        """Point the view at `events` (of `trace`, whose head it shows): tracks, view and, loading in a thread,
        the first window. `colours`: the colour menu for them too (which reads the trace's whole tables).
        `current`: whether this is still the newest request, once the events are indexed (False: nothing shown)."""
        grouping = self._grouping_of(events)
        # The level-of-detail index is built before the tracks go out, so the browser's first
        # window (asked for as soon as it has them) is only a query.
        events.lod(grouping)
        with self._showing:
            if current is not None and not current():
                return False
            self._show_indexed(events, trace, status, loading, colours, grouping)
        return True

    def _show_indexed(self, events: DeviceEvents, trace: DeviceTrace, status: str, loading: bool, colours: bool,
                      grouping: str) -> None:
        self._replied.clear()
        self._paint_seen.clear()
        self._await_paint = False
        self._node = None
        with self.hold_sync():
            self.picked_node = ""
            self.hierarchy = {}
            if colours:
                self._set_color_choices(events)
        pushed = None
        with self.hold_sync():  # the tracks, the view and the head go out as one message...
            self._show_profile(events, grouping)
            self.status = status
            self.error = ""
            self._describe(trace)
            if loading and len(events):
                pushed = self._first_window(events, grouping)
            if pushed is not None:
                # ...just after the first window (a message is not held): the browser keeps it until the
                # state of its trace arrives, and the frame that lays the tracks out draws it.
                self.send(*pushed)
        if pushed is not None:
            self._await_paint = True
            self._painted.set()
            self._replied.set()

    def _finish(self, events: DeviceEvents, trace: DeviceTrace, loading: bool) -> None:
        """The summary strip and the hierarchy of the trace shown, then the listeners told of it."""
        if ("_strip" not in trace.__dict__ or "_tree" not in trace.__dict__) and loading and len(events):
            # In the load thread: the summary strip and the hierarchy wait for that first window
            # to be answered, so they do not share the kernel's time.
            self.strip = []
            self._replied.wait(STRIP_WAIT_S)
            # The browser may still be decoding and painting that window (a staged drill-down read the rest of
            # its tables after the PaintedNotice, or PAINT_WAIT_S; other loads come here at once): the strip and
            # the tree yield it the cores.
            background_priority()
            strip = self._strip_of(trace)
            if self.profile is events:  # not retargeted meanwhile
                self.strip = strip
                self._set_tree(events)
                self._tell(trace)
            return
        self.strip = self._strip_of(trace)
        self._set_tree(events)
        self._tell(trace)

    def _grouping_of(self, events: DeviceEvents) -> str:
        return self.grouping if self.grouping in events.groupings else "engines"

    # -- hierarchy and colours ----------------------------------------------------------
    def _set_color_choices(self, events: DeviceEvents) -> None:
        self.color_choices = device_colors.choices(events)
        if device_colors.canonical(self.color_by) not in {c["value"] for c in self.color_choices} | {"name"}:
            self.color_by = "name"  # the new trace's instructions do not carry what was chosen

    def _set_tree(self, events: DeviceEvents) -> None:
        tree = events.trace.__dict__.get("_tree")  # kept with the (cached) trace, as the strip is
        if tree is None:
            tree = events.trace.__dict__["_tree"] = tree_payload(events)
        if self.profile is events:
            self._node = tree[1]
            self.hierarchy = tree[0]
            self.revision += 1  # replies now carry each instruction's node

    def pick_node(self, path: str | None) -> None:
        """Highlight a hierarchy node's instructions (the others dim) and fit the view to its span; None clears."""
        if not path:
            self.picked_node = ""
            return
        row = next((r for r in self.hierarchy.get("rows", []) if r["path"] == path), None)
        if row is None:
            raise ValueError(f"no node {path!r} in this trace's hierarchy; its paths are in "
                             "viewer.device_trace.hierarchy()['path']")
        self.picked_node = path
        if row["start"] is not None and row["end"] is not None:
            pad = max((row["end"] - row["start"]) * 0.05, 100.0)
            self.view = [row["start"] - pad, row["end"] + pad]

    def node_instructions(self, path: str | None = None) -> pd.DataFrame:
        """The instructions under a hierarchy node (the picked one by default), as rows of `instructions`."""
        path = path or self.picked_node
        trace = self.device_trace
        if not path:
            return trace.instructions.iloc[:0]
        paths = trace.hierarchy()["path"]
        nodes = instruction_nodes(trace, paths)
        inside = subtree(paths.tolist(), path)
        return trace.instructions[(nodes >= 0) & inside[np.maximum(nodes, 0)]]

    def _detail(self, row: int) -> dict[str, Any]:
        out = super()._detail(row)
        rows = self.hierarchy.get("rows", [])
        node = int(self._node[row]) if self._node is not None and row < self._node.size else -1
        if 0 <= node < len(rows):
            out["node"] = node
            out["node_path"] = rows[node]["path"]
        return out

    def on_trace(self, callback: Callable[[DeviceTrace], None], remove: bool = False) -> None:
        """Call `callback(trace)` each time another device trace is shown (a Summary of the viewer follows so)."""
        if remove:
            self._trace_listeners = [c for c in self._trace_listeners if c != callback]
        else:
            self._trace_listeners.append(callback)

    def _tell(self, trace: DeviceTrace) -> None:
        for callback in list(self._trace_listeners):
            try:
                callback(trace)
            except Exception:  # a listener's failure must not stop the viewer showing its trace
                traceback.print_exc()

    def _on_msg(self, widget: Any, content: dict[str, Any], buffers: list[Any]) -> None:
        if request_class(content) is PaintedNotice:
            if content.get("generation") == self.generation:
                self._paint_seen.set()
            return
        if request_class(content) is ViewportRequest and isinstance(content.get("width"), int | float):
            self._asked_width = int(content["width"])
        super()._on_msg(widget, content, buffers)
        if request_class(content) is ViewportRequest:
            self._replied.set()

    def _timeline_msg(self, _widget: Any, content: dict[str, Any], _buffers: list[Any]) -> None:
        """The followed timeline's requests: its width, a guess at this view's before it has asked itself
        (the two sit in the same notebook column)."""
        if request_class(content) is ViewportRequest and isinstance(content.get("width"), int | float):
            self._timeline_width = int(content["width"])

    def _first_window(self, events: DeviceEvents, grouping: str) -> tuple[M.ViewportReply, list[bytes]] | None:
        """The reply to the request the browser would make for the new trace's first window (device_push),
        made before the tracks go out, to go just ahead of them; None without a width to guess from.

        Made as `Timeline._viewport` makes a reply (tests/test_device_push.py holds the two equal): the
        events themselves (a device trace is drawn with its index built: never from a preview)."""
        content = first_window(list(self.view), list(self.tracks), int(self.height), grouping,
                               self._asked_width or self._timeline_width)
        if content is None:
            return None
        try:
            meta, buffers = wire.viewport_reply(events, grouping, content["t0"], content["t1"], content["width"],
                                                content["tracks"], self._marked, self._color, None, self._node)
        except Exception:  # a guess: the browser asks for its window anyway, and hears of a failure then
            return None
        reply = cast(M.ViewportReply, {**meta, "uuid": f"{PUSHED}{len(content['tracks'])}", "revision": self.revision,
                                       "generation": self.generation})
        if self._color is not None:
            reply["color_keys"] = self._color_keys
        return reply, buffers

    def _describe(self, trace: DeviceTrace) -> None:
        """Title and notes (the strip comes apart: it is the slow part)."""
        if not len(trace) and trace.dma.empty:
            self.title = EMPTY_TITLE
            self.notes = [EMPTY_HINT] if not trace.source else [f"{trace.source}: the device profile holds no "
                                                                "instructions or DMA packets"]
            return
        name = trace.metadata.get("profile_name") or Path(str(trace.source)).name
        neff = ""
        info = trace.execution_info
        if not info.empty and "neff_name" in info and pd.notna(info["neff_name"].iat[0]):
            neff = f" · {info['neff_name'].iat[0]}"
        self.title = f"Device trace {name}{neff}"
        residual = "" if trace.residual_ns is None else f"; residual {trace.residual_ns:,} ns"
        self.notes = [f"Time: {trace.alignment}{residual}", *trace.notes,
                      *(f"Reader warning: {line}" for line in trace.warnings.lines())]

    @staticmethod
    def _strip_of(trace: DeviceTrace) -> list[dict[str, Any]]:
        if not len(trace) and trace.dma.empty:
            return []
        strip = trace.__dict__.get("_strip")  # kept with the (cached) trace: a second click is cheap
        if strip is None:
            strip = trace.__dict__["_strip"] = engine_strip(trace)
        return strip

    # -- following a system timeline ---------------------------------------------------
    def follow(self, timeline: Timeline) -> None:
        """Show the device trace of each hardware event selected in `timeline` (replaces an earlier binding)."""
        self.unfollow()
        self._following = timeline
        timeline.on_select(self._timeline_selected)
        timeline.on_msg(self._timeline_msg)
        threading.Thread(target=_warm, name="neuron-widgets-warm", daemon=True).start()
        threading.Thread(target=_ready_for_clicks, args=(timeline.profile,), name="neuron-widgets-flows",
                         daemon=True).start()
        if self.title == EMPTY_TITLE:
            self.notes = [EMPTY_HINT]
        # An execution already selected there is shown at once, as if it had just been clicked.
        self._timeline_selected(timeline.selected_row)

    def unfollow(self) -> None:
        if self._following is not None:
            self._following.on_select(self._timeline_selected, remove=True)
            self._following.on_msg(self._timeline_msg, remove=True)
            self._following = None

    def _timeline_selected(self, row: int) -> None:
        tl = self._following
        if tl is None or row < 0 or row >= len(tl.profile):
            return
        codes = tl.profile.name_codes()
        name = tl.profile.name_dictionary()[int(codes[row])]
        if name in DRILL_DOWN_EVENTS:
            self.open_event(int(tl.profile.array("id")[row]), tl.profile)

    def open_event(self, event_id: int, profile: Any = None, background: bool = True) -> threading.Thread | None:
        """Load and show the device trace of a hardware event of `profile` (the followed timeline's by default).

        In the background the kernel stays free: the widget shows a spinner, then the trace or
        the error. A later call supersedes one still loading.
        """
        profile = profile if profile is not None else (self._following.profile if self._following else None)
        if profile is None:
            raise ValueError("give the profile the event belongs to, or follow() a timeline first")
        return self._load(lambda early: _fetch(profile, int(event_id), early), f"the device trace of event {event_id}",
                          f"from event id {event_id}", background, staged=True)

    def open_profile(self, name: str, profile: Any, background: bool = True) -> threading.Thread | None:
        """Load and show a device profile by its device_profile_name (device clock: no execution to align with)."""
        return self._load(lambda early: _fetch(profile, str(name), early), f"device profile {name}", "", background,
                          staged=True)

    def _load(self, fetch: Callable[..., DeviceTrace], what: str, done: str,
              background: bool, staged: bool = False) -> threading.Thread | None:
        """Run `fetch()` (`staged`: `fetch(early)`, see device_trace_of) and show its trace, in a thread when
        `background`."""
        with self._lock:
            self._request += 1
            me = self._request
        self.loading = True
        self.status = f"loading {what}…"
        self.error = ""

        def current() -> bool:
            return self._is_newest(me)

        built: list[DeviceEvents] = []  # from the trace's drawn columns, shown before the rest is read

        def early(drawn: DeviceTrace) -> None:
            # The trace's drawn columns: its events shown, and the first window sent, from them; the rest of
            # its tables is read next, and the events take the whole trace then (DeviceEvents.adopt; until
            # then anything that reads the trace's rows waits). Colours other than the opcode's read the
            # whole tables: the view then waits for them.
            if current() and device_colors.canonical(self.color_by) == "name":
                events = DeviceEvents.drawn(drawn)
                built.append(events)
                if self._show_events(events, drawn, done, loading=background, colours=False, current=current) \
                        and self._await_paint:
                    # The browser decodes and draws that window now: the rest of the tables is read after.
                    self._paint_seen.wait(PAINT_WAIT_S)

        def work() -> None:
            trace = None
            try:
                try:
                    trace = fetch(early) if staged else fetch()
                finally:
                    for events in built:  # never left waiting, even when the rest failed or was superseded
                        if trace is not None:
                            events.adopt(trace)
                        else:
                            events.release()
                if current() and built:
                    with self.hold_sync():
                        self._set_color_choices(built[0])
                    self._finish(built[0], trace, loading=background)
                elif current():
                    self._show_trace(trace, done, loading=background, current=current)
            except Exception as exc:  # shown in the widget: a failed drill-down must not go to a log
                if current():
                    self.error = f"Could not load {what}: " + "".join(
                        traceback.format_exception_only(type(exc), exc)).strip()
                    self.status = ""
            finally:
                if current():
                    self.loading = False

        if not background:
            work()
            return None
        thread = threading.Thread(target=work, name="neuron-widgets-device-trace", daemon=True)
        self._load_thread = thread  # the latest load: an export waits for it (export._settled)
        thread.start()
        return thread
