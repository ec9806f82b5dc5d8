"""Columns read from their source only when asked (arguments, flow ids), and how they are read."""

from __future__ import annotations

import threading
from typing import Any, Protocol

import numpy as np
import pyarrow as pa


class LazyColumns(Protocol):
    """Where columns too heavy to load up front come from, by source row."""

    def names(self) -> list[str]: ...

    def column(self, name: str) -> pa.ChunkedArray: ...

    def value(self, name: str, event: dict[str, Any]) -> Any: ...


# How many threads a lazy read may decode with, per calling thread: a background read that runs
# beside other work on a 2-core machine takes one, so the foreground keeps a core.
_READ_THREADS = threading.local()


def read_threads() -> int:
    return int(getattr(_READ_THREADS, "n", 2))


def set_read_threads(n: int) -> None:
    """Decode threads for this thread's lazy reads (readers consult `read_threads()`)."""
    _READ_THREADS.n = max(int(n), 1)


def take_lazy(lazy: LazyColumns, name: str, rows: np.ndarray) -> pa.Array:
    """A lazy column at sorted source rows: the provider's own `take` when it has one, else its whole column."""
    take = getattr(lazy, "take", None)
    if take is not None:
        return take(name, rows)
    return lazy.column(name).take(pa.array(rows)).combine_chunks()


def is_identity(rows: pa.ChunkedArray) -> bool:
    arr = rows.to_numpy()
    return bool(arr.size == 0 or (arr[0] == 0 and arr[-1] == arr.size - 1 and (np.diff(arr) == 1).all()))
