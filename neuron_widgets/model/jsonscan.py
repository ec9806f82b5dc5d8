"""One top-level value of many small JSON objects, found by a byte scan (numba) instead of a regex pass.

Arrow's regex kernel costs ~0.1 s per million texts per key; the analyses read three keys of
1.3M argument texts on a 10M-event profile. The scan matches `"key"`, optional spaces, `:`,
then reads an integer or a plain string in place. Anything it cannot read exactly (fractions,
exponents, escapes, huge numbers) is flagged, and the caller reads those few rows the slow way.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

MISSING, EXACT, SLOW = 0, 1, 2


@numba.njit(cache=True, nogil=True)
def _find(data: np.ndarray, lo: int, hi: int, key: np.ndarray) -> int:
    """Position just after `"key"<spaces>:<spaces>` in data[lo:hi], or -1."""
    k = key.size
    i = lo
    while i + k + 2 <= hi:
        if data[i] == 34:  # "
            match = True
            for j in range(k):
                if data[i + 1 + j] != key[j]:
                    match = False
                    break
            if match and data[i + 1 + k] == 34:
                p = i + k + 2
                while p < hi and (data[p] == 32 or data[p] == 9 or data[p] == 10 or data[p] == 13):
                    p += 1
                if p < hi and data[p] == 58:  # :
                    p += 1
                    while p < hi and (data[p] == 32 or data[p] == 9 or data[p] == 10 or data[p] == 13):
                        p += 1
                    return p
        i += 1
    return -1


@numba.njit(cache=True, nogil=True)
def _ints(data, offsets, valid, key, out, state):
    for r in range(offsets.size - 1):
        if not valid[r]:
            continue
        lo, hi = offsets[r], offsets[r + 1]
        p = _find(data, lo, hi, key)
        if p < 0:
            continue
        if p < hi and data[p] == 34:  # a quoted number, as the runtime writes some
            p += 1
        neg = False
        if p < hi and data[p] == 45:
            neg = True
            p += 1
        start = p
        v = 0
        while p < hi and 48 <= data[p] <= 57 and p - start < 18:
            v = v * 10 + (data[p] - 48)
            p += 1
        if p == start:
            continue  # not a number (null, a word): missing, as the regex would have it
        if p < hi and (48 <= data[p] <= 57 or data[p] == 46 or data[p] == 101 or data[p] == 69):
            state[r] = 2  # more digits, a fraction or an exponent: read exactly by the caller
            continue
        out[r] = -v if neg else v
        state[r] = 1


@numba.njit(cache=True, nogil=True)
def _strings(data, offsets, valid, key, begin, end, state):
    for r in range(offsets.size - 1):
        if not valid[r]:
            continue
        lo, hi = offsets[r], offsets[r + 1]
        p = _find(data, lo, hi, key)
        if p < 0 or p >= hi or data[p] != 34:
            continue
        p += 1
        s = p
        while p < hi and data[p] != 34 and data[p] != 92:
            p += 1
        if p < hi and data[p] == 34:
            begin[r], end[r], state[r] = s, p, 1
        else:
            state[r] = 2  # an escape inside: decoded by the caller


@numba.njit(cache=True, nogil=True)
def _hashes(data, begin, end, state):
    out = np.zeros(begin.size, np.uint64)
    for r in range(begin.size):
        if state[r] != 1:
            continue
        h = np.uint64(14695981039346656037)
        for j in range(begin[r], end[r]):
            h = (h ^ np.uint64(data[j])) * np.uint64(1099511628211)
        out[r] = h | np.uint64(1)
    return out


def _buffers(texts: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if pa.types.is_string(texts.type) or pa.types.is_binary(texts.type):
        texts = texts.cast(pa.large_binary())
    elif not pa.types.is_large_binary(texts.type):
        texts = texts.cast(pa.large_string()).cast(pa.large_binary())
    else:
        texts = texts.cast(pa.large_binary())
    n = len(texts)
    bufs = texts.buffers()
    offsets = np.frombuffer(bufs[1], np.int64, n + 1, texts.offset * 8)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    valid = texts.is_valid().to_numpy(zero_copy_only=False)
    return data, offsets, valid


def int_values(texts: pa.Array, key: str, missing: int) -> tuple[np.ndarray, np.ndarray]:
    """Per text, the key's integer value (`missing` where absent) and which rows need an exact slow read."""
    data, offsets, valid = _buffers(texts)
    out = np.full(offsets.size - 1, missing, np.int64)
    state = np.zeros(offsets.size - 1, np.int8)
    _ints(data, offsets, valid, np.frombuffer(key.encode(), np.uint8), out, state)
    return out, state == SLOW


def str_values(texts: pa.Array, key: str) -> tuple[np.ndarray, np.ndarray]:
    """Per text, the key's string value as an object array (None where absent), and rows needing a slow read."""
    data, offsets, valid = _buffers(texts)
    n = offsets.size - 1
    begin, end = np.zeros(n, np.int64), np.zeros(n, np.int64)
    state = np.zeros(n, np.int8)
    _strings(data, offsets, valid, np.frombuffer(key.encode(), np.uint8), begin, end, state)
    out = np.full(n, None, object)
    found = np.flatnonzero(state == EXACT)
    if found.size:
        # Values repeat (a few NEFF names over a million executions): decode each distinct one once.
        h = _hashes(data, begin, end, state)[found]
        _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
        words = np.array([bytes(data[begin[found[f]]: end[found[f]]]).decode("utf-8", "replace") for f in first.tolist()],
                         dtype=object)
        out[found] = words[inverse.reshape(-1)]
    return out, state == SLOW
