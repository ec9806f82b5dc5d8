"""Chrome trace event JSON: PyTorch profiler / Kineto traces, NDET output, catapult traces.

Events are pulled into columns with one comprehension per field (no object per event is
kept but the parsed `args`, which become extra_attributes_json only when asked for).
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import zlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from ..errors import LoadWarnings, ProfileError
from ..model.filters import Filters
from ..model.profile import Counters, Profile
from ..model.schema import HARDWARE_EVENTS, INCOMPLETE, ROW, check_ids, normalise
from ..progress import progress
from .chrome_flows import SliceIndex, bind_flows
from .sniff import head, looks_like_json

DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "gpu_op",
                               "Kernel", "Memcpy", "Memset", "mtia_ccp_events"})
_RUNTIME_PREFIXES = ("nrt", "kbl_", "kmgr", "dmem_", "sync_exec", "device_exec", "runtime_execute", "model_load")
_UNSUPPORTED = {"P": "sample", "O": "object snapshot", "N": "object created", "D": "object destroyed",
                "(": "context enter", ")": "context exit", "V": "memory dump", "v": "memory dump"}
_ASYNC = "__async__"
_PAIRS = {"B": "B", "E": "B", "b": "b", "e": "b", "S": "S", "F": "S"}
_INSTANT = frozenset({"i", "I", "R", "n", "T", "p"})
_US_LIMIT = 9.2e15  # microseconds beyond which nanoseconds overflow int64
_ADVICE_JSON = "The file may be cut short (still being written, or copied incompletely); record or copy it again"


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    data = head(path)
    if not looks_like_json(data):
        return False
    s = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if s.startswith(b"["):
        return True
    if b'"traceEvents"' in data:
        return True
    # Other Neuron JSON outputs announce themselves early; leave them to their readers.
    return not (b'"trace_event"' in data or b'"data_version"' in data)


def _read_bytes(path: Path) -> bytes:
    with open(path, "rb") as f:
        magic = f.read(6)
    try:
        if magic.startswith(b"\x1f\x8b"):
            return gzip.decompress(path.read_bytes())
        if magic.startswith(b"BZh"):
            return bz2.decompress(path.read_bytes())
        if magic.startswith(b"\xfd7zXZ"):
            return lzma.decompress(path.read_bytes())
    except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
        raise ProfileError(path, f"the compressed data is damaged or cut short ({exc})",
                           "Copy the file again, or decompress it by hand to see how much is readable") from None
    if path.suffix in (".gz", ".gzip"):
        # Named .gz but not gzip: read as it is, it may simply be plain JSON.
        pass
    return path.read_bytes()


def _parse(path: Path, raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        text = raw.rstrip()
        if text.lstrip()[:1] == b"[":
            # The trace-event format lets the array form end without its closing bracket.
            try:
                return orjson.loads(text.rstrip(b",") + b"]")
            except orjson.JSONDecodeError:
                pass
        raise ProfileError(path, f"is not valid JSON ({exc})", _ADVICE_JSON) from None


def _ns(values: list, warnings: LoadWarnings, origin: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Microsecond values (ints, floats, numeric strings) as int64 ns, and which were usable."""
    try:
        first = np.array(values) if values else np.zeros(0, dtype=np.int64)
        if first.ndim != 1 or first.dtype.kind not in "iuf":
            raise TypeError("not plain numbers")
        exact = first if first.dtype == np.int64 else None
        arr = first.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        arr = np.array([_to_float(v) for v in values], dtype=np.float64)
        exact = None
    ok = np.isfinite(arr) & (np.abs(arr) < _US_LIMIT)
    bad = int((~ok).sum())
    if bad:
        warnings.add(f"{origin}: events whose {what} is missing, not a number or out of range, dropped", bad)
    if exact is not None and ok.all():
        return exact * 1000, ok
    safe = np.where(ok, arr, 0.0)
    # Split whole microseconds from the fraction so the product keeps float64's precision.
    whole = np.floor(safe)
    ns = whole.astype(np.int64) * 1000 + np.rint((safe - whole) * 1000).astype(np.int64)
    return ns, ok


def _to_float(v: Any) -> float:
    if isinstance(v, bool):
        return float("nan")
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def _int_ids(values: list, names: dict[Any, str], kind: str) -> np.ndarray:
    """pid/tid as int64; text ids ('Spans') get negative numbers and keep their text as a name."""
    try:
        arr = np.array(values)
    except (OverflowError, ValueError):
        arr = np.array([0], dtype=object)
    if arr.dtype == np.int64 and arr.ndim == 1:
        return arr
    mapping: dict[Any, int] = {}
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if type(v) is int and -(2**63) <= v < 2**63:
            out[i] = v
            continue
        key = v if isinstance(v, str | int | float | None) else repr(v)
        code = mapping.get(key)
        if code is None:
            code = _id_from_text(key)
            if code is None:
                code = -1 - len(names)
                names[code] = str(key) if key is not None else f"(no {kind})"
            mapping[key] = code
        out[i] = code
    return out


def _id_from_text(v: Any) -> int | None:
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        n = int(v)
        return n if -(2**63) <= n < 2**63 else None
    return None


@dataclass
class ChromeLazy:
    args: list[Any]
    flow_ids: pa.Array

    def names(self) -> list[str]:
        return ["flow_id", "extra_attributes_json"]

    def column(self, name: str) -> pa.ChunkedArray:
        if name == "flow_id":
            return pa.chunked_array([self.flow_ids])
        return pa.chunked_array([pa.array([_dumps(a) for a in self.args], pa.string())])

    def value(self, name: str, event: dict[str, Any]) -> Any:
        row = event[ROW]
        return self.flow_ids[row].as_py() if name == "flow_id" else _dumps(self.args[row])


def _dumps(args: Any) -> str | None:
    if args is None or args == {}:
        return None
    try:
        return orjson.dumps(args, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:
        # Integers past 64 bits: the standard library writes them exactly.
        return json.dumps(args, default=str)


def _as_dict(args: Any) -> dict:
    """Arguments as a dict; a trace's non-object `args` is kept under "args"."""
    if isinstance(args, dict):
        return args
    return {} if args is None else {"args": args}


def _instance(doc: Any, path: Path) -> str:
    if isinstance(doc, dict):
        for key in ("hostname", "host_name", "instance_id"):
            if isinstance(doc.get(key), str) and doc[key]:
                return doc[key]
        dist = doc.get("distributedInfo")
        if isinstance(dist, dict) and dist.get("rank") is not None:
            return f"rank{dist['rank']}"
    name = path.name
    for suffix in (".gz", ".json", ".trace", ".pt"):
        name = name.removesuffix(suffix)
    return name or "host"


def _source(name: str, cat: Any) -> str:
    if cat in DEVICE_CATEGORIES:
        return "device"
    if cat in ("neuron_rt", "neuron_hw", "framework", "device"):
        return str(cat)
    if name in HARDWARE_EVENTS or name.startswith(("nc_", "cc_")) or name == "numerical_error":
        return "neuron_hw"
    if name.startswith(_RUNTIME_PREFIXES):
        return "neuron_rt"
    return "framework"


def read(path: Path, filters: Filters) -> Profile:
    del filters  # applied after the load by load_profile
    origin = path.name
    with progress(f"reading {path.name}", None, "steps") as bar:
        doc = _parse(path, _read_bytes(path))
        bar.update(1)
    if isinstance(doc, list):
        events, meta = doc, {}
    elif isinstance(doc, dict):
        events = doc.get("traceEvents")
        if events is None:
            keys = ", ".join(list(doc)[:8])
            raise ProfileError(path, f"is JSON but has no traceEvents list (its keys: {keys})",
                               "Pass a Chrome trace (PyTorch profiler trace.json, NDET output) or a Neuron Explorer export")
        if not isinstance(events, list):
            raise ProfileError(path, f"traceEvents is a {type(events).__name__}, not a list",
                               "The file does not follow the Chrome trace event format")
        meta = {k: v for k, v in doc.items() if k != "traceEvents"}
    else:
        raise ProfileError(path, f"is JSON but holds a {type(doc).__name__}, not trace events",
                           "Pass a Chrome trace (an object with traceEvents, or an array of events)")
    warnings = LoadWarnings()
    built = _Builder(path, origin, warnings, _instance(doc, path))
    built.collect(events)
    table, lazy, counters = built.finish()
    table = normalise(table, warnings, origin)
    check_ids(table, warnings, origin)
    metadata = {**{k: v for k, v in meta.items() if k != "deviceProperties"}, **built.metadata()}
    if "deviceProperties" in meta:
        metadata["deviceProperties"] = meta["deviceProperties"]
    return Profile(table, source=str(path), format="chrome-json", warnings=warnings, lazy=lazy,
                   counters=Counters({"counters": counters}) if counters is not None else None,
                   metadata=metadata, extra={"filters_applied": False})


class _Builder:
    """Turns a list of trace events into columns."""

    def __init__(self, path: Path, origin: str, warnings: LoadWarnings, instance: str) -> None:
        self.path, self.origin, self.warnings, self.instance = path, origin, warnings, instance
        self.by_phase: dict[Any, list[dict]] = defaultdict(list)
        self.pid_names: dict[int, str] = {}
        self.tid_names: dict[int, str] = {}
        self.process_names: dict[int, str] = {}
        self.thread_names: dict[tuple[int, int], str] = {}
        self.sort_index: dict[str, dict] = {"process": {}, "thread": {}}
        # Begin/end events of each pairing kind, in file order (ties in ts keep that order).
        self.paired: dict[str, list[dict]] = defaultdict(list)

    def collect(self, events: list) -> None:
        nondict = 0
        paired = self.paired
        for e in events:
            if type(e) is dict:
                ph = e.get("ph")
                self.by_phase[ph].append(e)
                if ph in _PAIRS:
                    paired[_PAIRS[ph]].append(e)
            else:
                nondict += 1
        self.warnings.add(f"{self.origin}: entries of traceEvents that are not objects, skipped", nondict)
        for ph, group in self.by_phase.items():
            if ph in _UNSUPPORTED:
                self.warnings.add(f"{self.origin}: '{ph}' ({_UNSUPPORTED[ph]}) events are not drawn", len(group))
            elif ph not in ("X", "B", "E", "M", "C", "s", "t", "f", "b", "e", "S", "F") and ph not in _INSTANT:
                self.warnings.add(f"{self.origin}: events with unknown phase {ph!r} are not drawn", len(group))

    # -- slices ---------------------------------------------------------------------
    def _slices(self) -> tuple[list[dict], list[Any], list[bool]]:
        """All drawable events as dicts with ts/dur in µs, their args, and incomplete flags."""
        events: list[dict] = []
        complete = self.by_phase.get("X", [])
        events.extend(complete)
        for ph in _INSTANT:
            events.extend(self.by_phase.get(ph, []))
        paired, incomplete = self._pair_begin_end()
        events.extend(paired)
        args = [e.get("args") for e in events]
        flags = [False] * (len(events) - len(paired)) + incomplete
        return events, args, flags

    def _pair_begin_end(self) -> tuple[list[dict], list[bool]]:
        """B/E per thread, b/e per async id, S/F per async id: matched in time order."""
        out: list[dict] = []
        flags: list[bool] = []
        groups = [("B", "E", lambda e: ("t", _h(e.get("pid")), _h(e.get("tid"))), "B/E"),
                  ("b", "e", lambda e: ("a", _h(e.get("cat")), _async_id(e)), "b/e"),
                  ("S", "F", lambda e: ("s", _h(e.get("cat")), _h(e.get("name")), _async_id(e)), "S/F")]
        for begin, end, key_of, label in groups:
            seq = sorted(self.paired.get(begin, []), key=_ts_key)
            if not seq:
                continue
            stacks: dict[Any, list[dict]] = defaultdict(list)
            unmatched_end = 0
            for e in seq:
                key = key_of(e)
                if e.get("ph") == begin:
                    stacks[key].append(e)
                    continue
                stack = stacks.get(key)
                if not stack:
                    unmatched_end += 1
                    continue
                b = stack.pop()
                merged = dict(b)
                merged["dur"] = _num(e.get("ts")) - _num(b.get("ts"))
                if e.get("args") is not None:
                    merged["args"] = {**_as_dict(b.get("args")), **_as_dict(e["args"])}
                if begin != "B":
                    merged["args"] = {**_as_dict(merged.get("args")), "async_id": key[-1][-1]}
                    merged[_ASYNC] = True
                out.append(merged)
                flags.append(False)
            where = 'thread' if label == 'B/E' else 'async id'
            self.warnings.add(f"{self.origin}: '{end}' events with no open '{begin}' on their {where}, ignored",
                              unmatched_end)
            unclosed = [b for stack in stacks.values() for b in stack]
            for b in unclosed:
                # The end is set to the trace's last time once all columns are known.
                merged = dict(b)
                merged["dur"] = 0
                if begin != "B":
                    merged[_ASYNC] = True
                out.append(merged)
                flags.append(True)
            self.warnings.add(f"{self.origin}: '{begin}' events never ended "
                              "(shown open to the trace end, marked incomplete)", len(unclosed))
        return out, flags

    # -- metadata -------------------------------------------------------------------
    def _metadata_events(self) -> None:
        for e in self.by_phase.get("M", []):
            args = e.get("args")
            args = args if isinstance(args, dict) else {}
            pid, tid = _h(e.get("pid")), _h(e.get("tid"))
            name = e.get("name")
            if name == "process_name":
                self.process_names[pid] = str(args.get("name", ""))
            elif name == "thread_name":
                self.thread_names[(pid, tid)] = str(args.get("name", ""))
            elif name == "process_sort_index":
                self.sort_index["process"][pid] = args.get("sort_index")
            elif name == "thread_sort_index":
                self.sort_index["thread"][(pid, tid)] = args.get("sort_index")

    def metadata(self) -> dict[str, Any]:
        return {"process_names": {str(k): v for k, v in self.process_names.items()},
                "thread_names": {f"{k[0]}/{k[1]}": v for k, v in self.thread_names.items()},
                "sort_index": {"process": {str(k): v for k, v in self.sort_index["process"].items()},
                               "thread": {f"{k[0]}/{k[1]}": v for k, v in self.sort_index["thread"].items()}},
                "text_ids": {"process": {str(k): v for k, v in self.pid_names.items()},
                             "thread": {str(k): v for k, v in self.tid_names.items()}}}

    # -- columns --------------------------------------------------------------------
    def finish(self) -> tuple[pa.Table, ChromeLazy, pd.DataFrame | None]:
        self._metadata_events()
        events, args, flags = self._slices()
        w, origin = self.warnings, self.origin
        start, ok_ts = _ns([e.get("ts") for e in events], w, origin, "ts")
        dur_raw = [e.get("dur", 0) if e.get("ph") in ("X", "B", "b", "S") else 0 for e in events]
        dur, ok_dur = _ns([0 if d is None else d for d in dur_raw], w, origin, "dur")
        neg = (dur < 0) & ok_dur
        dur = np.where(ok_dur, dur, 0)
        names = ["" if (n := e.get("name")) is None else str(n) for e in events]
        cats = [c if c is None or type(c) is str else str(c) for c in (e.get("cat") for e in events)]
        pids = _int_ids([e.get("pid", 0) for e in events], self.pid_names, "pid")
        tids = _int_ids([e.get("tid", 0) for e in events], self.tid_names, "tid")
        name_codes, name_uniques = pd.factorize(pd.Series(names, dtype=object))
        cat_codes, cat_uniques = pd.factorize(pd.Series(cats, dtype=object), use_na_sentinel=False)
        pair_codes, pair_uniques = pd.factorize(pd.Series(name_codes * (len(cat_uniques) + 1) + cat_codes))
        src_of_pair = [_source(str(name_uniques[p // (len(cat_uniques) + 1)]), cat_uniques[p % (len(cat_uniques) + 1)])
                       for p in pair_uniques]
        src_codes, src_values = pd.factorize(pd.Series(src_of_pair, dtype=object))
        source = pa.DictionaryArray.from_arrays(pa.array(src_codes[pair_codes], pa.int32()),
                                                pa.array(list(src_values), pa.string()))
        nc = _arg_column(args, ("nc_idx", "nc"))
        end = start + np.where(neg, 0, dur)
        flag = np.array(flags, dtype=bool)
        if flag.any():
            end[flag] = max(int(end[ok_ts].max(initial=0)), int(start[ok_ts].max(initial=0)))
        ids = np.arange(len(events), dtype=np.int64)
        table = pa.table({
            "id": ids, "name": pa.DictionaryArray.from_arrays(pa.array(name_codes, pa.int32()),
                                                              pa.array(list(name_uniques), pa.string())),
            "start_ts": start, "end_ts": end, "duration_ns": end - start,
            "trace_event_source": source,
            "instance_id": pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(events), np.int32)), pa.array([self.instance])),
            "process_id": pids, "thread_id": tids, "nc_idx": nc,
            # Async slices overlap freely: like Chrome and Perfetto, give them rows of their own.
            "framework_stream_id": pa.array([f"async:{c if c is not None else e.get('name')}" if e.get(_ASYNC) else None
                                             for e, c in zip(events, cats, strict=True)], pa.string()),
            "category": pa.array([None if c is None else str(c) for c in cats], pa.string()).dictionary_encode(),
            INCOMPLETE: pa.array(flag),
            ROW: pa.array(np.arange(len(events), dtype=np.int32)),
        })
        w.add(f"{origin}: events with a negative duration, shown with zero duration", int(neg.sum()))
        if not ok_ts.all():
            table = table.filter(pa.array(ok_ts))
        flow_ids = self._flows(table, len(events))
        counters = self._counters()
        return table, ChromeLazy(args, flow_ids), counters

    def _flows(self, table: pa.Table, n_events: int) -> pa.Array:
        points = [(e, ph) for ph in ("s", "t", "f") for e in self.by_phase.get(ph, [])]
        if not points:
            return pa.nulls(n_events, pa.list_(pa.string()))
        pids = table.column("process_id").to_numpy()
        tids = table.column("thread_id").to_numpy()
        p_pid = _int_ids([e.get("pid", 0) for e, _ in points], self.pid_names, "pid")
        p_tid = _int_ids([e.get("tid", 0) for e, _ in points], self.tid_names, "tid")
        # One code per (pid, tid) shared by slices and flow points.
        pid_code, _ = pd.factorize(np.r_[pids, p_pid])
        tid_code, tid_u = pd.factorize(np.r_[tids, p_tid])
        codes = pid_code.astype(np.int64) * max(len(tid_u), 1) + tid_code
        slice_thread, point_thread = codes[: pids.size], codes[pids.size:]
        index = SliceIndex(slice_thread, table.column("start_ts").to_numpy(), table.column("end_ts").to_numpy())
        ts, ok = _ns([e.get("ts") for e, _ in points], LoadWarnings(), self.origin, "ts")
        fids = [_flow_id(e.get("id2", e.get("id"))) for e, _ in points]
        enclosing = np.array([ph != "f" or e.get("bp") == "e" for e, ph in points], dtype=bool)
        keep = np.flatnonzero(ok)
        self.warnings.add(f"{self.origin}: flow events without a usable ts (arrows not drawn)", int((~ok).sum()))
        return bind_flows([fids[i] for i in keep], point_thread[keep], ts[keep], enclosing[keep], index,
                          table.column(ROW).to_numpy(), n_events, self.warnings, self.origin)

    def _counters(self) -> pd.DataFrame | None:
        group = self.by_phase.get("C")
        if not group:
            return None
        rows = []
        bad = 0
        for e in group:
            args = e.get("args") or {}
            for series, value in (args.items() if isinstance(args, dict) else []):
                v = _to_float(value)
                if not np.isfinite(v):
                    bad += 1
                    continue
                rows.append((e.get("ts"), self.instance, e.get("pid", 0), str(e.get("name", "")), str(series), v))
        self.warnings.add(f"{self.origin}: counter values that are not numbers, skipped", bad)
        df = pd.DataFrame(rows, columns=["ts_us", "instance_id", "process_id", "name", "series", "value"])
        ts, ok = _ns(df["ts_us"].tolist(), self.warnings, self.origin, "counter ts")
        df = df.assign(timestamp=ts).loc[ok].drop(columns="ts_us")
        return df[["timestamp", "instance_id", "process_id", "name", "series", "value"]].reset_index(drop=True)


def _h(v: Any) -> Any:
    """A value usable as a dict key (traces put lists where ids belong)."""
    return v if v is None or type(v) in (str, int, float, bool) else repr(v)


def _flow_id(fid: Any) -> str:
    if type(fid) is dict:
        fid = fid.get("global", fid.get("local"))
    return fid if type(fid) is str else str(fid)


def _async_id(e: dict) -> Any:
    """Async ids are global, except `id2: {"local": ...}`, which is scoped to the process."""
    id2 = e.get("id2")
    if isinstance(id2, dict):
        if "global" in id2:
            return ("g", str(id2["global"]))
        return ("l", _h(e.get("pid")), str(id2.get("local")))
    return ("g", str(e.get("id")))


def _num(v: Any) -> float:
    if isinstance(v, int | float):
        return float(v)
    return _to_float(v) if v is not None else 0.0


def _ts_key(e: dict) -> float:
    t = _num(e.get("ts"))
    return t if np.isfinite(t) else float("inf")


def _arg_column(args: list[Any], keys: tuple[str, ...]) -> pa.Array:
    """An integer argument lifted into a column (NDET's `nc`), null where absent."""
    first, second = keys
    vals = [a.get(first, a.get(second)) if type(a) is dict else None for a in args]
    return pa.array([v if type(v) is int else None for v in vals], pa.int64())
