"""Every analysis of one profile at once, overlapping the argument reads with the work that needs none."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from ..model.profile import Profile
from .devices import kind_of
from .frame import frame_of
from .idle import idle_time_breakdown
from .kernels import kernel_breakdown
from .launches import launch_stats
from .overlap import comm_comp_overlap
from .problems import errors_and_hangs
from .stragglers import stragglers
from .temporal import temporal_breakdown

# The analyses both `all_analyses` and `findings` read, kept per profile (see `shared`).
SHARED: dict[str, Callable[[Profile, str], pd.DataFrame]] = {
    "temporal": temporal_breakdown, "overlap": comm_comp_overlap, "idle": idle_time_breakdown}


def shared(profile: Profile, name: str, kind: str = "auto") -> pd.DataFrame:
    """One of the SHARED analyses with its defaults, computed once per profile and kind and kept on its frame:
    `all_analyses` and `findings` each read it, and at 10M events each costs a tenth of a second or more.
    Each caller gets a copy of its own to change."""
    fr = frame_of(profile)
    kind = kind_of(fr, kind)
    return fr._cached(("suite", name, kind), lambda: SHARED[name](profile, kind)).copy()


def all_analyses(profile: Profile, kind: str = "auto") -> dict[str, Any]:
    """temporal, idle, kernels (a pair), overlap, launches, stragglers, straggler_steps, problems.

    On a Neuron profile the lazy arguments and flow ids are read in threads (Parquet decodes off
    the GIL) while the breakdowns that need only times run, so the whole set costs little more
    than its slowest part.
    """
    fr = frame_of(profile)
    kind = kind_of(fr, kind)
    if kind == "neuron":
        fr.prefetch()
    got: dict[str, Any] = {"kind": kind}
    # Those that read no arguments first (idle reads only flow ids), while the arguments are read.
    got["temporal"] = shared(profile, "temporal", kind)
    got["overlap"] = shared(profile, "overlap", kind)
    got["idle"] = shared(profile, "idle", kind)
    got["kernels"] = kernel_breakdown(profile, kind)
    got["launches"] = launch_stats(profile, kind)
    got["stragglers"] = stragglers(profile, kind)
    got["straggler_steps"] = stragglers(profile, kind, per_step=True)
    got["problems"] = errors_and_hangs(profile)
    return {k: got[k] for k in ("kind", "temporal", "overlap", "kernels", "idle", "launches", "stragglers",
                                "straggler_steps", "problems")}
