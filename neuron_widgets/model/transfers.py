"""Host-device transfer bandwidth: bytes per second over time, per instance, NeuronCore and direction.

From the runtime's copy calls (grouping.TRANSFERS) and the size each carries in its arguments:
each transfer moves size / duration bytes per second while it runs; overlapping ones add up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .grouping import TRANSFERS, transfer_codes
from .profile import Profile

SIZE_KEYS = ("size", "size_bytes", "bytes", "transfer_size", "nbytes")
_DIRECTIONS = ("host_to_device", "device_to_host")


@dataclass
class Bandwidth:
    instance: str
    nc: int
    direction: str
    times: np.ndarray  # absolute ns: each change of the rate
    rate: np.ndarray  # bytes per second from that time on
    transfers: int
    total_bytes: int


def bandwidth(profile: Profile) -> list[Bandwidth]:
    if not len(profile) or "nc_idx" not in profile.column_names:
        return []
    names = profile.name_dictionary()
    if not any(n in TRANSFERS for n in names):
        return []
    direction = transfer_codes(profile.column("name"))
    rows = np.flatnonzero(direction > 0)
    nc_col = profile.column("nc_idx").combine_chunks().take(pa.array(rows))
    has_nc = nc_col.is_valid().to_numpy(zero_copy_only=False)
    rows, nc = rows[has_nc], nc_col.fill_null(0).to_numpy(zero_copy_only=False)[has_nc].astype(np.int64)
    if not rows.size:
        return []
    size = _sizes(profile, rows)
    start, end = profile.array("start_ts")[rows], profile.array("end_ts")[rows]
    inst = profile.column("instance_id").combine_chunks().take(pa.array(rows))
    inst = inst.dictionary_encode() if not pa.types.is_dictionary(inst.type) else inst
    inst_code = inst.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    inst_names = inst.dictionary.to_pylist()
    d = direction[rows].astype(np.int64)
    ok = (size > 0) & (end > start)
    out = []
    key = (inst_code * (int(nc.max()) + 1) + nc) * 3 + d
    for k in np.unique(key[ok]).tolist():
        m = ok & (key == k)
        s, e, b = start[m], end[m], size[m].astype(np.float64)
        rate = b / ((e - s) / 1e9)
        t = np.concatenate([s, e])
        delta = np.concatenate([rate, -rate])
        order = np.argsort(t, kind="stable")
        t, level = t[order], np.cumsum(delta[order])
        last = np.r_[t[1:] != t[:-1], True]  # one value per time: the level after every change there
        t, level = t[last], np.maximum(level[last], 0.0)
        i = int(np.flatnonzero(m)[0])
        out.append(Bandwidth(str(inst_names[inst_code[i]]), int(nc[i]), _DIRECTIONS[int(d[i]) - 1], t, level,
                             int(m.sum()), int(b.sum())))
    return out


def _sizes(profile: Profile, rows: np.ndarray) -> np.ndarray:
    """Bytes of each transfer, from the first size-like key of its arguments (0 when none)."""
    from .jsonscan import int_values  # a byte scan of the argument texts

    if "extra_attributes_json" not in profile.column_names:
        return np.zeros(rows.size, np.int64)
    texts = profile.values_at("extra_attributes_json", rows)
    if not pa.types.is_string(texts.type):
        texts = pc.cast(texts, pa.string())
    out = np.zeros(rows.size, np.int64)
    for key in SIZE_KEYS:
        got, _slow = int_values(texts, key, -1)
        fill = (out == 0) & (got > 0)
        out[fill] = got[fill]
    return out
