"""The widgets over a multi-node job: JobTimeline(job) and Summary(job)'s part."""

from importlib import import_module
from typing import Any

# Name -> the module that defines it, imported when the name is first asked for: callers inside the package import
# the modules themselves, so the face costs nothing at start-up and makes no import circle.
_LAZY = {
    "JobTimeline": ".timeline",
    "JobSummaryMixin": ".summary",
    "is_job": ".kind",
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
