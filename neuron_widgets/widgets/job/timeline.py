"""JobTimeline(job): a multi-node job on one timeline, one track per part, events loaded only for the parts opened.

Opening draws each part's time span from the job's metadata at once; each part's busy density
(analysis.busy_density, computed in the part's Dask task and kept by content with its other
results) then replaces it, in a thread. A click on a part's track, or `open_part(part)`, loads that
part and shows its events in place of its density; `close_part(part)` folds it back.

The Critical path toggle draws the job's path (analysis.critical_path(job), part by part on Dask, once the
densities are in), computed once in a thread and placed anew on whatever is shown (job/critical.py).

Which parts are open is one state change (`_reshow`, documented on `JobTimeline`): the tracks, the `opened`
trait and what derives from them (the path's placement, the brush's table, the status) are all set before any
observer of them runs, and go to the browser in one message.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pandas as pd
import traitlets as t
from traitlets.utils.bunch import Bunch

# The package, not its `findings`: looked up at each call, so a test can stand in for the analysis.
from ... import analysis
from ...analysis.across import across
from ...analysis.density import BINS
from ...job.view import job_view, overview_profile
from ...model.grouping import SUMMARY_SOURCE
from ...model.profile import Profile
from ..timeline import Timeline
from ..timeline_critical import CriticalShown
from ..timeline_critical import no_path_text as nothing_to_draw
from .critical import job_critical_shown

PLACING = "critical path of the job: placing it on the tracks shown…"


class PartsShown(NamedTuple):
    """One consistent read of what a JobTimeline shows (`JobTimeline.parts_shown()`)."""

    opened: list[str]  # the parts whose events are shown
    tracks: list[dict[str, Any]]  # the tracks drawn: the folded parts' and the opened parts' own (`<part>/...`)
    critical_info: dict[str, Any]  # the path's placement on those tracks (spans and jumps index `tracks`)
    brush_summary: dict[str, Any]  # the brushed range's table, per track of `tracks`


class JobTimeline(Timeline):
    """The Timeline of a `Job` (from `nw.load_job`); `JobTimeline(job)` (`Timeline` takes one profile).

    Opening or closing a part is one state change, made in this order: the new view (names, span, lanes:
    what the Timeline shows of a profile), its `tracks` and, at once after them, `opened`; the visible range
    and the brush kept (absolute times); the brush's table on the new tracks; the critical path placed on them;
    the status. Only then do the observers of any of these run, once per trait (the first old value, the last
    new one), whichever thread made the change, so an observer of `tracks` or of `opened` always finds the
    other one matching, and so do the placement and the table. The browser gets all of it in one message. A
    folded part's track is `<part>`; an opened part's events are on tracks `<part>/...`.

    Two separate reads from another thread (`tl.opened`, then `tl.tracks`) can still fall on either side of a
    change (the instant between the two stores, or a whole change made between the reads):
    `parts_shown()` reads them, the placement and the brush's table as one.
    """

    # The parts whose events are shown, in the order they were opened; published with their tracks (above).
    opened = t.List(t.Unicode(), read_only=True).tag(sync=True)

    _held: tuple[int, dict[str, list[Any]]] | None = None  # the thread making a state change, and its notices
    _opened_next: list[str] | None = None  # `opened` of the change under way, set as its tracks are

    def __init__(self, job: Any, grouping: str | None = None, *, client: Any = None, height: int = 480,
                 bins: int = BINS, **kwargs: Any) -> None:
        # Before anything is synced: every message to the browser and every state change take these.
        self._sync_lock = threading.RLock()
        self._publish_lock = threading.RLock()
        self.job = job
        self.client = client
        self.bins = bins
        self.density: dict[str, pd.DataFrame] = {}
        self.parts_status: pd.DataFrame | None = None
        self._opened: dict[str, Profile] = {}
        self._overview_of: dict[str, pd.DataFrame] | None = None
        self._overview_profile: Profile | None = None
        self._job_lock = threading.RLock()
        self.summarised = threading.Event()  # set once every part's density is in (or left out)
        self._path: pd.DataFrame | None = None  # the job's critical path, computed once
        self._path_thread: threading.Thread | None = None
        self._placing = 0  # the latest placement of the path asked for (an older one's answer is dropped)
        self._left: list[str] = []  # the parts' notes (left out, unread)
        parts = job.parts
        self._order = [str(p) for p in parts["part"]]
        self._spans = {str(r.part): (int(r.start_ts), int(r.end_ts)) for r in parts.itertuples()
                       if pd.notna(r.start_ts) and pd.notna(r.end_ts) and int(r.end_ts) > int(r.start_ts)}
        super().__init__(self._overview(), grouping or "default", height=height, **kwargs)
        self.title = f"Job: {len(self._order)} parts"
        self.status, self.loading = f"summarising {len(self._order)} parts on Dask…", True
        self.on_select(self._clicked)
        threading.Thread(target=self._summarise, name="neuron-widgets-job-timeline", daemon=True).start()

    def _findings_subject(self) -> tuple[Any, Any, dict[str, tuple[int, int]]]:
        """The job's findings (each with its part), placed on the parts' spans where they have no range."""
        return self.job, lambda: analysis.findings(self.job, client=self.client), self._spans

    # -- what is shown ------------------------------------------------------------------
    def _overview(self) -> Profile:
        """The density tracks, built once per set of densities (opening a part does not rebuild them)."""
        if self._overview_of is not self.density:
            self._overview_profile = overview_profile(self._order, self.density, self._spans)
            self._overview_of = self.density
        assert self._overview_profile is not None  # built above on the first call
        return self._overview_profile

    def _reshow(self, opened: dict[str, Profile] | None = None, keep_view: bool = True,
                then: Callable[[], None] | None = None) -> None:
        """Show the overview with `opened` (default: the parts open now) in place, as one state change (the
        class's docstring says in which order): the visible range and the brush kept (absolute times), the
        path placed on the new tracks, `then()` (more of the same change: a status), `opened` set last."""
        with self._job_lock:
            opened = dict(self._opened if opened is None else opened)
            view = job_view(self._overview(), opened)
            before = self.time_range if keep_view and len(self.profile) else None
            brushed = self.brush_range
            self._opened = opened  # what the path's placement reads
            # The grouping switch's lock: a switch from the page waits, so its tracks never come mid-change.
            with self._switch.lock, self.hold_sync(), self._one_change():
                self._opened_next = list(opened)  # set the moment the tracks are (_notify_trait)
                self._show_profile(view, self.grouping)  # the brush goes, the path is placed (_start_critical)
                if before is not None and len(view):
                    lo, hi = max(before[0], view.start_ts), min(before[1], view.end_ts)
                    if hi > lo:
                        self.time_range = (lo, hi)
                self._keep_brush(brushed, view)
                if then is not None:
                    then()
                self._opened_next = None
                self.set_trait("opened", list(opened))  # (set with the tracks already, unless they did not change)

    def _keep_brush(self, brushed: tuple[int, int] | None, view: Profile) -> None:
        """The brush the user had, on the new view, with its table of the new tracks (a preview's comes
        with every event's grouping: `_full_ready`)."""
        if brushed is None or not len(view):
            return
        lo, hi = max(brushed[0], view.start_ts), min(brushed[1], view.end_ts)
        if hi <= lo:
            return
        self.brush_range = (lo, hi)
        if self._switch.shown.is_preview:
            self.brush_summary = {}
        else:
            self._refresh_brush()

    # -- one state change at a time -------------------------------------------------------
    @contextlib.contextmanager
    def _one_change(self) -> Iterator[None]:
        """Hold this thread's trait notifications until the block ends, then run the observers once per trait
        changed (first old value, last new one), every value already set; a nested block is part of the outer one.

        Other threads' changes are not held (their observers run as usual), and `parts_shown()` waits for the
        block. Inside `hold_sync`, the observers' own changes join the block's message.
        """
        me = threading.get_ident()
        held = self._held
        if held is not None and held[0] == me:
            yield
            return
        with self._publish_lock:
            changes: dict[str, list[Any]] = {}
            self._held = (me, changes)
            try:
                yield
            finally:
                self._held = None
                failed: BaseException | None = None
                for name, (old, new) in changes.items():
                    if _same(old, new):
                        continue
                    try:
                        # The class's notify_change, not the instance's: while the page's message is being set
                        # (ipywidgets' set_state, in the kernel's thread) traitlets puts a holder of its own there,
                        # which would run these observers later, in that thread, and send these traits apart.
                        type(self).notify_change(self, Bunch(name=name, old=old, new=new, owner=self, type="change"))
                    except Exception as exc:  # every observer hears of the change; the first failure is raised
                        failed = failed or exc
                if failed is not None:
                    raise failed

    def _notify_trait(self, name: str, old_value: Any, new_value: Any) -> None:
        held = self._held
        if held is not None and held[0] == threading.get_ident():
            seen = held[1].get(name)
            if seen is None:
                held[1][name] = [old_value, new_value]
            else:
                seen[1] = new_value
            opened = self._opened_next
            if name == "tracks" and opened is not None:
                # Right after the tracks' value: a reader's `opened` then `tracks` (or the other way round) has
                # only the instant between these two stores to fall on either side of.
                self._opened_next = None
                self.set_trait("opened", opened)
            return
        super()._notify_trait(name, old_value, new_value)

    @contextlib.contextmanager
    def hold_sync(self) -> Iterator[None]:
        """One message to the browser for the block, one thread's block at a time: another thread's would
        otherwise join this one's and send it when it ends, before this one has set all it changes."""
        with self._sync_lock, super().hold_sync():
            yield

    def send_state(self, key: Any = None) -> None:
        with self._sync_lock:  # a change from another thread goes after a block under way, not into its middle
            super().send_state(key)

    def parts_shown(self) -> PartsShown:
        """What is shown, read as one: the opened parts with the tracks, the path's placement and the brush's
        table of the same state (a change under way is waited for). Two reads of the traits themselves from
        another thread can fall on either side of a change."""
        with self._publish_lock:
            return PartsShown(list(self.opened), list(self.tracks), dict(self.critical_info), dict(self.brush_summary))

    def _summarise(self) -> None:
        try:
            # The default bins go unsaid: the results are then shared with across(job, ["busy_density"]).
            kw: dict[str, Any] = {"bins": self.bins} if self.bins != BINS else {}
            got = across(self.job, ["busy_density"], self.client, **kw)
            density = got["busy_density"]
            self.density = {str(p): g.drop(columns="part").reset_index(drop=True) for p, g in density.groupby("part", sort=False)}
            self.parts_status = got["parts"]
            self._left = [str(n) for n in got["parts"].attrs.get("notes", [])]

            def said() -> None:
                self._show_notes()
                self.status = (f"{len(self.density)} of {len(self._order)} parts summarised; "
                               "click a part's track to load its events")
                self.loading = False

            self._reshow(keep_view=True, then=said)
        except Exception as exc:  # the spans stay drawn; the widget says why there is no density
            self.error = f"could not summarise the job's parts: {type(exc).__name__}: {exc}"
            self.status = ""
        finally:
            self.loading = False
            self.summarised.set()

    def _show_notes(self) -> None:
        """Under the title: the parts' notes, and the job path's while it is shown."""
        path = self._path if self.critical_path else None
        mine = [f"critical path: {n}" for n in path.attrs.get("notes", [])] if path is not None else []
        self.notes = [*self._left, *mine]

    # -- the job's critical path ----------------------------------------------------------
    def _start_critical(self) -> None:
        """The toggle went on, or what is shown changed while it is on: the job's path, computed once in a
        thread, then placed on what is shown (in a thread too: a click or a cell returns at once).

        Within a change of the parts shown (`_reshow`) the path already computed is placed at once, on the new
        tracks, as part of that change; but not on a preview (a part of millions of events, its grouping still
        being built): that would wait for the build, so it says so and is placed in a thread.
        """
        if not hasattr(self, "profile"):  # turned on by the constructor's arguments: _show_profile comes back here
            return
        with self._job_lock:
            self._placing += 1
            ticket = self._placing
            if self._path is None:
                where = "your Dask client" if self.client is not None else "Dask's local processes"
                wait = "" if self.summarised.is_set() else "after the parts' densities, "
                self.critical_info = {"state": "computing", "jumps": [],
                                      "text": f"critical path of the job: computing, {wait}part by part on {where}…"}
                if self._path_thread is None or not self._path_thread.is_alive():
                    self._path_thread = threading.Thread(target=self._compute_path, daemon=True,
                                                         name="neuron-widgets-job-critical-path")
                    self._path_thread.start()
                return
            held = self._held
            if held is not None and held[0] == threading.get_ident() and not self._switch.shown.is_preview:
                self._place_now(ticket)
                return
            self.critical_info = {"state": "computing", "text": PLACING, "jumps": []}
        threading.Thread(target=self._place_path, args=(ticket,), name="neuron-widgets-job-critical-place",
                         daemon=True).start()

    def _compute_path(self) -> None:
        # After the densities: two of the job's Dask runs at once would hold two parts per worker.
        self.summarised.wait()
        try:
            path = analysis.critical_path(self.job, self.client)
        except Exception as exc:  # said beside the toggle, which goes off; the next click tries again
            self._no_path(f"critical path unavailable: {type(exc).__name__}: {exc}")
            return
        with self._job_lock:
            self._path = path
            on = self.critical_path
        if on:
            self._start_critical()

    def _place_now(self, ticket: int) -> None:
        """(The job's lock held, inside a change of what is shown.) Place the path on the view being shown."""
        path = self._path
        assert path is not None
        if not (path["event_id"] >= 0).any():
            self._no_path(nothing_to_draw(path))
            return
        try:
            shown = job_critical_shown(self.profile, self.grouping, path, list(self._opened), len(self._order))
        except Exception as exc:
            self._no_path(f"critical path unavailable: {type(exc).__name__}: {exc}")
            return
        self._show_placed(shown)

    def _place_path(self, ticket: int) -> None:
        path = self._path
        assert path is not None
        if not (path["event_id"] >= 0).any():
            self._no_path(nothing_to_draw(path))
            return
        while True:
            with self._job_lock:  # what is shown, once a part being opened or closed is in
                view, grouping, opened = self.profile, self.grouping, list(self._opened)
            try:
                shown = job_critical_shown(view, grouping, path, opened, len(self._order))
            except Exception as exc:
                self._no_path(f"critical path unavailable: {type(exc).__name__}: {exc}")
                return
            with self._job_lock:
                if ticket != self._placing or not self.critical_path:
                    return  # turned off, or placed anew, meanwhile
                if view is not self.profile or grouping != self.grouping:
                    continue  # shown anew (a part opened, another grouping) meanwhile: place it there
                self._show_placed(shown)
                return

    def _show_placed(self, shown: CriticalShown) -> None:
        with self.hold_sync():
            if self._critical is None:
                self._critical_saved = self._marked.get("highlight")
            self._critical = shown
            self._mark("highlight", shown.rows)
            self.critical_info = shown.info()
            self._show_notes()
            self.revision += 1

    def _no_path(self, text: str) -> None:
        with self._job_lock, self.hold_sync():
            if not self.critical_path:
                return  # turned off meanwhile: nothing to say
            self.critical_path = False
            self.critical_info = {"state": "none", "text": text, "jumps": []}

    def _clear_critical(self) -> None:
        with self._job_lock:
            self._placing += 1  # a placement under way is dropped
            super()._clear_critical()
            self._show_notes()

    # -- opening parts ------------------------------------------------------------------
    def _clicked(self, row: int) -> None:
        if row < 0 or row >= len(self.profile):
            return
        event = self.profile.event(row=row)
        if event.get("trace_event_source") == SUMMARY_SOURCE:
            threading.Thread(target=self._open_quietly, args=(str(event["instance_id"]),), name="neuron-widgets-job-open",
                             daemon=True).start()

    def open_part(self, part: int | str) -> Profile:
        """Load a part (by name or index) and show its events in place of its density track."""
        spec = self.job.spec(part)
        if spec.name in self._opened:
            return self._opened[spec.name]
        self.status, self.loading, self.error = f"loading {spec.name} ({spec.path})…", True, ""
        shown = False
        try:
            profile = self.job.load(spec.name)

            def said() -> None:
                nonlocal shown
                shown = True
                self.status = (f"{spec.name}: {len(profile):,} events shown under '{spec.name}/'; "
                               f"close_part('{spec.name}') folds it")
                self.loading = False

            with self._job_lock:
                if spec.name in self._opened:  # opened by another thread meanwhile (two clicks): that one is shown
                    said()
                    return self._opened[spec.name]
                self._reshow({**self._opened, spec.name: profile}, then=said)
            return profile
        except Exception as exc:
            if not shown:  # else it is shown, and what failed is an observer of the change (raised as it is)
                self.status = ""
                self.error = f"could not load {spec.name} ({spec.path}): {type(exc).__name__}: {exc}"
            raise
        finally:
            self.loading = False

    def _open_quietly(self, part: str) -> None:
        with contextlib.suppress(Exception):  # open_part shows it on the widget
            self.open_part(part)

    def close_part(self, part: int | str) -> None:
        """Fold an opened part back to its density track."""
        name = self.job.spec(part).name

        def said() -> None:
            self.status = f"{name} folded back to its density; click its track to load its events again"

        with self._job_lock:
            if name in self._opened:
                self._reshow({p: v for p, v in self._opened.items() if p != name}, then=said)


def _same(old: Any, new: Any) -> bool:
    """Whether a trait's value came back to where it was (as traitlets judges a change: by ==, unequal if that fails)."""
    try:
        return bool(old == new)
    except Exception:
        return False
