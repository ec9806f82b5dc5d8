"""The events of a Chrome trace's `traceEvents` array found by a byte scan (numba), without a Python object per event.

The scan runs on text msgspec has already validated as JSON (the top-level decode skips and checks
the array), so it only has to find things: each event object's span, and for the keys the reader
uses (ph, name, cat, ts, dur, pid, tid, id, id2, bp, s, args) the span and kind of their value.
Numbers are parsed in place when that is exact (at most 15 significant digits and a small
exponent: one IEEE operation on exact operands, as correctly rounded as Python's `float`); the
rest are flagged for Python to read.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

FIELDS = ("ph", "name", "cat", "ts", "dur", "pid", "tid", "id", "id2", "bp", "s", "args")
PH, NAME, CAT, TS, DUR, PID, TID, ID, ID2, BP, S, ARGS = range(len(FIELDS))
NF = len(FIELDS)
# Value kinds; 0: the key is absent.
ABSENT, STR, ESC, INT, FLOAT, OBJ, ARR, TRUE, FALSE, NULL = range(10)
# Per event, beside the fields, bits: 1 when a key repeats or is written with escapes (msgspec's
# reading of those is left to msgspec), 2 when the array element is not an object, 4 when a nested
# value has an `nc` / `nc_idx` key (NDET).
ODD = NF

_KEYS = [np.frombuffer(k.encode(), np.uint8) for k in FIELDS]
_KEY_BYTES = np.zeros((NF, 4), np.uint8)
_KEY_LEN = np.zeros(NF, np.int64)
for _k, _b in enumerate(_KEYS):
    _KEY_BYTES[_k, : _b.size] = _b
    _KEY_LEN[_k] = _b.size
_POW10 = np.array([10.0**k for k in range(23)])
# Byte classes. In a string: 1 its closing quote, 2 a backslash. In a nested value: 1 a quote,
# 2 an opening bracket, 3 a closing one.
_IN_STRING = np.zeros(256, np.uint8)
_IN_STRING[34], _IN_STRING[92] = 1, 2
_IN_VALUE = np.zeros(256, np.uint8)
_IN_VALUE[34] = 1
_IN_VALUE[[123, 91]] = 2
_IN_VALUE[[125, 93]] = 3
# In a number: 1 a digit or sign, 2 a fraction's point or an exponent.
_IN_NUMBER = np.zeros(256, np.uint8)
_IN_NUMBER[[*range(48, 58), 43, 45]] = 1
_IN_NUMBER[[46, 101, 69]] = 2


@numba.njit(cache=True, nogil=True)
def _ws(buf: np.ndarray, i: int) -> int:
    while buf[i] == 32 or buf[i] == 10 or buf[i] == 13 or buf[i] == 9:
        i += 1
    return i


@numba.njit(cache=True, nogil=True)
def _string_end(buf: np.ndarray, i: int) -> tuple[int, bool]:
    """Past the closing quote of the string opening at i, and whether it holds an escape."""
    i += 1
    escaped = False
    while True:
        c = _IN_STRING[buf[i]]  # one table look-up per byte on the common path
        if c == 0:
            i += 1
        elif c == 1:
            return i + 1, escaped
        else:
            escaped = True
            i += 2


@numba.njit(cache=True, nogil=True)
def _nested_end(buf: np.ndarray, i: int) -> tuple[int, bool]:
    """Past the object or array opening at i (valid JSON: brackets balance outside strings), and
    whether a key inside is `nc` or `nc_idx` (NDET's NeuronCore, which the other road reads)."""
    depth = 0
    core = False
    while True:
        c = _IN_VALUE[buf[i]]
        if c == 0:
            i += 1
        elif c == 1:
            s = i
            i, _ = _string_end(buf, i)
            n = i - s - 2
            if (n == 2 or n == 6) and buf[s + 1] == 110 and buf[s + 2] == 99 and (
                    n == 2 or (buf[s + 3] == 95 and buf[s + 4] == 105 and buf[s + 5] == 100 and buf[s + 6] == 120)):
                core = core or buf[_ws(buf, i)] == 58
        elif c == 2:
            depth += 1
            i += 1
        else:
            depth -= 1
            i += 1
            if depth == 0:
                return i, core


@numba.njit(cache=True, nogil=True)
def _number_end(buf: np.ndarray, i: int) -> tuple[int, bool]:
    is_int = True
    while True:
        c = _IN_NUMBER[buf[i]]
        if c == 0:
            return i, is_int
        is_int = is_int and c == 1
        i += 1


@numba.njit(cache=True, nogil=True)
def key_index(buf: np.ndarray, s: int, e: int, keys: np.ndarray, lens: np.ndarray) -> int:
    """Which of `keys` (one a row, `lens[f]` bytes long) the bytes buf[s:e] are, -1 if none; the Neuron
    JSON scan's kernels match their keys with it too."""
    n = e - s
    for f in range(keys.shape[0]):
        if lens[f] != n:
            continue
        same = True
        for j in range(n):
            if buf[s + j] != keys[f, j]:
                same = False
                break
        if same:
            return f
    return -1


@numba.njit(cache=True, nogil=True)
def _scan(buf, keys, lens, kinds, spans, objs, slots, pow10, ints, floats, exact):  # pragma: no cover - numba
    """Fill per event the kinds and [start, end) spans of the known keys' values; -1 if out of room.
    The numbers of the fields with a slot (slots[field] >= 0) are read as they are passed, while
    their bytes are in cache: ints, floats and exact per event and slot (see `_number`; 0 where
    the field is not a number)."""
    cap = objs.shape[0]
    n = 0
    i = _ws(buf, 0) + 1  # past '['
    while True:
        i = _ws(buf, i)
        c = buf[i]
        if c == 93:  # ]
            return n
        if c == 44:  # ,
            i += 1
            continue
        if n >= cap:
            return -1
        for f in range(kinds.shape[1]):
            kinds[n, f] = ABSENT
        for f in range(ints.shape[1]):
            ints[n, f], floats[n, f], exact[n, f] = 0, 0.0, 0
        objs[n, 0] = i
        if c != 123:
            if c == 34:
                i, _ = _string_end(buf, i)
            elif c == 91:
                i, _ = _nested_end(buf, i)
            elif c == 102:  # false
                i += 5
            elif c == 116 or c == 110:  # true, null
                i += 4
            else:
                i, _ = _number_end(buf, i)
            kinds[n, ODD] = 2
            objs[n, 1] = i
            n += 1
            continue
        i += 1
        while True:
            i = _ws(buf, i)
            c = buf[i]
            if c == 125:  # }
                i += 1
                break
            if c == 44:
                i += 1
                continue
            ks = i + 1
            i, key_escaped = _string_end(buf, i)
            f = -1 if key_escaped else key_index(buf, ks, i - 1, keys, lens)
            if key_escaped:
                kinds[n, ODD] = 1
            i = _ws(buf, _ws(buf, i) + 1)  # past ':'
            vs = i
            c = buf[i]
            if c == 34:
                i, escaped = _string_end(buf, i)
                kind = ESC if escaped else STR
            elif c == 123 or c == 91:
                i, core = _nested_end(buf, i)
                kind = OBJ if c == 123 else ARR
                if core:
                    kinds[n, ODD] |= 4
            elif c == 116:
                i += 4
                kind = TRUE
            elif c == 102:
                i += 5
                kind = FALSE
            elif c == 110:
                i += 4
                kind = NULL
            else:
                i, is_int = _number_end(buf, i)
                kind = INT if is_int else FLOAT
            if f >= 0:
                if kinds[n, f] != ABSENT:
                    kinds[n, ODD] = 1
                kinds[n, f] = kind
                spans[n, f, 0] = vs
                spans[n, f, 1] = i
                if slots[f] >= 0:
                    if kind != INT and kind != FLOAT:  # a repeated key's number is forgotten with it
                        ints[n, slots[f]], floats[n, slots[f]], exact[n, slots[f]] = 0, 0.0, 0
                    else:
                        ints[n, slots[f]], floats[n, slots[f]], exact[n, slots[f]] = _number(buf, kind, vs, i, pow10)
        objs[n, 1] = i
        n += 1


@numba.njit(cache=True, nogil=True)
def _number(buf, k, i, e, pow10):  # pragma: no cover - numba
    """The number at [i, e) of kind k: its float64 value (bit 1 of the flags) and, for integers of up
    to 18 digits, its int64 value (bit 2). Where a bit is missing Python reads the text (more digits,
    a large exponent)."""
    neg = buf[i] == 45
    if neg:
        i += 1
    m = 0
    digits = 0
    scale = 0
    while i < e and 48 <= buf[i] <= 57:
        if digits > 0 or buf[i] != 48:
            digits += 1
        if digits <= 18:
            m = m * 10 + (buf[i] - 48)
        else:
            scale += 1
        i += 1
    if i < e and buf[i] == 46:
        i += 1
        while i < e and 48 <= buf[i] <= 57:
            if digits > 0 or buf[i] != 48:
                digits += 1
            if digits <= 18:
                m = m * 10 + (buf[i] - 48)
                scale -= 1
            i += 1
    if i < e:  # an exponent
        i += 1
        eneg = buf[i] == 45
        if buf[i] == 45 or buf[i] == 43:
            i += 1
        x = 0
        while i < e and x < 100000:
            x = x * 10 + (buf[i] - 48)
            i += 1
        scale += -x if eneg else x
    flags = 0
    fv = 0.0
    iv = 0
    # m and 10^|scale| both exact doubles: one multiplication or division rounds correctly.
    if digits <= 18 and m <= 9007199254740992 and -22 <= scale <= 22:
        v = float(m)
        v = v * pow10[scale] if scale >= 0 else v / pow10[-scale]
        fv = -v if neg else v
        flags |= 1
    if k == INT and digits <= 18:
        iv = -m if neg else m
        flags |= 2
    return iv, fv, flags


@numba.njit(cache=True, nogil=True)
def _span_codes(buf, starts, ends, codes, firsts):  # pragma: no cover - numba
    """A code per span by its bytes, in order of first appearance (exact: equal hashes are compared
    byte by byte); firsts[code] is the first span with it. Returns the number of codes."""
    size = 64
    table = np.full(size, -1, np.int64)
    hashes = np.zeros(size, np.uint64)
    k = 0
    for r in range(starts.size):
        s, e = starts[r], ends[r]
        h = np.uint64(14695981039346656037)
        for j in range(s, e):
            h = (h ^ np.uint64(buf[j])) * np.uint64(1099511628211)
        slot = np.int64(h & np.uint64(size - 1))
        while True:
            c = table[slot]
            if c < 0:
                table[slot] = k
                hashes[k] = h
                firsts[k] = r
                codes[r] = k
                k += 1
                break
            f = firsts[c]
            if hashes[c] == h and ends[f] - starts[f] == e - s:
                same = True
                for j in range(e - s):
                    if buf[starts[f] + j] != buf[s + j]:
                        same = False
                        break
                if same:
                    codes[r] = c
                    break
            slot = (slot + 1) & (size - 1)
        if 2 * k > size:  # keep the table at most half full: rebuild it twice as large
            size *= 2
            table = np.full(size, -1, np.int64)
            grown = np.zeros(size, np.uint64)
            grown[:k] = hashes[:k]
            hashes = grown
            for c in range(k):
                slot = np.int64(hashes[c] & np.uint64(size - 1))
                while table[slot] >= 0:
                    slot = (slot + 1) & (size - 1)
                table[slot] = c
    return k


@numba.njit(cache=True, nogil=True)
def _gather(buf, starts, ends, offsets, out):  # pragma: no cover - numba
    p = 0
    for r in range(starts.size):
        for j in range(starts[r], ends[r]):
            out[p] = buf[j]
            p += 1
        offsets[r + 1] = p


def span_codes(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per span a code by its bytes (first appearance order), and the first span of each code."""
    codes = np.empty(starts.size, np.int64)
    firsts = np.empty(starts.size, np.int64)
    k = _span_codes(buf, np.ascontiguousarray(starts), np.ascontiguousarray(ends), codes, firsts)
    return codes, firsts[:k]


def gathered_bytes(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, text: bool = False) -> pa.Array:
    """The spans' bytes as one binary array (large offsets past 2 GB); as a string array with `text`,
    for spans the caller knows are valid UTF-8 (no second check of what was checked whole)."""
    starts, ends = np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(ends, np.int64)
    total = int((ends - starts).sum())
    offsets = np.zeros(starts.size + 1, np.int64)
    out = np.empty(total, np.uint8)
    _gather(buf, starts, ends, offsets, out)
    if total < 2**31:
        return pa.Array.from_buffers(pa.string() if text else pa.binary(), starts.size,
                                     [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(out)])
    return pa.Array.from_buffers(pa.large_string() if text else pa.large_binary(), starts.size,
                                 [None, pa.py_buffer(offsets), pa.py_buffer(out)])


def scan(buf: np.ndarray, numeric: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                  tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Of a valid JSON array's elements: kinds (events x NF+1), spans (events x NF x 2: [start, end)
    of each key's value, read only where its kind says it is there) and object spans (events x 2).
    Row-major: the scan writes each event's entries together. Last, the `numeric` fields' numbers
    (events x len(numeric), columns in that order): int64 and float64 values, and which are exact
    (bit 1: the float, bit 2: the int); 0 where the field is not a number."""
    slots = np.full(NF, -1, np.int64)
    slots[list(numeric)] = np.arange(len(numeric))
    cap = buf.size // 64 + 1024
    while True:
        kinds = np.empty((cap, NF + 1), np.int8)
        spans = np.empty((cap, NF, 2), np.int64)
        objs = np.empty((cap, 2), np.int64)
        ints, floats = np.empty((cap, len(numeric)), np.int64), np.empty((cap, len(numeric)), np.float64)
        exact = np.empty((cap, len(numeric)), np.int8)
        n = _scan(buf, _KEY_BYTES, _KEY_LEN, kinds, spans, objs, slots, _POW10, ints, floats, exact)
        if n >= 0:
            return kinds[:n], spans[:n], objs[:n], (ints[:n], floats[:n], exact[:n])
        cap = buf.size // 2 + 16  # tiny events: an event takes at least two bytes and a comma
