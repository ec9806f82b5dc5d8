"""Per step and per device straggler results from arrivals read in chunks: a profile's table, or a job's parts.

A job has a row per core and step (millions): the rows are never put in one table. Each pass
reads the chunks again (a part's arrays, mapped to job codes by array look-ups) and keeps only
step- or device-sized sums; the one row-sized result, each device's lag at each step, is written
into arrays made once at its final size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple, TypeAlias

import numpy as np
import pandas as pd

_MAX, _MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min


class Chunk(NamedTuple):
    """Arrivals as int64 arrays: step and device codes, arrival, barrier length, event id (-1: none)."""

    step: np.ndarray
    dev: np.ndarray
    arrive: np.ndarray
    length: np.ndarray
    id: np.ndarray


Chunks = Callable[[], Iterable[Chunk]]  # called once per pass
# How a row-sized column of a small frame is made: from a text column's categories, by row numbers into
# another pandas type's own array, or (None) from a NumPy column as it is.
Made: TypeAlias = pd.CategoricalDtype | pd.api.extensions.ExtensionArray | None


def bounds(chunks: Chunks, n_steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per step code: its arrivals, the first and the last arrival."""
    count = np.zeros(n_steps, np.int64)
    first, last = np.full(n_steps, _MAX), np.full(n_steps, _MIN)
    for c in chunks():
        count += np.bincount(c.step, minlength=n_steps)
        np.minimum.at(first, c.step, c.arrive)
        np.maximum.at(last, c.step, c.arrive)
    return count, first, last


def results(chunks: Chunks, n_steps: int, labels: pd.DataFrame, keys: pd.DataFrame, lag_rows: bool = False,
            known: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
            ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    """Per step with two or more arrivals: the first arrival, the last device, its lag and the others'
    mean wait; per device: how often it was last, its lags, the wait it caused; and with `lag_rows`,
    a row per device and step (its keys and the step's labels as categories, start_ts, lag_ns, id)
    in the chunks' row order. `labels` is indexed by step code, `keys` by device code; `known`: the
    chunks' `bounds` when the caller has them."""
    count, first, latest = known if known is not None else bounds(chunks, n_steps)
    kept_step = count > 1
    lag_frame = _lag_frame(chunks, kept_step, first, labels, keys) if lag_rows else None
    if not kept_step.any():
        return _empty_steps(keys, labels), _empty_cores(keys), lag_frame
    # The last to arrive; ties go to the shortest barrier (it waited least), then the lowest device.
    tied = [(c.step[m], c.dev[m], c.length[m], c.id[m])
            for c in chunks() for m in [kept_step[c.step] & (c.arrive == latest[c.step])]]
    t_step, t_dev, t_len, t_id = (np.concatenate([t[i] for t in tied]) for i in range(4))
    order = np.lexsort((t_dev, t_len, t_step))
    head = order[np.r_[True, t_step[order][1:] != t_step[order][:-1]]]
    kept = t_step[head]  # every kept step, in step order
    last_dev = np.full(n_steps, -1, np.int64)
    last_dev[kept] = t_dev[head]
    n_dev = len(keys)
    n, lag_sum, lag_max, times_last = (np.zeros(n_dev, np.int64), np.zeros(n_dev, np.int64),
                                       np.full(n_dev, _MIN), np.zeros(n_dev, np.int64))
    wait_sum, n_others = np.zeros(n_steps, np.int64), np.zeros(n_steps, np.int64)
    for c in chunks():
        m = kept_step[c.step]
        step, dev, arrive = c.step[m], c.dev[m], c.arrive[m]
        lag = arrive - first[step]
        n += np.bincount(dev, minlength=n_dev)
        lag_sum += int_sum(dev, lag, n_dev)
        np.maximum.at(lag_max, dev, lag)
        is_last = dev == last_dev[step]
        times_last += np.bincount(dev[is_last], minlength=n_dev)
        others = step[~is_last]
        wait_sum += int_sum(others, latest[others] - arrive[~is_last], n_steps)
        n_others += np.bincount(others, minlength=n_steps)
    n_o, w = n_others[kept], wait_sum[kept].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_wait = np.where(n_o > 0, w / np.maximum(n_o, 1), 0.0)
    lab = labels.loc[kept].reset_index(drop=True)
    per_step = pd.DataFrame({"start_ts": first[kept], "lag_ns": latest[kept] - first[kept], "mean_wait_ns": mean_wait,
                             "devices": count[kept], "id": t_id[head]})
    per_step = pd.concat([keys.iloc[last_dev[kept]].reset_index(drop=True), lab, per_step], axis=1)
    per_step = per_step.sort_values(["start_ts", *labels.columns], ignore_index=True)
    caused = pd.Series(mean_wait).groupby(last_dev[kept]).sum()
    devs = np.flatnonzero(n)
    cores = pd.DataFrame({"times_last": times_last[devs], "mean_lag_ns": lag_sum[devs] / n[devs],
                          "max_lag_ns": lag_max[devs], "steps": n[devs]}, index=devs)
    cores["wait_caused_ns"] = caused.reindex(cores.index).fillna(0).round().astype(np.int64)
    cores = pd.concat([keys.iloc[devs].reset_index(drop=True), cores.reset_index(drop=True)], axis=1)
    cores = cores.sort_values(["times_last", "mean_lag_ns", "wait_caused_ns"], ascending=False, kind="stable",
                              ignore_index=True)
    return per_step, cores, lag_frame


def int_sum(code: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per code, the exact int64 sum of its values: by bincount in floats when no partial sum can reach
    2**53 (every one is then an integer a float holds exactly), else by np.add.at."""
    if values.size and int(np.abs(values).max()) * values.size >= 2**53:
        out = np.zeros(n, np.int64)
        np.add.at(out, code, values)
        return out
    return np.bincount(code, weights=values, minlength=n).astype(np.int64)


def _lag_frame(chunks: Chunks, kept_step: np.ndarray, first: np.ndarray, labels: pd.DataFrame,
               keys: pd.DataFrame) -> pd.DataFrame:
    """A row per arrival at a step with two or more: the device's keys and the step's labels (text as
    categories, sorted: they order as the text does), start_ts, lag_ns, id. Columns are filled a chunk
    at a time and put in the frame as they are (no copy into one block)."""
    total = sum(int(kept_step[c.step].sum()) for c in chunks())
    by_dev, by_step = _column_sources(keys), _column_sources(labels)
    cols = {name: np.empty(total, np.int64 if values is None else values.dtype) for name, values, _ in (*by_dev, *by_step)}
    start, lag, ids = np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total, np.int64)
    at = 0
    for c in chunks():
        m = kept_step[c.step]
        dev, step = c.dev[m], c.step[m]
        end = at + dev.size
        for sources, codes in ((by_dev, dev), (by_step, step)):
            for name, values, _ in sources:
                cols[name][at:end] = codes if values is None else values[codes]
        start[at:end] = first[step]
        lag[at:end] = c.arrive[m] - start[at:end]
        ids[at:end] = c.id[m]
        at = end
    out: dict[str, object] = {}
    for name, values, kind in (*by_dev, *by_step):
        if isinstance(kind, pd.CategoricalDtype):
            out[name] = pd.Categorical.from_codes(cols[name], dtype=kind)
        elif values is None and kind is not None:  # another pandas type (nullable integers): taken by its own array
            out[name] = kind.take(cols[name])
        else:
            out[name] = cols[name]
    return pd.DataFrame({**out, "start_ts": start, "lag_ns": lag, "id": ids}, copy=False)


def _column_sources(df: pd.DataFrame) -> list[tuple[str, np.ndarray | None, Made]]:
    """Each column of a small frame as (name, the NumPy array a row-sized column is taken from, how it is
    made): text as the codes of its categories (sorted: they order as the text does), NumPy numbers as
    they are, other pandas types by row numbers into their own array."""
    out: list[tuple[str, np.ndarray | None, Made]] = []
    for c in df.columns:
        s = df[c]
        if not pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            s = s.astype("category")
            out.append((c, np.asarray(s.cat.codes), s.dtype))
        elif isinstance(s.dtype, np.dtype):
            out.append((c, s.to_numpy(), None))
        else:
            out.append((c, None, s.array))
    return out


def _empty_steps(keys: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(columns=[*keys.columns, *labels.columns, "start_ts", "lag_ns", "mean_wait_ns", "devices", "id"])


def _empty_cores(keys: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(columns=[*keys.columns, "times_last", "mean_lag_ns", "max_lag_ns", "steps", "wait_caused_ns"])
