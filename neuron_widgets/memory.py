"""Handing scratch memory back to the system once a reader has built its Profile or a job part is analysed.

A reader's bulk pass allocates and frees hundreds of MB of temporaries (per-packet arrays,
sort orders, decoded text). glibc keeps freed blocks in its arenas, so a process that read a
1M-event Perfetto trace kept 0.7 GB resident for a 0.1 GB Profile; trimming returns them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from collections.abc import Callable
from contextlib import suppress
from functools import cache

import pyarrow as pa

# Below this many events a load leaves too little behind to be worth a collection.
GIVE_BACK_MIN_EVENTS = 200_000


@cache
def _trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def trim() -> None:
    """Return freed heap pages to the system (no collection: cheap enough between steps of a load)."""
    t = _trim()
    if t is not None:
        t(0)


def give_back(events: int | None = None) -> None:
    """Collect cycles, then return freed heap and Arrow pool pages to the system.

    `events`: how many events the work that just let go of its memory read; below GIVE_BACK_MIN_EVENTS nothing is
    done. A full collection costs time in proportion to every object the process holds (a notebook's kernel, a test
    run): many small parts each paying one would cost more than their scratch is worth."""
    if events is not None and events < GIVE_BACK_MIN_EVENTS:
        return
    gc.collect()
    trim = _trim()
    if trim is not None:
        trim(0)
    with suppress(AttributeError):  # a pyarrow without release_unused
        pa.default_memory_pool().release_unused()
