"""Worker processes for Dask's local process scheduler that never run the user's script.

multiprocessing's spawn start (Dask's default, and the only safe one once threads run) has each
new worker run the parent's main module again, as `__mp_main__`, so that functions defined there
can be unpickled. A script that calls `across()` at its top level (most analysis scripts have no
`if __name__ == "__main__":` guard, and `python -m` runs a module the same way) is then run again
inside every worker: the worker calls `across()` while it is still starting, multiprocessing
refuses ("...before the current process has finished its bootstrapping phase") and the pool
breaks. Even a guarded script is imported once more per worker, with its imports and top-level
work. A job's tasks are this package's functions and need nothing from the main module, so the
workers here start the same way with the main module left out of what they are told to import.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import sys
import threading
import types
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

_SPAWN = multiprocessing.get_context("spawn")
_hiding = threading.Lock()


@contextlib.contextmanager
def main_hidden() -> Iterator[None]:
    """While a worker is started: a blank `__main__`, so its start data names no main module to run.

    Held for the few milliseconds a start takes (the start data is written then); one start at a
    time, so two threads starting workers never put back each other's stand-in.
    """
    with _hiding:
        real = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__", "stand-in while a neuron-widgets worker starts")
        try:
            yield
        finally:
            if real is not None:
                sys.modules["__main__"] = real
            else:
                sys.modules.pop("__main__", None)


class _Process(_SPAWN.Process):  # type: ignore[name-defined,misc]
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        with main_hidden():
            return _SPAWN.Process._Popen(process_obj)


class _Context(type(_SPAWN)):  # type: ignore[misc]
    """The spawn context whose processes start without the main module."""

    Process = _Process


CONTEXT = _Context()


def pool(workers: int) -> ProcessPoolExecutor:
    """A process pool for `dask.compute(..., pool=)`: spawned workers that do not import `__main__`."""
    return ProcessPoolExecutor(max(int(workers), 1), mp_context=CONTEXT)
