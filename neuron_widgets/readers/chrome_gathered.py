"""What a Chrome trace's events come to before the table is built, by either road to it.

The msgspec road (an object per event) and the byte-scan road (chrome_fast) both end here, and
one assembly turns it into the table, so the two agree by construction past this point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..model.lazy import LazyColumns


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
