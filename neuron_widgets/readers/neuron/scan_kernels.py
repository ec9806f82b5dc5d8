"""The numba kernels of the Neuron JSON byte scan (readers/neuron/scan.py): whitespace, strings, values, keys,
integers and one pass over the event list, every read bounds-checked."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numba
import numpy as np

from ..chrome.scan import key_index

ABSENT, STR, ESC, INT, FLOAT, OBJ, ARR, TRUE, FALSE, NULL, BIG = range(11)  # BIG: an integer past int64
# Per event flag bits: a chosen key repeated or any key written with escapes (msgspec's reading of
# those is left to msgspec), and an entry of the list that is not an object.
ODD_KEY, NOT_OBJECT = 1, 2
C = TypeVar("C", bound=Callable[..., None])
# What a scan call ended on.
MORE, END, FULL, MALFORMED = range(4)
BATCH = 100_000


@numba.njit(cache=True, nogil=True)
def _ws(buf, i):  # pragma: no cover - numba
    n = buf.size
    while i < n and (buf[i] == 32 or buf[i] == 10 or buf[i] == 13 or buf[i] == 9):
        i += 1
    return i


@numba.njit(cache=True, nogil=True)
def _string_end(buf, i):  # pragma: no cover - numba
    """Past the closing quote of the string opening at i (-1 if the buffer ends first), and whether it holds an escape."""
    n = buf.size
    i += 1
    escaped = False
    while i < n:
        c = buf[i]
        if c == 34:
            return i + 1, escaped
        if c == 92:
            escaped = True
            i += 2
        else:
            i += 1
    return -1, escaped


@numba.njit(cache=True, nogil=True)
def _value_end(buf, i):  # pragma: no cover - numba
    """Past the value starting at i (-1 if it cannot be followed), and its kind."""
    n = buf.size
    if i >= n:
        return -1, ABSENT
    c = buf[i]
    if c == 34:
        e, escaped = _string_end(buf, i)
        return e, ESC if escaped else STR
    if c == 123 or c == 91:
        kind = OBJ if c == 123 else ARR
        depth = 0
        while i < n:
            c = buf[i]
            if c == 34:
                i, _ = _string_end(buf, i)
                if i < 0:
                    return -1, kind
                continue
            if c == 123 or c == 91:
                depth += 1
            elif c == 125 or c == 93:
                depth -= 1
                if depth == 0:
                    return i + 1, kind
            i += 1
        return -1, kind
    if c == 116:
        return (i + 4 if i + 4 <= n else -1), TRUE
    if c == 102:
        return (i + 5 if i + 5 <= n else -1), FALSE
    if c == 110:
        return (i + 4 if i + 4 <= n else -1), NULL
    s = i
    is_int = True
    while i < n:
        c = buf[i]
        if 48 <= c <= 57 or c == 45 or c == 43:
            i += 1
        elif c == 46 or c == 101 or c == 69:
            is_int = False
            i += 1
        else:
            break
    if i == s:
        return -1, ABSENT
    return i, INT if is_int else FLOAT


@numba.njit(cache=True, nogil=True)
def _int(buf, i, e):  # pragma: no cover - numba
    """The integer at [i, e) and whether it fits in int64."""
    neg = buf[i] == 45
    if neg:
        i += 1
    if e - i > 19 or e == i:
        return 0, False
    m = np.uint64(0)
    for j in range(i, e):
        m = m * np.uint64(10) + np.uint64(buf[j] - 48)
    if neg:
        if m > np.uint64(9223372036854775808):
            return 0, False
        return -np.int64(m - np.uint64(1)) - 1, True
    if m > np.uint64(9223372036854775807):
        return 0, False
    return np.int64(m), True


@numba.njit(cache=True, nogil=True)
def _members(buf, i, e, keys, lens, kinds, spans, ivals, row, base):  # pragma: no cover - numba
    """The chosen keys of the object at [i, e) into kinds/spans columns from `base`; the flag bits
    (ODD_KEY), or -1 if the object cannot be followed."""
    flag = 0
    i += 1
    while i < e:
        i = _ws(buf, i)
        if i >= e:
            return -1
        c = buf[i]
        if c == 125:
            return flag
        if c == 44:
            i += 1
            continue
        if c != 34:
            return -1
        ks = i
        i, escaped = _string_end(buf, i)
        if i < 0:
            return -1
        f = -1 if escaped else key_index(buf, ks + 1, i - 1, keys, lens)
        if escaped:
            flag |= ODD_KEY
        i = _ws(buf, i)
        if i >= e or buf[i] != 58:
            return -1
        vs = _ws(buf, i + 1)
        i, kind = _value_end(buf, vs)
        if i < 0:
            return -1
        if f >= 0:
            if kinds[row, base + f] != ABSENT:
                flag |= ODD_KEY
            if kind == INT:
                v, fits = _int(buf, vs, i)
                ivals[row, base + f] = v
                if not fits:
                    kind = BIG
            kinds[row, base + f] = kind
            spans[row, base + f, 0] = vs
            spans[row, base + f, 1] = i
    return -1


@numba.njit(cache=True, nogil=True)
def _scan(buf, i, state, stop, keys, lens, sub, subkeys, sublens, keep, keep_unknown,
          kinds, spans, ivals, flags, objs, ends, args, apos):  # pragma: no cover - numba
    """From i (state 0: just past '[' or at an element; 1: past an element) the list's elements that
    start before `stop`, at most kinds.shape[0]. Returns (events, i, state, args used, MORE / END /
    FULL (args buffer too small: resume at i) / MALFORMED)."""
    cap = kinds.shape[0]
    nk = keys.shape[0]
    n = 0
    while True:
        i = _ws(buf, i)
        if i >= buf.size:
            return n, i, state, apos, MALFORMED
        c = buf[i]
        if state == 1:
            if c == 93:
                return n, i + 1, state, apos, END
            if c != 44:
                return n, i, state, apos, MALFORMED
            if n >= cap or i >= stop:
                return n, i, state, apos, MORE
            i = _ws(buf, i + 1)
            if i >= buf.size or buf[i] == 93:
                return n, i, state, apos, MALFORMED
            c = buf[i]
        elif c == 93:
            return n, i + 1, state, apos, END
        for f in range(kinds.shape[1]):
            kinds[n, f] = ABSENT
        flags[n] = 0
        s = i
        if c != 123:
            i, _ = _value_end(buf, i)
            if i < 0:
                return n, s, 0, apos, MALFORMED
            flags[n] = NOT_OBJECT
            objs[n, 0], objs[n, 1] = s, i
            ends[n] = apos
            n += 1
            state = 1
            continue
        a0 = apos
        members = 0
        i += 1
        closed = False
        while i < buf.size:
            i = _ws(buf, i)
            if i >= buf.size:
                break
            c = buf[i]
            if c == 125:
                i += 1
                closed = True
                break
            if c == 44:
                i += 1
                continue
            if c != 34:
                break
            ks = i
            i, escaped = _string_end(buf, i)
            if i < 0:
                break
            f = -1 if escaped else key_index(buf, ks + 1, i - 1, keys, lens)
            if escaped:
                flags[n] |= ODD_KEY
            i = _ws(buf, i)
            if i >= buf.size or buf[i] != 58:
                break
            vs = _ws(buf, i + 1)
            i, kind = _value_end(buf, vs)
            if i < 0:
                break
            if f >= 0:
                if kinds[n, f] != ABSENT:
                    flags[n] |= ODD_KEY
                if kind == INT:
                    v, fits = _int(buf, vs, i)
                    ivals[n, f] = v
                    if not fits:
                        kind = BIG
                kinds[n, f] = kind
                spans[n, f, 0] = vs
                spans[n, f, 1] = i
                if f == sub and kind == OBJ:
                    got = _members(buf, vs, i, subkeys, sublens, kinds, spans, ivals, n, nk)
                    if got < 0:
                        break
                    flags[n] |= got
            if escaped or (keep[f] if f >= 0 else keep_unknown):
                if apos + (i - ks) + 2 > args.size:
                    return n, s, 0, a0, FULL
                args[apos] = 123 if members == 0 else 44
                apos += 1
                for j in range(ks, i):
                    args[apos] = buf[j]
                    apos += 1
                members += 1
        if not closed:
            return n, s, 0, a0, MALFORMED
        if members:
            args[apos] = 125
            apos += 1
        objs[n, 0], objs[n, 1] = s, i
        ends[n] = apos
        n += 1
        state = 1
