"""The events of a Chrome trace found by a byte scan (numba) of the whole document, without a Python
object per event, checking JSON's syntax as it goes (`syntax`).

The document must be an object: its members' spans are found, and in the `traceEvents` array, per
event object, for the keys the reader uses (ph, name, cat, ts, dur, pid, tid, id, id2, bp, s, args)
the span and kind of their value. Numbers are parsed in place when that is exact (at most 15
significant digits and a small exponent: one IEEE operation on exact operands, as correctly rounded
as Python's `float`); the rest are flagged for Python to read. Names and categories are numbered by
their bytes as they are passed (in cache), each distinct text once. Anything the checks refuse
leaves the file to msgspec, which says what is wrong (see `syntax`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import pyarrow as pa

from .syntax import (
    BACKSLASHES,
    HIGH,
    MAX_DEPTH,
    ONES,
    QUOTES,
    SPACES,
    STRING_CLASS,
    WHITESPACE,
    escape_end,
    literal_end,
    value_end,
    words,
)

FIELDS = ("ph", "name", "cat", "ts", "dur", "pid", "tid", "id", "id2", "bp", "s", "args")
PH, NAME, CAT, TS, DUR, PID, TID, ID, ID2, BP, S, ARGS = range(len(FIELDS))
NF = len(FIELDS)
# Value kinds; 0: the key is absent.
ABSENT, STR, ESC, INT, FLOAT, OBJ, ARR, TRUE, FALSE, NULL = range(10)
# Per event, bits of `odd`: 1 when a key repeats or is written with escapes (msgspec's reading of those
# is left to msgspec), 2 when the array element is not an object, 4 when a nested value has an `nc` /
# `nc_idx` key (NDET).
REPEATED, NOT_OBJECT, CORE_KEY = 1, 2, 4
# The fields whose strings are numbered as the scan passes them (rows of `Events.codes`).
INTERNED = (NAME, CAT)

_KEYS = [np.frombuffer(k.encode(), np.uint8) for k in FIELDS]
_KEY_LEN = np.zeros(NF, np.int64)
_KEY_PACKED = np.zeros(NF, np.int64)  # each key's bytes as one little-endian integer (all are at most 4 bytes)
for _k, _b in enumerate(_KEYS):
    _KEY_LEN[_k] = _b.size
    _KEY_PACKED[_k] = int.from_bytes(_b.tobytes(), "little")
_TRACE_EVENTS = np.frombuffer(b'"traceEvents"', np.uint8).copy()
_POW10 = np.array([10.0**k for k in range(23)])
# Top-level members recorded; a document with more is left to msgspec.
_MEMBERS = 256
_MUL = np.uint64(0x9E3779B97F4A7C15)
_SEED = np.uint64(0xCBF29CE484222325)
_SHIFT = np.uint64(29)


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
def _events(buf, words, i, n, packed, lens, slots, pow10, kinds, starts, ends, odd, objs, ph, bp, codes, ints,
            floats, exact, stack, table, hashes, first_s, first_e, fields):  # pragma: no cover - numba
    """The traceEvents array opening at i: per event the kinds and [start, end) spans of the known keys'
    values (field-major), the one-character ph and bp, the interned fields' codes, and the numbers of
    the fields with a slot (slots[field] >= 0), read while their bytes are in cache. Returns the
    number of events, the index past the array ((-1, 0) when out of room, (events, -1) when not JSON)
    and the number of distinct interned strings (hashes, first_s, first_e, fields: per code). Strings,
    numbers and keys are read inline (see `syntax`)."""
    cap = odd.size
    # The interned strings' open-addressing table: its first `size` slots, at most half full; grown in place
    # (an array made anew in this loop would be reference-counted on every pass: 14 ms on a 10 MB trace).
    size = 1024
    table[:size] = -1
    nk = 0  # distinct interned strings
    ne = 0
    i += 1
    while i < n and WHITESPACE[buf[i]]:
        i += 1
    if i < n and buf[i] == 93:
        return 0, i + 1, nk
    while True:
        if i >= n:
            return ne, -1, nk
        if ne >= cap:
            return -1, 0, nk
        objs[0, ne] = i
        for t in range(codes.shape[0]):
            codes[t, ne] = -1
        if buf[i] != 123:
            i, _ = value_end(buf, words, i, n, stack)
            if i < 0:
                return ne, -1, nk
            odd[ne] = NOT_OBJECT
        else:
            i += 1
            while i < n and WHITESPACE[buf[i]]:
                i += 1
            if i < n and buf[i] == 125:
                i += 1
            else:
                while True:
                    # The key: a string, a colon.
                    if i >= n or buf[i] != 34:
                        return ne, -1, nk
                    ks = i
                    i += 1
                    escaped = False
                    while True:
                        if i < words.size:
                            w = words[i]
                            x, y = w ^ QUOTES, w ^ BACKSLASHES
                            if ((((x - ONES) & ~x) | ((y - ONES) & ~y) | ((w - SPACES) & ~w)) & HIGH) == 0:
                                i += 8
                                continue
                        if i >= n:
                            return ne, -1, nk
                        k = STRING_CLASS[buf[i]]
                        if k == 0:
                            i += 1
                        elif k == 1:
                            i += 1
                            break
                        elif k == 2:
                            escaped = True
                            i = escape_end(buf, i, n)
                            if i < 0:
                                return ne, -1, nk
                        else:
                            return ne, -1, nk
                    f = -1
                    m = i - ks - 2
                    if escaped:
                        odd[ne] |= REPEATED
                    elif m <= 4:
                        v = 0
                        for j in range(m):
                            v |= int(buf[ks + 1 + j]) << (8 * j)
                        for g in range(packed.size):
                            if lens[g] == m and packed[g] == v:
                                f = g
                                break
                    while i < n and WHITESPACE[buf[i]]:
                        i += 1
                    if i >= n or buf[i] != 58:
                        return ne, -1, nk
                    i += 1
                    while i < n and WHITESPACE[buf[i]]:
                        i += 1
                    if i >= n:
                        return ne, -1, nk
                    # The value.
                    vs = i
                    c = buf[i]
                    if c == 34:
                        i += 1
                        escaped = False
                        while True:
                            if i < words.size:
                                w = words[i]
                                x, y = w ^ QUOTES, w ^ BACKSLASHES
                                if ((((x - ONES) & ~x) | ((y - ONES) & ~y) | ((w - SPACES) & ~w)) & HIGH) == 0:
                                    i += 8
                                    continue
                            if i >= n:
                                return ne, -1, nk
                            k = STRING_CLASS[buf[i]]
                            if k == 0:
                                i += 1
                            elif k == 1:
                                i += 1
                                break
                            elif k == 2:
                                escaped = True
                                i = escape_end(buf, i, n)
                                if i < 0:
                                    return ne, -1, nk
                            else:
                                return ne, -1, nk
                        kind = ESC if escaped else STR
                    elif c == 123 or c == 91:
                        i, core = value_end(buf, words, i, n, stack)
                        if i < 0:
                            return ne, -1, nk
                        kind = OBJ if c == 123 else ARR
                        if core:
                            odd[ne] |= CORE_KEY
                    elif c == 45 or 48 <= c <= 57:
                        # Checked and read at once: mantissa m of up to 18 significant digits, times 10^scale.
                        kind = INT
                        neg = c == 45
                        if neg:
                            i += 1
                            if i >= n:
                                return ne, -1, nk
                            c = buf[i]
                        if not 48 <= c <= 57:
                            return ne, -1, nk
                        mant = 0
                        digits = 0
                        scale = 0
                        if c == 48:
                            i += 1
                        else:
                            while i < n and 48 <= buf[i] <= 57:
                                digits += 1
                                if digits <= 18:
                                    mant = mant * 10 + (int(buf[i]) - 48)
                                else:
                                    scale += 1
                                i += 1
                        if i < n and buf[i] == 46:
                            kind = FLOAT
                            i += 1
                            if i >= n or not 48 <= buf[i] <= 57:
                                return ne, -1, nk
                            while i < n and 48 <= buf[i] <= 57:
                                if digits > 0 or buf[i] != 48:
                                    digits += 1
                                if digits <= 18:
                                    mant = mant * 10 + (int(buf[i]) - 48)
                                    scale -= 1
                                i += 1
                        if i < n and (buf[i] == 101 or buf[i] == 69):
                            kind = FLOAT
                            i += 1
                            eneg = i < n and buf[i] == 45
                            if i < n and (buf[i] == 43 or buf[i] == 45):
                                i += 1
                            if i >= n or not 48 <= buf[i] <= 57:
                                return ne, -1, nk
                            x = 0
                            while i < n and 48 <= buf[i] <= 57:
                                if x < 100000:
                                    x = x * 10 + (int(buf[i]) - 48)
                                i += 1
                            scale += -x if eneg else x
                    else:
                        i = literal_end(buf, i, n)
                        if i < 0:
                            return ne, -1, nk
                        kind = TRUE if c == 116 else FALSE if c == 102 else NULL
                    if f >= 0:
                        if kinds[f, ne] != ABSENT:
                            odd[ne] |= REPEATED
                        kinds[f, ne] = kind
                        starts[f, ne] = vs
                        ends[f, ne] = i
                        slot = slots[f]
                        if slot >= 0 and kind in (INT, FLOAT):
                            # m and 10^|scale| both exact doubles: one multiplication or division rounds
                            # correctly; an int64 of up to 18 digits. Other numbers are left to Python (flags).
                            flags = 0
                            if digits <= 18 and mant <= 9007199254740992 and -22 <= scale <= 22:
                                fv = float(mant)
                                fv = fv * pow10[scale] if scale >= 0 else fv / pow10[-scale]
                                floats[slot, ne] = -fv if neg else fv
                                flags |= 1
                            if kind == INT and digits <= 18:
                                ints[slot, ne] = -mant if neg else mant
                                flags |= 2
                            exact[slot, ne] = flags
                        elif f in (PH, BP):
                            one = buf[vs + 1] if kind == STR and i - vs == 3 else 0
                            if f == PH:
                                ph[ne] = one
                            else:
                                bp[ne] = one
                        elif kind in (STR, ESC) and f in (NAME, CAT):
                            # Numbered by its bytes while they are in cache: one table for both fields (the
                            # field seeds the hash and is compared), equal hashes compared byte by byte.
                            a, b = vs + 1, i - 1
                            ln = b - a
                            h = _SEED ^ np.uint64(f) ^ (np.uint64(ln) * _MUL)
                            if b >= 8:  # eight bytes a step, the last step the string's last bytes
                                j = a
                                while j + 8 <= b:
                                    h = (h ^ words[j]) * _MUL
                                    h ^= h >> _SHIFT
                                    j += 8
                                if j < b:
                                    h = (h ^ (words[b - 8] >> np.uint64(8 * (8 - (b - j))))) * _MUL
                                    h ^= h >> _SHIFT
                            else:
                                for j in range(a, b):
                                    h = (h ^ np.uint64(buf[j])) * _MUL
                            mask = size - 1
                            pos = np.int64(h & np.uint64(mask))
                            while True:
                                code = table[pos]
                                if code < 0:
                                    code = nk
                                    table[pos] = nk
                                    hashes[nk], first_s[nk], first_e[nk], fields[nk] = h, a, b, f
                                    nk += 1
                                    break
                                if hashes[code] == h and fields[code] == f and first_e[code] - first_s[code] == ln:
                                    same = True
                                    f0 = first_s[code]
                                    if min(a, f0) + ln >= 8:
                                        j = 0
                                        while j + 8 <= ln:
                                            if words[f0 + j] != words[a + j]:
                                                same = False
                                                break
                                            j += 8
                                        if same and j < ln:
                                            sh = np.uint64(8 * (8 - (ln - j)))
                                            same = (words[f0 + ln - 8] >> sh) == (words[a + ln - 8] >> sh)
                                    else:
                                        for j in range(ln):
                                            if buf[f0 + j] != buf[a + j]:
                                                same = False
                                                break
                                    if same:
                                        break
                                pos = (pos + 1) & mask
                            codes[0 if f == NAME else 1, ne] = code
                            if 2 * nk > size:  # at most half full: twice as large
                                size *= 2
                                table[:size] = -1
                                mask = size - 1
                                for c2 in range(nk):
                                    pos = np.int64(hashes[c2] & np.uint64(mask))
                                    while table[pos] >= 0:
                                        pos = (pos + 1) & mask
                                    table[pos] = c2
                    while i < n and WHITESPACE[buf[i]]:
                        i += 1
                    if i >= n:
                        return ne, -1, nk
                    c = buf[i]
                    i += 1
                    if c == 44:
                        while i < n and WHITESPACE[buf[i]]:
                            i += 1
                    elif c != 125:
                        return ne, -1, nk
                    else:
                        break
        objs[1, ne] = i
        ne += 1
        while i < n and WHITESPACE[buf[i]]:
            i += 1
        if i >= n:
            return ne, -1, nk
        c = buf[i]
        i += 1
        if c == 93:
            return ne, i, nk
        if c != 44:
            return ne, -1, nk
        while i < n and WHITESPACE[buf[i]]:
            i += 1


@numba.njit(cache=True, nogil=True)
def _document(buf, words, i, packed, lens, slots, pow10, kinds, starts, ends, odd, objs, ph, bp, codes, ints,
              floats, exact, table, hashes, first_s, first_e, fields, members):  # pragma: no cover - numba
    """The JSON object at i, checked whole: its members' spans (members[m] = key start, key end, key
    escaped, value start, value end) and the events of its `traceEvents` array (as `_events`).
    Returns (status, members, events member or -1, events, interned strings): status 0 read, 1 not JSON (as far as
    these checks go), 2 out of room for the events, 3 not for this road (too many members, a
    repeated traceEvents)."""
    n = buf.size
    stack = np.zeros(MAX_DEPTH, np.bool_)
    m = 0
    at = -1
    ne = 0
    k = 0
    i += 1
    while i < n and WHITESPACE[buf[i]]:
        i += 1
    if i < n and buf[i] == 125:
        i += 1
    else:
        while True:
            if m >= members.shape[0]:
                return 3, m, at, ne, k
            if i >= n or buf[i] != 34:
                return 1, m, at, ne, k
            ks = i
            i, _ = value_end(buf, words, i, n, stack)  # the key: a string
            if i < 0:
                return 1, m, at, ne, k
            ke = i
            key_escaped = False
            for j in range(ks + 1, ke - 1):
                key_escaped = key_escaped or buf[j] == 92
            while i < n and WHITESPACE[buf[i]]:
                i += 1
            if i >= n or buf[i] != 58:
                return 1, m, at, ne, k
            i += 1
            while i < n and WHITESPACE[buf[i]]:
                i += 1
            if i >= n:
                return 1, m, at, ne, k
            vs = i
            plain_key = not key_escaped and ke - ks == _TRACE_EVENTS.size
            if plain_key:
                for j in range(_TRACE_EVENTS.size):
                    if buf[ks + j] != _TRACE_EVENTS[j]:
                        plain_key = False
                        break
            if plain_key and buf[vs] == 91:
                if at >= 0:
                    return 3, m, at, ne, k
                at = m
                ne, i, k = _events(buf, words, vs, n, packed, lens, slots, pow10, kinds, starts, ends, odd, objs,
                                   ph, bp, codes, ints, floats, exact, stack, table, hashes, first_s, first_e, fields)
                if ne < 0:
                    return 2, m, at, ne, k
            else:
                i, _ = value_end(buf, words, vs, n, stack)
            if i < 0:
                return 1, m, at, ne, k
            members[m, 0], members[m, 1], members[m, 2], members[m, 3], members[m, 4] = ks, ke, key_escaped, vs, i
            m += 1
            while i < n and WHITESPACE[buf[i]]:
                i += 1
            if i >= n:
                return 1, m, at, ne, k
            c = buf[i]
            i += 1
            if c == 125:
                break
            if c != 44:
                return 1, m, at, ne, k
            while i < n and WHITESPACE[buf[i]]:
                i += 1
    while i < n and WHITESPACE[buf[i]]:
        i += 1
    if i != n:
        return 1, m, at, ne, k  # trailing characters
    return 0, m, at, ne, k


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
def _renumbered(codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """Codes (0..k-1, each >= 0) numbered again in order of first appearance here, and where each new
    code first appears."""
    local = np.full(k, -1, np.int64)
    out = np.empty(codes.size, np.int64)
    firsts = np.empty(min(codes.size, k), np.int64)
    m = 0
    for r in range(codes.size):
        c = local[codes[r]]
        if c < 0:
            c = m
            local[codes[r]] = m
            firsts[m] = r
            m += 1
        out[r] = c
    return out, firsts[:m]


def renumbered(codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes of some rows numbered again in order of first appearance among them, and the first row of each."""
    return _renumbered(np.ascontiguousarray(codes, np.int64), k)


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


@dataclass
class Events:
    """What the scan found of each event (file order; field-major: one row per field)."""

    kinds: np.ndarray  # (NF, events) int8
    starts: np.ndarray  # (NF, events) int64: a value's span, read only where its kind says it is there
    ends: np.ndarray
    odd: np.ndarray  # (events,) bits: REPEATED, NOT_OBJECT, CORE_KEY
    objs: np.ndarray  # (2, events): each element's span
    ph: np.ndarray  # (events,) uint8: the one-character ph, 0 if it is not one
    bp: np.ndarray  # (events,) uint8: the same of bp
    codes: np.ndarray  # (len(INTERNED), events) int64: a code per distinct (field, string); -1: none
    firsts: tuple[np.ndarray, np.ndarray]  # each code's first [start, end) (quotes excluded)
    ints: np.ndarray  # (len(numeric), events) int64, float64 and int8 exactness (bit 1: the float, bit 2: the int),
    floats: np.ndarray  # of the numeric fields (rows in the order asked); 0 where the field is not a number
    exact: np.ndarray


@dataclass
class Document:
    """A JSON object checked whole: its members (key and value spans) and its traceEvents' events."""

    members: np.ndarray  # (members, 5): key start, key end (quotes included), key escaped, value start, value end
    events_member: int  # which member is traceEvents (an array); -1 if none
    events: Events


def document(buf: np.ndarray, numeric: tuple[int, ...] = ()) -> Document | None:
    """The object document in `buf` (leading whitespace and byte-order mark skipped) with its traceEvents
    scanned (`numeric`: the fields whose numbers are read, in that order), or None when it is not an
    object or its syntax is not what these checks pass (msgspec then reads it and says what is wrong)."""
    i = 0
    while i < buf.size and buf[i] in _LEADING:
        i += 1
    if i >= buf.size or buf[i] != 123:
        return None
    slots = np.full(NF, -1, np.int64)
    slots[list(numeric)] = np.arange(len(numeric))
    cap = buf.size // 64 + 1024
    members = np.zeros((_MEMBERS, 5), np.int64)
    w64 = words(buf)
    while True:
        kinds = np.zeros((NF, cap), np.int8)
        starts, ends = np.empty((NF, cap), np.int64), np.empty((NF, cap), np.int64)
        odd, objs = np.zeros(cap, np.int8), np.empty((2, cap), np.int64)
        ph, bp = np.zeros(cap, np.uint8), np.zeros(cap, np.uint8)
        codes = np.empty((len(INTERNED), cap), np.int64)
        ints, floats = np.zeros((len(numeric), cap), np.int64), np.zeros((len(numeric), cap), np.float64)
        exact = np.zeros((len(numeric), cap), np.int8)
        # Room for as many distinct strings as interned values, and a table twice that (pages are touched
        # only as far as it grows).
        table = np.empty(1 << max(10, int(2 * len(INTERNED) * cap - 1).bit_length()), np.int32)
        hashes = np.empty(len(INTERNED) * cap, np.uint64)
        first_s, first_e = np.empty(len(INTERNED) * cap, np.int64), np.empty(len(INTERNED) * cap, np.int64)
        fields = np.empty(len(INTERNED) * cap, np.int64)
        status, m, at, ne, k = _document(buf, w64, i, _KEY_PACKED, _KEY_LEN, slots, _POW10, kinds, starts, ends,
                                         odd, objs, ph, bp, codes, ints, floats, exact, table, hashes, first_s, first_e,
                                         fields, members)
        if status != 2:
            break
        cap = buf.size // 2 + 16  # tiny events: an event takes at least two bytes and a comma
    if status != 0:
        return None
    ne = max(ne, 0)
    events = Events(kinds[:, :ne], starts[:, :ne], ends[:, :ne], odd[:ne], objs[:, :ne], ph[:ne], bp[:ne],
                    codes[:, :ne], (first_s[:k], first_e[:k]),
                    ints[:, :ne], floats[:, :ne], exact[:, :ne])
    return Document(members[:m], at, events)


_LEADING = frozenset(b"\xef\xbb\xbf \t\r\n")  # what the msgspec road strips first (bytes.lstrip's set)
