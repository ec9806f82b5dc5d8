"""Work over many rows split between two threads, for numba kernels that release the GIL."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def in_halves(work: Callable[[int, int], T], n: int, min_rows: int) -> list[T]:
    """work(r0, r1) over rows 0..n: once, or on each half in its own thread when there are at least
    `min_rows` rows and two cores (below that, a second thread costs more than it saves)."""
    if n < min_rows or (os.cpu_count() or 1) < 2:
        return [work(0, n)]
    half = n // 2
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="neuron-widgets-halves") as pool:
        parts = [pool.submit(work, 0, half), pool.submit(work, half, n)]
        return [p.result() for p in parts]
