"""Each Kineto rank named as the Timeline labels its GPU (`rank0/GPU 0`), so a finding or chart names a track."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.worker_labels import gpu_label, rank_text
from .devices import kineto_kernels
from .frame import frame_of


def rank_labels(p: Profile) -> dict[Any, str]:
    """Per rank, the label of the GPU process its kernels run on (the commonest, should a rank span several)."""
    fr = frame_of(p)
    return dict(fr._cached(("rank_labels",), lambda: _rank_labels(p)))


def _rank_labels(p: Profile) -> dict[Any, str]:
    fr = frame_of(p)
    k = kineto_kernels(fr, include_last_step=True, round_us=False)
    if k.rows.size == 0:
        return {}
    df = pd.DataFrame({"r": k.rank, "i": np.asarray(fr.combo_values("instance_id", k.rows), dtype=object),
                       "q": np.asarray(fr.combo_values("process_id", k.rows), dtype=object)})
    counts = df.value_counts(sort=True)  # commonest first: the first (instance, pid) of each rank wins
    out: dict[Any, str] = {}
    for (code, i, q), _ in counts.items():
        rank = k.ranks[int(code)]
        if rank not in out:
            out[rank] = gpu_label(i, q, p.track_names)
    return out


def rank_label(labels: dict[Any, str], rank: Any) -> str:
    """A rank's GPU label, 'rank N' where it has no kernel (ids handed over as floats read as integers)."""
    try:
        key: Any = int(float(rank)) if float(rank).is_integer() else rank
    except (TypeError, ValueError):
        key = rank
    return labels.get(key, rank_text(rank))
