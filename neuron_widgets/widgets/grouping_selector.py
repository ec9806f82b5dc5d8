"""GroupingSelector: the six grouping modes of a Timeline, by Neuron Explorer's names."""

from __future__ import annotations

from typing import Any

import ipywidgets as w
import traitlets as t

from ..model.grouping import GROUPINGS
from .timeline import Timeline


class GroupingSelector(w.ToggleButtons):
    """Buttons bound to `timeline.grouping` both ways (several selectors on one timeline agree)."""

    def __init__(self, timeline: Timeline, **kwargs: Any) -> None:
        options = [(label, key) for key, label in GROUPINGS.items()]
        super().__init__(options=options, value=timeline.grouping, description="Group by", **kwargs)
        self.timeline = timeline
        self.style.button_width = "auto"
        self._link = t.link((self, "value"), (timeline, "grouping"))
