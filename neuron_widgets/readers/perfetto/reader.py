"""Perfetto protobuf traces (.pftrace, .perfetto-trace, .pb; plain or gzip), detected by content.

neuron-explorer writes `system_profile.pftrace` and `device_profile_model_<id>.pftrace`; the
Perfetto SDK and other tools write the same TracePacket stream. Slices (begin/end pairs per
track), instants, counters, flows and debug annotations land in the columns every other
reader fills; tracks' names and descriptors give the grouping columns (tracks.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ...errors import LoadWarnings
from ...model.filters import Filters
from ...model.order import time_order
from ...model.profile import Counters, Profile
from ...model.schema import INCOMPLETE, ROW, check_ids, normalise
from ...model.track_names import process_label, thread_label
from ..chrome.flows import flow_lists
from ..columns import event_source
from . import rows, wire
from .clocks import far, to_primary
from .tracks import Identity, fields_in, identity_of, sequence_identity

if TYPE_CHECKING:
    from .args import PerfettoArgs
    from .stream import Scan
from ..sniff import head, looks_like_json

# Bumped when the columns this reader builds change: parse-cache entries of other versions are not used.
# 4: an empty name is one dictionary entry (was two when a slice had none), texts not UTF-8 are counted.
VERSION = 4
_BEGIN, _END, _INSTANT, _COUNTER = 1, 2, 3, 4
_NONE = np.zeros(0, np.int8)
_NO_FLAGS = np.zeros(0, np.bool_)
_DEVICE_FILE = re.compile(r"device_profile_model_(\d+)\.(?:pftrace|perfetto-trace|pb)(?:\.gz)?")


def sniff(path: Path) -> bool:
    """A Trace message: field 1 (TracePacket) frames whose first fields are TracePacket fields."""
    if not path.is_file():
        return False
    data = head(path, 1 << 16)
    if not data or data[0] != 0x0A or looks_like_json(data):
        return False
    buf = np.frombuffer(data, np.uint8)
    off, length, other, _ = wire.frame(buf)
    if off.size == 0 or other:
        return off.size == 0 and path.suffix in (".pftrace", ".perfetto-trace") and _one_big_packet(buf)
    p = wire.decode(buf, off, length)
    # Every packet in the first 64 KiB parsed cleanly and at least one is something we know.
    return int(p.problems[0]) == 0 and bool((p.kind != wire.KIND_OTHER).any() or p.has_ts.any())


def _one_big_packet(buf: np.ndarray) -> bool:
    # A first packet longer than the sniffed head cannot be framed from it; its tag still can.
    return buf.size > 2 and buf[0] == 0x0A


def read(path: Path, filters: Filters) -> Profile:
    del filters  # applied after the load by load_profile
    return parse(path)


def device_profiles(path: Path) -> pd.DataFrame | None:
    """neuron-explorer's `device_profile_model_<id>.pftrace` files beside a system trace, as a device-profile list."""
    rows = []
    for f in sorted(path.parent.glob("device_profile_model_*")):
        m = _DEVICE_FILE.fullmatch(f.name)
        if m and f.is_file() and f.resolve() != path.resolve():
            rows.append({"device_profile_name": f.name.split(".")[0], "instance_id": None, "process_id": None,
                         "nc_id": None, "session_id": 0, "model_id": int(m.group(1)), "path": str(f)})
    return pd.DataFrame(rows) if rows else None


def parse(path: Path, chunk_bytes: int | None = None) -> Profile:
    """The trace's Profile, its packets read `chunk_bytes` at a time (stream.py)."""
    # Perfetto's compiled proto takes a quarter second to import: only when a trace is read.
    from .stream import scan

    warnings = LoadWarnings()
    s = scan(path, warnings, chunk_bytes)
    origin = path.name
    warnings.add(f"{origin}: top-level fields that are not trace packets (skipped)", s.other_fields)
    for k, what in enumerate(wire.PROBLEMS):
        warnings.add(f"{origin}: {what}", int(s.problems[k]))
    warnings.add(f"{origin}: packets of kinds neuron-widgets does not show (ftrace, system stats, ...), skipped",
                 s.other_kinds)
    return _Builder(path, s, warnings).build()


class _Builder:
    def __init__(self, path: Path, scan: Scan, warnings: LoadWarnings) -> None:
        self.path, self.scan, self.state, self.warnings = path, scan, scan.state, warnings
        self.origin = path.name
        self.instance = _instance_name(path)
        self.n_events = 0

    def build(self) -> Profile:
        s, state, w, origin = self.scan, self.state, self.warnings, self.origin
        ev = s.events
        w.add(f"{origin}: track events without a timestamp (dropped)", s.no_ts)
        typ, unknown = rows.drawn_types(ev.typ, _NO_FLAGS, False)
        w.add(f"{origin}: track events of an unspecified or unknown type (not drawn)", unknown)
        ts = to_primary(ev.ts, ev.clock, state, w, origin)
        ev.clock = _NONE
        gone = far(ts)  # never a wrapped time: a time past the range is dropped, and said so
        far_any = bool(gone.any())
        if far_any:
            w.add(f"{origin}: track events whose time, in int64 nanoseconds, is past 146 years from the clock's zero "
                  "(dropped; a slice that loses its end is kept as unended)", int(gone.sum()))
            typ[gone] = 0
            kept = ~gone[ev.counter_event]
            ev.counter_event, ev.counter_value = ev.counter_event[kept], ev.counter_value[kept]
        codes, uuid_arr = rows.first_seen(ev.track)
        uuids = uuid_arr.tolist()
        identities = self._identities(uuids)
        counters = self._counters(ts, identities)
        ev.track = ev.counter_event = ev.counter_value = _NONE  # the scan's columns go as soon as they are used
        n_ev = self.n_events = typ.size
        index: type[np.signedinteger[Any]] = np.int32 if n_ev < 2**31 - 1 else np.int64
        begin = np.empty(n_ev, index)
        end = np.empty(n_ev, index)
        n, unmatched = rows.paired(codes, ts, typ, len(uuids), begin, end)
        del typ
        begin, end = begin[:n], end[:n]
        w.add(f"{origin}: slice ends with no begin on their track (dropped)", unmatched)
        last_drawn, any_drawn, last_kept, any_kept = rows.last_times(ts, ev.typ, gone, far_any)
        # Counter samples do not extend the trace an unended slice runs to.
        last = last_drawn if any_drawn else (last_kept if any_kept else 0)
        del gone
        start, stop, n_open, n_neg = rows.slice_times(begin, end, ts, last)
        w.add(f"{origin}: slices that never ended (kept, marked incomplete, drawn to the end of the trace)", n_open)
        w.add(f"{origin}: slices that end before they begin (shown with zero duration)", n_neg)
        del ts
        ev.ts = ev.typ = _NONE
        # The Profile's row order; a trace written as its slices start (most are) is already in it by file order.
        order, ordered = rows.file_order(begin, start, stop, n_ev)
        if not ordered:
            sorted_ = time_order(start, stop)
            order = np.arange(n) if sorted_ is None else sorted_
        # A slice without a name shows "": the trace's own "" (an empty name is a name too) if it has one,
        # else one added, never a second (a dictionary holds each text once).
        names = s.names.texts
        blank = s.names.code.get("")
        if blank is None:
            names, blank = [*names, ""], len(names)
        begin, end_blob, start, stop, dur, open_, name_col, cat_col, track_of_row, gen = rows.slice_rows(
            order, begin, end, start, stop, ev.name, ev.cat, codes, ev.gen, blank, n_ev)
        del order, end, codes
        ev.name = ev.cat = ev.gen = _NONE
        cats = s.categories.texts
        ident = [identities[u] for u in uuids]
        table = pa.table({
            "id": np.arange(n, dtype=np.int64),
            "name": pa.DictionaryArray.from_arrays(pa.array(name_col), pa.array(names, pa.string())),
            "start_ts": start, "end_ts": stop, "duration_ns": dur,
            "trace_event_source": self._sources(name_col, names, cat_col, cats, track_of_row, ident),
            "instance_id": _strings([i.instance_id or self.instance for i in ident], track_of_row),
            "process_id": _ints([i.process_id for i in ident], track_of_row, 0),
            "thread_id": _ints([i.thread_id for i in ident], track_of_row, 0),
            "nc_idx": _ints([i.nc_idx for i in ident], track_of_row, None),
            "pcore_idx": _ints([i.pcore_idx for i in ident], track_of_row, None),
            "worker_gid": _ints([i.worker_gid for i in ident], track_of_row, None),
            "framework_stream_id": _strings([i.stream for i in ident], track_of_row),
            "perfetto_track": _strings([i.label or None for i in ident], track_of_row),
            "category": pa.DictionaryArray.from_arrays(pa.array(cat_col, mask=cat_col < 0),
                                                       pa.array(cats or [""], pa.string())),
            INCOMPLETE: pa.array(open_),
            ROW: pa.array(np.arange(n, dtype=np.int32)),
        })
        del name_col, cat_col, track_of_row, start, stop, dur, open_
        table = normalise(table, w, origin)
        check_ids(table, w, origin)
        lazy = self._args(begin, end_blob, gen, n)
        meta = {"track_names": self._names(ident),
                "process_names": {str(k): v for k, v in state.process_names.items()},
                "thread_names": {f"{k[0]}/{k[1]}": v for k, v in state.thread_names.items()},
                "perfetto": {"packets": s.packets, "tracks": len(state.tracks), "sequences": s.sequences}}
        return Profile(table, source=str(self.path), format="perfetto", warnings=w, lazy=lazy,
                       counters=Counters({"counters": counters}) if counters is not None else None,
                       metadata=meta, extra={"filters_applied": False})

    def _names(self, ident: list[Identity]) -> dict[str, list[list[Any]]]:
        """Perfetto's process and thread names for the grouping labels (model.track_names), where the
        track's columns came from its pid and tid, not from names that carry fields or our descriptions."""
        state = self.state
        procs: dict[tuple[str, int], str] = {}
        threads: dict[tuple[str, int, int], str] = {}
        for i in ident:
            if i.described or i.process_id is None:
                continue
            inst = i.instance_id or self.instance
            pname = state.process_names.get(i.process_id)
            if pname and not fields_in(pname):
                procs[(inst, i.process_id)] = process_label(pname, i.process_id)
            tname = state.thread_names.get((i.process_id, i.thread_id)) if i.thread_id is not None else None
            if tname and i.thread_id is not None and not fields_in(tname):
                threads[(inst, i.process_id, i.thread_id)] = thread_label(tname, i.thread_id)
        return {"process": [[k[0], k[1], v, None, False] for k, v in procs.items()],
                "thread": [[k[0], k[1], k[2], v, None, False] for k, v in threads.items()]}

    def _identities(self, uuids: list[int]) -> dict[int, Identity]:
        """Each track's identity; (1 << 63) | sequence stands for the thread an older SDK's sequence names."""
        state = self.state
        identities: dict[int, Identity] = {}
        for u in uuids:
            if u >> 63 and u not in state.tracks:
                pid, tid = state.seq_thread.get(u & 0xFFFFFFFF, (0, 0))
                identities[u] = sequence_identity(pid, tid, self.instance)
            else:
                identities[u] = identity_of(u, state, self.instance)
        return identities

    def _sources(self, name_col: np.ndarray, names: list[str], cat_col: np.ndarray, cats: list[str],
                 track_of_row: np.ndarray, ident: list[Identity]) -> pa.DictionaryArray:
        width = len(cats) + 1
        forced = [i.source for i in ident]
        by_track = any(f is not None for f in forced)
        # A track that says its source overrides what names and categories say: then the track is in the key.
        key = rows.source_keys(name_col, cat_col, track_of_row, width, len(forced) if by_track else 0)
        codes, combos = rows.first_seen(key)
        del key
        texts: list[str | None] = []
        for k in combos.tolist():
            pair, track = divmod(k, len(forced)) if by_track else (k, None)
            f = forced[track] if track is not None else None
            texts.append(f if f is not None else
                         event_source(names[pair // width], cats[pair % width - 1] if pair % width else None))
        src_codes, values = _factorize(texts)
        return pa.DictionaryArray.from_arrays(pa.array(rows.per_row(src_codes, codes)), pa.array(values, pa.string()))

    def _args(self, begin: np.ndarray, end_blob: np.ndarray, gen: np.ndarray, n: int) -> PerfettoArgs:
        from .args import PerfettoArgs  # it imports Perfetto's compiled proto (~0.25 s): only for a trace's arguments

        ev = self.scan.events
        return PerfettoArgs(ev.blobs, begin, end_blob, gen, self.state.arg_names, self.state.arg_strings,
                            self._flows(begin, end_blob, n))

    def _flows(self, begin: np.ndarray, end_blob: np.ndarray, n: int) -> pa.Array | Callable[[], pa.Array]:
        """The flow_id column, or (when the trace has flows) what builds it on first use."""
        ev = self.scan.events
        if ev.flow_id.size == 0:
            return pa.nulls(n, pa.list_(pa.string()))
        row = rows.flow_rows(ev.flow_event, begin, end_blob, self.n_events)
        bound = row >= 0
        self.warnings.add(f"{self.origin}: flow ids on events that are not drawn (arrows not drawn)", int((~bound).sum()))
        row, fid = row[bound], ev.flow_id[bound]
        ev.flow_event = ev.flow_id = _NONE
        return lambda: flow_lists(row, fid, n)

    def _counters(self, ts: np.ndarray, identities: dict[int, Identity]) -> Callable[[], pd.DataFrame] | None:
        """The counter samples, as a frame built on first use (until then ~20 bytes a sample)."""
        ev = self.scan.events
        if ev.counter_event.size == 0:
            return None
        codes, track_arr = rows.first_seen(ev.track[ev.counter_event])
        when, value, tracks = ts[ev.counter_event], ev.counter_value, track_arr.tolist()
        instance_of = self.instance

        def frame() -> pd.DataFrame:
            order = np.argsort(when, kind="stable")
            code = codes[order]
            label = np.array([identities[u].label or f"counter {u}" for u in tracks], dtype=object)
            instance = np.array([identities[u].instance_id or instance_of for u in tracks], dtype=object)
            pid = np.array([identities[u].process_id or 0 for u in tracks], np.int64)
            return pd.DataFrame({"timestamp": when[order], "instance_id": instance[code], "process_id": pid[code],
                                 "name": label[code], "series": label[code], "value": value[order]})

        return frame


def _factorize(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """pd.factorize of a short list (one entry per track or per source): int32 codes, -1 for None, and
    the distinct values in the order first met."""
    seen: dict[Any, int] = {}
    return np.array([-1 if v is None else seen.setdefault(v, len(seen)) for v in values], np.int32), list(seen)


def _strings(per_track: list[Any], track_of_row: np.ndarray) -> pa.DictionaryArray:
    # Coded on the texts shown, so that two values written alike (1 and "1") share one entry.
    codes, uniques = _factorize([None if v is None else str(v) for v in per_track])
    if not len(codes):
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(0, np.int32)), pa.array([""], pa.string()))
    row_codes = rows.per_row(codes, track_of_row)
    mask = (row_codes < 0) if (codes < 0).any() else None
    return pa.DictionaryArray.from_arrays(pa.array(row_codes, mask=mask), pa.array(uniques or [""], pa.string()))


def _ints(per_track: list[int | None], track_of_row: np.ndarray, fill: int | None) -> pa.Array:
    values = [fill if v is None else v for v in per_track]
    if fill is not None or all(v is not None for v in values):
        arr = np.array(values, dtype=np.int64) if values else np.zeros(0, np.int64)
        return pa.array(rows.per_row(arr, track_of_row) if arr.size else np.zeros(track_of_row.size, np.int64))
    if not values or all(v is None for v in values):
        return pa.nulls(track_of_row.size, pa.int64())
    # Values and nulls by track, then per row.
    known = np.array([v is not None for v in values])
    arr = np.array([0 if v is None else v for v in values], np.int64)
    return pa.array(rows.per_row(arr, track_of_row), mask=~rows.per_row(known, track_of_row))


def _instance_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".pftrace", ".perfetto-trace", ".pb", ".trace"):
        name = name.removesuffix(suffix)
    return name or "host"
