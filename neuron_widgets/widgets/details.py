"""EventDetails: every property of the timeline's selected event, its arguments and dependency chain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets as t

from ..bundle import asset
from ..model.timefmt import duration
from ..model.timefmt import offset as time_text
from .delivery import Delivered
from .messages import FocusRequest, request_class
from .timeline import Timeline

MAX_TEXT = 2000


def _text(v: Any) -> str:
    if v is None:
        return ""
    s = v if isinstance(v, str) else str(v)
    return s if len(s) <= MAX_TEXT else s[: MAX_TEXT - 1] + "…"


class EventDetails(Delivered, anywidget.AnyWidget):
    """Shows the selected event of a Timeline; clicking an Upstream/Downstream row focuses the timeline on it.

    Everything from the profile is sent as plain strings and shown as text, never as HTML.
    """

    # What export_html makes of this widget (the exporter dispatches on it, never on widget classes).
    export_role = "details"

    _esm = asset("details.js")
    _css = asset("timeline.css")

    event = t.Dict().tag(sync=True)

    def __init__(self, timeline: Timeline, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.timeline = timeline
        timeline.observe(self._update, names=["selection_detail"])
        self.on_msg(self._on_msg)
        self._update()

    def _update(self, _change: Any = None) -> None:
        tl = self.timeline
        detail = tl.selection_detail
        if not detail:
            self.event = {}
            return
        event = tl.profile.event(row=int(detail["row"]))
        args = event.pop("args", {}) or {}
        event.pop("extra_attributes_json", None)
        origin = tl.profile.origin_ts
        start, end = event.get("start_ts"), event.get("end_ts")
        # Times as the axis shows them first (from the profile's start, readable units); the raw
        # epoch nanoseconds stay below under their column names.
        readable = [["start", f"{time_text(start - origin)} from the profile start"]] if start is not None else []
        if start is not None and end is not None:
            readable += [["duration", duration(end - start)], ["end", time_text(end - origin)]]
        readable.append(["track", _text(tl.tracks[detail["track"]]["label"]) if detail["track"] < len(tl.tracks) else ""])
        fields = [[k, _text(v)] for k, v in event.items() if k == "name"] + readable
        fields += [[f"{k} (raw ns)" if k in ("start_ts", "end_ts") else k, _text(v)] for k, v in event.items() if k != "name"]
        # An argument named like a property (a device table's own `id`) is told apart from it.
        taken = {k for k, _ in fields}
        self.event = {
            "title": _text(event.get("name")), "row": int(detail["row"]), "fields": fields,
            "args": [[_text(f"{k} (argument)" if k in taken else k), _text(v)] for k, v in args.items()],
            "upstream": [self._dep(d) for d in detail.get("upstream", [])],
            "downstream": [self._dep(d) for d in detail.get("downstream", [])],
        }

    def _dep(self, d: dict[str, Any]) -> dict[str, Any]:
        tracks = self.timeline.tracks
        return {"row": d["row"], "name": _text(d["name"]), "start": time_text(d["start"]),
                "duration": duration(d["end"] - d["start"]),
                "track": _text(tracks[d["track"]]["label"]) if d["track"] < len(tracks) else ""}

    def to_html(self, path: str | Path, *, time_range: tuple[Any, Any] | str | None = None, max_mb: float = 25.0,
                title: str | None = None) -> dict[str, Any]:
        """Write the timeline with these details below it to one offline HTML file (see Timeline.to_html)."""
        from ..export import export_html  # the export stack (~0.1 s to import): only when a page is written

        return export_html(path, self.timeline, self, time_range=time_range, max_mb=max_mb, title=title)

    def _on_msg(self, _widget: Any, content: dict[str, Any], _buffers: list[Any]) -> None:
        if request_class(content) is FocusRequest:
            self.timeline.select(row=int(content["row"]), focus=True)
