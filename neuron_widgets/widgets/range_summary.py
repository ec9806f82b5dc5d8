"""The summary table of a time range: count, total and mean duration per name and per track."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.profile import Profile

TOP = 100


def range_summary(profile: Profile, grouping: str, a: int, b: int) -> dict[str, Any]:
    """Events overlapping [a, b): per name and per track, durations clipped to the range."""
    start, end = profile.array("start_ts"), profile.array("end_ts")
    hi = int(np.searchsorted(start, b, side="left"))
    rows = np.flatnonzero(end[:hi] >= a)
    clipped = (np.minimum(end[rows], b) - np.maximum(start[rows], a)).astype(np.float64)
    names = profile.name_dictionary()
    idx = profile.track_index(grouping)
    labels = idx.tracks["label"].tolist()
    out: dict[str, Any] = {"start": float(a - profile.origin_ts), "end": float(b - profile.origin_ts),
                           "events": int(rows.size), "top": TOP}
    for key, codes, dictionary in (("by_name", profile.name_codes()[rows], names),
                                   ("by_track", idx.combo_track[idx.combo[rows]], labels)):
        n = len(dictionary)
        count = np.bincount(codes, minlength=n)
        total = np.bincount(codes, weights=clipped, minlength=n)
        used = np.flatnonzero(count)
        used = used[np.argsort(-total[used], kind="stable")]
        out[key] = [{"key": str(dictionary[i]), "count": int(count[i]), "total": float(total[i]),
                     "mean": float(total[i] / count[i])} for i in used[:TOP]]
        out[key + "_more"] = int(max(used.size - TOP, 0))
    return out
