"""Chrome trace event JSON (and Kineto): sniff and read; the fast road, the byte scan, flows and names are its
modules."""

from ...faces import lazy_face

# Name -> the module that defines it (callers inside the package import the modules themselves).
_LAZY = {
    "sniff": ".reader",
    "read": ".reader",
    "VERSION": ".reader",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_face(__name__, _LAZY)
