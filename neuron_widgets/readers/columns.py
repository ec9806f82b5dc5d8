"""Turning lists of JSON values into typed columns, counting what does not fit."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import LoadWarnings, ProfileError
from ..model.schema import HARDWARE_EVENTS, ROW
from .sniff import read_all, repaired

ADVICE_JSON = "The file may be cut short (still being written, or copied incompletely); record or copy it again"
INT64 = (-(2**63), 2**63)
# Times in a Profile are int64 ns within +-TS_LIMIT (146 years from the clock's zero), so that the
# difference of any two fits in int64; readers drop (or zero, for a duration) what lands past it.
TS_LIMIT = 2**62 - 1
DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "gpu_op",
                               "Kernel", "Memcpy", "Memset", "mtia_ccp_events"})
_RUNTIME_PREFIXES = ("nrt", "kbl_", "kmgr", "dmem_", "sync_exec", "device_exec", "runtime_execute", "model_load")


def read_json(path: Path) -> Any:
    """A JSON document, decompressed by its magic bytes; errors name the file."""
    data = read_all(path)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ProfileError(path, f"is not valid JSON ({exc})", ADVICE_JSON) from None


def ints(values: list[Any], warnings: LoadWarnings, what: str) -> tuple[np.ndarray, np.ndarray]:
    """int64 values (numeric strings and whole floats accepted) and which of them were usable."""
    try:
        arr = np.array(values)
        # NumPy would read true/false as 1/0: booleans are not times or ids.
        if arr.ndim == 1 and arr.dtype == np.int64 and bool not in set(map(type, values)):
            return arr, np.ones(arr.size, dtype=bool)
    except (OverflowError, ValueError):
        pass
    out = np.zeros(len(values), dtype=np.int64)
    ok = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        n = _as_int(v)
        if n is not None:
            out[i], ok[i] = n, True
    warnings.add(what, int((~ok).sum()))
    return out, ok


def _as_int(v: Any) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v if INT64[0] <= v < INT64[1] else None
    if isinstance(v, float):
        return int(v) if np.isfinite(v) and INT64[0] <= v < INT64[1] else None
    if isinstance(v, str):
        s = v.strip()
        if re.fullmatch(r"-?[0-9]+", s):  # ASCII digits only: "²".isdigit() is true
            return _as_int(int(s))
        try:
            return _as_int(float(s))
        except ValueError:
            return None
    return None


def optional_ints(values: list[Any]) -> pa.Array:
    """An int64 column, null where a value is absent or not an integer."""
    try:
        # Ints and nulls (and floats, truncated as `_as_int` does) in one C loop; Arrow refuses what
        # `_as_int` reads differently (booleans, text, NaN, past 64 bits), which goes value by value.
        return pa.array(values, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        pass
    return pa.array([n if (n := _as_int(v)) is not None else None for v in values], pa.int64())


def strings(values: list[Any]) -> pa.DictionaryArray:
    texts = [v if type(v) is str else ("" if v is None else str(v)) for v in values]
    codes, uniques = pd.factorize(pd.Series(texts, dtype=object))
    return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(list(uniques), pa.string()))


def json_text(args: Any) -> str | None:
    """Arguments as JSON text: raw bytes as they were in the file, Python values serialised."""
    if isinstance(args, msgspec.Raw):
        data = bytes(args)
        return None if data in (b"", b"null", b"{}") else data.decode("utf-8", "replace")
    if args is None or args == {}:
        return None
    try:
        return orjson.dumps(args, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:  # integers past 64 bits
        return msgspec.json.encode(args).decode()


def _encoded(args: Any) -> bytes | None:
    text = json_text(args)
    return None if text is None else text.encode()


@dataclass
class ArgsLazy:
    """extra_attributes_json and flow_id of a JSON reader, built only when asked for.

    `args` holds one entry per source row: raw JSON bytes, a dict, or None.
    """

    args: list[Any]
    flow_ids: pa.Array | None = None

    def names(self) -> list[str]:
        return ["flow_id", "extra_attributes_json"] if self.flow_ids is not None else ["extra_attributes_json"]

    def column(self, name: str) -> pa.ChunkedArray:
        if name == "flow_id" and self.flow_ids is not None:
            return pa.chunked_array([self.flow_ids])
        return pa.chunked_array([pa.array([json_text(a) for a in self.args], pa.string())])

    def take(self, name: str, rows: np.ndarray) -> pa.Array:
        if name == "flow_id" and self.flow_ids is not None:
            return self.flow_ids.take(pa.array(np.asarray(rows, dtype=np.int64)))
        rows = np.asarray(rows, np.int64)
        picked = [self.args[int(r)] for r in rows] if rows.size < 2 else itemgetter(*rows.tolist())(self.args)
        raw = msgspec.Raw
        if set(map(type, picked)) == {raw}:
            # All raw JSON (a file's own arguments): joined into one buffer without a copy per value.
            data = b"".join(picked)
            if len(data) < 2**31:
                offsets = np.zeros(len(picked) + 1, np.int32)
                np.cumsum(np.fromiter(map(len, picked), np.int32, len(picked)), out=offsets[1:])
                return pa.Array.from_buffers(pa.binary(), len(picked), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
                                             ).cast(pa.string())
        # Raw JSON bytes go to Arrow as they are (one UTF-8 check for all); other values are serialised.
        values = [bytes(a) if type(a) is raw else _encoded(a) for a in picked]
        return pa.array(values, pa.binary()).cast(pa.string())

    def value(self, name: str, event: dict[str, Any]) -> Any:
        row = event[ROW]
        if name == "flow_id" and self.flow_ids is not None:
            return self.flow_ids[row].as_py()
        return json_text(self.args[row])


class WorkedOutArgs(ArgsLazy):
    """extra_attributes_json worked out row by row from the file's bytes when asked for (a
    subclass says how), so no row needs a Python object while the file loads."""

    def rows(self) -> int:
        return len(self.args)

    def text(self, row: int) -> str | None:
        raise NotImplementedError

    def column(self, name: str) -> pa.ChunkedArray:
        return pa.chunked_array([pa.array([self.text(r) for r in range(self.rows())], pa.string())])

    def take(self, name: str, rows: np.ndarray) -> pa.Array:
        return pa.array([self.text(r) for r in np.asarray(rows, np.int64).tolist()], pa.string())

    def value(self, name: str, event: dict[str, Any]) -> Any:
        return self.text(event[ROW])


class LeftoverArgs(WorkedOutArgs):
    """Rows that are whole JSON objects (`args`: each row's bytes): the object less the keys the
    reader made columns of."""

    def __init__(self, args: list[Any], used: frozenset[str]) -> None:
        super().__init__(args)
        self.used = used

    def text(self, row: int) -> str | None:
        obj = decode_raw(self.args[row])
        return json_text({k: v for k, v in obj.items() if k not in self.used} or None)


def decode_raw(raw: msgspec.Raw) -> Any:
    """An event's bytes as Python values. A lone escaped surrogate ("\udc80") in a key the load
    skipped is met only here: replaced by U+FFFD as the load replaces those it meets."""
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return msgspec.json.decode(repaired(bytes(raw))[0])


class Codes:
    """Strings coded against one table across batches of rows."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}

    def add(self, values: list[Any]) -> np.ndarray:
        if not values:
            return np.zeros(0, np.int32)
        codes, uniques = pd.factorize(pd.Series(values, dtype=object))
        return np.array([self.index.setdefault(u, len(self.index)) for u in uniques], np.int32)[codes]


_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RAWS = msgspec.json.Decoder(list[msgspec.Raw])


def document(path: Path, keys: tuple[str, ...], what: str) -> tuple[dict[str, Any], list[msgspec.Raw]]:
    """A JSON object's values other than its event list, and each entry of that list as its bytes.

    The list under the first of `keys` is split, not decoded: its entries stay in the file's bytes
    until a reader decodes them a batch at a time. Errors are `event_list`'s, naming the file.
    """
    top, key = top_members(path, keys, what)
    try:
        raws = _RAWS.decode(top[key])
    except msgspec.ValidationError:
        event_list({key: msgspec.json.decode(top[key])}, path, (key,), what)
        raise
    return other_values(top, keys, path), raws


def top_members(path: Path, keys: tuple[str, ...], what: str) -> tuple[dict[str, msgspec.Raw], str]:
    """A JSON object's members as their bytes (the whole document checked by msgspec), and which of
    `keys` (the first it has) holds its event list; errors are `event_list`'s, naming the file."""
    data = read_all(path)
    try:
        top = _TOP.decode(data)
    except msgspec.ValidationError:  # JSON, but not an object: said as for a whole decoded document
        event_list(read_json(path), path, keys, what)
        raise
    except msgspec.DecodeError as exc:
        raise ProfileError(path, f"is not valid JSON ({exc})", ADVICE_JSON) from None
    key = next((k for k in keys if k in top), None)
    if key is None:
        event_list(top, path, keys, what)  # raises: which keys the file has instead
        raise AssertionError("event_list raises when none of the keys is there")
    return top, key


def other_values(top: dict[str, msgspec.Raw], keys: tuple[str, ...], path: Path) -> dict[str, Any]:
    """The members of `top` other than the event lists under `keys`, decoded."""
    try:
        return {k: msgspec.json.decode(v) for k, v in top.items() if k not in keys}
    except msgspec.DecodeError as exc:  # a lone escaped surrogate: read again with it replaced (readers.load_profile)
        raise ProfileError(path, f"is not valid JSON ({exc})", ADVICE_JSON) from None


R = TypeVar("R", bytes, msgspec.Raw)  # an entry of an event list: its bytes, or msgspec's view of them


def batches(raws: list[R], many: msgspec.json.Decoder[Any], one: Callable[[R], Any],
            size: int) -> Iterator[tuple[list[R], list[Any]]]:
    """The entries `size` at a time, decoded by `many` (a list decoder) into structs: each batch's
    entries and their structs. When a batch does not decode whole, each entry is decoded by `one`,
    and those it gives None for (not objects) are left out of both."""
    for lo in range(0, len(raws), size):
        chunk = raws[lo:lo + size]
        try:
            decoded = many.decode(b"[" + b",".join(chunk) + b"]")
        except msgspec.ValidationError:
            pairs = [(r, e) for r in chunk if (e := one(r)) is not None]
            chunk, decoded = [r for r, _ in pairs], [e for _, e in pairs]
        yield chunk, decoded


def valued_ints(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """int64 values (0 where unusable, as `optional_ints` reads them) and where they are usable."""
    col = optional_ints(values)
    ok = col.is_valid().to_numpy(zero_copy_only=False)
    return col.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False), ok


def event_list(doc: Any, path: Path, keys: tuple[str, ...], what: str) -> list[dict[str, Any]]:
    """The list of event objects under the first of `keys`; non-objects are rejected by the caller."""
    if not isinstance(doc, dict):
        raise ProfileError(path, f"is JSON but holds a {type(doc).__name__}, not {what}",
                           f"Pass the {what} file itself")
    for key in keys:
        if key in doc:
            events = doc[key]
            if not isinstance(events, list):
                raise ProfileError(path, f"'{key}' is a {type(events).__name__}, not a list of events",
                                   "The file does not follow the published layout; re-export it")
            return events
    found = ", ".join(list(doc)[:8])
    raise ProfileError(path, f"has no {' / '.join(keys)} list (its keys: {found})", f"Pass the {what} file itself")


def event_source(name: str, cat: Any) -> str:
    if cat in DEVICE_CATEGORIES:
        return "device"
    if cat in ("neuron_rt", "neuron_hw", "framework", "device"):
        return str(cat)
    if name in HARDWARE_EVENTS or name.startswith(("nc_", "cc_")) or name == "numerical_error":
        return "neuron_hw"
    if name.startswith(_RUNTIME_PREFIXES):
        return "neuron_rt"
    return "framework"


def unique_dictionaries(table: pa.Table) -> pa.Table:
    """The table with each dictionary holding each value once: pandas refuses a category twice, so a
    repeated entry (from a reader or a file's own dictionary) would break every frame of the profile."""
    for i, f in enumerate(table.schema):
        if not pa.types.is_dictionary(f.type):
            continue
        chunks = list(table.column(i).chunks)
        repeated = [k for k, ch in enumerate(chunks)
                    if len(ch.dictionary) > 1 and pc.count_distinct(ch.dictionary, mode="all").as_py() < len(ch.dictionary)]
        for k in repeated:
            ch = chunks[k]
            values = pc.unique(ch.dictionary)
            remap = pc.index_in(ch.dictionary, value_set=values).cast(ch.indices.type)
            chunks[k] = pa.DictionaryArray.from_arrays(remap.take(ch.indices), values)
        if repeated:
            table = table.set_column(i, f.name, pa.chunked_array(chunks, f.type))
    return table
