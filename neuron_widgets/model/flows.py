"""Dependency chains: events linked by `flow_id` (framework -> neuron_rt -> neuron_hw).

Built on first use from the lazy flow_id column: for every flow id, the rows that carry it,
so the chain of one event is a few look-ups, not a scan of the profile.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# Upstream comes first in this order; within a source, earlier events are upstream.
SOURCE_ORDER = {"framework": 0, "neuron_rt": 1, "device": 2, "neuron_hw": 2}


@dataclass
class FlowIndex:
    flows: pa.Array  # distinct flow ids (strings)
    rows_by_flow: np.ndarray  # rows, grouped by flow
    flow_off: np.ndarray  # rows_by_flow[flow_off[f]:flow_off[f+1]] carry flow f
    flow_of_row_off: np.ndarray  # flow_codes[flow_of_row_off[r]:flow_of_row_off[r+1]] are row r's flows
    flow_codes: np.ndarray

    @classmethod
    def of(cls, flow_id: pa.ChunkedArray) -> FlowIndex:
        col = flow_id.combine_chunks() if flow_id.num_chunks != 1 else flow_id.chunk(0)
        n = len(col)
        values = pc.list_flatten(col)
        # Rows and codes in 32 bits while they fit: the index is kept with the profile (4 arrays of the
        # flow references, 10M at 10M events).
        wide = len(values) >= 2**31 or n >= 2**31
        ints = np.int64 if wide else np.int32
        parents = pc.list_parent_indices(col).to_numpy().astype(ints, copy=False)
        enc = pc.dictionary_encode(values.cast(pa.string()))
        codes = enc.indices.to_numpy(zero_copy_only=False).astype(ints, copy=False)
        order = np.argsort(codes, kind="stable")
        counts = np.bincount(codes, minlength=len(enc.dictionary))
        flow_off = np.zeros(len(enc.dictionary) + 1, dtype=ints)
        np.cumsum(counts, out=flow_off[1:])
        per_row = np.bincount(parents, minlength=n)
        row_off = np.zeros(n + 1, dtype=ints)
        np.cumsum(per_row, out=row_off[1:])
        # list_flatten keeps rows in order, so codes are already grouped by row.
        return cls(enc.dictionary, parents[order], flow_off, row_off, codes)

    def linked(self, row: int) -> np.ndarray:
        """Rows sharing at least one flow id with `row` (itself excluded), sorted."""
        mine = self.flow_codes[self.flow_of_row_off[row]:self.flow_of_row_off[row + 1]]
        if mine.size == 0:
            return np.zeros(0, dtype=np.int64)
        rows = np.concatenate([self.rows_by_flow[self.flow_off[f]:self.flow_off[f + 1]] for f in mine])
        rows = np.unique(rows).astype(np.int64, copy=False)
        return rows[rows != row]


PAIRS_PER_FLOW_LIMIT = 64


def pairs_of(index: FlowIndex) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of rows sharing a flow (a < b), without duplicates across flows."""
    sizes = np.diff(index.flow_off)
    a_parts, b_parts = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for size in np.unique(sizes[sizes >= 2]):
        flows = np.flatnonzero(sizes == size)
        members = index.rows_by_flow[index.flow_off[flows][:, None] + np.arange(size)]
        if size <= PAIRS_PER_FLOW_LIMIT:
            i, j = np.triu_indices(int(size), k=1)
        else:
            i, j = np.arange(size - 1), np.arange(1, size)
        a_parts.append(members[:, i].ravel())
        b_parts.append(members[:, j].ravel())
    a, b = np.concatenate(a_parts).astype(np.int64), np.concatenate(b_parts).astype(np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    n = int(hi.max(initial=0)) + 1
    pairs = lo[keep] * n + hi[keep]  # one int64 key per pair: far faster than unique rows
    del lo, hi, keep
    # Sorted then deduplicated in place: np.unique hashes first (several times slower on 10M pairs).
    pairs.sort()
    if pairs.size:
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
    return pairs // n, pairs % n


def split(rows: np.ndarray, row: int, source_codes: np.ndarray, sources: list[str],
          start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Linked rows into upstream and downstream of `row`, by source order then time.

    `source_codes` are the dictionary codes of trace_event_source, `sources` its values.
    """
    code_rank = np.array([SOURCE_ORDER.get(s, 3) for s in sources], dtype=np.int64)
    rank = code_rank[source_codes[rows]]
    mine = code_rank[source_codes[row]]
    up = (rank < mine) | ((rank == mine) & (start[rows] < start[row]))
    return rows[up], rows[~up]
