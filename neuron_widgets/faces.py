"""A package's face of lazy names: each resolved from its module when first asked for, so importing the package
costs nothing at start-up and makes no import circle with the modules behind it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import import_module
from typing import Any


def lazy_face(package: str, lazy: Mapping[str, str],
              names: Iterable[str] | None = None) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's `__getattr__` and `__dir__`: `lazy` maps a name to the (relative) module defining it; `names`
    are what `dir()` lists (the lazy names by default)."""
    listed = sorted(lazy if names is None else names)

    def getattr_(name: str) -> Any:
        if name in lazy:
            value = getattr(import_module(lazy[name], package), name)
            setattr(sys.modules[package], name, value)  # asked once: later lookups are plain attributes
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def dir_() -> list[str]:
        return list(listed)

    return getattr_, dir_
