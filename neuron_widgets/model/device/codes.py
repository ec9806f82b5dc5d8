"""The device tables' shared codes: engine names and order, table labels, and text columns as small integer codes
(through Arrow, no Python string per row) that the events, engine times, hierarchy and colours all build on."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from .trace import DeviceTrace

# Neuron Explorer's engine order; engines it does not know come after, by name.
ENGINE_ORDER = ("Tensor", "TensorMatrix", "Vector", "Scalar", "GpSimd", "Pool", "Act", "Sync")
TABLES = ("instructions", "dma", "cc_ops", "semaphores")
TABLE_LABELS = {"instructions": "Engines", "dma": "DMA", "cc_ops": "CC ops", "semaphores": "Semaphores"}


def engine_labels(trace: DeviceTrace | pd.DataFrame) -> dict[str, str]:
    """Each engine name a table may use (ActiveTime's `gpsimd`) -> the label its track shows (`GpSimd`).

    The instructions pair both where they carry both; an engine on several tracks (`tensor` on
    Tensor and TensorMatrix) takes the one of its own name; the rest read as ENGINE_ORDER spells them.
    """
    labels = {e.lower(): e for e in ENGINE_ORDER}
    ins = trace if isinstance(trace, pd.DataFrame) else trace.instructions
    if not ins.empty and {"engine", "timeline_track"} <= set(ins.columns):
        pairs = ins[["engine", "timeline_track"]].dropna().drop_duplicates()
        for engine, tracks in pairs.groupby("engine", sort=False)["timeline_track"]:
            names = [str(t) for t in tracks]
            own = [t for t in names if t.lower() == str(engine).lower()]
            labels[str(engine).lower()] = own[0] if own else names[0] if len(names) == 1 else \
                labels.get(str(engine).lower(), str(engine))
    return labels


def engine_tracks(df: pd.DataFrame, trace: DeviceTrace | pd.DataFrame) -> pd.Series | pa.Array | None:
    """Each row's engine track: its `timeline_track`, else its engine as the tracks spell it (GpSimd).

    `trace` (or its instructions) says how the tracks spell each engine."""
    track = first_column(df, "timeline_track")
    if "engine" not in df or (track is not None and not track.isna().any()):
        return track
    labels = engine_labels(trace)
    # A dict over the few distinct names: no Python call per row of a million-instruction table.
    spelled = {e: labels.get(e.lower(), e) for e in pd.unique(df["engine"]) if isinstance(e, str)}
    named = df["engine"].map(spelled)
    return named if track is None else coalesce(track, named)


def natural(text: str) -> tuple[Any, ...]:
    """Sort key that puts "E2" before "E12"."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def engine_key(label: str) -> tuple[Any, ...]:
    short = label.rsplit("/", 1)[-1]
    return (ENGINE_ORDER.index(short) if short in ENGINE_ORDER else len(ENGINE_ORDER), natural(short))


def encode(values: Any) -> tuple[np.ndarray, list[str]]:
    """Codes and their texts for a column, through Arrow (no Python string per row)."""
    try:
        arr = values if isinstance(values, pa.Array | pa.ChunkedArray) else pa.array(values, from_pandas=True)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if pa.types.is_dictionary(arr.type):
            return dictionary_codes(arr)
        if not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
            arr = arr.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        # Values of mixed kinds (a JSON field holding numbers, text and lists): their text, one by one.
        arr = pa.array([None if missing(v) else str(v) for v in values], pa.string())
    enc = pc.dictionary_encode(arr, null_encoding="encode")
    texts = ["" if v is None else str(v) for v in enc.dictionary.to_pylist()]
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int32), texts


def dictionary_codes(arr: pa.DictionaryArray) -> tuple[np.ndarray, list[str]]:
    """A column already coded (a categorical, a dictionary read from Parquet): its codes, unused texts dropped."""
    texts = ["" if v is None else str(v) for v in arr.dictionary.to_pylist()]
    indices = arr.indices
    if indices.null_count:
        indices = pc.fill_null(indices, len(texts))
        texts.append("")
    codes = indices.to_numpy(zero_copy_only=False).astype(np.int32)
    used = np.bincount(codes, minlength=len(texts)) > 0
    if not used.all():
        keep = np.flatnonzero(used)
        remap = np.zeros(len(texts), np.int32)
        remap[keep] = np.arange(keep.size, dtype=np.int32)
        codes, texts = remap[codes], [texts[k] for k in keep]
    return codes, texts


def coalesce(first: pd.Series, then: pd.Series) -> pa.Array:
    """`first`, with `then` where `first` is missing, as Arrow text (categoricals of different categories too)."""
    def text(s: pd.Series) -> pa.Array:
        a = pa.array(s, from_pandas=True)
        return a.cast(pa.string()) if not pa.types.is_string(a.type) else a
    return pc.coalesce(text(first), text(then))


def combine(a: tuple[np.ndarray, list[str]], b: tuple[np.ndarray, list[str]],
             join: Callable[[str, str], str]) -> tuple[np.ndarray, list[str]]:
    """Codes of the pairs (a, b), with texts join(a_text, b_text): the labels are built per pair, not per row."""
    key = a[0].astype(np.int64) * max(len(b[1]), 1) + b[0]
    uniq, codes = np.unique(key, return_inverse=True)
    texts = [join(a[1][k // max(len(b[1]), 1)], b[1][k % max(len(b[1]), 1)]) for k in uniq.tolist()]
    return codes.astype(np.int32), texts


def first_column(df: pd.DataFrame, *names: str) -> pd.Series | None:
    for n in names:
        if n in df and not df[n].isna().all():
            return df[n]
    return None


def missing(v: Any) -> bool:
    if v is None or isinstance(v, str | int | bool):
        return v is None
    if isinstance(v, float):
        return v != v
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False
