"""Perfetto traces: sniff and read; the chunked stream, wire format, sequence state, clocks, tracks and arguments
are its modules."""

from ...faces import lazy_face

# Name -> the module that defines it (callers inside the package import the modules themselves).
_LAZY = {
    "sniff": ".reader",
    "read": ".reader",
    "VERSION": ".reader",
    "device_profiles": ".reader",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_face(__name__, _LAZY)
