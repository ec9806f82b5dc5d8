"""The widgets over a multi-node job: JobTimeline(job) and Summary(job)'s part."""

from ...faces import lazy_face

# Name -> the module that defines it (callers inside the package import the modules themselves).
_LAZY = {
    "JobTimeline": ".timeline",
    "JobSummaryMixin": ".summary",
    "is_job": ".kind",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_face(__name__, _LAZY)
