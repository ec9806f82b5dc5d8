"""How the model opens a device profile's files, without importing the readers, and a profile's device traces:
found, read once, put on the host clock and kept (what `Profile.device_trace` hands back).

The readers register their loader when they are imported (neuron_widgets imports them), so the
model's imports point one way: readers use the model, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import resolve as dr

if TYPE_CHECKING:
    from ..profile import Profile
    from .trace import DeviceTrace

# Drill-downs kept on the host clock, most recent first: re-opening one is a dictionary look-up.
ALIGNED_CACHE = 8

_loader: Callable[[Path], DeviceTrace] | None = None


def set_device_loader(loader: Callable[[Path], DeviceTrace]) -> None:
    global _loader
    _loader = loader


def load_device_trace(path: Path) -> DeviceTrace:
    if _loader is None:  # importing neuron_widgets registers the readers' loader; this is a wiring bug
        raise RuntimeError("no device-trace loader registered: import neuron_widgets (its readers) first")
    return _loader(path)


def device_trace_of(profile: Profile, key: int | str) -> DeviceTrace:
    """The device trace of a hardware event of `profile` (an int: its event id) or of a device profile (a str:
    its name), read on first use and kept in the profile's caches; for an event, on the host clock."""
    event = None
    if isinstance(key, int | np.integer):
        with profile._lock:
            if int(key) in profile._aligned_cache:
                profile._aligned_cache.move_to_end(int(key))
                return profile._aligned_cache[int(key)]
        event = profile.event(int(key))
        name = dr.profile_for(profile, event)
    else:
        name = str(key)
    with profile._lock:
        raw = profile._device_cache.get(name)
    nearest = None
    if raw is None:
        path = dr.locate(profile, name)
        if event is None:
            raw = load_device_trace(path)
        else:
            # The sync point is looked up while the device tables are read (both release the GIL).
            with ThreadPoolExecutor(1, thread_name_prefix="neuron-widgets-sync") as pool:
                lookup = pool.submit(dr.sync_points, profile, event, True)
                raw = load_device_trace(path)
                nearest = lookup.result()
        with profile._lock:
            profile._device_cache[name] = raw
    if event is None:
        return raw
    aligned = dr.aligned_trace(profile, raw, event, nearest)
    with profile._lock:
        profile._aligned_cache[int(key)] = aligned
        while len(profile._aligned_cache) > ALIGNED_CACHE:
            profile._aligned_cache.popitem(last=False)
    return aligned
