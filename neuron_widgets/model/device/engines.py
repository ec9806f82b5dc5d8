"""An engine's active time, its semaphore waits and its busy time: the one definition every device view uses.

An engine is the track its instructions are drawn on (`timeline_track`, else the engine name as
the tracks spell it). Over the instructions of one engine (of one hierarchy node, for the tree):
- busy time: the length of the union of its instructions' intervals, waits included (what its
  track in the timeline shows covered);
- active time: the length of the union of its instructions that are not semaphore waits (it
  computes or moves data);
- waits: busy time minus active time (it sits in a semaphore-wait instruction and runs nothing
  else).
So active + waits = busy <= the execution's span. The viewer's strip, the Summary, the
hierarchy's busiest engine, `engine_time`, `semaphore_waits` and `device_bound` all read these.
The profile's own ActiveTime table (`trace.active_time`) is kept as read, and used for none of
them: its rows are not per instruction, so no node of the hierarchy could agree with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..interval_union import busy_ns as busy_ns  # device/strip.py and the analyses import it from here
from ..interval_union import grouped_busy as grouped_busy
from .codes import combine, encode, engine_key, engine_tracks

if TYPE_CHECKING:
    from .trace import DeviceTrace

# Instructions in which an engine sits waiting on a semaphore (the ISA's wait-on-event instructions).
SEMAPHORE_WAIT = r"SEMAPHORE|SEM_WAIT|WAIT_EVENT"
COLUMNS = ["engine", "instructions", "waits", "active_ns", "wait_ns", "busy_ns"]


def engine_codes(ins: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Each instruction's engine: the track it is drawn on (its timeline track, else its engine as tracks spell it)."""
    key = engine_tracks(ins, ins)
    if key is None:
        return np.zeros(len(ins), dtype=np.int32), ["engine"]
    codes, names = encode(key)
    return codes, [n or "engine" for n in names]


def waiting(ins: pd.DataFrame) -> np.ndarray:
    """Which instructions are semaphore waits (the pattern tried once per opcode, not per row)."""
    if "opcode" not in ins or ins.empty:
        return np.zeros(len(ins), dtype=bool)
    codes, names = encode(ins["opcode"])
    hit = pd.Series(names, dtype=object).str.contains(SEMAPHORE_WAIT, case=False, regex=True).to_numpy(bool)
    return hit[codes]


def engine_times(trace: DeviceTrace) -> pd.DataFrame:
    """Per engine (the viewer's engine order): instructions, waits (how many are semaphore waits),
    active_ns, wait_ns and busy_ns as this module defines them. Kept with the trace."""
    cached = trace.__dict__.get("_engine_times")
    if cached is None:
        cached = trace.__dict__["_engine_times"] = _engine_times(trace.instructions)
    return cached.copy()


def _engine_times(ins: pd.DataFrame) -> pd.DataFrame:
    if ins.empty or not {"start_ts", "end_ts"} <= set(ins.columns):
        return pd.DataFrame({c: pd.Series(dtype=object if c == "engine" else "int64") for c in COLUMNS})
    codes, engines = engine_codes(ins)
    wait = waiting(ins)
    start, end = ins["start_ts"].to_numpy(np.int64), ins["end_ts"].to_numpy(np.int64)
    n = len(engines)
    busy = grouped_busy(codes.astype(np.int64), start, end, n)
    active = grouped_busy(np.where(wait, -1, codes).astype(np.int64), start, end, n)
    out = pd.DataFrame({"engine": engines, "instructions": np.bincount(codes, minlength=n).astype(np.int64),
                        "waits": np.bincount(codes[wait], minlength=n).astype(np.int64),
                        "active_ns": active, "wait_ns": busy - active, "busy_ns": busy})
    out = out[out["instructions"] > 0]
    order = sorted(range(len(out)), key=lambda i: engine_key(str(out["engine"].iat[i])))
    return out.iloc[order].reset_index(drop=True)


def engine_row(times: pd.DataFrame, engine: str) -> dict[str, Any] | None:
    """One engine's numbers from `engine_times`, or None where it ran nothing."""
    hit = times[times["engine"] == engine]
    return None if hit.empty else hit.iloc[0].to_dict()


# What a DMA row's memory fields say when the profile could not tell: left out of its direction.
UNKNOWN_PLACES = frozenset({"", "unknown", "none", "null", "nan", "n/a"})


def _places(v: Any) -> str:
    """A DMA row's `source` or `dest` (text, or lists nested as neuron-profile writes them) as `A+B`."""
    out: list[str] = []
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, list | tuple | np.ndarray):
            stack.extend(reversed(list(x)))
        elif x is not None and not (isinstance(x, float) and x != x):
            text = str(x).strip()
            if text.lower() not in UNKNOWN_PLACES and text not in out:
                out.append(text)
    return "+".join(out)


def dma_directions(dma: pd.DataFrame) -> pd.Series:
    """Where each transfer goes: `source → dest` where either side is known (`?` for the other), else its
    queue type (input, output, data...), else ""."""
    kind = pd.Series("", index=dma.index, dtype=object)
    if "queue_type" in dma:
        codes, texts = encode(dma["queue_type"])
        known = np.array([t if t.strip().lower() not in UNKNOWN_PLACES else "" for t in texts] or [""], dtype=object)
        kind = pd.Series(known[codes], index=dma.index, dtype=object)
    if "source" not in dma and "dest" not in dma:
        return kind
    memo: dict[str, str] = {}

    def place(v: Any) -> str:
        key = repr(v)  # lists are not hashable; their text is, and a few distinct ones repeat millions of times
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = _places(v)
        return hit

    src = dma["source"] if "source" in dma else pd.Series(None, index=dma.index, dtype=object)
    dst = dma["dest"] if "dest" in dma else pd.Series(None, index=dma.index, dtype=object)
    pairs = [(place(s), place(d)) for s, d in zip(src, dst, strict=True)]
    return pd.Series([f"{s or '?'} → {d or '?'}" if s or d else k for (s, d), k in zip(pairs, kind, strict=True)],
                     index=dma.index, dtype=object)


def dma_queues(dma: pd.DataFrame) -> pd.Series:
    """Each DMA row's queue (a categorical): its name (`queue_name`, the JSON's `subgroup`), else
    `queue <idx> E<engine>` from its queue and DMA engine numbers, else "queue". Decided per distinct
    value, not per row."""
    def known(col: str) -> pd.Series | None:
        return dma[col] if col in dma and dma[col].notna().any() else None

    n = len(dma)
    name = known("queue_name")
    if name is not None:
        codes, texts = encode(name)
        blank = np.array([not t.strip() for t in texts] or [True])
    else:
        codes, texts, blank = np.zeros(n, np.int32), [""], np.array([True])
    if blank[codes].any():  # some rows have no name: their numbers stand in
        idx, eng = known("queue_idx"), known("engine_idx")
        a = encode(idx) if idx is not None else (np.zeros(n, np.int32), [""])
        b = encode(eng) if eng is not None else (np.zeros(n, np.int32), [""])
        nums, labels = combine(a, b, lambda q, e: " ".join(x for x in (f"queue {q}" if q else "",
                                                                           f"E{e}" if e else "") if x) or "queue")
        codes = np.where(blank[codes], len(texts) + nums, codes)
        texts = [*texts, *labels]
    # One category per text (a name may read like a number-made label).
    cats = list(dict.fromkeys(t for k, t in enumerate(texts) if k >= len(blank) or not blank[k]))
    pos = np.array([cats.index(t) if t in cats else -1 for t in texts] or [0], dtype=np.int32)
    return pd.Series(pd.Categorical.from_codes(pos[codes], categories=cats), index=dma.index, name="queue")


def transfer_bytes(dma: pd.DataFrame) -> np.ndarray:
    """Each DMA row's bytes moved (`transfer_bytes`) as float64: 0 where it is no finite, non-negative number."""
    if "transfer_bytes" not in dma:
        return np.zeros(len(dma))
    moved = pd.to_numeric(dma["transfer_bytes"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    return np.where(np.isfinite(moved) & (moved >= 0), np.minimum(moved, 2.0**62), 0.0)
