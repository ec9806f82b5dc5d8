"""Arrays as the compiled kernels take them: one layout, so each kernel has one signature.

numba compiles (or loads from its cache) one version of a kernel per argument type, and whether an
array is writable is part of the type. A column read from Arrow or pandas is read-only; the same
column sorted or concatenated is not. Without one layout, a kernel warmed with one kind met the
other on a user's first drill-down and was loaded there (7-15 ms each, on the click's path).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def read_only(a: Any, dtype: Any) -> np.ndarray:
    """`a` as a contiguous read-only view of `dtype` (a copy only to change its type or layout)."""
    v: np.ndarray = np.ascontiguousarray(a, dtype).view()
    v.flags.writeable = False
    return v
