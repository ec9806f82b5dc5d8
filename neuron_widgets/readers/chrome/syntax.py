"""JSON's syntax, checked by the byte scan as it tokenises (numba): strings, numbers, literals, nested values.

`value_end(buf, words, i, n, stack)` is given the index of a value's first byte and returns the
index past it, or -1 where the bytes are not JSON as msgspec reads it. The scan then hands the file
to msgspec, which says what is wrong in its own words: these checks must refuse everything msgspec
refuses (they may refuse more: then msgspec reads a file the scan could not, and nothing is lost but
time). Beyond the grammar they refuse escaped UTF-16 surrogates (msgspec's rules for lone halves are
its own) and nesting past MAX_DEPTH (msgspec's limit is Python's recursion limit, less the caller's
depth). tests/test_chrome_syntax.py compares them with msgspec on damaged documents.

Strings are passed eight bytes a step where no byte of the eight needs a look (`words`: each
position's eight bytes as one word). Each token is read inline, not by a call: a numba call per token cost
about as much as reading it.
"""

from __future__ import annotations

import numba
import numpy as np

MAX_DEPTH = 200
# Byte classes in a string: 0 plain, 1 the closing quote, 2 a backslash, 3 a control character (refused).
STRING_CLASS = np.zeros(256, np.uint8)
STRING_CLASS[:32] = 3
STRING_CLASS[34], STRING_CLASS[92] = 1, 2
# After a backslash: 1 a one-character escape, 2 `u` (four hex digits follow).
_ESCAPE_CLASS = np.zeros(256, np.uint8)
_ESCAPE_CLASS[[34, 92, 47, 98, 102, 110, 114, 116]] = 1
_ESCAPE_CLASS[117] = 2
# A hex digit's value, 255 for other bytes.
_HEX_VALUE = np.full(256, 255, np.uint8)
_HEX_VALUE[48:58] = np.arange(10)
_HEX_VALUE[65:71] = np.arange(10, 16)
_HEX_VALUE[97:103] = np.arange(10, 16)
# JSON's four whitespace bytes.
WHITESPACE = np.zeros(256, np.bool_)
WHITESPACE[[32, 9, 10, 13]] = True
# Eight bytes at once: a word has a byte equal to b when has_zero(word ^ b * ONES); below 0x20 likewise.
ONES = np.uint64(0x0101010101010101)
HIGH = np.uint64(0x8080808080808080)
QUOTES = np.uint64(0x2222222222222222)
BACKSLASHES = np.uint64(0x5C5C5C5C5C5C5C5C)
SPACES = np.uint64(0x2020202020202020)


def words(buf: np.ndarray) -> np.ndarray:
    """The eight bytes at each position of the buffer as one little-endian word (words[i] is buf[i:i + 8]; a
    view with a stride of one byte, read by one unaligned load)."""
    if buf.size < 8:
        return np.zeros(0, np.uint64)
    return np.ndarray(shape=(buf.size - 7,), dtype="<u8", buffer=buf, offset=0, strides=(1,))


@numba.njit(cache=True, nogil=True)
def escape_end(buf: np.ndarray, i: int, n: int) -> int:  # pragma: no cover - numba
    """Past the escape whose backslash is at i; -1 if it is not one JSON allows (or a surrogate half)."""
    if i + 1 >= n:
        return -1
    e = _ESCAPE_CLASS[buf[i + 1]]
    if e == 1:
        return i + 2
    if e != 2 or i + 5 >= n:
        return -1
    v = 0
    for j in range(i + 2, i + 6):
        d = _HEX_VALUE[buf[j]]
        if d == 255:
            return -1
        v = v * 16 + d
    if 0xD800 <= v <= 0xDFFF:
        return -1  # a surrogate half: msgspec judges pairs its own way
    return i + 6


@numba.njit(cache=True, nogil=True)
def value_end(buf: np.ndarray, words: np.ndarray, i: int, n: int,
              stack: np.ndarray) -> tuple[int, bool]:  # pragma: no cover - numba
    """Past the JSON value at i (whitespace before it skipped), and whether a key in it (at any depth) is
    `nc` or `nc_idx` as written (NDET's NeuronCore, which the other road reads); -1 if invalid.
    `stack`: room for MAX_DEPTH levels."""
    depth = 0  # open containers; stack[d]: True an object, False an array
    core = False
    state = 0  # 0 a value is next, 1 a value has ended, 2 a key is next
    while True:
        while i < n and WHITESPACE[buf[i]]:
            i += 1
        if i >= n:
            return -1, core
        c = buf[i]
        if state == 1:
            top = stack[depth - 1]
            if c == 44:  # ,
                i += 1
                state = 2 if top else 0
            elif c == (125 if top else 93):
                i += 1
                depth -= 1
                if depth == 0:
                    return i, core
            else:
                return -1, core
            continue
        if c == 34:  # a string: a key (then a colon) or a value
            s = i
            i += 1
            while True:
                if i < words.size:
                    w = words[i]
                    x, y = w ^ QUOTES, w ^ BACKSLASHES
                    if ((((x - ONES) & ~x) | ((y - ONES) & ~y) | ((w - SPACES) & ~w)) & HIGH) == 0:
                        i += 8
                        continue
                if i >= n:
                    return -1, core
                k = STRING_CLASS[buf[i]]
                if k == 0:
                    i += 1
                elif k == 1:
                    i += 1
                    break
                elif k == 2:
                    i = escape_end(buf, i, n)
                    if i < 0:
                        return -1, core
                else:
                    return -1, core
            if state == 2:
                m = i - s - 2
                if (m == 2 or m == 6) and buf[s + 1] == 110 and buf[s + 2] == 99 and (
                        m == 2 or (buf[s + 3] == 95 and buf[s + 4] == 105 and buf[s + 5] == 100 and buf[s + 6] == 120)):
                    core = True  # "nc" or "nc_idx"
                while i < n and WHITESPACE[buf[i]]:
                    i += 1
                if i >= n or buf[i] != 58:
                    return -1, core
                i += 1
                state = 0
                continue
        elif state == 2:
            return -1, core  # keys are strings
        elif c == 123 or c == 91:  # { [
            if depth >= MAX_DEPTH or depth >= stack.size:
                return -1, core
            stack[depth] = c == 123
            depth += 1
            i += 1
            while i < n and WHITESPACE[buf[i]]:
                i += 1
            if i < n and buf[i] == c + 2:  # } ] : empty
                i += 1
                depth -= 1
                if depth == 0:
                    return i, core
                state = 1
            else:
                state = 2 if c == 123 else 0
            continue
        elif c == 45 or 48 <= c <= 57:  # -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
            if c == 45:
                i += 1
                if i >= n:
                    return -1, core
                c = buf[i]
            if c == 48:
                i += 1
            elif 49 <= c <= 57:
                i += 1
                while i < n and 48 <= buf[i] <= 57:
                    i += 1
            else:
                return -1, core
            if i < n and buf[i] == 46:
                i += 1
                if i >= n or not 48 <= buf[i] <= 57:
                    return -1, core
                while i < n and 48 <= buf[i] <= 57:
                    i += 1
            if i < n and (buf[i] == 101 or buf[i] == 69):
                i += 1
                if i < n and (buf[i] == 43 or buf[i] == 45):
                    i += 1
                if i >= n or not 48 <= buf[i] <= 57:
                    return -1, core
                while i < n and 48 <= buf[i] <= 57:
                    i += 1
        else:
            i = literal_end(buf, i, n)
            if i < 0:
                return -1, core
        if depth == 0:
            return i, core
        state = 1


@numba.njit(cache=True, nogil=True)
def literal_end(buf: np.ndarray, i: int, n: int) -> int:  # pragma: no cover - numba
    """Past `true`, `false` or `null` at i; -1 if not one of them."""
    c = buf[i]
    if c == 116:  # true
        ok = i + 4 <= n and buf[i + 1] == 114 and buf[i + 2] == 117 and buf[i + 3] == 101
        return i + 4 if ok else -1
    if c == 102:  # false
        ok = i + 5 <= n and buf[i + 1] == 97 and buf[i + 2] == 108 and buf[i + 3] == 115 and buf[i + 4] == 101
        return i + 5 if ok else -1
    if c == 110:  # null
        ok = i + 4 <= n and buf[i + 1] == 117 and buf[i + 2] == 108 and buf[i + 3] == 108
        return i + 4 if ok else -1
    return -1
