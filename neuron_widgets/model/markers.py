"""Marker bits of events on the wire and in exported pages: errors, unfinished events, highlights."""

from __future__ import annotations

import numpy as np

FLAG_ERROR = 1
FLAG_INCOMPLETE = 2
FLAG_HIGHLIGHT = 4
FLAG_MARKER = 8


def flags_of(rows: np.ndarray, marked: dict[str, np.ndarray]) -> np.ndarray:
    """Marker bits (error, incomplete, highlight) of each row, from the widget's marked-row sets."""
    flags = np.zeros(rows.size, dtype=np.uint8)
    for bit, key in ((FLAG_ERROR, "error"), (FLAG_INCOMPLETE, "incomplete"), (FLAG_HIGHLIGHT, "highlight")):
        sel = marked.get(key)
        if sel is not None and sel.size:
            flags[np.isin(rows, sel, assume_unique=False)] |= bit
    return flags
