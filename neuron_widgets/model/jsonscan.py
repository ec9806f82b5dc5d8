"""One top-level value of many small JSON objects, found by a byte scan (numba) instead of a regex pass.

Arrow's regex kernel costs ~0.1 s per million texts per key; the analyses read three keys of
1.3M argument texts on a 10M-event profile. The scan matches `"key"`, optional spaces, `:`,
then reads an integer or a plain string in place. Anything it cannot read exactly (fractions,
exponents, escapes, huge numbers) is flagged, and the caller reads those few rows the slow way.
"""

from __future__ import annotations

import numba
import numpy as np
import pandas as pd
import pyarrow as pa

from .halves import in_halves

MISSING, EXACT, SLOW = 0, 1, 2


# Byte classes for the search: 1 a quote, 2 a bracket ({ } [ ]), 0 anything else.
_CLASS = np.zeros(256, np.uint8)
_CLASS[34] = 1
_CLASS[[123, 125, 91, 93]] = 2


@numba.njit(cache=True, nogil=True)
def _match(data: np.ndarray, lo: int, hi: int, key: np.ndarray) -> tuple[int, int, int]:
    """The first `"key"<spaces>:<spaces>` in data[lo:hi] at any depth: (its start, the position after
    it, how many brackets came before it), or -1s.

    An unescaped quote cannot sit inside a JSON string, so a match is always a real key.
    """
    k = key.size
    i = lo
    brackets = 0
    while i + k + 2 <= hi:
        cls = _CLASS[data[i]]
        if cls == 1:  # "
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
                    return i, p, brackets
        elif cls == 2:
            brackets += 1
        i += 1
    return -1, -1, brackets


@numba.njit(cache=True, nogil=True)
def _depth(data: np.ndarray, lo: int, at: int) -> int:
    """How deep position `at` is nested (1: a key of the top-level object), strings skipped whole."""
    depth = 0
    i = lo
    while i < at:
        c = data[i]
        if c == 34:
            i += 1
            while i < at and data[i] != 34:
                if data[i] == 92:  # a backslash escapes the next byte
                    i += 1
                i += 1
        elif c == 123 or c == 91:  # { [
            depth += 1
        elif c == 125 or c == 93:  # } ]
            depth -= 1
        i += 1
    return depth


@numba.njit(cache=True, nogil=True)
def _find(data: np.ndarray, lo: int, hi: int, key: np.ndarray) -> int:
    """Position just after `"key"<spaces>:<spaces>` at the top level of the object in data[lo:hi], or -1.

    The fast search finds the key at any depth; only a match is checked for its depth, so a key
    of a nested object is passed over without slowing the usual flat texts.
    """
    start = lo
    seen = 0
    while True:
        i, p, brackets = _match(data, start, hi, key)
        if i < 0:
            return -1
        seen += brackets
        # Only the object's own opening brace before it: a top-level key, no second look needed.
        if seen == 1 or _depth(data, lo, i) == 1:
            return p
        start = i + 1


@numba.njit(cache=True, nogil=True)
def _ints(data: np.ndarray, offsets: np.ndarray, valid: np.ndarray, key: np.ndarray, out: np.ndarray, state: np.ndarray,
          r0: int, r1: int) -> None:
    for r in range(r0, r1):
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
def _strings(data: np.ndarray, offsets: np.ndarray, valid: np.ndarray, key: np.ndarray, begin: np.ndarray, end: np.ndarray,
             state: np.ndarray, r0: int, r1: int) -> None:
    for r in range(r0, r1):
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
def _hashes(data: np.ndarray, begin: np.ndarray, end: np.ndarray, state: np.ndarray, out: np.ndarray, r0: int, r1: int) -> None:
    for r in range(r0, r1):
        if state[r] != 1:
            continue
        h = np.uint64(14695981039346656037)
        for j in range(begin[r], end[r]):
            h = (h ^ np.uint64(data[j])) * np.uint64(1099511628211)
        out[r] = h | np.uint64(1)


# Below this many texts a second thread costs more than it saves.
_SPLIT_MIN = 100_000


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


def int_values(texts: pa.Array | pa.ChunkedArray, key: str, missing: int) -> tuple[np.ndarray, np.ndarray]:
    """Per text, the key's integer value (`missing` where absent) and which rows need an exact slow read."""
    if isinstance(texts, pa.ChunkedArray) and texts.num_chunks > 1:
        # A chunk at a time: joining the chunks would copy every text once more (a job part's peak).
        got = [int_values(c, key, missing) for c in texts.chunks]
        return np.concatenate([g[0] for g in got]), np.concatenate([g[1] for g in got])
    data, offsets, valid = _buffers(texts)
    out = np.full(offsets.size - 1, missing, np.int64)
    state = np.zeros(offsets.size - 1, np.int8)
    k = np.frombuffer(key.encode(), np.uint8)
    in_halves(lambda r0, r1: _ints(data, offsets, valid, k, out, state, r0, r1), out.size, _SPLIT_MIN)
    return out, state == SLOW


def str_codes(texts: pa.Array | pa.ChunkedArray, key: str) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Per text, a code into the key's distinct plain string values (-1 where absent or slow), the
    values, and the rows needing a slow read. Values repeat (a few NEFF names over a million
    executions): each distinct one is decoded once, and no string is made per text."""
    if isinstance(texts, pa.ChunkedArray) and texts.num_chunks > 1:
        # A chunk at a time (no joined copy of the texts); each chunk's values renumbered into one list.
        index: dict[str, int] = {}
        codes_all, slow_all = [], []
        for chunk in texts.chunks:
            codes, seen, slow = str_codes(chunk, key)
            to = np.array([index.setdefault(w, len(index)) for w in seen] or [0], np.int32)
            codes_all.append(np.where(codes >= 0, to[np.maximum(codes, 0)], -1).astype(np.int32))
            slow_all.append(slow)
        return np.concatenate(codes_all), list(index), np.concatenate(slow_all)
    data, offsets, valid = _buffers(texts)
    n = offsets.size - 1
    begin, end = np.zeros(n, np.int64), np.zeros(n, np.int64)
    state = np.zeros(n, np.int8)
    k = np.frombuffer(key.encode(), np.uint8)
    in_halves(lambda r0, r1: _strings(data, offsets, valid, k, begin, end, state, r0, r1), n, _SPLIT_MIN)
    codes = np.full(n, -1, np.int32)
    found = np.flatnonzero(state == EXACT)
    words: list[str] = []
    if found.size:
        h = np.zeros(n, np.uint64)
        in_halves(lambda r0, r1: _hashes(data, begin, end, state, h, r0, r1), n, _SPLIT_MIN)
        h = h[found]
        inverse, uniq = pd.factorize(h)
        first = np.zeros(uniq.size, np.int64)
        first[inverse[::-1]] = found[::-1]  # the first text with each value
        words = [bytes(data[begin[f]: end[f]]).decode("utf-8", "replace") for f in first.tolist()]
        codes[found] = inverse
    return codes, words, state == SLOW
