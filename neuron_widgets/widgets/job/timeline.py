"""JobTimeline(job): a multi-node job on one timeline, one track per part, events loaded only for the parts opened.

Opening draws each part's time span from the job's metadata at once; each part's busy density
(analysis.busy_density, computed in the part's Dask task and kept by content with its other
results) then replaces it, in a thread. A click on a part's track, or `open_part(part)`, loads that
part and shows its events in place of its density; `close_part(part)` folds it back.

The Critical path toggle draws the job's path (analysis.critical_path(job), part by part on Dask, once the
densities are in), computed once in a thread and placed anew on whatever is shown (job/critical.py).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import pandas as pd

# The package, not its `findings`: looked up at each call, so a test can stand in for the analysis.
from ... import analysis
from ...analysis.across import across
from ...analysis.density import BINS
from ...job.view import job_view, overview_profile
from ...model.grouping import SUMMARY_SOURCE
from ...model.profile import Profile
from ..timeline import Timeline
from ..timeline_critical import no_path_text as nothing_to_draw
from .critical import job_critical_shown

PLACING = "critical path of the job: placing it on the tracks shown…"


class JobTimeline(Timeline):
    """The Timeline of a `Job` (from `nw.load_job`); `JobTimeline(job)` (`Timeline` takes one profile)."""

    def __init__(self, job: Any, grouping: str | None = None, *, client: Any = None, height: int = 480,
                 bins: int = BINS, **kwargs: Any) -> None:
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

    def _reshow(self, opened: dict[str, Profile] | None = None, keep_view: bool = True) -> None:
        """Draw the overview with `opened` (default: the parts open now) in place, keeping the visible
        range (absolute times); then `opened` is what the widget says is open.

        The opened parts are published only after their tracks: a cell (or a test) reading `opened`
        and then `tracks` from another thread never sees a part opened whose tracks are not there
        yet, nor a part closed whose tracks still are.
        """
        with self._job_lock:
            opened = dict(self._opened if opened is None else opened)
            view = job_view(self._overview(), opened)
            before = self.time_range if keep_view and len(self.profile) else None
            with self.hold_sync():  # the browser gets the new tracks and range in one message
                self._show_profile(view, self.grouping)
                if before is not None and len(view):
                    lo, hi = max(before[0], view.start_ts), min(before[1], view.end_ts)
                    if hi > lo:
                        self.time_range = (lo, hi)
            self._opened = opened

    def _summarise(self) -> None:
        try:
            # The default bins go unsaid: the results are then shared with across(job, ["busy_density"]).
            kw: dict[str, Any] = {"bins": self.bins} if self.bins != BINS else {}
            got = across(self.job, ["busy_density"], self.client, **kw)
            density = got["busy_density"]
            self.density = {str(p): g.drop(columns="part").reset_index(drop=True) for p, g in density.groupby("part", sort=False)}
            self.parts_status = got["parts"]
            self._left = [str(n) for n in got["parts"].attrs.get("notes", [])]
            self._reshow(keep_view=True)
            self._show_notes()
            self.status = f"{len(self.density)} of {len(self._order)} parts summarised; click a part's track to load its events"
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
        thread, then placed on what is shown (in a thread too: a click or a cell returns at once)."""
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
                with self.hold_sync():
                    if self._critical is None:
                        self._critical_saved = self._marked.get("highlight")
                    self._critical = shown
                    self._marked = {**self._marked, "highlight": shown.rows}
                    self.critical_info = shown.info()
                    self._show_notes()
                    self.revision += 1
                return

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
    @property
    def opened(self) -> list[str]:
        """The parts whose events are shown."""
        return list(self._opened)

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
        try:
            profile = self.job.load(spec.name)
            with self._job_lock:
                self._reshow({**self._opened, spec.name: profile})
            self.status = f"{spec.name}: {len(profile):,} events shown under '{spec.name}/'; close_part('{spec.name}') folds it"
            return profile
        except Exception as exc:
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
        with self._job_lock:
            if name in self._opened:
                self._reshow({p: v for p, v in self._opened.items() if p != name})
