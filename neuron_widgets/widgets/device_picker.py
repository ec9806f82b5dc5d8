"""DeviceProfilePicker: Neuron Explorer's "Device Profiles List" — a modal list of device profiles, and Submit."""

from __future__ import annotations

from typing import Any

import anywidget
import ipywidgets as w
import pandas as pd
import traitlets as t

from ..bundle import asset
from ..model.profile import Profile
from .delivery import Delivered
from .device_viewer import DeviceTraceViewer
from .messages import SubmitRequest, request_class
from .timeline import Timeline

COLUMNS = (("device_profile_name", "Name"), ("instance_id", "Instance"), ("process_id", "Process"),
           ("nc_id", "NeuronCore"), ("model_id", "Model"), ("session_id", "Session"))


def _text(v: Any) -> str:
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    return str(v)


class _PickerList(Delivered, anywidget.AnyWidget):
    _esm = asset("picker.js")
    _css = asset("timeline.css")

    columns = t.List().tag(sync=True)  # [[key, label]]
    rows = t.List().tag(sync=True)  # [{key: text}], text only: the browser shows it as text
    status = t.Unicode("").tag(sync=True)


class DeviceProfilePicker(Delivered, w.VBox):
    """A "Device Profiles List" button; the chosen profile opens in a DeviceTraceViewer.

    The viewer appears below the button, or in `output` (an ipywidgets Output) if you pass one,
    or `viewer` (an existing DeviceTraceViewer) is retargeted. Later choices reuse the same viewer.
    """

    def __init__(self, source: Timeline | Profile, *, viewer: DeviceTraceViewer | None = None,
                 output: w.Output | None = None, **kwargs: Any) -> None:
        self.profile: Profile = source.profile if isinstance(source, Timeline) else source
        table = self.profile.device_profiles
        keys = [c for c, _ in COLUMNS if c in table.columns]
        keys += [c for c in table.columns if c not in keys]
        labels = dict(COLUMNS)
        self.table = table.reset_index(drop=True)
        self.list = _PickerList(columns=[[k, labels.get(k, k)] for k in keys],
                                rows=[{k: _text(v) for k, v in zip(keys, r, strict=True)}
                                      for r in self.table[keys].itertuples(index=False)])
        self.list.on_msg(self._on_msg)
        self.viewer = viewer
        self.output = output
        self.chosen: str | None = None
        super().__init__(children=[self.list], **kwargs)

    def _on_msg(self, _widget: Any, content: dict[str, Any], _buffers: list[Any]) -> None:
        if request_class(content) is not SubmitRequest:
            return
        try:
            self.submit(self.table["device_profile_name"].iat[int(content["index"])])
        except Exception as exc:  # shown by the button: a bad pick must not vanish into a log
            self.list.status = f"could not open it: {type(exc).__name__}: {exc}"

    def submit(self, name: str, background: bool = True) -> DeviceTraceViewer:
        """Open a device profile by its device_profile_name, as Submit in the list does."""
        if name not in set(self.table["device_profile_name"]):
            raise ValueError(f"no device profile named {name!r}; the profile lists "
                             f"{', '.join(map(str, self.table['device_profile_name'][:10]))}")
        self.chosen = name
        self.list.status = f"showing {name}"
        if self.viewer is None:
            self.viewer = DeviceTraceViewer()
            if self.output is not None:
                # Not `with output: display(...)`: that captures only while a kernel runs a cell.
                self.output.append_display_data(self.viewer)
            else:
                self.children = [self.list, self.viewer]
        self.viewer.open_profile(name, self.profile, background=background)
        return self.viewer
