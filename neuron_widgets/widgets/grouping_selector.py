"""GroupingSelector: a Timeline's grouping modes (Neuron Explorer's six for a system profile) as buttons."""

from __future__ import annotations

from typing import Any

import ipywidgets as w
import traitlets as t

from .delivery import Delivered
from .timeline import Timeline


class GroupingSelector(Delivered, w.ToggleButtons):
    """Buttons bound to `timeline.grouping` both ways (several selectors on one timeline agree).

    The buttons follow `timeline.groupings`, so a Device Trace Viewer that is retargeted keeps
    a selector that offers its own modes.
    """

    # What export_html makes of this widget (the exporter dispatches on it, never on widget classes).
    export_role = "grouping"

    def __init__(self, timeline: Timeline, **kwargs: Any) -> None:
        super().__init__(options=self._options(timeline), value=timeline.grouping, description="Group by", **kwargs)
        self.timeline = timeline
        self.style.button_width = "auto"
        self._link = t.link((self, "value"), (timeline, "grouping"))
        timeline.observe(self._groupings_changed, names=["groupings"])

    @staticmethod
    def _options(timeline: Timeline) -> list[tuple[str, str]]:
        return [(label, key) for key, label in timeline.groupings.items()]

    def _groupings_changed(self, _change: Any) -> None:
        options = self._options(self.timeline)
        if options != list(self.options):
            self._link.unlink()
            self.options = options
            self.value = self.timeline.grouping
            self._link = t.link((self, "value"), (self.timeline, "grouping"))
