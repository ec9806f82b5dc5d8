"""The Chrome reader's fast road: a trace's columns straight from its bytes, no Python object per event.

Taken when the document is an object whose syntax the byte scan checked whole (`scan.document`) and
every event is plain: slices, instants and flow points whose names, categories and ids are strings
or integers and whose times are numbers (PyTorch profiler and Kineto traces are). Metadata (M) and
counter (C) events, always few, are decoded by msgspec and handled as on the other road. Anything
else (begin/end pairs, a repeated key, a string time, an id2, what the scan's checks refuse) returns
None and the whole file takes the msgspec road, whose results this one reproduces exactly
(tests/test_chrome_fast.py compares them), and whose errors say what is wrong with a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import LoadWarnings
from ...model.schema import ROW
from ..columns import json_text
from .events import ANY, _RawEv
from .gathered import Gathered, microseconds_to_ns, text_id
from .scan import (
    ABSENT,
    ARGS,
    CAT,
    DUR,
    ESC,
    FLOAT,
    ID,
    ID2,
    INT,
    INTERNED,
    NAME,
    NULL,
    PID,
    STR,
    TID,
    TS,
    Events,
    document,
    gathered_bytes,
    renumbered,
    span_codes,
)

if TYPE_CHECKING:
    from .reader import _Builder

_ONE = msgspec.json.Decoder(_RawEv)
_SLICES_AND_INSTANTS = (b"X", b"i", b"I", b"R", b"n", b"T", b"p")
_POINTS = (b"s", b"t", b"f")
_DECODED = (b"M", b"C")  # few: msgspec structs, handled as on the other road
_KNOWN = np.zeros(256, bool)
_KNOWN[[p[0] for p in (*_SLICES_AND_INSTANTS, *_POINTS, *_DECODED)]] = True
NUMERIC = (TS, DUR, PID, TID, ID)  # the numeric fields the columns take
# A numeric field at some events: kinds, value starts and ends, and the scan's ints, floats and exactness.
_Numbers = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class _NotPlain(Exception):
    """Something only the msgspec road reads the same way."""


@dataclass
class Scanned:
    """A document the scan read whole: its bytes, its events, and its other top-level members decoded."""

    buf: np.ndarray
    events: Events
    meta: dict[str, Any]


def scanned(raw: bytes) -> Scanned | None:
    """The document scanned, its top-level members other than traceEvents decoded as the msgspec road
    decodes them; None when it is not for this road (not an object with a traceEvents array, or not
    JSON as far as the scan's checks go: the msgspec road then says what is wrong)."""
    buf = np.frombuffer(raw, np.uint8)
    doc = document(buf, NUMERIC)
    if doc is None or doc.events_member < 0:
        return None
    top: dict[str, tuple[int, int]] = {}
    for k, (ks, ke, escaped, vs, ve) in enumerate(doc.members.tolist()):
        key = ANY.decode(raw[ks:ke]) if escaped else raw[ks + 1: ke - 1].decode()
        if key == "traceEvents" and k != doc.events_member:
            return None  # written with escapes, or a second one: msgspec's reading decides which is read
        top[key] = (vs, ve)
    try:
        meta = {k: ANY.decode(raw[vs:ve]) for k, (vs, ve) in top.items() if k != "traceEvents"}
    except msgspec.DecodeError:
        return None  # the msgspec road says what is wrong with it
    return Scanned(buf, doc.events, meta)


def gather(doc: Scanned, builder: _Builder) -> Gathered | None:
    """The trace's columns from its scanned events, or None if they are not plain."""
    try:
        return _gather(doc, builder)
    except _NotPlain:
        return None


def _gather(doc: Scanned, builder: _Builder) -> Gathered:
    buf, ev = doc.buf, doc.events
    # A repeated or escaped key, an element that is not an object, NDET's `nc` argument (its NeuronCore
    # is read per event) or an id2: the other road.
    if ev.odd.size == 0 or ev.odd.any() or ev.kinds[ID2].any():
        raise _NotPlain
    ph = ev.ph
    if not _KNOWN[ph].all():  # 0: not a one-character string
        raise _NotPlain
    by = {p: np.flatnonzero(ph == p[0]) for p in (*_SLICES_AND_INSTANTS, *_POINTS)}
    rows = np.concatenate([by[p] for p in _SLICES_AND_INSTANTS])
    points = np.concatenate([by[p] for p in _POINTS])
    n_slices = by[b"X"].size
    decoded = np.flatnonzero((ph == _DECODED[0][0]) | (ph == _DECODED[1][0]))
    view = buf.data
    builder.collect([_ONE.decode(view[ev.objs[0, r]: ev.objs[1, r]]) for r in decoded.tolist()])
    both = np.r_[rows, points]
    n = rows.size

    def num(field: int, which: np.ndarray) -> _Numbers:
        # kinds, starts, ends, and the scan's ints, floats and exactness
        c = NUMERIC.index(field)
        return (ev.kinds[field][which], ev.starts[field][which], ev.ends[field][which], ev.ints[c][which],
                ev.floats[c][which], ev.exact[c][which])

    w, origin = builder.warnings, builder.origin
    start, ok_ts = _ns(buf, *num(TS, rows), w, origin, "ts")
    dur_kind, dur_s, dur_e, dur_ints, dur_floats, dur_exact = num(DUR, rows)
    dur_kind[n_slices:] = ABSENT  # instants have no duration, whatever they say
    dur, ok_dur = _ns(buf, dur_kind, dur_s, dur_e, dur_ints, dur_floats, dur_exact, w, origin, "dur", duration=True)
    names = _strings(buf, ev, NAME, rows, absent="")
    cats = _strings(buf, ev, CAT, rows, absent=None)
    pid = _ids(buf, *num(PID, both), builder.pid_names, "pid")
    tid = _ids(buf, *num(TID, both), builder.tid_names, "tid")
    point_ts, point_ok = _ns(buf, *num(TS, points), LoadWarnings(), origin, "ts")
    n_enclosing = by[b"s"].size + by[b"t"].size
    enclosing = np.r_[np.ones(n_enclosing, bool), ev.bp[points[n_enclosing:]] == ord("e")]
    args_kind = ev.kinds[ARGS][rows]
    absent = args_kind == ABSENT
    args_start, args_end = np.where(absent, 0, ev.starts[ARGS][rows]), np.where(absent, 0, ev.ends[ARGS][rows])
    return Gathered(
        start=start, ok_ts=ok_ts, dur=dur, ok_dur=ok_dur, incomplete=np.zeros(n, bool), is_async=np.zeros(n, bool),
        stream=pa.nulls(n, pa.string()), names=names, cats=cats, pid=pid, tid=tid, nc=pa.nulls(n, pa.int64()),
        lazy=lambda flows: SpanArgs(buf, args_start, args_end, flows),
        point_ts=point_ts, point_ok=point_ok, enclosing=enclosing, flow_ids=_flow_ids(buf, *num(ID, points)))


def _values(buf: np.ndarray, kind: np.ndarray, starts: np.ndarray, ends: np.ndarray, ints: np.ndarray,
            floats: np.ndarray, exact: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """int64 values, float64 values, and which ints are exact int64, of numbers (of kind INT or FLOAT;
    ints, floats, exact: the scan's reading of each span; 0 where kind says no number)."""
    numeric = (kind == INT) | (kind == FLOAT)
    if not numeric.all():  # the caller may have set a number's kind aside: it is not read then
        ints[~numeric], floats[~numeric], exact[~numeric] = 0, 0.0, 0
    int_ok = (exact & 2) != 0
    # The few numbers the scan cannot read exactly (17+ digits, large exponents): as msgspec reads them.
    for r in np.flatnonzero(numeric & ((exact & 1) == 0) | (kind == INT) & ~int_ok):
        v = msgspec.json.decode(buf[starts[r]: ends[r]].tobytes())
        try:
            floats[r] = float(v)
        except OverflowError:
            raise _NotPlain from None
        if type(v) is int and -(2**63) <= v < 2**63:
            ints[r], int_ok[r] = v, True
    return ints, floats, int_ok


def _ns(buf: np.ndarray, kind: np.ndarray, starts: np.ndarray, ends: np.ndarray, ints: np.ndarray, floats: np.ndarray,
        exact: np.ndarray, warnings: LoadWarnings, origin: str, what: str,
        duration: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Microseconds as int64 ns and which are usable: the msgspec road's `_ns` on arrays (absent: 0 for
    durations, unusable for times; strings are left to that road)."""
    if ((kind == STR) | (kind == ESC)).any():
        raise _NotPlain  # numeric strings: the other road reads them
    ints, floats, int_ok = _values(buf, kind, starts, ends, ints, floats, exact)
    if duration:  # an absent or null duration is 0, an integer
        zero = (kind == ABSENT) | (kind == NULL)
        ints[zero], floats[zero], int_ok[zero] = 0, 0.0, True
        kind = np.where(zero, INT, kind)
    numeric = (kind == INT) | (kind == FLOAT)
    whole = ints if (kind == INT).all() and int_ok.all() else None
    arr = whole.astype(np.float64) if whole is not None else np.where(numeric, floats, np.nan)
    return microseconds_to_ns(arr, whole, warnings, origin, what)


def _decoded(buf: np.ndarray, kinds: np.ndarray, starts: np.ndarray, ends: np.ndarray,
             codes: np.ndarray) -> tuple[list[str], np.ndarray | None]:
    """The texts of distinct byte strings (their kinds, STR or ESC, and spans, quotes included), and when two
    spellings (with and without escapes) are one text, a map of the codes onto the distinct texts."""
    if (kinds == STR).all():
        # No escapes (the usual case): distinct bytes are distinct texts, decoded together, no Python
        # step per text (a trace has thousands of distinct names).
        try:
            return gathered_bytes(buf, starts + 1, ends - 1).cast(pa.string()).to_pylist(), None
        except pa.ArrowInvalid:
            raise _NotPlain from None
    texts = []
    for k, s, e in zip(kinds.tolist(), starts.tolist(), ends.tolist(), strict=True):
        raw = buf[s:e].tobytes()
        try:
            texts.append(raw[1:-1].decode() if k == STR else orjson.loads(raw))
        except (UnicodeDecodeError, orjson.JSONDecodeError):
            raise _NotPlain from None
    index: dict[str, int] = {}
    remap = np.array([index.setdefault(t, len(index)) for t in texts], np.int64)
    return list(index), (remap if len(index) < len(texts) else None)


def _merged(remap: np.ndarray | None, codes: np.ndarray, firsts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes onto the merged texts, and where each merged text first appears (the earliest of its spellings)."""
    if remap is None:
        return codes, firsts
    first = np.full(int(remap.max()) + 1, n, np.int64)
    np.minimum.at(first, remap, firsts)
    return remap[codes], first


def _texts(buf: np.ndarray, kind: np.ndarray, starts: np.ndarray, ends: np.ndarray,
           rows: np.ndarray) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Codes of the strings at rows (first appearance order, one per distinct text), the texts, and
    where in `rows` each text first appears."""
    codes, firsts = span_codes(buf, starts[rows], ends[rows])
    at = rows[firsts]
    texts, remap = _decoded(buf, kind[at], starts[at], ends[at], codes)
    codes, firsts = _merged(remap, codes, firsts, rows.size)
    return codes, texts, firsts


def _strings(buf: np.ndarray, ev: Events, field: int, which: np.ndarray, absent: str | None) -> pa.DictionaryArray:
    """A dictionary column of an interned string field at rows `which`: `absent` where the key is absent or null."""
    kind = ev.kinds[field][which]
    is_text = (kind == STR) | (kind == ESC)
    missing = (kind == ABSENT) | (kind == NULL)
    if not (is_text | missing).all():
        raise _NotPlain  # numbers as names: the other road writes them out
    rows = np.flatnonzero(is_text)
    t = INTERNED.index(field)
    first_s, first_e = ev.firsts
    # The scan's codes (the whole file's first appearances) numbered again in these rows' order.
    code, first = renumbered(ev.codes[t][which[rows]], first_s.size)
    distinct = ev.codes[t][which[rows[first]]]
    texts, remap = _decoded(buf, kind[rows[first]], first_s[distinct] - 1, first_e[distinct] + 1, code)
    code, first = _merged(remap, code, first, rows.size)
    first_at = rows[first] if rows.size else first
    out = np.full(kind.size, -1, np.int64)
    out[rows] = code
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


def _ids(buf: np.ndarray, kind: np.ndarray, starts: np.ndarray, ends: np.ndarray, ints: np.ndarray, floats: np.ndarray,
         exact: np.ndarray, names: dict[int, str], what: str) -> np.ndarray:
    """pid/tid as the other road's `_int_ids`: integers as they are, absent as 0, text ids numbered."""
    if ((kind != INT) & (kind != STR) & (kind != ESC) & (kind != ABSENT) & (kind != NULL)).any():
        raise _NotPlain
    ints, _, int_ok = _values(buf, np.where(kind == INT, INT, ABSENT).astype(np.int8), starts, ends, ints, floats, exact)
    if not int_ok[kind == INT].all():
        raise _NotPlain  # past 64 bits: the other road names them by their text
    out = np.where(kind == INT, ints, 0)
    rows = np.flatnonzero((kind == STR) | (kind == ESC))
    if rows.size:
        codes, texts, _ = _texts(buf, kind, starts, ends, rows)
        out[rows] = np.array([text_id(t, names, what) for t in texts], np.int64)[codes]
    return out


def _flow_ids(buf: np.ndarray, kind: np.ndarray, starts: np.ndarray, ends: np.ndarray, ints: np.ndarray,
              floats: np.ndarray, exact: np.ndarray) -> np.ndarray:
    if ((kind != INT) & (kind != STR) & (kind != ESC)).any():
        raise _NotPlain  # null, float or object ids: the other road writes them out its way
    ints, _, int_ok = _values(buf, np.where(kind == INT, INT, ABSENT).astype(np.int8), starts, ends, ints, floats, exact)
    if not int_ok[kind == INT].all():
        raise _NotPlain
    if (kind == INT).all():
        return ints
    out = np.empty(kind.size, object)
    rows = np.flatnonzero(kind != INT)
    codes, texts, _ = _texts(buf, kind, starts, ends, rows)
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
