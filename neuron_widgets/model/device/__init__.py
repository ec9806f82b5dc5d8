"""The device wing: a device profile's tables (DeviceTrace), its events as a Profile, hierarchy, colours, engine
times and the strip, where its files are and how they are loaded."""

from ...faces import lazy_face

# Name -> the module that defines it (callers inside the package import the modules themselves).
_LAZY = {
    "DeviceTrace": ".trace",
    "DeviceEvents": ".events",
    "load_device_trace": ".loading",
    "set_device_loader": ".loading",
    "engine_times": ".engines",
    "dma_queues": ".engines",
    "engine_strip": ".strip",
    "color_codes": ".colours",
    "aligned_trace": ".resolve",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_face(__name__, _LAZY)
