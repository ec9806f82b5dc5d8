"""What a Chrome trace's events come to before the table is built, by either road to it.

The msgspec road (an object per event, events.py) and the byte-scan road (fast.py) both end here, and
one assembly turns it into the table, so the two agree by construction past this point.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ...errors import LoadWarnings
from ...model.lazy import LazyColumns
from ..columns import TS_LIMIT
from .events import h

_US_LIMIT = TS_LIMIT / 1000  # microseconds past which a time leaves the range a Profile holds (columns.TS_LIMIT)


@dataclass
class Gathered:
    """Per event (slices, instants, then begin/end pairs) and per flow point (s, t, f)."""

    start: np.ndarray  # ns from the trace's own zero (the base is added on assembly)
    ok_ts: np.ndarray  # a usable ts (other events are dropped)
    dur: np.ndarray  # ns, as read
    ok_dur: np.ndarray
    incomplete: np.ndarray
    is_async: np.ndarray
    stream: pa.Array  # framework_stream_id: async slices get rows of their own
    names: pa.DictionaryArray
    cats: pa.DictionaryArray
    pid: np.ndarray  # events, then flow points: one numbering of text ids for both
    tid: np.ndarray
    nc: pa.Array
    lazy: Callable[[pa.Array], LazyColumns]  # the arguments, given the flow ids
    point_ts: np.ndarray  # ns from the trace's zero
    point_ok: np.ndarray
    enclosing: np.ndarray  # binds to the slice around it (s, t, f with bp "e") or the next one
    flow_ids: np.ndarray  # int64, or object strings


def microseconds_to_ns(arr: np.ndarray, exact: np.ndarray | None, warnings: LoadWarnings, origin: str,
                       what: str) -> tuple[np.ndarray, np.ndarray]:
    """Microseconds (float64 `arr`, NaN where unusable; `exact` int64 when every value was an integer)
    as int64 ns, and which are usable (the rest are counted in the warnings)."""
    ok = np.isfinite(arr) & (np.abs(arr) < _US_LIMIT)
    bad = int((~ok).sum())
    if bad:
        warnings.add(f"{origin}: events whose {what} is missing, not a number or out of range, dropped", bad)
    if exact is not None and ok.all():
        return exact * 1000, ok
    safe = np.where(ok, arr, 0.0)
    # Split whole microseconds from the fraction so the product keeps float64's precision.
    whole = np.floor(safe)
    return whole.astype(np.int64) * 1000 + np.rint((safe - whole) * 1000).astype(np.int64), ok


def text_id(v: Any, names: dict[int, str], kind: str) -> int:
    """A pid/tid that is not a 64-bit integer: its number if it is one written as text, else a
    negative code that keeps its text in `names` (the same text, the same code)."""
    code = _id_from_text(v)
    if code is not None:
        return code
    text = str(h(v)) if v is not None else f"(no {kind})"
    code = next((c for c, t in names.items() if t == text), -1 - len(names))
    names[code] = text
    return code


def _id_from_text(v: Any) -> int | None:
    if isinstance(v, str) and re.fullmatch(r"-?[0-9]+", v.strip()):  # not "²", which isdigit() accepts
        n = int(v.strip())
        return n if -(2**63) <= n < 2**63 else None
    return None
