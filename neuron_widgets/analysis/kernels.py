"""Where device time goes by kind and by name: HTA's kernel breakdown; NEFFs and event names for Neuron."""

from __future__ import annotations

import numba
import numpy as np
import pandas as pd

from ..model.halves import in_halves
from ..model.profile import Profile
from .devices import COMMUNICATION, COMPUTATION, EXECUTION, MEMORY, kind_of, kineto_kernels
from .frame import Frame, frame_of, notes_of
from .intervals import Intervals, union


def kernel_breakdown(profile: Profile, kind: str = "auto", num_kernels: int = 10, duration_ratio: float = 0.8,
                     include_memory_kernels: bool = True, include_last_step: bool = False,
                     round_us: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two tables of where device time goes.

    Kineto, as HTA's `get_gpu_kernel_breakdown` (microseconds, HTA's column names so the two
    compare): by kernel type (`kernel_type`, `sum`, `percentage`; time when two types run at once
    is its own row, "COMPUTATION overlapping COMMUNICATION"), and by name per rank and type
    (`name`, `sum (us)`, `max (us)`, `min (us)`, `stddev`, `mean (us)`, `count`, `kernel_type`,
    `rank`; past `num_kernels` names, or past `duration_ratio` of the cumulated time, the rest
    is one `others` row).

    Neuron (nanoseconds): by NEFF, the `model_name` of `nc_exec_running` (`count`, `sum_ns`,
    `mean_ns`, `min_ns`, `max_ns`, `std_ns`, `percentage` of all execution time), and by event
    name (`name`, `source`, the same statistics, `percentage` of its source's total).
    """
    fr = frame_of(profile)
    if kind_of(fr, kind) == "neuron":
        return _by_neff(fr), _by_name(fr)
    return _kineto(fr, num_kernels, duration_ratio, include_memory_kernels, include_last_step, round_us)


# -- statistics per code in one pass ---------------------------------------------------------
@numba.njit(cache=True, nogil=True, inline="always")
def _add(count: np.ndarray, total: np.ndarray, sq: np.ndarray, lo: np.ndarray, hi: np.ndarray, c: int,
         v: int) -> None:  # pragma: no cover - numba
    count[c] += 1
    total[c] += v
    sq[c] += float(v) * float(v)
    if v < lo[c]:
        lo[c] = v
    if v > hi[c]:
        hi[c] = v


@numba.njit(cache=True, nogil=True)
def _stats(codes: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, ...]:  # pragma: no cover - numba
    count = np.zeros(n, np.int64)
    total = np.zeros(n, np.int64)
    sq = np.zeros(n, np.float64)
    lo = np.full(n, np.iinfo(np.int64).max, np.int64)
    hi = np.full(n, np.iinfo(np.int64).min, np.int64)
    for i in range(codes.size):
        _add(count, total, sq, lo, hi, codes[i], values[i])
    return count, total, sq, lo, hi


@numba.njit(cache=True, nogil=True)
def _name_stats(name: np.ndarray, source: np.ndarray, start: np.ndarray, end: np.ndarray, n: int,
                m: int) -> tuple[np.ndarray, ...]:  # pragma: no cover - numba
    """_stats of durations per name, and per (name, source) counts, in one pass over every event."""
    count = np.zeros(n, np.int64)
    total = np.zeros(n, np.int64)
    sq = np.zeros(n, np.float64)
    lo = np.full(n, np.iinfo(np.int64).max, np.int64)
    hi = np.full(n, np.iinfo(np.int64).min, np.int64)
    pairs = np.zeros((n, m), np.int64)
    for i in range(name.size):
        c = name[i]
        _add(count, total, sq, lo, hi, c, end[i] - start[i])
        pairs[c, source[i] + 1] += 1
    return count, total, sq, lo, hi, pairs


def _name_stats_in_halves(fr: Frame, n: int, m: int) -> tuple[np.ndarray, ...]:
    """_name_stats over every event; on large profiles each half in a thread, then the two summed."""
    parts = in_halves(lambda a, b: _name_stats(fr.name[a:b], fr.source[a:b], fr.start[a:b], fr.end[a:b], n, m),
                      len(fr), 1_000_000)
    if len(parts) == 1:
        return parts[0]
    a, b = parts
    count, total, sq = a[0] + b[0], a[1] + b[1], a[2] + b[2]
    return count, total, sq, np.minimum(a[3], b[3]), np.maximum(a[4], b[4]), a[5] + b[5]


def group_stats(codes: np.ndarray, values: np.ndarray, n: int) -> pd.DataFrame:
    """count, sum, mean, min, max and sample std of int64 values per code 0..n-1."""
    count, total, sq, lo, hi = _stats(np.asarray(codes, np.int64), np.asarray(values, np.int64), n)
    return _table(count, total, sq, lo, hi)


def _table(count: np.ndarray, total: np.ndarray, sq: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> pd.DataFrame:
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total / np.maximum(count, 1)
        var = (sq - count * mean * mean) / np.maximum(count - 1, 1)
    std = np.where(count > 1, np.sqrt(np.maximum(var, 0)), 0.0)
    return pd.DataFrame({"count": count, "sum_ns": total, "mean_ns": mean, "min_ns": lo, "max_ns": hi, "std_ns": std})


def _by_neff(fr: Frame) -> pd.DataFrame:
    ex = fr.rows_named(EXECUTION)
    codes, words = fr.arg_codes(ex, "model_name")
    notes = []
    if ex.size and (codes < 0).all():
        notes.append("nc_exec_running events carry no model_name: NEFFs cannot be told apart")
    if (codes < 0).any():
        codes, words = np.where(codes < 0, len(words), codes), [*words, "(no model_name)"]
    df = group_stats(codes, fr.end[ex] - fr.start[ex], len(words))
    df.insert(0, "model_name", words)
    df = df[df["count"] > 0]
    total = df["sum_ns"].sum()
    df["percentage"] = 100.0 * df["sum_ns"] / total if total else 0.0
    return notes_of(df.sort_values("sum_ns", ascending=False, ignore_index=True), notes)


def _by_name(fr: Frame) -> pd.DataFrame:
    n = len(fr.names)
    m = len(fr.sources) + 1
    count, total, sq, lo, hi, pairs = _name_stats_in_halves(fr, n, m)
    df = _table(count, total, sq, lo, hi)
    # The source an event name comes from (a name seen under several sources takes the most common).
    src = pairs.argmax(axis=1) - 1
    df.insert(0, "name", fr.names)
    df.insert(1, "source", [fr.sources[c] if c >= 0 else None for c in src])
    df = df[df["count"] > 0]
    per_source = df.groupby("source", dropna=False)["sum_ns"].transform("sum")
    df["percentage"] = np.where(per_source > 0, 100.0 * df["sum_ns"] / per_source.where(per_source > 0, 1), 0.0)
    return notes_of(df.sort_values("sum_ns", ascending=False, ignore_index=True), [])


# -- Kineto, as HTA -------------------------------------------------------------------------
def _kineto(fr: Frame, num_kernels: int, duration_ratio: float, include_memory: bool, include_last_step: bool,
            round_us: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    k = kineto_kernels(fr, include_last_step, round_us)
    types = k.types(fr)
    wanted = [COMPUTATION, COMMUNICATION] + ([MEMORY] if include_memory else [])
    sets = {t: union(k.rank[types == t], k.start[types == t], k.end[types == t]) for t in wanted}
    by_type = _overlaps(sets, wanted)
    dur_us = (k.end - k.start) // 1000
    parts = []
    for r, rank in enumerate(k.ranks):
        for t in wanted:
            m = (k.rank == r) & (types == t)
            if m.any():
                part = _top(fr.name[k.rows[m]], dur_us[m], fr.names, num_kernels, duration_ratio)
                size = len(part["name"])
                parts.append({**part, "kernel_type": np.full(size, t, dtype=object), "rank": np.full(size, rank)})
    cols = ["name", "sum (us)", "max (us)", "min (us)", "stddev", "mean (us)", "count", "kernel_type", "rank"]
    by_name = (pd.DataFrame({c: np.concatenate([part[c] for part in parts]) for c in cols}) if parts
               else pd.DataFrame(columns=cols))
    by_name = by_name.sort_values(["kernel_type", "name", "rank"], ignore_index=True)
    return notes_of(by_type, k.notes), notes_of(by_name, k.notes)


def _overlaps(sets: dict[str, Intervals], order: list[str]) -> pd.DataFrame:
    """Time by which types run: alone, or together ("A overlapping B"), summed over ranks, in microseconds."""
    out = []
    for mask in range(1, 1 << len(order)):
        inside = [t for i, t in enumerate(order) if mask >> i & 1]
        outside = [t for i, t in enumerate(order) if not mask >> i & 1]
        piece = sets[inside[0]]
        for t in inside[1:]:
            piece = piece & sets[t]
        for t in outside:
            piece = piece - sets[t]
        total_ns = int((piece.end - piece.start).sum())
        if total_ns:
            out.append((" overlapping ".join(inside), total_ns // 1000))
    df = pd.DataFrame(out, columns=["kernel_type", "sum"])
    df = df.sort_values("sum", ascending=False, ignore_index=True)
    total = df["sum"].sum()
    df["percentage"] = (100.0 * df["sum"] / total).round(1) if total else 0.0
    return df


def _top(codes: np.ndarray, dur: np.ndarray, names: list[str], num: int, ratio: float) -> dict[str, np.ndarray]:
    """HTA's per-name table of one rank and kernel type: the `num` longest names (up to `ratio` of the
    time), the rest summed as "others"."""
    uniq, inv = np.unique(codes, return_inverse=True)
    count, total, sq, lo, hi = _stats(inv.astype(np.int64), np.asarray(dur, np.int64), uniq.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total / np.maximum(count, 1)
        var = (sq - count * mean * mean) / np.maximum(count - 1, 1)
    std = np.where(count > 1, np.sqrt(np.maximum(var, 0)), 0.0)
    # pandas' descending sort, as HTA sorts: the same order among equal sums.
    order = pd.Series(total).sort_values(ascending=False).index.to_numpy()
    others = np.zeros(order.size, bool)
    if order.size > num:
        cum = np.cumsum(total[order])
        others = (cum > np.quantile(cum, ratio)) | (np.arange(order.size) >= num)
    kept = order[~others]
    out = {"name": np.array([names[c] for c in uniq[kept]], dtype=object), "sum (us)": total[kept],
           "max (us)": hi[kept], "min (us)": lo[kept], "stddev": std[kept], "mean (us)": mean[kept], "count": count[kept]}
    if others.any():
        d = dur[np.isin(inv, order[others])]
        row = {"name": "others", "sum (us)": int(d.sum()), "max (us)": int(d.max()), "min (us)": int(d.min()),
               "stddev": float(d.std(ddof=1)) if d.size > 1 else 0.0, "mean (us)": float(d.mean()), "count": int(d.size)}
        out = {c: np.append(v, np.array([row[c]], dtype=v.dtype)) for c, v in out.items()}
    return out
