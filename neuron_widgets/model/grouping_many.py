"""Grouping a trace with very many combos (a million threads): labels and order per key template.

Combos that differ only in their thread share everything a grouping mode looks at but the
thread's name and sort key. So the mode's `combo_label` (grouping_labels.py) runs once per template (the combo without
its thread id: a few hundred at most), with markers where the thread's name or id go and
THREAD_SLOT where its key goes; each combo's label is its template's with the markers filled
in, and the order comes from track_order. Equal, label for label and row for row, to
`grouping.tracks_by_rows` (tests/test_grouping_many.py compares them on random combos).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .grouping_labels import COMBO_COLUMNS, combo_label, mixed_sources
from .track_names import TrackNames
from .track_order import THREAD_SLOT, order

NAME_MARK = "\x00thread name\x00"
TID_MARK = "\x00thread id\x00"
NO_ID = -(2**62)  # TrackNames' key for a thread id that is no integer


def _template_codes(combos: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per combo its template (every grouping column but the thread id), and the first combo of each."""
    key = np.zeros(len(combos), dtype=np.int64)
    for name in [c for c in combos.columns if c != "thread_id"]:
        codes, uniques = pd.factorize(combos[name].to_numpy(dtype=object), use_na_sentinel=False)
        key = pd.factorize(key * (len(uniques) + 1) + codes)[0].astype(np.int64)  # renumbered: never overflows
    first = np.unique(key, return_index=True)[1]  # key codes are numbered by first appearance: first is sorted
    return key, first


def _ints(values: np.ndarray) -> np.ndarray | None:
    """TrackNames' integer ids (NO_ID for None), or None when some id is not an integer."""
    missing = pd.isna(values)
    present = values[~missing]
    if present.size and pd.api.types.infer_dtype(present, skipna=False) != "integer":
        return None  # floats, text, booleans: TrackNames converts those one by one
    out = np.full(values.size, NO_ID, dtype=np.int64)
    try:
        out[~missing] = present.astype(np.int64)
    except OverflowError:
        return None
    return out


def _thread_columns(combos: pd.DataFrame, names: TrackNames) -> tuple[np.ndarray | None, np.ndarray,
                                                                    np.ndarray, np.ndarray] | None:
    """Each combo's thread name (None: unnamed; no names at all: None) and thread key (class, real, int),
    as TrackNames.thread_label and thread_key give them (a dict look-up per combo: ~1.5 s for 10^6)."""
    pid, tid = _ints(combos["process_id"].to_numpy(dtype=object)), _ints(combos["thread_id"].to_numpy(dtype=object))
    if pid is None or tid is None:
        return None
    n = len(combos)
    cls = np.ones(n, dtype=np.int8)
    real = np.zeros(n, dtype=np.float64)
    whole = tid.copy()
    named: np.ndarray | None = None
    if not (names.thread or names.tid_texts or names.thread_sort or names.text_tids):
        return named, cls, real, whole
    insts = [str(v) for v in combos["instance_id"].tolist()]
    keys = list(zip(insts, pid.tolist(), tid.tolist(), strict=True))
    texts = [(k[0], k[2]) for k in keys]
    if names.thread or names.tid_texts:
        thread, tid_texts = names.thread, names.tid_texts
        named = np.fromiter((thread.get(k) or tid_texts.get(t) or None for k, t in zip(keys, texts, strict=True)),
                            dtype=object, count=n)
    if names.text_tids or names.tid_texts:
        text = np.fromiter((k in names.text_tids or t in names.tid_texts for k, t in zip(keys, texts, strict=True)),
                           dtype=bool, count=n)
        cls[text], whole[text] = 2, 0
    if names.thread_sort:
        sort = np.fromiter((names.thread_sort.get(k, np.nan) for k in keys), dtype=np.float64, count=n)
        has = np.fromiter((k in names.thread_sort for k in keys), dtype=bool, count=n)
        cls[has], real[has], whole[has] = 0, sort[has], 0
    return named, cls, real, whole


@dataclass
class _Prepared:
    """What every grouping mode of one combos table shares (computed once per table)."""

    cols: dict[str, np.ndarray]
    template: np.ndarray
    first: np.ndarray
    neuron: bool
    threads: tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray] | None


_prepared: dict[int, tuple[weakref.ref[Any], TrackNames, _Prepared]] = {}
_prepared_lock = threading.Lock()


def _prepare(combos: pd.DataFrame, names: TrackNames) -> _Prepared:
    with _prepared_lock:
        got = _prepared.get(id(combos))
        if got is not None and got[0]() is combos and got[1] is names:
            return got[2]
    cols = {c: combos[c].to_numpy(dtype=object) for c in combos.columns}
    template, first = _template_codes(combos)
    neuron = any(s in ("neuron_rt", "neuron_hw") for s in pd.unique(cols["trace_event_source"]).tolist())
    prepared = _Prepared(cols, template, first, neuron, _thread_columns(combos, names))
    with _prepared_lock:
        for key in [k for k, (ref, _, _) in _prepared.items() if ref() is None]:
            del _prepared[key]
        _prepared[id(combos)] = (weakref.ref(combos), names, prepared)
    return prepared


def _templates(prepared: _Prepared, mode: str, names: TrackNames) -> tuple[list[tuple[Any, ...]], list[Any]] | None:
    """Each template's key (THREAD_SLOT for the thread's) and label form; None where keys do not allow it."""
    cols, neuron = prepared.cols, prepared.neuron
    keys: list[tuple[Any, ...]] = []
    forms: list[tuple[str, str, str, str] | str] = []  # (name before, after, id before, after) or the label
    for i in prepared.first.tolist():
        row = {c: v[i] for c, v in cols.items()}
        row["thread_id"] = TID_MARK
        label, key = combo_label(row, mode, names, neuron, (NAME_MARK, THREAD_SLOT))
        bare, bare_key = combo_label(row, mode, names, neuron, (None, THREAD_SLOT))
        if key != bare_key or not _flat_slot(key) or TID_MARK in label or label.count(NAME_MARK) > 1 \
                or bare.count(TID_MARK) > 1 or (NAME_MARK in label) != (TID_MARK in bare):
            return None
        if NAME_MARK not in label and label != bare:
            return None
        keys.append(key)
        forms.append((*label.split(NAME_MARK), *bare.split(TID_MARK)) if NAME_MARK in label else label)  # type: ignore[arg-type]
    return keys, forms


def tracks_at_least(combos: pd.DataFrame, mode: str, names: TrackNames) -> int:
    """A lower bound on the tracks of a mode, without labelling every combo: within a template that
    shows the thread, each unnamed thread is a track of its own (its id is in the label)."""
    if not set(COMBO_COLUMNS) <= set(combos.columns) or not len(combos):
        return min(len(combos), 1)
    prepared = _prepare(combos, names)
    got = _templates(prepared, mode, names)
    if got is None or prepared.threads is None:
        return 1
    named = prepared.threads[0]
    unnamed = np.ones(len(combos), bool) if named is None else np.array([not v for v in named], bool)
    shows = np.array([not isinstance(f, str) for f in got[1]], bool)
    per_template = np.bincount(prepared.template[unnamed & shows[prepared.template]], minlength=len(shows))
    return max(int(per_template.max()) if per_template.size else 0, 1)


def tracks_by_templates(combos: pd.DataFrame, mode: str, names: TrackNames) -> tuple[np.ndarray, pd.DataFrame] | None:
    """`grouping.tracks_by_rows`, computed per template; None where the keys do not allow it."""
    if not set(COMBO_COLUMNS) <= set(combos.columns):
        return None
    prepared = _prepare(combos, names)
    got_templates = _templates(prepared, mode, names)
    if got_templates is None or prepared.threads is None:
        return None
    keys, forms = got_templates
    cols, template = prepared.cols, prepared.template
    named, cls, real, whole = prepared.threads
    labels = _labels(template, cols["thread_id"], named, forms)
    got = order(keys, template, cls, real, whole, labels)
    if got is None:
        return None
    codes, uniques = pd.factorize(labels[got])  # tracks numbered in order of first appearance
    combo_track = np.empty(len(combos), dtype=np.int32)
    combo_track[got] = codes
    firsts = got[np.unique(codes, return_index=True)[1]]
    tracks = pd.DataFrame({"label": uniques.tolist() if isinstance(uniques, np.ndarray) else list(uniques),
                           "instance_id": cols["instance_id"][firsts].tolist(),
                           "process_id": cols["process_id"][firsts].tolist() if mode != "instance"
                           else [None] * len(firsts),
                           "trace_event_source": cols["trace_event_source"][firsts].tolist()},
                          columns=["label", "instance_id", "process_id", "trace_event_source"])
    return combo_track, mixed_sources(tracks, combo_track, combos["trace_event_source"])


def _flat_slot(key: Any, top: bool = True) -> bool:
    """The thread key only at the key's top level, and no thread id in it."""
    for v in key:
        if isinstance(v, tuple):
            if not _flat_slot(v, top=False):
                return False
        elif (v is THREAD_SLOT and not top) or (isinstance(v, str) and v == TID_MARK):
            return False
    return True


def _labels(template: np.ndarray, tids: np.ndarray, named: np.ndarray | None,
            forms: list[tuple[str, str, str, str] | str]) -> np.ndarray:
    """Each combo's label: its template's, with the thread's name (or, unnamed, its id) filled in."""
    labels = np.empty(template.size, dtype=object)
    by_template = np.argsort(template, kind="stable")
    bounds = np.searchsorted(template[by_template], np.arange(len(forms) + 1))
    for t, form in enumerate(forms):
        rows = by_template[bounds[t]:bounds[t + 1]]
        if isinstance(form, str):  # the label does not show the thread
            labels[rows] = form
            continue
        npre, npost, pre, post = form
        ids = tids[rows].tolist()
        if named is None:
            labels[rows] = [f"{pre}{i}{post}" for i in ids]
        else:
            labels[rows] = [f"{npre}{name}{npost}" if name else f"{pre}{i}{post}"
                            for name, i in zip(named[rows].tolist(), ids, strict=True)]
    return labels
