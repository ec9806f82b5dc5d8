"""How busy a profile's devices are over time, in equal bins: a level-of-detail summary small enough to
draw hundreds of profiles side by side (one track per part of a job) without their events.

A device is a NeuronCore (busy while an `nc_exec_running` runs), a Kineto rank (busy while a kernel
runs) or, in a trace with neither, a thread (busy while any of its events runs). A bin's
`busy_share` is the busy time of every device inside the bin over (devices x bin width): 1.0 when
every device worked through the whole bin.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.profile import Profile
from .devices import EXECUTION, kineto_kernels, trace_kind
from .frame import Frame, frame_of, notes_of
from .intervals import union

BINS = 1024
DEVICE_KIND = {"neuron": "NeuronCores", "kineto": "ranks", "chrome": "threads"}


def busy_density(profile: Profile, bins: int = BINS) -> pd.DataFrame:
    """`bins` equal slices of the span from the first to the last busy instant, one row each:
    `start_ts`, `end_ts`, `busy_ns` (summed over devices), `busy_share` (0..1), `devices` and
    `device_kind` (NeuronCores, ranks or threads).

    Bins where nothing ran are kept (share 0) so that the rows tile the span. `attrs["kind"]`
    says which devices were counted (neuron, kineto or chrome) and `attrs["devices"]` how many.
    """
    if bins < 1:
        raise ValueError(f"bins must be at least 1, not {bins}")
    fr = frame_of(profile)
    kind = trace_kind(fr) if len(fr) else "chrome"
    group, start, end, notes = _busy_events(fr, kind)
    cols = {"start_ts": "int64", "end_ts": "int64", "busy_ns": "int64", "busy_share": "float64", "devices": "int64",
            "device_kind": "object"}
    if start.size == 0:
        df = pd.DataFrame({c: pd.Series(dtype=t) for c, t in cols.items()})
        df.attrs.update(kind=kind, devices=0)
        return notes_of(df, [*notes, "nothing ran on a device: no busy time to summarise"])
    busy = union(group, start, end)
    devices = int(np.unique(group).size)
    lo, hi = int(busy.start.min()), int(busy.end.max())
    edges = bin_edges(lo, hi, bins)
    covered = busy_before(busy.start, busy.end, edges)
    busy_ns = np.diff(covered)
    width = np.diff(edges)
    share = busy_ns / (devices * np.maximum(width, 1))
    df = pd.DataFrame({"start_ts": edges[:-1], "end_ts": edges[1:], "busy_ns": busy_ns,
                       "busy_share": np.clip(share, 0.0, 1.0), "devices": devices, "device_kind": DEVICE_KIND[kind]})
    df.attrs.update(kind=kind, devices=devices)
    return notes_of(df, notes)


def bin_edges(lo: int, hi: int, bins: int) -> np.ndarray:
    """`bins` + 1 integer edges from lo to hi (whole nanoseconds; fewer bins when the span is shorter)."""
    bins = max(1, min(bins, hi - lo))
    return np.unique(lo + (np.arange(bins + 1, dtype=np.float64) * ((hi - lo) / bins)).round().astype(np.int64))


def busy_before(start: np.ndarray, end: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Total time covered by the intervals before each instant of `at`: sum of max(0, min(t, end) - start).

    Sorted starts and ends with prefix sums give it for every instant at once:
    (starts before t) x t - their sum, less (ends before t) x t - their sum.
    """
    s, e = np.sort(start), np.sort(end)
    cs = np.concatenate([[0], np.cumsum(s, dtype=np.int64)])
    ce = np.concatenate([[0], np.cumsum(e, dtype=np.int64)])
    ks = np.searchsorted(s, at, side="left")
    ke = np.searchsorted(e, at, side="left")
    return (ks * at - cs[ks]) - (ke * at - ce[ke])


def _busy_events(fr: Frame, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Each device's busy events: (device code, start, end) and notes on what was counted."""
    if kind == "neuron":
        rows, g = fr.on_cores(EXECUTION)
        return g.astype(np.int64), fr.start[rows], fr.end[rows], ["busy: NeuronCores running nc_exec_running"]
    if kind == "kineto":
        k = kineto_kernels(fr, include_last_step=True, round_us=False)
        return k.rank.astype(np.int64), k.start, k.end, ["busy: ranks running device kernels"]
    if not len(fr):
        z = np.zeros(0, np.int64)
        return z, z, z, []
    g = fr.combo_codes(("instance_id", "process_id", "thread_id"))
    return g.astype(np.int64), fr.start, fr.end, ["busy: threads running any event"]
