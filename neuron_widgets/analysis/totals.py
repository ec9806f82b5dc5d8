"""Each event name's (or NEFF's) count and total time in one profile: what `compare` sets side by side, and
what `across` computes per part of a job for it."""

from __future__ import annotations

import pandas as pd

from ..model.profile import Profile
from .devices import kind_of
from .frame import frame_of, notes_of
from .kernels import _by_neff, group_stats


def totals(p: Profile, by: str) -> pd.DataFrame:
    fr = frame_of(p)
    if by == "neff":
        if kind_of(fr) != "neuron":
            return notes_of(pd.DataFrame(columns=["model_name", "count", "total_ns", "mean_ns"]),
                            [f"{p.source}: no nc_exec_running, so no NEFFs to compare"])
        t = _by_neff(fr)
        return notes_of(t.rename(columns={"sum_ns": "total_ns"})[["model_name", "count", "total_ns", "mean_ns"]],
                        t.attrs.get("notes", []))
    st = group_stats(fr.name, fr.end - fr.start, len(fr.names))
    st.insert(0, "name", fr.names)
    st = st[st["count"] > 0].groupby("name", as_index=False).agg(count=("count", "sum"), total_ns=("sum_ns", "sum"))
    st["mean_ns"] = st["total_ns"] / st["count"]
    return notes_of(st, [])
