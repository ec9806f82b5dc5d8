"""link(): two timelines follow each other's visible range and selection, without echo loops."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .timeline import Timeline


class NoEcho:
    """The guard two widgets that follow each other share: what one sets on the other inside `quiet()` is not
    followed back (its observers see `busy` and return), so a change crosses once instead of bouncing.

    A flag of our own rather than ipywidgets' echo suppression, which holds within one model, not across two.
    """

    def __init__(self) -> None:
        self.busy = False

    @contextmanager
    def quiet(self) -> Iterator[None]:
        self.busy = True
        try:
            yield
        finally:
            self.busy = False


class TimelineLink:
    """Keeps `view` and the selected event of two timelines in step until `unlink()`.

    `align="start"` maps times relative to each profile's start (two runs side by side);
    `align="absolute"` keeps the same wall-clock nanoseconds (two views of one capture).
    Selections travel by event id; an id the other profile lacks clears nothing there.
    """

    def __init__(self, a: Timeline, b: Timeline, align: str = "start") -> None:
        if align not in ("start", "absolute"):
            raise ValueError("align must be 'start' or 'absolute'")
        self.a, self.b, self.align = a, b, align
        self._echo = NoEcho()
        self._handlers: list[tuple[Timeline, Any, str]] = []
        for src, dst in ((a, b), (b, a)):
            for handler, name in ((self._view_handler(src, dst), "view"), (self._select_handler(src, dst), "selected_row")):
                src.observe(handler, names=[name])
                self._handlers.append((src, handler, name))
        self._align()

    def _align(self) -> None:
        """b takes a's range now, and a's selection when a has one (linking aligns, not only the next change)."""
        a, b = self.a, self.b
        shift = self._shift(a, b)
        with self._echo.quiet():
            b.view = [a.view[0] + shift, a.view[1] + shift]
        if a.selected_row >= 0:
            self._select_handler(a, b)({"new": a.selected_row})

    def _shift(self, src: Timeline, dst: Timeline) -> float:
        if self.align == "start":
            return 0.0
        return float(src.profile.origin_ts - dst.profile.origin_ts)

    def _view_handler(self, src: Timeline, dst: Timeline) -> Callable[[dict[str, Any]], None]:
        def on_view(change: dict[str, Any]) -> None:
            if self._echo.busy:
                return
            shift = self._shift(src, dst)
            new = [change["new"][0] + shift, change["new"][1] + shift]
            if new == list(dst.view):
                return
            with self._echo.quiet():
                dst.view = new
        return on_view

    def _select_handler(self, src: Timeline, dst: Timeline) -> Callable[[dict[str, Any]], None]:
        def on_select(change: dict[str, Any]) -> None:
            if self._echo.busy:
                return
            row = int(change["new"])
            target = -1
            if row >= 0:
                event_id = int(src.profile.array("id")[row])
                try:
                    target = dst.profile.row_of(event_id)
                except KeyError:
                    return
            if target == dst.selected_row:
                return
            with self._echo.quiet():
                dst.selected_row = target
        return on_select

    def unlink(self) -> None:
        for src, handler, name in self._handlers:
            src.unobserve(handler, names=[name])
        self._handlers.clear()


def link(a: Timeline, b: Timeline, align: str = "start") -> TimelineLink:
    """Sync two timelines' visible range and selection (also across two profiles); b is aligned to a at once."""
    return TimelineLink(a, b, align)
