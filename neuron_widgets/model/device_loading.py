"""How the model opens a device profile's files, without importing the readers.

The readers register their loader when they are imported (neuron_widgets imports them), so the
model's imports point one way: readers use the model, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .device_trace import DeviceTrace

_loader: Callable[[Path], DeviceTrace] | None = None


def set_device_loader(loader: Callable[[Path], DeviceTrace]) -> None:
    global _loader
    _loader = loader


def load_device_trace(path: Path) -> DeviceTrace:
    if _loader is None:  # importing neuron_widgets registers the readers' loader; this is a wiring bug
        raise RuntimeError("no device-trace loader registered: import neuron_widgets (its readers) first")
    return _loader(path)
