"""Chrome trace event JSON: PyTorch profiler / Kineto traces, NDET output, catapult traces.

A plain trace's columns come straight from its bytes (fast.py); any other takes msgspec's road,
events decoded into typed structs (events.py) and pulled into columns with one comprehension per
field. Both end in gathered.Gathered; arguments stay raw JSON until a view asks for them.
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa

from ...errors import LoadWarnings, ProfileError
from ...model.filters import Filters
from ...model.grouping import ASYNC_STREAM
from ...model.lazy import LazyColumns
from ...model.profile import Counters, Profile
from ...model.schema import INCOMPLETE, ROW, check_ids, normalise
from ...progress import progress
from ..columns import ADVICE_JSON, TS_LIMIT, ArgsLazy, event_source
from ..sniff import head, looks_like_json, read_all
from . import fast
from .events import ANY, EVENTS, PAIR_OF, TOP, Ev, as_dict, h, num, pair, parse_args
from .flows import SliceIndex, bind_flows
from .gathered import Gathered, microseconds_to_ns, text_id
from .names import track_names

_UNSUPPORTED = {"P": "sample", "O": "object snapshot", "N": "object created", "D": "object destroyed",
                "(": "context enter", ")": "context exit", "V": "memory dump", "v": "memory dump"}
_INSTANT = ("i", "I", "R", "n", "T", "p")
_KNOWN = frozenset({"X", "M", "C", "s", "t", "f", *PAIR_OF, *_INSTANT})
_CORE_KEY = re.compile(rb'"nc(?:_idx)?"\s*:')
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)

# Bumped when the columns this reader builds change: parse-cache entries of other versions are not used.
# 4: `true` as a pid or tid is no longer process/thread 1.
VERSION = 4


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    data = head(path)
    if not looks_like_json(data):
        return False
    s = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if s.startswith(b"[") or b'"traceEvents"' in data:
        return True
    # Other Neuron JSON outputs announce themselves early; leave them to their readers.
    return not (b'"trace_event"' in data or b'"data_version"' in data)


def _top(path: Path, raw: bytes, warnings: LoadWarnings) -> tuple[list[Ev] | msgspec.Raw, dict[str, Any]]:
    """The events (decoded, for the array form) or the traceEvents array's raw JSON, and the other top-level keys."""
    text = raw.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] == b"[":
        try:
            return _events(path, text, warnings), {}
        except ProfileError:
            # The trace-event format lets the array form end without its closing bracket.
            fixed = text.rstrip().rstrip(b",") + b"]"
            try:
                return _events(path, fixed, warnings), {}
            except ProfileError:
                pass
            raise
    try:
        top = TOP.decode(text)
    except _DECODE_ERRORS as exc:
        if text[:1] == b"{":
            raise ProfileError(path, f"is not valid JSON ({exc})", ADVICE_JSON) from None
        raise ProfileError(path, "is JSON but holds no trace events",
                           "Pass a Chrome trace (an object with traceEvents, or an array of events)") from None
    if "traceEvents" not in top:
        keys = ", ".join(list(top)[:8])
        raise ProfileError(path, f"is JSON but has no traceEvents list (its keys: {keys})",
                           "Pass a Chrome trace (PyTorch profiler trace.json, NDET output) or a Neuron Explorer export")
    try:
        meta = {k: ANY.decode(bytes(v)) for k, v in top.items() if k != "traceEvents"}
    except msgspec.DecodeError as exc:  # a lone escaped surrogate: read again with it replaced (readers.load_profile)
        raise ProfileError(path, f"is not valid JSON ({exc})", ADVICE_JSON) from None
    return top["traceEvents"], meta


def _events(path: Path, data: bytes | msgspec.Raw, warnings: LoadWarnings) -> list[Ev]:
    try:
        return cast("list[Ev]", EVENTS.decode(data))  # list[_RawEv]: _RawEv is an Ev, and the list is only read
    except msgspec.ValidationError:
        pass  # entries of unusual shape: take the slow road below
    except msgspec.DecodeError as exc:
        raise ProfileError(path, f"is not valid JSON ({exc})", ADVICE_JSON) from None
    try:
        value = ANY.decode(data)
    except msgspec.DecodeError as exc:
        raise ProfileError(path, f"is not valid JSON ({exc})", ADVICE_JSON) from None
    if not isinstance(value, list):
        raise ProfileError(path, f"traceEvents is a {type(value).__name__}, not a list",
                           "The file does not follow the Chrome trace event format")
    fields = set(Ev.__struct_fields__)
    out = [Ev(**{k: v for k, v in e.items() if k in fields}) for e in value if isinstance(e, dict)]
    warnings.add(f"{path.name}: entries of traceEvents that are not objects, skipped", len(value) - len(out))
    return out


def _ns(values: Sequence[Any], warnings: LoadWarnings, origin: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Microsecond values (ints, floats, numeric strings) as int64 ns, and which were usable."""
    n = len(values)
    exact = arr = None
    types = set(map(type, values))
    try:
        if types == {int}:
            exact = np.fromiter(values, np.int64, n)
            arr = exact.astype(np.float64)
        elif types <= {int, float}:  # true/false are not times, though NumPy reads them as 1/0
            arr = np.fromiter(values, np.float64, n)
    except OverflowError:  # integers past 64 bits
        exact = None
        arr = None
    if arr is None:
        arr = np.array([num(v) for v in values], dtype=np.float64)
    return microseconds_to_ns(arr, exact, warnings, origin, what)


def _int_ids(values: Sequence[Any], names: dict[int, str], kind: str) -> np.ndarray:
    """pid/tid as int64; text ids ('Spans') get negative numbers and keep their text as a name."""
    n = len(values)
    if set(map(type, values)) == {int}:
        try:
            return np.fromiter(values, np.int64, n)
        except OverflowError:
            pass
    # Usually a few odd ids among integers: only those go through Python one by one.
    odd = [i for i, v in enumerate(values) if type(v) is not int or not -(2**63) <= v < 2**63]
    plain = list(values)
    for i in odd:
        plain[i] = 0
    out = np.fromiter(plain, np.int64, n)
    memo: dict[tuple[type, Any], int] = {}
    for i in odd:
        v = values[i]
        key = (type(v), h(v))
        code = memo.get(key)
        if code is None:
            code = memo[key] = text_id(v, names, kind)
        out[i] = code
    return out


def _base_ns(meta: dict[str, Any]) -> int:
    """Kineto writes `ts` relative to `baseTimeNanoseconds` (wall clock): adding it aligns ranks and hosts."""
    base = meta.get("baseTimeNanoseconds")
    return base if type(base) is int and 0 <= base < 2**62 else 0


def _instance(meta: dict[str, Any], path: Path) -> str:
    for key in ("hostname", "host_name", "instance_id"):
        if isinstance(meta.get(key), str) and meta[key]:
            return meta[key]
    dist = meta.get("distributedInfo")
    if isinstance(dist, dict) and dist.get("rank") is not None:
        return f"rank{dist['rank']}"
    name = path.name
    for suffix in (".gz", ".json", ".trace", ".pt"):
        name = name.removesuffix(suffix)
    return name or "host"


@contextmanager
def _collector_paused() -> Iterator[None]:
    # A load allocates millions of small objects and frees none: collection passes would only
    # walk them again and again.
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read(path: Path, filters: Filters) -> Profile:
    del filters  # applied after the load by load_profile
    with _collector_paused():
        return _read(path)


def _read(path: Path) -> Profile:
    origin = path.name
    with progress(f"reading {path.name}", None, "steps") as bar:
        raw = read_all(path)
        warnings = LoadWarnings()

        def builder(look_for_cores: bool) -> _Builder:
            return _Builder(origin, warnings, _instance(meta, path), look_for_cores=look_for_cores, base_ns=_base_ns(meta))

        gathered = None
        # The byte scan checks the document's syntax as it reads it: one pass, no msgspec parse before it.
        doc = fast.scanned(raw)
        if doc is not None:
            meta = doc.meta
            built = builder(False)
            gathered = fast.gather(doc, built)
            if gathered is None:  # not plain: the other road, from a clean start
                warnings = LoadWarnings()
            del doc
        if gathered is None:
            # msgspec's road: it also says what is wrong with a file that is not valid JSON.
            events, meta = _top(path, raw, warnings)
            # Only NDET-style traces carry a NeuronCore argument; most files need no look at args at all.
            built = builder(_CORE_KEY.search(raw) is not None)
            built.collect(events if isinstance(events, list) else _events(path, events, warnings))
            gathered = built.gather()
        bar.update(1)
    del raw
    table, lazy, counters = built.assemble(gathered)
    table = normalise(table, warnings, origin)
    check_ids(table, warnings, origin)
    metadata = {**meta, **built.metadata(meta.get("systemTraceEvents"))}
    return Profile(table, source=str(path), format="chrome-json", warnings=warnings, lazy=lazy,
                   counters=Counters({"counters": counters}) if counters is not None else None,
                   metadata=metadata, extra={"filters_applied": False})


class _Builder:
    """Turns a list of trace events into columns."""

    def __init__(self, origin: str, warnings: LoadWarnings, instance: str, look_for_cores: bool = True,
                 base_ns: int = 0) -> None:
        self.origin, self.warnings, self.instance = origin, warnings, instance
        self.look_for_cores = look_for_cores
        self.base_ns = base_ns
        self.by_phase: dict[Any, list[Ev]] = defaultdict(list)
        # Begin/end events of each pairing kind, in file order (ties in ts keep that order).
        self.paired: dict[str, list[Ev]] = defaultdict(list)
        self.pid_names: dict[int, str] = {}
        self.tid_names: dict[int, str] = {}
        self.names: dict[str, dict[str, Any]] = {"process_names": {}, "thread_names": {},
                                                 "process_sort_index": {}, "thread_sort_index": {}}

    def collect(self, events: list[Ev]) -> None:
        by_phase = self.by_phase
        for e in events:
            ph = e.ph
            by_phase[ph if ph.__class__ is str else h(ph)].append(e)
        kinds = {PAIR_OF[ph] for ph in by_phase if ph in PAIR_OF}
        if kinds:
            # Begins and ends of one kind together, in file order (ties in ts keep that order).
            for e in events:
                ph = e.ph if e.ph.__class__ is str else h(e.ph)
                if ph in PAIR_OF:
                    self.paired[PAIR_OF[ph]].append(e)
        for ph, group in by_phase.items():
            if ph in _UNSUPPORTED:
                self.warnings.add(f"{self.origin}: '{ph}' ({_UNSUPPORTED[ph]}) events are not drawn", len(group))
            elif ph not in _KNOWN:
                self.warnings.add(f"{self.origin}: events with unknown phase {ph!r} are not drawn", len(group))
        for e in by_phase.get("M", []):
            args = as_dict(e.args)
            key = str(h(e.pid)) if e.name.__class__ is str and e.name.startswith("process") else f"{h(e.pid)}/{h(e.tid)}"
            if e.name in ("process_name", "thread_name"):
                self.names[f"{e.name}s"][key] = str(args.get("name", ""))
            elif e.name in ("process_sort_index", "thread_sort_index"):
                self.names[e.name][key] = args.get("sort_index")

    def metadata(self, system: Any = None) -> dict[str, Any]:
        names = track_names(self.instance, self.by_phase.get("M", []), system, self.pid_names, self.tid_names)
        return {"track_names": names, "process_names": self.names["process_names"], "thread_names": self.names["thread_names"],
                "sort_index": {"process": self.names["process_sort_index"], "thread": self.names["thread_sort_index"]},
                "text_ids": {"process": {str(k): v for k, v in self.pid_names.items()},
                             "thread": {str(k): v for k, v in self.tid_names.items()}}}

    def gather(self) -> Gathered:
        """The columns of the collected events: slices, then instants, then begin/end pairs, then flow points."""
        events = list(self.by_phase.get("X", []))
        n_slices = len(events)
        for ph in _INSTANT:
            events.extend(self.by_phase.get(ph, []))
        n_plain = len(events)
        paired, incomplete, is_async = pair(self.paired, self.warnings, self.origin)
        events.extend(paired)
        n = len(events)
        ts, durs, names = [e.ts for e in events], [e.dur for e in events], [e.name for e in events]
        cats, pids, tids = [e.cat for e in events], [e.pid for e in events], [e.tid for e in events]
        args = [e.args for e in events]
        w, origin = self.warnings, self.origin
        start, ok_ts = _ns(ts, w, origin, "ts")
        durs[n_slices:n_plain] = [0] * (n_plain - n_slices)  # instants have no duration, whatever they say
        if None in durs:
            durs = [0 if d is None else d for d in durs]
        dur, ok_dur = _ns(durs, w, origin, "dur")
        if set(map(type, names)) - {str}:  # rare: numbers or nulls as names
            names = [nm if type(nm) is str else ("" if nm is None else str(nm)) for nm in names]
        if set(map(type, cats)) - {str, type(None)}:
            cats = [c if c is None or type(c) is str else str(c) for c in cats]
        flag = np.zeros(n, dtype=bool)
        flag[n_plain:] = incomplete
        stream = [None] * n_plain + [f"{ASYNC_STREAM}{c if c is not None else e.name}" if a else None
                                     for e, c, a in zip(paired, cats[n_plain:], is_async, strict=True)]
        points = [e for ph in ("s", "t", "f") for e in self.by_phase.get(ph, [])]
        p_ts, p_pid, p_tid = [e.ts for e in points], [e.pid for e in points], [e.tid for e in points]
        p_id, p_id2, p_bp = [e.id for e in points], [e.id2 for e in points], [e.bp for e in points]
        # Events and flow points share one id numbering, so a text id gets the same code in both.
        pid_all = _int_ids([0 if v is None else v for v in (*pids, *p_pid)] if None in pids or None in p_pid
                           else pids + p_pid, self.pid_names, "pid")
        tid_all = _int_ids([0 if v is None else v for v in (*tids, *p_tid)] if None in tids or None in p_tid
                           else tids + p_tid, self.tid_names, "tid")
        point_ts, point_ok = _ns(p_ts, LoadWarnings(), self.origin, "ts")
        n_enclosing = len(self.by_phase.get("s", [])) + len(self.by_phase.get("t", []))
        # s and t bind to the slice around them; f to the next slice, or with bp "e" the one around it.
        enclosing = np.ones(len(p_ts), dtype=bool)
        enclosing[n_enclosing:] = [b == "e" for b in p_bp[n_enclosing:]]
        return Gathered(
            start=start, ok_ts=ok_ts, dur=dur, ok_dur=ok_dur, incomplete=flag,
            is_async=np.r_[np.zeros(n_plain, bool), np.asarray(is_async, bool)],
            stream=pa.array(stream, pa.string()),
            names=pa.array(names, pa.string()).dictionary_encode(), cats=pa.array(cats, pa.string()).dictionary_encode(),
            pid=pid_all, tid=tid_all, nc=_nc_column(args) if self.look_for_cores else pa.nulls(n, pa.int64()),
            lazy=lambda flows: ArgsLazy(args, flows),
            point_ts=point_ts, point_ok=point_ok, enclosing=enclosing, flow_ids=_flow_ids(p_id, p_id2))

    def assemble(self, g: Gathered) -> tuple[pa.Table, LazyColumns, pd.DataFrame | None]:
        w, origin = self.warnings, self.origin
        n = g.start.size
        start = g.start + self.base_ns  # no wrap: each is within 2^62
        far = g.ok_ts & ((start > TS_LIMIT) | (start < -TS_LIMIT))
        w.add(f"{origin}: events whose ts is past 146 years from the clock's zero (int64 nanoseconds), dropped",
              int(far.sum()))
        start = np.where(far, 0, start)
        neg = (g.dur < 0) & g.ok_dur
        dur = np.where(g.ok_dur & ~neg, g.dur, 0)
        w.add(f"{origin}: events with a negative duration, shown with zero duration", int(neg.sum()))
        end = start + dur
        long = (end > TS_LIMIT) & g.ok_ts & ~far
        w.add(f"{origin}: events whose duration ends past 146 years from the clock's zero (int64 nanoseconds), shown "
              "with zero duration", int(long.sum()))
        end = np.where(long, start, end)
        ok_ts, flag = g.ok_ts & ~far, g.incomplete
        if flag.any():
            # A thread's unclosed B runs to the trace end (a hang shows as such); an async begin that
            # never ended is an open-ended marker at its start: hundreds of them must not each hold a
            # row to the end of the trace.
            open_async = flag & g.is_async
            end[flag & ~open_async] = max(int(end[ok_ts].max(initial=0)), int(start[ok_ts].max(initial=0)))
            end[open_async] = start[open_async]
        table = pa.table({
            "id": np.arange(n, dtype=np.int64),
            "name": g.names,
            "start_ts": start, "end_ts": end, "duration_ns": end - start,
            "trace_event_source": _sources(g.names, g.cats),
            "instance_id": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([self.instance])),
            "process_id": g.pid[:n],
            "thread_id": g.tid[:n],
            "nc_idx": g.nc,
            # Async slices overlap freely: like Chrome and Perfetto, give them rows of their own.
            "framework_stream_id": g.stream,
            "category": g.cats,
            INCOMPLETE: pa.array(flag),
            ROW: pa.array(np.arange(n, dtype=np.int32)),
        })
        if not ok_ts.all():
            table = table.filter(pa.array(ok_ts))
        return table, g.lazy(self._flows(table, n, g)), self._counters()

    def _flows(self, table: pa.Table, n_events: int, g: Gathered) -> pa.Array:
        if g.point_ts.size == 0:
            return pa.nulls(n_events, pa.list_(pa.string()))
        pids = table.column("process_id").to_numpy()
        tids = table.column("thread_id").to_numpy()
        # One code per (pid, tid) shared by slices and flow points.
        pid_code, _ = pd.factorize(np.r_[pids, g.pid[n_events:]])
        tid_code, tid_u = pd.factorize(np.r_[tids, g.tid[n_events:]])
        codes = pid_code.astype(np.int64) * max(len(tid_u), 1) + tid_code
        slice_thread, point_thread = codes[: pids.size], codes[pids.size:]
        index = SliceIndex(slice_thread, table.column("start_ts").to_numpy(), table.column("end_ts").to_numpy())
        ok = g.point_ok
        keep = np.flatnonzero(ok)
        self.warnings.add(f"{self.origin}: flow events without a usable ts (arrows not drawn)", int((~ok).sum()))
        return bind_flows(g.flow_ids[keep], point_thread[keep], (g.point_ts + self.base_ns)[keep], g.enclosing[keep],
                          index, table.column(ROW).to_numpy(), n_events, self.warnings, self.origin)

    def _counters(self) -> pd.DataFrame | None:
        group = self.by_phase.get("C")
        if not group:
            return None
        rows = []
        bad = 0
        for e in group:
            for series, value in as_dict(e.args).items():
                v = num(value)
                if not np.isfinite(v):
                    bad += 1
                    continue
                # A counter's identity is its name and, when given, its id (chrome://tracing's rule).
                name = str(e.name or "") if e.id is None else f"{e.name or ''} {_flow_id(e.id)}"
                rows.append((e.ts, self.instance, h(e.pid) if e.pid is not None else 0, name, str(series), v))
        self.warnings.add(f"{self.origin}: counter values that are not numbers, skipped", bad)
        df = pd.DataFrame(rows, columns=["ts_us", "instance_id", "process_id", "name", "series", "value"])
        df["process_id"] = _int_ids(df["process_id"].tolist(), self.pid_names, "pid")  # the events' process codes
        ts, ok = _ns(df["ts_us"].tolist(), self.warnings, self.origin, "counter ts")
        ts = ts + self.base_ns
        far = ok & (ts > TS_LIMIT)
        self.warnings.add(f"{self.origin}: counter values whose ts is past 146 years from the clock's zero, skipped",
                          int(far.sum()))
        df = df.assign(timestamp=ts).loc[ok & ~far].drop(columns="ts_us")
        return df[["timestamp", "instance_id", "process_id", "name", "series", "value"]].reset_index(drop=True)


def _sources(names: pa.DictionaryArray, cats: pa.DictionaryArray) -> pa.DictionaryArray:
    """Event source per event, decided once per distinct (name, category) pair."""
    name_u, cat_u = names.dictionary.to_pylist(), [*cats.dictionary.to_pylist(), None]
    name_codes = names.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    cat_codes = cats.indices.fill_null(len(cat_u) - 1).to_numpy().astype(np.int64)
    width = len(cat_u)
    pair_codes, pair_u = pd.factorize(name_codes * width + cat_codes)
    per_pair = [event_source(name_u[p // width], cat_u[p % width]) for p in pair_u]
    src_codes, src_values = pd.factorize(pd.Series(per_pair, dtype=object))
    return pa.DictionaryArray.from_arrays(pa.array(src_codes[pair_codes], pa.int32()),
                                          pa.array(list(src_values), pa.string()))


def _flow_ids(ids: list[Any], id2s: list[Any]) -> np.ndarray:
    """Flow ids (id2 when given): integers kept as int64, anything else as its text."""
    fids = ids if set(map(type, id2s)) <= {type(None)} else [i if j is None else j for i, j in zip(ids, id2s, strict=True)]
    if set(map(type, fids)) == {int}:
        try:
            return np.fromiter(fids, np.int64, len(fids))
        except OverflowError:
            pass
    return np.array([f if type(f) is str else _flow_id(f) for f in fids], dtype=object)


def _flow_id(fid: Any) -> str:
    if type(fid) is dict:
        fid = fid.get("global", fid.get("local"))
    return fid if type(fid) is str else str(fid)


def _nc_column(args: list[Any]) -> pa.Array:
    """NDET's `nc` argument (or `nc_idx`) lifted into a column; other events' args stay unparsed."""
    out: list[int | None] = [None] * len(args)
    for i, a in enumerate(args):
        if isinstance(a, msgspec.Raw):
            if _CORE_KEY.search(a) is None:
                continue
            a = parse_args(a)
        if type(a) is dict:
            v = a.get("nc_idx", a.get("nc"))
            if type(v) is int and -(2**63) <= v < 2**63:
                out[i] = v
    return pa.array(out, pa.int64())
