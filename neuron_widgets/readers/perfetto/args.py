"""Debug annotations of Perfetto events, decoded only when a view asks for them.

The bytes of each event's TrackEvent that carries annotations are copied out of the trace at
load (one contiguous buffer), with the sequence generation their interned names belong to.
A view asking for the arguments of a few rows decodes just those with the protobuf classes.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import orjson
import pyarrow as pa
from google.protobuf.message import DecodeError
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ...model.schema import ROW


@numba.njit(cache=True, nogil=True)
def _gather(buf: np.ndarray, n: int, event: np.ndarray, off: np.ndarray, length: np.ndarray,
            offsets: np.ndarray) -> np.ndarray:
    """The bytes buf[off[k]: off[k] + length[k]] of each listed event (`event` ascending, < n), one after
    another; `offsets` (n + 1 entries) gets where each of the n events' bytes start (empty where not listed)."""
    total = 0
    for k in range(event.size):
        total += length[k]
    out = np.empty(total, np.uint8)
    at = 0
    done = 0  # events whose offset is written
    for k in range(event.size):
        e = event[k]
        for i in range(done, e + 1):
            offsets[i] = at
        done = e + 1
        m = length[k]
        out[at:at + m] = buf[off[k]:off[k] + m]  # a block copy: a loop per byte took twice as long
        at += m
    for i in range(done, n + 1):
        offsets[i] = at
    return out


def gather(buf: np.ndarray, n: int, event: np.ndarray, off: np.ndarray, length: np.ndarray) -> pa.Array:
    """A binary array of n entries: entry event[k] holds buf[off[k]: off[k] + length[k]], the others are
    empty (`event` ascending). 32-bit offsets while the bytes fit in them."""
    total = int(length.sum(dtype=np.int64))
    large = total >= 2**31
    offsets = np.empty(n + 1, np.int64 if large else np.int32)
    data = _gather(buf, n, event, off, length, offsets)
    kind = pa.large_binary() if large else pa.binary()
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


class PerfettoArgs:
    """extra_attributes_json and flow_id of a Perfetto trace, by source row."""

    def __init__(self, blobs: pa.Array | pa.ChunkedArray, begin: np.ndarray, end: np.ndarray, generation: np.ndarray,
                 arg_names: dict[int, dict[int, str]], arg_strings: dict[int, dict[int, str]],
                 flow_ids: pa.Array | Callable[[], pa.Array]) -> None:
        # `blobs`: TrackEvent bytes (empty when it has no annotations); `begin` / `end`: each row's
        # begin and end packets' entries in it (Perfetto shows both sets of annotations on the
        # slice). Indexes, not copies: each event's bytes are held once, as the reader gathered them.
        # `flow_ids`: the flow_id column, or what builds it when first asked for (a load need not).
        self.blobs, self.begin, self.end, self.generation = blobs, begin, end, generation
        self.arg_names, self.arg_strings = arg_names, arg_strings
        self._flow_ids = flow_ids

    @property
    def flow_ids(self) -> pa.Array:
        if callable(self._flow_ids):
            self._flow_ids = self._flow_ids()
        return self._flow_ids

    def names(self) -> list[str]:
        return ["flow_id", "extra_attributes_json"]

    def column(self, name: str) -> pa.ChunkedArray:
        return pa.chunked_array([self.take(name, np.arange(len(self.generation)))])

    def take(self, name: str, rows: np.ndarray) -> pa.Array:
        rows = np.asarray(rows, dtype=np.int64)
        if name == "flow_id":
            return self.flow_ids.take(pa.array(rows))
        begin = self.blobs.take(pa.array(self.begin[rows])).to_pylist()
        end = self.blobs.take(pa.array(self.end[rows])).to_pylist()
        gens = self.generation[rows].tolist()
        return pa.array([self._text(b, e, g) for b, e, g in zip(begin, end, gens, strict=True)], pa.string())

    def value(self, name: str, event: dict[str, Any]) -> Any:
        return self.take(name, np.array([event[ROW]]))[0].as_py()

    def _text(self, begin: bytes | None, end: bytes | None, gen: int) -> str | None:
        if not begin and not end:
            return None
        args: dict[str, Any] = {}
        for blob in (begin, end):
            if blob:
                args.update(decoded_annotations(blob, self.arg_names.get(gen, {}), self.arg_strings.get(gen, {})))
        return orjson.dumps(args, option=orjson.OPT_NON_STR_KEYS).decode() if args else None

    def cache_columns(self) -> tuple[dict[str, pa.Array], dict[str, Any]]:
        """What the parse cache stores to rebuild this object without the trace."""
        cols = {"begin": _one(self.blobs.take(pa.array(self.begin))), "end": _one(self.blobs.take(pa.array(self.end))),
                "generation": pa.array(self.generation), "flow_id": self.flow_ids}
        state = {"arg_names": {str(g): {str(k): v for k, v in d.items()} for g, d in self.arg_names.items()},
                 "arg_strings": {str(g): {str(k): v for k, v in d.items()} for g, d in self.arg_strings.items()}}
        return cols, state

    @classmethod
    def from_cache(cls, cols: dict[str, pa.Array], state: dict[str, Any]) -> PerfettoArgs:
        def back(d: dict[str, dict[str, str]]) -> dict[int, dict[int, str]]:
            return {int(g): {int(k): v for k, v in m.items()} for g, m in d.items()}

        n = len(cols["begin"])
        blobs = pa.chunked_array([cols["begin"], cols["end"]], cols["begin"].type)
        return cls(blobs, np.arange(n), np.arange(n, 2 * n), cols["generation"].to_numpy(zero_copy_only=False),
                   back(state["arg_names"]), back(state["arg_strings"]), cols["flow_id"])


def _one(a: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(a, pa.ChunkedArray):
        return a.combine_chunks() if a.num_chunks != 1 else a.chunk(0)
    return a


def decoded_annotations(blob: bytes, names: dict[int, str], strings: dict[int, str]) -> dict[str, Any]:
    try:
        event = pb.TrackEvent.FromString(blob)
    except DecodeError:
        return {"(annotations)": "(could not be decoded)"}
    out: dict[str, Any] = {}
    for a in event.debug_annotations:
        key = _text(a.name) if a.HasField("name") else names.get(a.name_iid, f"(name {a.name_iid})")
        out[key] = _value(a, names, strings)
    return out


def _text(v: Any) -> Any:
    """A string field as text: the protobuf classes give the bytes of one that is not UTF-8."""
    return bytes(v).decode("utf-8", "replace") if isinstance(v, bytes | bytearray) else v


def _value(a: Any, names: dict[int, str], strings: dict[int, str]) -> Any:
    which = a.WhichOneof("value")
    if which is None:
        if a.dict_entries:
            return {(_text(e.name) if e.HasField("name") else names.get(e.name_iid, f"(name {e.name_iid})")):
                    _value(e, names, strings) for e in a.dict_entries}
        if a.array_values:
            return [_value(e, names, strings) for e in a.array_values]
        return None
    if which == "string_value_iid":
        return strings.get(a.string_value_iid, f"(string {a.string_value_iid})")
    if which == "pointer_value":
        return hex(a.pointer_value)
    if which == "legacy_json_value":
        try:
            return orjson.loads(a.legacy_json_value)
        except orjson.JSONDecodeError:
            return _text(a.legacy_json_value)
    if which == "nested_value":
        return _nested(a.nested_value)
    if which == "proto_value":
        return base64.b64encode(a.proto_value).decode()
    return _text(getattr(a, which))


def _nested(v: Any) -> Any:
    kind = v.nested_type
    if kind == pb.DebugAnnotation.NestedValue.DICT:
        return {_text(k): _nested(x) for k, x in zip(v.dict_keys, v.dict_values, strict=False)}
    if kind == pb.DebugAnnotation.NestedValue.ARRAY:
        return [_nested(x) for x in v.array_values]
    for f in ("int_value", "double_value", "bool_value", "string_value"):
        if v.HasField(f):
            return _text(getattr(v, f))
    return None
