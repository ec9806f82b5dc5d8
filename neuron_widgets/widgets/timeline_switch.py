"""What a Timeline draws for its grouping: the whole profile once that grouping is built, its preview meanwhile.

A switch to a grouping not yet built (or a large profile opened while it loads) answers at once from
the profile's preview in that grouping (model/preview_grouping.py), while one thread per widget
builds the grouping on every event, then hands the whole profile to the widget (`on_full`). The
newest switch wins: the thread looks at what is wanted before and after each stage (tracks and
lanes, then the level-of-detail index), so a build nobody waits for any more stops at a stage's
end (its work stays cached on the profile), and a closed widget's thread ends there too.
"""

from __future__ import annotations

import dataclasses
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from ..model.preview_grouping import PreviewGrouping, has_preview, preview_in
from ..model.profile import Profile

# The build waits for the preview's first reply to go out (up to this long), so that its two threads
# do not take the cores from it; with no page asking (a script, a test) it starts after this.
FIRST_REPLY_WAIT_S = 1.0


@dataclass(frozen=True)
class Shown:
    """One grouping of one profile as drawn now."""

    profile: Profile
    grouping: str
    drawn: Profile  # what replies are drawn from: the profile, or its preview
    preview: PreviewGrouping | None  # set while the preview is drawn
    ticket: int  # which show() this is (a newer one supersedes it)
    building: bool = False  # the whole profile's grouping is being built for it

    @property
    def is_preview(self) -> bool:
        return self.preview is not None


class GroupingSwitch:
    """The grouping a Timeline shows and the one build thread behind it (see the module's docstring).

    `on_full(shown)` and `on_failed(shown, exc)` are called in the build thread with `lock` held,
    so that a switch made meanwhile (`show`, which takes it too) is never undone by them.
    """

    def __init__(self, on_full: Callable[[Shown], None], on_failed: Callable[[Shown, BaseException], None]) -> None:
        self.lock = threading.RLock()
        self._on_full, self._on_failed = on_full, on_failed
        self._ticket = 0
        self._shown: Shown | None = None
        self._thread: threading.Thread | None = None
        self._replied = threading.Event()
        self._closed = False

    @property
    def shown(self) -> Shown:
        shown = self._shown
        if shown is None:
            raise RuntimeError("nothing shown yet: show() comes first")
        return shown

    def show(self, profile: Profile, grouping: str) -> Shown:
        """Draw `grouping` of `profile` from now on: at once from the preview if it is not built (and then start
        its build), else from the profile (a small profile's grouping is built by the first reader)."""
        with self.lock:
            self._ticket += 1
            if has_preview(profile) and not profile.ready(grouping):
                preview = preview_in(profile, grouping)
                shown = Shown(profile, grouping, preview.preview, preview, self._ticket, building=not self._closed)
                self._replied = threading.Event()
            else:
                shown = Shown(profile, grouping, profile, None, self._ticket)
            self._shown = shown
            if shown.building and self._thread is None:
                self._thread = threading.Thread(target=self._build, name="neuron-widgets-grouping", daemon=True)
                self._thread.start()
            return shown

    def source(self, grouping: str) -> Profile:
        """What a reply for `grouping` is drawn from: the grouping shown's, or for another (a request sent before
        a switch) the profile if that grouping is built, else its preview (never a build in the caller's thread)."""
        with self.lock:
            shown = self.shown
        if shown.grouping == grouping:
            return shown.drawn
        profile = shown.profile
        if has_preview(profile) and not profile.ready(grouping):
            return preview_in(profile, grouping).preview
        return profile

    def replied(self) -> None:
        """A reply went out: a build waiting for the preview's first reply may start."""
        with self.lock:
            replied = self._replied
        replied.set()

    def close(self) -> None:
        """The widget is closed: the build stops at its current stage's end; nothing is swapped in."""
        with self.lock:
            self._closed = True
            self._replied.set()

    def idle(self, timeout: float | None = None) -> bool:
        """Wait for the build thread to end (tests, benches); True if it has."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self._thread is None

    def _wanted(self, shown: Shown) -> bool:
        return not self._closed and self._shown is shown

    def _build(self) -> None:
        try:
            while self._build_one():
                pass
        finally:
            with self.lock:
                if self._thread is threading.current_thread():
                    self._thread = None

    def _build_one(self) -> bool:
        """Build what is wanted now and swap it in if still wanted; False when nothing is wanted."""
        with self.lock:
            shown = self._shown
            if self._closed or shown is None or not shown.building:
                self._thread = None  # under the lock: a show() from now on starts a thread of its own
                return False
            replied = self._replied
        replied.wait(FIRST_REPLY_WAIT_S)
        if not self._wanted(shown):
            return True
        try:
            shown.profile.track_index(shown.grouping)
            if not self._wanted(shown):
                return True  # superseded: its tracks and lanes stay cached for a switch back
            shown.profile.lod(shown.grouping)
        except Exception as exc:
            with self.lock:
                if self._wanted(shown):
                    self._shown = dataclasses.replace(shown, building=False)  # the preview stays drawn
                    self._tell(self._on_failed, self._shown, exc)
            return True
        with self.lock:
            if self._wanted(shown):
                self._shown = Shown(shown.profile, shown.grouping, shown.profile, None, shown.ticket)
                self._tell(self._on_full, self._shown)
        return True

    def _tell(self, callback: Callable[..., None], *args: object) -> None:
        try:
            callback(*args)
        except Exception:  # the widget's own failure must not end the thread (a later switch needs it)
            traceback.print_exc()
