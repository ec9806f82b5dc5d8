"""What tells a job (from `nw.load_job`) from a single profile, for the widgets that take either."""

from typing import Any


def is_job(source: Any) -> bool:
    """A Job has its parts' specs, a parts table and a way to load one part."""
    return hasattr(source, "specs") and hasattr(source, "load") and hasattr(source, "parts")
