"""The order of many tracks, by sort keys that differ only in a thread's key, without a Python sort.

A grouping mode gives each combo a label and a sort key (grouping.py). A trace with a million
threads has a million combos, and sorting a million nested tuples in Python takes minutes. But
such combos share a few key "templates": the same tuple except for one top-level element, the
thread's key `(class, value)` (TrackNames.thread_key). So each top-level position becomes one
integer column (the rank of a template's constant there, or of the combo's thread key among all
of them) and one `np.lexsort` orders the combos exactly as `sorted(key=sortable)` would.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class ThreadSlot:
    """Stands in a template's key where each combo's own thread key goes."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<thread key>"


THREAD_SLOT = ThreadSlot()


def sortable(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """A key that always compares: numbers, then nested keys (a process's sort key), then text (None too)."""
    return tuple((0, v, ()) if isinstance(v, int | float) else (1, 0, sortable(v)) if isinstance(v, tuple)
                 else (2, 0, (str(v),)) for v in key)


def _dense(cls: np.ndarray, real: np.ndarray, whole: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense ranks of thread keys (class, then value: a float sort index or an integer id) and their count."""
    order = np.lexsort((whole, real, cls))
    c, r, w = cls[order], real[order], whole[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (c[1:] != c[:-1]) | (r[1:] != r[:-1]) | (w[1:] != w[:-1])
    ranks = np.empty(order.size, dtype=np.int64)
    ranks[order] = np.cumsum(new) - 1
    return ranks, int(new.sum())


def order(keys: list[tuple[Any, ...]], template: np.ndarray, thread_class: np.ndarray, thread_real: np.ndarray,
          thread_int: np.ndarray, labels: np.ndarray) -> np.ndarray | None:
    """Combos in the order of `sorted(range(n), key=lambda i: (sortable(key_i), label_i))`.

    `keys[t]`: template t's key, THREAD_SLOT where the combo's thread key goes (top level only);
    `template`: each combo's template; the thread key of each combo as its class (0: a sort
    index in `thread_real`, 1: an id in `thread_int`, 2: text ids, all equal). None when a template
    holds a nested key where another holds a thread key (the caller then sorts the slow way).
    """
    n = template.size
    width = max((len(k) for k in keys), default=0)
    columns = []
    for j in range(width):
        slots = [t for t, k in enumerate(keys) if len(k) > j and k[j] is THREAD_SLOT]
        consts = {t: sortable((k[j],))[0] for t, k in enumerate(keys) if len(k) > j and k[j] is not THREAD_SLOT}
        if slots and any(s[0] == 1 for s in consts.values()):
            return None
        distinct = sorted(set(consts.values()))
        below = [s for s in distinct if s[0] == 0]  # numbers sort before any thread key (a tuple)
        per_template = np.full(len(keys), -1, dtype=np.int64)  # -1: the key ended (shorter keys first)
        col = np.empty(n, dtype=np.int64)
        taken = 0
        if slots:
            mine = np.isin(template, np.array(slots, dtype=template.dtype))
            ranks, taken = _dense(thread_class[mine], thread_real[mine], thread_int[mine])
            col[mine] = len(below) + ranks
        rank = {s: r if s[0] == 0 else r + taken for r, s in enumerate(distinct)}
        for t, s in consts.items():
            per_template[t] = rank[s]
        if slots:
            col[~mine] = per_template[template[~mine]]
        else:
            col = per_template[template]
        columns.append(col)
    if not columns:
        return np.arange(n)
    got = np.lexsort(columns[::-1])  # stable: equal keys keep the combos' order, as sorted() does
    # Equal keys are ordered by label.
    same = np.ones(max(n - 1, 0), dtype=bool)
    for col in columns:
        s = col[got]
        same &= s[1:] == s[:-1]
    if same.any():
        tied = np.zeros(n, dtype=bool)
        tied[1:] |= same
        tied[:-1] |= same
        rows = got[tied]
        names = sorted(set(labels[rows].tolist()))
        if len(names) > 1:
            rank_of: dict[Any, int] = {name: r for r, name in enumerate(names)}
            label_rank = np.zeros(n, dtype=np.int64)
            label_rank[rows] = [rank_of[v] for v in labels[rows].tolist()]
            got = np.lexsort([label_rank, *columns[::-1]])
    return got
