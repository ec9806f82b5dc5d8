"""How the model opens a device profile's files, without importing the readers, and a profile's device traces:
found, read once, put on the host clock and kept (what `Profile.device_trace` hands back).

The readers register their loader when they are imported (neuron_widgets imports them), so the
model's imports point one way: readers use the model, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import resolve as dr

if TYPE_CHECKING:
    from ..profile import Profile
    from .trace import DeviceTrace

# Drill-downs kept on the host clock, most recent first: re-opening one is a dictionary look-up and a
# stat of its files (kept only while they are unchanged: see `identity`).
ALIGNED_CACHE = 8

_loader: Callable[[Path], DeviceTrace] | None = None
# The readers' two-step load (readers.neuron.device_trace.load_device_trace_staged): the drawn columns of a
# Parquet device profile at once, the whole trace from a function; None for other formats.
Staged = Callable[[Path], "tuple[DeviceTrace, Callable[[], DeviceTrace]] | None"]
_staged: Staged | None = None


def set_device_loader(loader: Callable[[Path], DeviceTrace], staged: Staged | None = None) -> None:
    global _loader, _staged
    _loader = loader
    _staged = staged


def load_device_trace(path: Path) -> DeviceTrace:
    if _loader is None:  # importing neuron_widgets registers the readers' loader; this is a wiring bug
        raise RuntimeError("no device-trace loader registered: import neuron_widgets (its readers) first")
    return _loader(path)


def device_trace_of(profile: Profile, key: int | str,
                    early: Callable[[DeviceTrace], None] | None = None) -> DeviceTrace:
    """The device trace of a hardware event of `profile` (an int: its event id) or of a device profile (a str:
    its name), read on first use and kept in the profile's caches; for an event, on the host clock.

    `early`: when the trace is read now from a Parquet device profile, called (in this thread) with the
    trace holding only the columns its events are drawn from, on the same clock, before the rest of its
    tables is read (a drill-down draws its events from it meanwhile); never kept.
    """
    event = None
    if isinstance(key, int | np.integer):
        with profile._lock:
            kept = profile._aligned_cache.get(int(key))
        if kept is not None and unchanged(kept):
            with profile._lock:
                if int(key) in profile._aligned_cache:
                    profile._aligned_cache.move_to_end(int(key))
            return kept
        event = profile.event(int(key))
        name = dr.profile_for(profile, event)
    else:
        name = str(key)
    with profile._lock:
        raw = profile._device_cache.get(name)
    if raw is not None and not unchanged(raw):
        raw = None  # its files were written again since (the profile processed anew): read them again
    aligned, nearest = None, None
    if raw is None:
        path = dr.locate(profile, name)
        files = (path, identity(path))  # before the read: files changed while read are read again next time
        with ThreadPoolExecutor(1, thread_name_prefix="neuron-widgets-sync") as pool:
            # The sync point is looked up while the device tables are read (both release the GIL).
            lookup = pool.submit(dr.sync_points, profile, event, True) if event is not None else None
            staged = _staged(path) if early is not None and _staged is not None else None
            if staged is None or early is None:
                raw = load_device_trace(path)
            else:
                drawn, finish = staged
                try:
                    first = drawn if event is None or lookup is None else \
                        dr.aligned_trace(profile, drawn, event, lookup.result())
                    early(first)
                finally:
                    raw = finish()
                if event is not None:
                    aligned = _aligned_as(raw, drawn, first)
            nearest = lookup.result() if lookup is not None else None
        raw.__dict__["_files"] = files
        with profile._lock:
            profile._device_cache[name] = raw
    if event is None:
        return raw
    if aligned is None:
        aligned = dr.aligned_trace(profile, raw, event, nearest)
    aligned.__dict__["_files"] = raw.__dict__.get("_files")
    with profile._lock:
        profile._aligned_cache[int(key)] = aligned
        while len(profile._aligned_cache) > ALIGNED_CACHE:
            profile._aligned_cache.popitem(last=False)
    return aligned


def identity(path: Path) -> tuple[Any, ...]:
    """What `stat` says of a device profile's files now (each file's name, size, inode, device, modification and
    change times): a file written again, even to the same size and with its modification time put back, gets
    another (its change time is the kernel's clock). What the caches above are kept under."""
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    out = []
    for f in files:
        st = f.stat()
        out.append((f.name, st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def unchanged(trace: DeviceTrace) -> bool:
    """Whether a kept trace's files are still those it was read from (a trace not read from files: yes)."""
    files = trace.__dict__.get("_files")
    if files is None:
        return True
    try:
        return identity(files[0]) == files[1]
    except OSError:  # gone or unreadable now: read again, which says what is wrong
        return False


def _aligned_as(raw: DeviceTrace, drawn: DeviceTrace, first: DeviceTrace) -> DeviceTrace:
    """`raw` put on the host clock as `first` (its drawn part, aligned) was: what aligned_trace gives for it,
    without its look-ups again (the execution's start, its sync points and the tables' span are in both)."""
    notes = first.notes[len(drawn.notes):]
    return raw.aligned(first.offset_ns - drawn.offset_ns, first.alignment, first.residual_ns,
                       notes[0] if notes else None)
