"""The Chrome reader's fast road: a trace's columns straight from its bytes, no Python object per event.

Taken when every event is plain: slices, instants and flow points whose names, categories and ids
are strings or integers and whose times are numbers (PyTorch profiler and Kineto traces are).
Metadata (M) and counter (C) events, always few, are decoded by msgspec and handled as on the
other road. Anything else (begin/end pairs, a repeated key, a string time, an id2) returns None
and the whole file takes the msgspec road, whose results this one reproduces exactly
(tests/test_chrome_fast.py compares them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import LoadWarnings
from ...model.schema import ROW
from ..columns import json_text
from .events import _RawEv
from .gathered import Gathered, microseconds_to_ns, text_id
from .scan import (
    ABSENT,
    ARGS,
    BP,
    CAT,
    DUR,
    ESC,
    FLOAT,
    ID,
    ID2,
    INT,
    NAME,
    NULL,
    ODD,
    PH,
    PID,
    STR,
    TID,
    TS,
    gathered_bytes,
    scan,
    span_codes,
)

if TYPE_CHECKING:
    from .reader import _Builder

_ONE = msgspec.json.Decoder(_RawEv)
_SLICES_AND_INSTANTS = (b"X", b"i", b"I", b"R", b"n", b"T", b"p")
_POINTS = (b"s", b"t", b"f")
_DECODED = (b"M", b"C")  # few: msgspec structs, handled as on the other road
NUMERIC = (TS, DUR, PID, TID, ID)  # the numeric fields the columns take


class _NotPlain(Exception):
    """Something only the msgspec road reads the same way."""


def gather(buf: np.ndarray, builder: _Builder) -> Gathered | None:
    """The trace's columns from the bytes of its (valid JSON) traceEvents array, or None if not plain."""
    try:
        # Arguments are taken as UTF-8 text later: a file with invalid bytes anywhere reads the other way.
        pa.Array.from_buffers(pa.large_binary(), 1, [None, pa.py_buffer(np.array([0, buf.size], np.int64)),
                                                     pa.py_buffer(buf)]).cast(pa.large_string())
    except (pa.ArrowInvalid, OverflowError):
        return None
    try:
        return _gather(buf, builder)
    except _NotPlain:
        return None


def _gather(buf: np.ndarray, builder: _Builder) -> Gathered:
    kinds, spans, objs, numbers = scan(buf, NUMERIC)
    # A repeated or escaped key, an element that is not an object, NDET's `nc` argument (its NeuronCore
    # is read per event) or an id2: the other road.
    if kinds.shape[0] == 0 or (kinds[:, ODD] != 0).any() or (kinds[:, ID2] != ABSENT).any():
        raise _NotPlain
    one_char = (kinds[:, PH] == STR) & (spans[:, PH, 1] - spans[:, PH, 0] == 3)
    if not one_char.all():
        raise _NotPlain
    ph = buf[spans[:, PH, 0] + 1]
    known = {*_SLICES_AND_INSTANTS, *_POINTS, *_DECODED}
    if {bytes([c]) for c in np.unique(ph)} - known:
        raise _NotPlain
    by = {p: np.flatnonzero(ph == p[0]) for p in (*_SLICES_AND_INSTANTS, *_POINTS)}
    rows = np.concatenate([by[p] for p in _SLICES_AND_INSTANTS])
    points = np.concatenate([by[p] for p in _POINTS])
    n_slices = by[b"X"].size
    decoded = np.flatnonzero(np.isin(ph, [p[0] for p in _DECODED]))
    view = buf.data
    builder.collect([_ONE.decode(view[objs[r, 0]: objs[r, 1]]) for r in decoded])

    def at(field: int, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # One field of some events: only its entries are copied.
        return kinds[which, field], spans[which, field]

    both = np.r_[rows, points]
    n = rows.size
    # The numbers the columns take, read by the scan (columns in NUMERIC order).
    parsed = tuple(a[both] for a in numbers)

    def num(field: int, part: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        # kinds, spans, and the scan's ints, floats and exactness
        which, c = both[part], NUMERIC.index(field)
        return (kinds[which, field], spans[which, field], *(a[part, c].copy() for a in parsed))

    slices_, points_ = slice(0, n), slice(n, None)
    w, origin = builder.warnings, builder.origin
    start, ok_ts = _ns(buf, *num(TS, slices_), w, origin, "ts")
    dur_kind, dur_span, dur_ints, dur_floats, dur_exact = num(DUR, slices_)
    dur_kind[n_slices:] = ABSENT  # instants have no duration, whatever they say
    dur, ok_dur = _ns(buf, dur_kind, dur_span, dur_ints, dur_floats, dur_exact, w, origin, "dur", duration=True)
    names = _strings(buf, *at(NAME, rows), absent="")
    cats = _strings(buf, *at(CAT, rows), absent=None)
    pid = _ids(buf, *num(PID, slice(None)), builder.pid_names, "pid")
    tid = _ids(buf, *num(TID, slice(None)), builder.tid_names, "tid")
    point_ts, point_ok = _ns(buf, *num(TS, points_), LoadWarnings(), origin, "ts")
    n_enclosing = by[b"s"].size + by[b"t"].size
    bp_kind, bp_span = at(BP, points)
    bp_str = (bp_kind == STR) & (bp_span[:, 1] - bp_span[:, 0] == 3)
    bp_e = bp_str & (buf[np.where(bp_str, bp_span[:, 0] + 1, 0)] == ord("e"))
    enclosing = np.r_[np.ones(n_enclosing, bool), bp_e[n_enclosing:]]
    args_kind, args_span = at(ARGS, rows)
    args_span[args_kind == ABSENT] = 0
    return Gathered(
        start=start, ok_ts=ok_ts, dur=dur, ok_dur=ok_dur, incomplete=np.zeros(n, bool), is_async=np.zeros(n, bool),
        stream=pa.nulls(n, pa.string()), names=names, cats=cats, pid=pid, tid=tid, nc=pa.nulls(n, pa.int64()),
        lazy=lambda flows: SpanArgs(buf, args_span[:, 0].copy(), args_span[:, 1].copy(), flows),
        point_ts=point_ts, point_ok=point_ok, enclosing=enclosing, flow_ids=_flow_ids(buf, *num(ID, points_)))


def _values(buf: np.ndarray, kind: np.ndarray, span: np.ndarray, ints: np.ndarray, floats: np.ndarray,
            exact: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """int64 values, float64 values, and which ints are exact int64, of numbers (of kind INT or FLOAT;
    ints, floats, exact: the scan's reading of each span; 0 where kind says no number)."""
    numeric = (kind == INT) | (kind == FLOAT)
    if not numeric.all():  # the caller may have set a number's kind aside: it is not read then
        ints[~numeric], floats[~numeric], exact[~numeric] = 0, 0.0, 0
    int_ok = (exact & 2) != 0
    # The few numbers the scan cannot read exactly (17+ digits, large exponents): as msgspec reads them.
    for r in np.flatnonzero(numeric & ((exact & 1) == 0) | (kind == INT) & ~int_ok):
        v = msgspec.json.decode(buf[span[r, 0]: span[r, 1]].tobytes())
        try:
            floats[r] = float(v)
        except OverflowError:
            raise _NotPlain from None
        if type(v) is int and -(2**63) <= v < 2**63:
            ints[r], int_ok[r] = v, True
    return ints, floats, int_ok


def _ns(buf: np.ndarray, kind: np.ndarray, span: np.ndarray, ints: np.ndarray, floats: np.ndarray, exact: np.ndarray,
        warnings: LoadWarnings, origin: str, what: str, duration: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Microseconds as int64 ns and which are usable: the msgspec road's `_ns` on arrays (absent: 0 for
    durations, unusable for times; strings are left to that road)."""
    if ((kind == STR) | (kind == ESC)).any():
        raise _NotPlain  # numeric strings: the other road reads them
    ints, floats, int_ok = _values(buf, kind, span, ints, floats, exact)
    if duration:  # an absent or null duration is 0, an integer
        zero = (kind == ABSENT) | (kind == NULL)
        ints[zero], floats[zero], int_ok[zero] = 0, 0.0, True
        kind = np.where(zero, INT, kind)
    numeric = (kind == INT) | (kind == FLOAT)
    whole = ints if (kind == INT).all() and int_ok.all() else None
    arr = whole.astype(np.float64) if whole is not None else np.where(numeric, floats, np.nan)
    return microseconds_to_ns(arr, whole, warnings, origin, what)


def _texts(buf: np.ndarray, kind: np.ndarray, span: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Codes of the strings at rows (first appearance order, one per distinct text), the texts, and
    where in `rows` each text first appears."""
    codes, firsts = span_codes(buf, span[rows, 0], span[rows, 1])
    at = rows[firsts]
    if (kind[at] == STR).all():
        # No escapes (the usual case): distinct bytes are distinct texts, decoded together, no Python
        # step per text (a trace has thousands of distinct names).
        try:
            texts = gathered_bytes(buf, span[at, 0] + 1, span[at, 1] - 1).cast(pa.string()).to_pylist()
        except pa.ArrowInvalid:
            raise _NotPlain from None
        return codes, texts, firsts
    texts = []
    for f in firsts:
        raw = buf[span[rows[f], 0]: span[rows[f], 1]].tobytes()
        try:
            texts.append(raw[1:-1].decode() if kind[rows[f]] == STR else orjson.loads(raw))
        except (UnicodeDecodeError, orjson.JSONDecodeError):
            raise _NotPlain from None
    # Written with and without escapes, one text is one value (kept at its first appearance).
    index: dict[str, int] = {}
    remap = np.array([index.setdefault(t, len(index)) for t in texts], np.int64)
    first = np.full(len(index), rows.size, np.int64)
    for c, f in zip(remap.tolist(), firsts.tolist(), strict=True):
        first[c] = min(first[c], f)
    return remap[codes] if remap.size else codes, list(index), first


def _strings(buf: np.ndarray, kind: np.ndarray, span: np.ndarray, absent: str | None) -> pa.DictionaryArray:
    """A dictionary column of a string field: `absent` where the key is absent or null."""
    is_text = (kind == STR) | (kind == ESC)
    missing = (kind == ABSENT) | (kind == NULL)
    if not (is_text | missing).all():
        raise _NotPlain  # numbers as names: the other road writes them out
    rows = np.flatnonzero(is_text)
    codes, texts, first = _texts(buf, kind, span, rows)
    first_at = rows[first] if rows.size else first
    out = np.full(kind.size, -1, np.int64)
    out[rows] = codes
    if absent is not None and missing.any():
        at_missing = int(np.argmax(missing))
        if absent in texts:
            at = texts.index(absent)
            first_at[at] = min(int(first_at[at]), at_missing)
        else:
            at, texts, first_at = len(texts), [*texts, absent], np.r_[first_at, at_missing]
        out[missing] = at
    # The dictionary in order of first appearance, as dictionary_encode gives it.
    order = np.argsort(first_at, kind="stable")
    rank = np.empty(len(texts), np.int64)
    rank[order] = np.arange(len(texts))
    indices = rank[np.maximum(out, 0)] if len(texts) else np.zeros(kind.size, np.int64)
    return pa.DictionaryArray.from_arrays(pa.array(indices.astype(np.int32), mask=out < 0),
                                          pa.array([texts[i] for i in order], pa.string()))


def _ids(buf: np.ndarray, kind: np.ndarray, span: np.ndarray, ints: np.ndarray, floats: np.ndarray, exact: np.ndarray,
         names: dict[int, str], what: str) -> np.ndarray:
    """pid/tid as the other road's `_int_ids`: integers as they are, absent as 0, text ids numbered."""
    if ((kind != INT) & (kind != STR) & (kind != ESC) & (kind != ABSENT) & (kind != NULL)).any():
        raise _NotPlain
    ints, _, int_ok = _values(buf, np.where(kind == INT, INT, ABSENT).astype(np.int8), span, ints, floats, exact)
    if not int_ok[kind == INT].all():
        raise _NotPlain  # past 64 bits: the other road names them by their text
    out = np.where(kind == INT, ints, 0)
    rows = np.flatnonzero((kind == STR) | (kind == ESC))
    if rows.size:
        codes, texts, _ = _texts(buf, kind, span, rows)
        out[rows] = np.array([text_id(t, names, what) for t in texts], np.int64)[codes]
    return out


def _flow_ids(buf: np.ndarray, kind: np.ndarray, span: np.ndarray, ints: np.ndarray, floats: np.ndarray,
              exact: np.ndarray) -> np.ndarray:
    if ((kind != INT) & (kind != STR) & (kind != ESC)).any():
        raise _NotPlain  # null, float or object ids: the other road writes them out its way
    ints, _, int_ok = _values(buf, np.where(kind == INT, INT, ABSENT).astype(np.int8), span, ints, floats, exact)
    if not int_ok[kind == INT].all():
        raise _NotPlain
    if (kind == INT).all():
        return ints
    out = np.empty(kind.size, object)
    rows = np.flatnonzero(kind != INT)
    codes, texts, _ = _texts(buf, kind, span, rows)
    out[rows] = np.array(texts, dtype=object)[codes]
    numbered = np.flatnonzero(kind == INT)
    out[numbered] = [str(v) for v in ints[numbered].tolist()]
    return out


class SpanArgs:
    """extra_attributes_json as spans of the file's bytes (kept whole, never copied per event), and flow_id."""

    def __init__(self, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, flow_ids: pa.Array | None) -> None:
        self.buf, self.starts, self.ends, self.flow_ids = buf, starts, ends, flow_ids

    def names(self) -> list[str]:
        return ["flow_id", "extra_attributes_json"] if self.flow_ids is not None else ["extra_attributes_json"]

    def column(self, name: str) -> pa.ChunkedArray:
        if name == "flow_id" and self.flow_ids is not None:
            return pa.chunked_array([self.flow_ids])
        raw = gathered_bytes(self.buf, self.starts, self.ends)
        # As the other road's json_text: no text for absent, null or empty arguments.
        empty = pc.is_in(raw, value_set=pa.array([b"", b"null", b"{}"], raw.type))
        return pa.chunked_array([pc.if_else(empty, pa.scalar(None, raw.type), raw).cast(pa.string())])

    def take(self, name: str, rows: np.ndarray) -> pa.Array:
        if name == "flow_id" and self.flow_ids is not None:
            return self.flow_ids.take(pa.array(np.asarray(rows, dtype=np.int64)))
        rows = np.asarray(rows, np.int64)
        # The whole file was checked as UTF-8 (`gather`) and a span is a whole JSON value: no second check.
        texts = gathered_bytes(self.buf, self.starts[rows], self.ends[rows], text=True)
        return texts if texts.type == pa.string() else texts.cast(pa.string())

    def value(self, name: str, event: dict[str, Any]) -> Any:
        row = event[ROW]
        if name == "flow_id" and self.flow_ids is not None:
            return self.flow_ids[row].as_py()
        return json_text(msgspec.Raw(self.buf[self.starts[row]: self.ends[row]].tobytes()))
