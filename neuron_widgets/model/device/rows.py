"""A device trace's tables' rows put in time order and gathered into the event table's columns in one pass.

The tables come one after another (instructions, DMA packets, CC ops, semaphore values); each is
usually already in time order itself, so their rows' order is a merge of those runs, and each
column of the event table is written as the merge goes, instead of a sort followed by a gather
per column (and the temporary arrays those take: 10 MB apiece at a million rows). A table that is
not in order has the whole sorted by start, then its ties put in order and every column written in one pass.

The order is `time_order`'s: by start, the longest first among rows that start together, then
the tables' order and each table's own (tests/test_device_rows.py holds them equal).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..kernel_args import read_only
from ..order import longest_first


@dataclass
class Rows:
    """The event table's per-row columns, rows in time order."""

    order: np.ndarray  # int64: each row's place in the tables' concatenation (its event id)
    start: np.ndarray  # int64
    end: np.ndarray  # int64
    name: np.ndarray  # int32 codes
    label: np.ndarray  # int32 codes
    table: np.ndarray  # int32: which table (part) the row is of
    source_row: np.ndarray  # int64: its row in that table


@numba.njit(cache=True, nogil=True)
def _in_order(bounds: np.ndarray, start: np.ndarray, end: np.ndarray) -> bool:
    """Whether each part [bounds[p], bounds[p+1]) is in time order (by start, longest first on ties)."""
    for p in range(bounds.size - 1):
        for i in range(bounds[p] + 1, bounds[p + 1]):
            if start[i] < start[i - 1] or (start[i] == start[i - 1] and end[i] > end[i - 1]):
                return False
    return True


@numba.njit(cache=True, nogil=True)
def _merge(bounds: np.ndarray, start: np.ndarray, end: np.ndarray, name: np.ndarray, label: np.ndarray,
           order: np.ndarray, start_o: np.ndarray, end_o: np.ndarray, name_o: np.ndarray, label_o: np.ndarray,
           table_o: np.ndarray, source_o: np.ndarray) -> None:
    """Merge the parts (each in time order), ties to the earlier part, writing every column as it goes."""
    k = bounds.size - 1
    pos = bounds[:-1].copy()
    for j in range(order.size):
        best = -1
        for p in range(k):
            i = pos[p]
            if i < bounds[p + 1]:
                if best < 0:
                    best = p
                else:
                    b = pos[best]
                    if start[i] < start[b] or (start[i] == start[b] and end[i] > end[b]):
                        best = p
        i = pos[best]
        pos[best] = i + 1
        order[j] = i
        start_o[j] = start[i]
        end_o[j] = end[i]
        name_o[j] = name[i]
        label_o[j] = label[i]
        table_o[j] = best
        source_o[j] = i - bounds[best]


@numba.njit(cache=True, nogil=True)
def _sorted_gather(bounds: np.ndarray, start: np.ndarray, end: np.ndarray, name: np.ndarray, label: np.ndarray,
                   order: np.ndarray, start_o: np.ndarray, end_o: np.ndarray, name_o: np.ndarray,
                   label_o: np.ndarray, table_o: np.ndarray, source_o: np.ndarray) -> None:
    """`order` (by start alone, stably) made time order in place, the longest first among equal starts, and every
    column written in it (the ties sorted on the starts and ends once gathered, as `time_order` does)."""
    n = order.size
    for j in range(n):
        i = order[j]
        start_o[j] = start[i]
        end_o[j] = end[i]
    longest_first(order, start_o, end_o)
    for j in range(n):
        i = order[j]
        p = 0
        while i >= bounds[p + 1]:
            p += 1
        name_o[j] = name[i]
        label_o[j] = label[i]
        table_o[j] = p
        source_o[j] = i - bounds[p]


def rows_in_time_order(sizes: list[int], start: np.ndarray, end: np.ndarray, name: np.ndarray,
                       label: np.ndarray) -> Rows:
    """The rows of tables of `sizes` rows each, concatenated in `start`, `end` (int64), `name`, `label` (int32
    codes), in time order, with each row's table and its row there."""
    n = int(sum(sizes))
    bounds = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=bounds[1:])
    start, end = read_only(start, np.int64), read_only(end, np.int64)
    name, label = read_only(name, np.int32), read_only(label, np.int32)
    out = Rows(np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int32),
               np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int64))
    columns = (out.start, out.end, out.name, out.label, out.table, out.source_row)
    if n and _in_order(bounds, start, end):
        _merge(bounds, start, end, name, label, out.order, *columns)
        return out
    # A table out of order puts the whole out of order: sorted by start here, the ties in the kernel.
    out.order = np.argsort(start, kind="stable").astype(np.int64, copy=False)
    _sorted_gather(bounds, start, end, name, label, out.order, *columns)
    return out


def warm() -> None:
    """Load the compiled kernels now (from numba's cache; compiled once the first time), not on a click."""
    one = np.zeros(1, np.int64)
    rows_in_time_order([1], one, one, np.zeros(1, np.int32), np.zeros(1, np.int32))
    rows_in_time_order([1, 1], np.array([1, 0], np.int64), one.repeat(2), np.zeros(2, np.int32), np.zeros(2, np.int32))
    rows_in_time_order([2], np.array([1, 0], np.int64), one.repeat(2), np.zeros(2, np.int32), np.zeros(2, np.int32))
