"""Perfetto TracePackets encoded in bulk: a chunk of events to bytes in one numba pass.

Building a protobuf object per event costs microseconds, minutes at tens of millions of
events; slices, their debug annotations and flow ids are written straight to the wire format
here. Descriptors and interning, a few packets per trace, use the protobuf classes.
"""

from __future__ import annotations

import numba
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.json as pj

SLICE, INSTANT, OPEN = 0, 1, 2
# Annotation value kinds (the DebugAnnotation field each is written to).
_INT, _DOUBLE, _BOOL, _STRING, _JSON = 0, 1, 2, 3, 4


@numba.njit(cache=True, nogil=True, inline="always")
def _vlen(v: np.uint64) -> int:
    n = 1
    while v >= np.uint64(0x80):
        v >>= np.uint64(7)
        n += 1
    return n


@numba.njit(cache=True, nogil=True, inline="always")
def _put(out: np.ndarray, pos: int, v: np.uint64) -> int:
    while v >= np.uint64(0x80):
        out[pos] = np.uint8((v & np.uint64(0x7F)) | np.uint64(0x80))
        v >>= np.uint64(7)
        pos += 1
    out[pos] = np.uint8(v)
    return pos + 1


@numba.njit(cache=True, nogil=True, inline="always")
def _put64(out: np.ndarray, pos: int, v: np.uint64) -> int:
    for k in range(8):
        out[pos + k] = np.uint8((v >> np.uint64(8 * k)) & np.uint64(0xFF))
    return pos + 8


@numba.njit(cache=True, nogil=True, inline="always")
def _body(kind, iid, values, soff, k, r):
    """Bytes of one DebugAnnotation message: name_iid and its value."""
    body = 1 + _vlen(np.uint64(iid[k]))
    kk = kind[k]
    if kk == 0:
        return body + 1 + _vlen(np.uint64(values[k, r]))
    if kk == 1:
        return body + 9
    if kk == 2:
        return body + 2
    ln = soff[k, r + 1] - soff[k, r]
    return body + 1 + _vlen(np.uint64(ln)) + ln


@numba.njit(cache=True, nogil=True)
def _annotation_sizes(kind, iid, values, valid, soff, sdata, sizes):
    for r in range(sizes.size):
        total = 0
        for k in range(kind.size):
            if valid[k, r]:
                body = _body(kind, iid, values, soff, k, r)
                total += 1 + _vlen(np.uint64(body)) + body
        sizes[r] = total


@numba.njit(cache=True, nogil=True)
def _annotations(kind, iid, values, valid, soff, sdata, offsets, out):
    """Each row's debug_annotations fields (TrackEvent field 4), back to back."""
    for r in range(offsets.size - 1):
        pos = offsets[r]
        for k in range(kind.size):
            if not valid[k, r]:
                continue
            kk = kind[k]
            body = _body(kind, iid, values, soff, k, r)
            out[pos] = 0x22
            pos = _put(out, pos + 1, np.uint64(body))
            out[pos] = 0x08  # name_iid
            pos = _put(out, pos + 1, np.uint64(iid[k]))
            if kk == 0:
                out[pos] = 0x20  # int_value
                pos = _put(out, pos + 1, np.uint64(values[k, r]))
            elif kk == 1:
                out[pos] = 0x29  # double_value
                pos = _put64(out, pos + 1, np.uint64(values[k, r]))
            elif kk == 2:
                out[pos] = 0x10  # bool_value
                out[pos + 1] = 1 if values[k, r] != 0 else 0
                pos += 2
            else:
                out[pos] = 0x32 if kk == 3 else 0x4A  # string_value / legacy_json_value
                s, e = soff[k, r], soff[k, r + 1]
                pos = _put(out, pos + 1, np.uint64(e - s))
                for j in range(s, e):
                    out[pos] = sdata[j]
                    pos += 1


def annotations(texts: pa.Array, intern: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the encoded debug annotations of its JSON arguments: (offsets, bytes).

    The rows' JSON objects are parsed together by Arrow's JSON reader into typed columns, one
    per key; keys whose values mix types, or nested values, are written as JSON text
    (legacy_json_value), which Perfetto expands into arguments like the others.
    """
    n = len(texts)
    present = np.flatnonzero(texts.is_valid().to_numpy(zero_copy_only=False)) if n else np.zeros(0, np.int64)
    if present.size == 0:
        return np.zeros(n + 1, np.int64), np.zeros(0, np.uint8)
    struct, as_json = _parse(texts.take(pa.array(present)))
    m = present.size
    keys = struct.type.names if struct is not None else []
    kinds, iids, vals, valids, strs = [], [], [], [], []
    for key in keys:
        col = struct.field(key)
        kind, value, text = _column(col, as_json)
        if kind is None:
            continue
        kinds.append(kind)
        iids.append(intern.setdefault(key, len(intern) + 1))
        vals.append(value if value is not None else np.zeros(m, np.int64))
        valids.append(col.is_valid().to_numpy(zero_copy_only=False))
        strs.append(text)
    # Annotations in interning order, whatever order a chunk's rows met the keys in: the same
    # event is written the same way whatever the chunking.
    by_iid = sorted(range(len(kinds)), key=lambda i: iids[i])
    kinds, iids, vals, valids, strs = ([xs[i] for i in by_iid] for xs in (kinds, iids, vals, valids, strs))
    k = len(kinds)
    values = np.stack(vals) if k else np.zeros((0, m), np.int64)
    valid = np.stack(valids) if k else np.zeros((0, m), bool)
    soff = np.zeros((k, m + 1), np.int64)
    chunks, base = [], 0
    for i, text in enumerate(strs):
        if text is None:
            continue
        o = np.frombuffer(text.buffers()[1], np.int32, m + 1, text.offset * 4).astype(np.int64)
        data = np.frombuffer(text.buffers()[2], np.uint8) if text.buffers()[2] is not None else np.zeros(0, np.uint8)
        data = data[o[0]: o[-1]]
        soff[i] = o - o[0] + base
        chunks.append(data)
        base += data.size
    sdata = np.concatenate(chunks) if chunks else np.zeros(0, np.uint8)
    kind_arr, iid_arr = np.array(kinds, np.int64), np.array(iids, np.int64)
    sizes = np.zeros(m, np.int64)
    _annotation_sizes(kind_arr, iid_arr, values, valid, soff, sdata, sizes)
    offsets = np.zeros(m + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    out = np.empty(int(offsets[-1]), np.uint8)
    _annotations(kind_arr, iid_arr, values, valid, soff, sdata, offsets, out)
    # Spread to all rows: rows without arguments get empty ranges.
    full = np.zeros(n + 1, np.int64)
    per_row = np.zeros(n, np.int64)
    per_row[present] = sizes
    np.cumsum(per_row, out=full[1:])
    return full, out


def _parse(texts: pa.Array) -> tuple[pa.StructArray | None, bool]:
    """The JSON objects as one struct column, and whether its columns are JSON text per value.

    Arrow's reader types each key's values; when it refuses them (a key whose values mix
    types) or guesses a type the text did not have (dates), every value is kept as its JSON.
    """
    joined = b"\n".join(t.replace(b"\n", b" ").replace(b"\r", b" ")
                        for t in texts.cast(pa.binary()).to_pylist())
    try:
        table = pj.read_json(pa.BufferReader(joined + b"\n"),
                             read_options=pj.ReadOptions(block_size=max(1 << 20, len(joined) + 1)))
        typed = not any(pa.types.is_temporal(f.type) for f in table.schema)
        if table.num_rows == len(texts) and typed:
            if not table.num_columns:
                return None, False
            return pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns], table.column_names), False
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    rows = []
    for t in texts.to_pylist():
        try:
            v = orjson.loads(t)
        except orjson.JSONDecodeError:
            v = {"args": t}
        rows.append(v if isinstance(v, dict) else {"args": v})
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(r))
    if not keys:
        return None, False
    cols = [pa.array([None if key not in r else orjson.dumps(r[key], option=orjson.OPT_NON_STR_KEYS).decode()
                      for r in rows], pa.string()) for key in keys]
    return pa.StructArray.from_arrays(cols, [str(k) for k in keys]), True


def _column(col: pa.Array, as_json: bool) -> tuple[int | None, np.ndarray | None, pa.Array | None]:
    t = col.type
    if as_json:
        return _JSON, None, col.fill_null("")
    if pa.types.is_null(t):
        return None, None, None
    if pa.types.is_boolean(t):
        return _BOOL, col.fill_null(False).to_numpy(zero_copy_only=False).astype(np.int64), None
    if pa.types.is_integer(t):
        return _INT, col.cast(pa.int64()).fill_null(0).to_numpy(), None
    if pa.types.is_floating(t):
        return _DOUBLE, col.cast(pa.float64()).fill_null(0.0).to_numpy().view(np.int64), None
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _STRING, None, col.cast(pa.string()).fill_null("")
    # Nested objects and lists: JSON text.
    values = [None if v is None else orjson.dumps(v, option=orjson.OPT_NON_STR_KEYS, default=str).decode()
              for v in col.to_pylist()]
    return _JSON, None, pa.array(values, pa.string()).fill_null("")


@numba.njit(cache=True, nogil=True)
def _packet_sizes(kind, name_iid, track, start, end, aoff, foff, flows, seq, sizes):
    for r in range(kind.size):
        te = 2 + 1 + _vlen(track[r]) + 1 + _vlen(name_iid[r]) + (aoff[r + 1] - aoff[r]) + 10 * (foff[r + 1] - foff[r])
        pk = 1 + _vlen(np.uint64(start[r])) + 1 + _vlen(np.uint64(seq)) + 2 + 1 + _vlen(np.uint64(te)) + te
        total = 1 + _vlen(np.uint64(pk)) + pk
        if kind[r] == 0:
            te2 = 2 + 1 + _vlen(track[r])
            pk2 = 1 + _vlen(np.uint64(end[r])) + 1 + _vlen(np.uint64(seq)) + 2 + 1 + _vlen(np.uint64(te2)) + te2
            total += 1 + _vlen(np.uint64(pk2)) + pk2
        sizes[r] = total


@numba.njit(cache=True, nogil=True)
def _packets(kind, name_iid, track, start, end, aoff, adata, foff, flows, seq, offsets, out):
    for r in range(kind.size):
        pos = offsets[r]
        nargs = aoff[r + 1] - aoff[r]
        nflow = foff[r + 1] - foff[r]
        te = 2 + 1 + _vlen(track[r]) + 1 + _vlen(name_iid[r]) + nargs + 10 * nflow
        pk = 1 + _vlen(np.uint64(start[r])) + 1 + _vlen(np.uint64(seq)) + 2 + 1 + _vlen(np.uint64(te)) + te
        out[pos] = 0x0A  # Trace.packet
        pos = _put(out, pos + 1, np.uint64(pk))
        out[pos] = 0x40  # timestamp
        pos = _put(out, pos + 1, np.uint64(start[r]))
        out[pos] = 0x50  # trusted_packet_sequence_id
        pos = _put(out, pos + 1, np.uint64(seq))
        out[pos] = 0x68  # sequence_flags: SEQ_NEEDS_INCREMENTAL_STATE (names are interned)
        out[pos + 1] = 2
        pos += 2
        out[pos] = 0x5A  # track_event
        pos = _put(out, pos + 1, np.uint64(te))
        out[pos] = 0x48  # type: begin or instant
        out[pos + 1] = 3 if kind[r] == 1 else 1
        out[pos + 2] = 0x58  # track_uuid
        pos = _put(out, pos + 3, track[r])
        out[pos] = 0x50  # name_iid
        pos = _put(out, pos + 1, name_iid[r])
        for j in range(aoff[r], aoff[r + 1]):
            out[pos] = adata[j]
            pos += 1
        for j in range(foff[r], foff[r + 1]):
            out[pos] = 0xF9  # flow_ids (47, fixed64): tag 0x179 as a varint
            out[pos + 1] = 0x02
            pos = _put64(out, pos + 2, flows[j])
        if kind[r] == 0:
            te2 = 2 + 1 + _vlen(track[r])
            pk2 = 1 + _vlen(np.uint64(end[r])) + 1 + _vlen(np.uint64(seq)) + 2 + 1 + _vlen(np.uint64(te2)) + te2
            out[pos] = 0x0A
            pos = _put(out, pos + 1, np.uint64(pk2))
            out[pos] = 0x40
            pos = _put(out, pos + 1, np.uint64(end[r]))
            out[pos] = 0x50
            pos = _put(out, pos + 1, np.uint64(seq))
            out[pos] = 0x68
            out[pos + 1] = 2
            pos += 2
            out[pos] = 0x5A
            pos = _put(out, pos + 1, np.uint64(te2))
            out[pos] = 0x48
            out[pos + 1] = 2  # end
            out[pos + 2] = 0x58
            pos = _put(out, pos + 3, track[r])


def packets(kind: np.ndarray, name_iid: np.ndarray, track: np.ndarray, start: np.ndarray, end: np.ndarray,
            aoff: np.ndarray, adata: np.ndarray, foff: np.ndarray, flows: np.ndarray, seq: int) -> bytes:
    """Begin (or instant) and end packets of each row, in row order, as Trace.packet fields."""
    n = kind.size
    args = (kind.astype(np.int8), name_iid.astype(np.uint64), track.astype(np.uint64), start.astype(np.int64),
            end.astype(np.int64), aoff.astype(np.int64))
    sizes = np.zeros(n, np.int64)
    _packet_sizes(*args, foff.astype(np.int64), flows.astype(np.uint64), seq, sizes)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    out = np.empty(int(offsets[-1]), np.uint8)
    _packets(*args, adata, foff.astype(np.int64), flows.astype(np.uint64), seq, offsets, out)
    return out.tobytes()
