"""The device wing: a device profile's tables (DeviceTrace), its events as a Profile, hierarchy, colours, engine
times and the strip, where its files are and how they are loaded."""

from importlib import import_module
from typing import Any

# Name -> the module that defines it, imported when the name is first asked for: callers inside the package import
# the modules themselves, so the face costs nothing at start-up and makes no import circle.
_LAZY = {
    "DeviceTrace": ".trace",
    "DeviceEvents": ".events",
    "load_device_trace": ".loading",
    "set_device_loader": ".loading",
    "engine_times": ".engines",
    "dma_queues": ".engines",
    "engine_strip": ".summary",
    "color_codes": ".colours",
    "aligned_trace": ".resolve",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
