"""Binding Chrome flow events (s/t/f) to the slices they connect."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from ...errors import LoadWarnings

_MAX_WALK = 256


class SliceIndex:
    """Slices of each thread in start order, to find the slice around or after a time."""

    def __init__(self, thread: np.ndarray, start: np.ndarray, end: np.ndarray) -> None:
        order = np.lexsort((-end, start, thread))
        self.order = order
        self.thread = thread[order]
        self.start = start[order]
        self.end = end[order]

    def find(self, thread: np.ndarray, ts: np.ndarray, enclosing: np.ndarray) -> np.ndarray:
        """Slice index (into the caller's arrays) per flow point, -1 where none fits."""
        n = self.start.size
        out = np.full(ts.size, -1, dtype=np.int64)
        if n == 0 or ts.size == 0:
            return out
        # One search over (thread, time) pairs for all points at once.
        pos_right = _search(self.thread, self.start, thread, ts, "right") - 1
        pos_left = _search(self.thread, self.start, thread, ts, "left")
        k = np.where(enclosing, pos_right, pos_left)
        valid = (k >= 0) & (k < n)
        kk = np.clip(k, 0, n - 1)
        same = valid & (self.thread[kk] == thread)
        hit = same & (~enclosing | (self.end[kk] >= ts))
        out[hit] = self.order[kk[hit]]
        # Enclosing points just after a child slice ended: walk back to the open ancestor.
        for i in np.flatnonzero(enclosing & same & ~hit):
            j, steps = int(kk[i]), 0
            while j >= 0 and steps < _MAX_WALK and self.thread[j] == thread[i]:
                if self.end[j] >= ts[i]:
                    out[i] = self.order[j]
                    break
                j -= 1
                steps += 1
        return out


def _search(threads: np.ndarray, starts: np.ndarray, thread: np.ndarray, ts: np.ndarray,
            side: Literal["left", "right"]) -> np.ndarray:
    lo = min(int(starts.min()), int(ts.min()))
    span = max(int(starts.max()), int(ts.max())) - lo + 1
    if span * (int(max(threads.max(), thread.max())) + 1) < 2**62:
        return np.searchsorted(threads * span + (starts - lo), thread * span + (ts - lo), side=side)
    # Times too far apart to pack with the thread: search thread by thread.
    out = np.empty(ts.size, dtype=np.int64)
    bounds = np.searchsorted(threads, thread, side="left")
    ends = np.searchsorted(threads, thread, side="right")
    for i in range(ts.size):
        out[i] = bounds[i] + np.searchsorted(starts[bounds[i]:ends[i]], ts[i], side=side)
    return out


def bind_flows(flow_id: np.ndarray, thread: np.ndarray, ts: np.ndarray, enclosing: np.ndarray,
               index: SliceIndex, rows: np.ndarray, n_rows: int, warnings: LoadWarnings,
               origin: str) -> pa.Array:
    """A list<string> flow_id column over `n_rows` source rows, built without a loop per point.

    `flow_id` holds integers or strings, one per point; `rows` maps the index's slices to source rows.
    """
    slices = index.find(thread, ts, enclosing)
    bound = slices >= 0
    warnings.add(f"{origin}: flow events with no slice to attach to (arrows not drawn)", int((~bound).sum()))
    return flow_lists(rows[slices[bound]], flow_id[bound], n_rows)


def flow_lists(row: np.ndarray, fid: np.ndarray, n_rows: int) -> pa.Array:
    """The list<string> flow_id column from (source row, flow id) pairs; repeats dropped, rows without ids null.

    Ids may be integers (written out in decimal) or strings; each row keeps its ids in the order given.
    """
    row = np.asarray(row, dtype=np.int64)
    codes, uniques = pd.factorize(fid)
    key = row * max(len(uniques), 1) + codes
    _, first = np.unique(key, return_index=True)
    first.sort()  # the first of each repeated pair, in the order given
    kept_row, kept_code = row[first], codes[first]
    by_row = np.argsort(kept_row, kind="stable")
    kept_row, kept_code = kept_row[by_row], kept_code[by_row]
    counts = np.bincount(kept_row, minlength=n_rows)
    offsets = np.zeros(n_rows + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    if uniques.dtype.kind in "iu":
        texts = pa.array(uniques).cast(pa.string())
    else:
        texts = pa.array([u if type(u) is str else str(u) for u in uniques], pa.string())
    values = texts.take(pa.array(kept_code.astype(np.int64)))
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(counts == 0))
