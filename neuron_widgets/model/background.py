"""Work that runs ahead of need in a thread (a timeline's preparation) and yields the cores to the user's."""

from __future__ import annotations

import contextlib
import os
import sys
import threading

# Linux's nice values run from -20 to 19; 10 gives such a thread about a tenth of a core's share
# against normal work, and all of an idle machine.
NICE = 10


def background_priority() -> None:
    """Lower the calling thread's scheduling priority (Linux; elsewhere nothing), so a foreground cell
    running meanwhile (analyses, a filter) gets the cores first. Threads it starts inherit it."""
    if not sys.platform.startswith("linux"):
        return  # elsewhere the call would renice the whole process, or nothing
    with contextlib.suppress(AttributeError, OSError):
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), NICE))
