"""Perfetto protobuf traces (.pftrace, .perfetto-trace, .pb; plain or gzip), detected by content.

neuron-explorer writes `system_profile.pftrace` and `device_profile_model_<id>.pftrace`; the
Perfetto SDK and other tools write the same TracePacket stream. Slices (begin/end pairs per
track), instants, counters, flows and debug annotations land in the columns every other
reader fills; tracks' names and descriptors give the grouping columns (perfetto_tracks).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numba
import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import LoadWarnings, ProfileError
from ..model.filters import Filters
from ..model.profile import Counters, Profile
from ..model.schema import INCOMPLETE, ROW, check_ids, normalise
from ..model.track_names import process_label, thread_label
from ..progress import progress
from . import perfetto_wire as wire
from .chrome_flows import flow_lists
from .columns import event_source
from .perfetto_tracks import Identity, fields_in, identity_of, sequence_identity

if TYPE_CHECKING:
    from .perfetto_args import PerfettoArgs
    from .perfetto_state import State
from .sniff import head, looks_like_json, read_all

# Bumped when the columns this reader builds change: parse-cache entries of other versions are not used.
VERSION = 2
_BEGIN, _END, _INSTANT, _COUNTER = 1, 2, 3, 4
_DEVICE_FILE = re.compile(r"device_profile_model_(\d+)\.(?:pftrace|perfetto-trace|pb)(?:\.gz)?")
_ADVICE_CUT = "The file may be cut short (still being written, or copied incompletely); record or copy it again"


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
    with progress(f"reading {path.name}", None, "steps"):
        raw = read_all(path)
    return parse(path, raw)


def device_profiles(path: Path) -> pd.DataFrame | None:
    """neuron-explorer's `device_profile_model_<id>.pftrace` files beside a system trace, as a device-profile list."""
    rows = []
    for f in sorted(path.parent.glob("device_profile_model_*")):
        m = _DEVICE_FILE.fullmatch(f.name)
        if m and f.is_file() and f.resolve() != path.resolve():
            rows.append({"device_profile_name": f.name.split(".")[0], "instance_id": None, "process_id": None,
                         "nc_id": None, "session_id": 0, "model_id": int(m.group(1)), "path": str(f)})
    return pd.DataFrame(rows) if rows else None


def parse(path: Path, raw: bytes) -> Profile:
    # Perfetto's compiled proto takes a quarter second to import: only when a trace is read.
    from .perfetto_state import read_state

    origin = path.name
    warnings = LoadWarnings()
    buf = np.frombuffer(raw, np.uint8)
    off, length, other, stop = wire.frame(buf)
    if off.size == 0:
        cut = stop < buf.size
        raise ProfileError(path, "holds no Perfetto trace packets" + (" (it is cut short in the first packet)" if cut else ""),
                           _ADVICE_CUT if cut else "Pass a Perfetto trace (.pftrace) written by neuron-explorer "
                           "view --output-format perfetto or the Perfetto SDK")
    if stop < buf.size:
        warnings.add(f"{origin}: the trace is cut short at byte {stop:,} of {buf.size:,}; the {off.size:,} packets before "
                     "it are shown", 1)
    warnings.add(f"{origin}: top-level fields that are not trace packets (skipped)", other)
    p = wire.decode(buf, off, length)
    for k, what in enumerate(wire.PROBLEMS):
        warnings.add(f"{origin}: {what}", int(p.problems[k]))
    state = read_state(raw, off, length, p, warnings, origin)
    warnings.add(f"{origin}: packets of kinds neuron-widgets does not show (ftrace, system stats, ...), skipped",
                 int((p.kind == wire.KIND_OTHER).sum()) - int(p.problems[0]))
    return _Builder(path, buf, p, state, warnings).build()


@numba.njit(cache=True, nogil=True)
def _pair(track: np.ndarray, typ: np.ndarray, order: np.ndarray, begin: np.ndarray, end: np.ndarray) -> tuple[int, int]:
    """Slices per track: (begin, end) event indexes; end -1 never ended, end == begin instant.

    `order` is by track, then time, then file order, as Perfetto sorts a trace before it
    matches an end to the innermost open slice of its track.
    """
    stack = np.empty(64, np.int64)
    depth = 0
    current = -1
    n = 0
    unmatched = 0
    for k in range(order.size):
        i = order[k]
        if track[i] != current:
            while depth > 0:
                depth -= 1
                begin[n] = stack[depth]
                end[n] = -1
                n += 1
            current = track[i]
        t = typ[i]
        if t == 1:
            if depth == stack.size:
                grown = np.empty(stack.size * 2, np.int64)
                grown[:depth] = stack[:depth]
                stack = grown
            stack[depth] = i
            depth += 1
        elif t == 2:
            if depth == 0:
                unmatched += 1
            else:
                depth -= 1
                begin[n] = stack[depth]
                end[n] = i
                n += 1
        elif t == 3:
            begin[n] = i
            end[n] = i
            n += 1
    while depth > 0:
        depth -= 1
        begin[n] = stack[depth]
        end[n] = -1
        n += 1
    return n, unmatched


@numba.njit(cache=True, nogil=True)
def _hash_ranges(buf: np.ndarray, off: np.ndarray, length: np.ndarray) -> np.ndarray:
    """FNV-1a of each byte range (-1 offset: no text), to find the distinct inline names at once."""
    out = np.zeros(off.size, np.uint64)
    for i in range(off.size):
        if off[i] < 0:
            continue
        h = np.uint64(14695981039346656037)
        for j in range(off[i], off[i] + length[i]):
            h = (h ^ np.uint64(buf[j])) * np.uint64(1099511628211)
        out[i] = h | np.uint64(1)  # never 0, which marks "no inline text"
    return out


class _Builder:
    def __init__(self, path: Path, buf: np.ndarray, p: wire.Packets, state: State, warnings: LoadWarnings) -> None:
        self.path, self.buf, self.p, self.state, self.warnings = path, buf, p, state, warnings
        self.origin = path.name
        self.instance = _instance_name(path)

    def _texts(self, events: np.ndarray, off: np.ndarray, length: np.ndarray, iid: np.ndarray,
               table: dict[tuple[int, int], str]) -> tuple[np.ndarray, list[str]]:
        """Codes into a list of strings: inline text where given, else the interned one; -1 for neither."""
        from .perfetto_state import lookup

        gen = self.state.generation[events]
        codes, texts = lookup(table, gen, iid[events])
        inline = np.flatnonzero(off[events] >= 0)
        if inline.size:
            hashes = _hash_ranges(self.buf, off[events][inline], length[events][inline])
            _uniq, first, inv = np.unique(hashes, return_index=True, return_inverse=True)
            raw = self.buf
            words = [bytes(raw[off[events][inline][f]: off[events][inline][f] + length[events][inline][f]])
                     .decode("utf-8", "replace") for f in first.tolist()]
            base = len(texts)
            texts = texts + words
            codes[inline] = base + inv.reshape(-1)
        return codes, texts

    def build(self) -> Profile:
        p, state, w, origin = self.p, self.state, self.warnings, self.origin
        is_event = (p.kind == wire.KIND_EVENT) | (p.kind == wire.KIND_BOTH)
        no_ts = is_event & ~p.has_ts
        w.add(f"{origin}: track events without a timestamp (dropped)", int(no_ts.sum()))
        events = np.flatnonzero(is_event & p.has_ts)
        typ = p.ev_type[events]
        unknown = ~np.isin(typ, [_BEGIN, _END, _INSTANT, _COUNTER])
        w.add(f"{origin}: track events of an unspecified or unknown type (not drawn)", int(unknown.sum()))
        from .perfetto_state import resolve_clocks

        ts = resolve_clocks(p, state, events, w, origin)
        track_uuid, identities = self._tracks(events)
        codes, uuids = pd.factorize(track_uuid)
        counters = self._counters(events, typ == _COUNTER, ts, track_uuid, identities)
        begin = np.empty(events.size, np.int64)
        end = np.empty(events.size, np.int64)
        order = np.lexsort((ts, codes)).astype(np.int64)  # stable: ties keep file order
        n, unmatched = _pair(codes.astype(np.int64), np.where(unknown | (typ == _COUNTER), 0, typ).astype(np.int8),
                             order, begin, end)
        begin, end = begin[:n], end[:n]
        w.add(f"{origin}: slice ends with no begin on their track (dropped)", unmatched)
        open_ = end < 0
        w.add(f"{origin}: slices that never ended (kept, marked incomplete, drawn to the end of the trace)", int(open_.sum()))
        start = ts[begin]
        drawn = ts[typ != _COUNTER]  # counter samples do not extend the trace an unended slice runs to
        last = int(drawn.max()) if drawn.size else (int(ts.max()) if ts.size else 0)
        stop = np.where(open_, last, ts[np.where(open_, begin, end)])
        neg = stop < start
        w.add(f"{origin}: slices that end before they begin (shown with zero duration)", int(neg.sum()))
        stop = np.where(neg, start, stop)
        name_codes, names = self._texts(events, p.name_off, p.name_len, p.name_iid, state.names)
        cat_codes, cats = self._texts(events, p.cat_off, p.cat_len, p.cat_iid, state.categories)
        nameless = name_codes[begin] < 0
        names = [*names, ""]
        name_col = np.where(nameless, len(names) - 1, name_codes[begin])
        cat_col = cat_codes[begin]
        track_of_row = codes[begin]
        ident = [identities[u] for u in uuids]
        table = pa.table({
            "id": np.arange(n, dtype=np.int64),
            "name": pa.DictionaryArray.from_arrays(pa.array(name_col.astype(np.int32)), pa.array(names, pa.string())),
            "start_ts": start, "end_ts": stop, "duration_ns": stop - start,
            "trace_event_source": self._sources(name_col, names, cat_col, cats, track_of_row, ident),
            "instance_id": _strings([i.instance_id or self.instance for i in ident], track_of_row),
            "process_id": _ints([i.process_id for i in ident], track_of_row, 0),
            "thread_id": _ints([i.thread_id for i in ident], track_of_row, 0),
            "nc_idx": _ints([i.nc_idx for i in ident], track_of_row, None),
            "pcore_idx": _ints([i.pcore_idx for i in ident], track_of_row, None),
            "worker_gid": _ints([i.worker_gid for i in ident], track_of_row, None),
            "framework_stream_id": _strings([i.stream for i in ident], track_of_row),
            "perfetto_track": _strings([i.label or None for i in ident], track_of_row),
            "category": pa.DictionaryArray.from_arrays(pa.array(cat_col.astype(np.int32), mask=cat_col < 0),
                                                       pa.array(cats or [""], pa.string())),
            INCOMPLETE: pa.array(open_),
            ROW: pa.array(np.arange(n, dtype=np.int32)),
        })
        table = normalise(table, w, origin)
        check_ids(table, w, origin)
        lazy = self._args(events, begin, end, n)
        meta = {"track_names": self._names(ident),
                "process_names": {str(k): v for k, v in state.process_names.items()},
                "thread_names": {f"{k[0]}/{k[1]}": v for k, v in state.thread_names.items()},
                "perfetto": {"packets": int(p.kind.size), "tracks": len(state.tracks), "sequences": int(np.unique(p.seq).size)}}
        return Profile(table, source=str(self.path), format="perfetto", warnings=w, lazy=lazy,
                       counters=Counters({"counters": counters}) if counters is not None else None,
                       metadata=meta, extra={"filters_applied": False})

    def _names(self, ident: list[Identity]) -> dict[str, list]:
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
            if tname and not fields_in(tname):
                threads[(inst, i.process_id, i.thread_id)] = thread_label(tname, i.thread_id)
        return {"process": [[k[0], k[1], v, None, False] for k, v in procs.items()],
                "thread": [[k[0], k[1], k[2], v, None, False] for k, v in threads.items()]}

    def _tracks(self, events: np.ndarray) -> tuple[np.ndarray, dict[int, Identity]]:
        """Each event's track uuid (explicit, the sequence's default, or its thread's) and each track's identity."""
        p, state = self.p, self.state
        uuid = p.track[events].astype(np.uint64).copy()
        missing = ~p.has_track[events]
        if missing.any():
            gen = state.generation[events]
            defaults = state.default_track
            for g in np.unique(gen[missing]).tolist():
                sel = missing & (gen == g)
                if g in defaults:
                    uuid[sel] = defaults[g]
                    continue
                seq = int(p.seq[events][np.flatnonzero(sel)[0]])
                # Older SDKs: a sequence's events belong to the thread its descriptor names.
                uuid[sel] = np.uint64((1 << 63) | seq)
        identities: dict[int, Identity] = {}
        for u in np.unique(uuid).tolist():
            if u >> 63 and u not in state.tracks:
                pid, tid = state.seq_thread.get(u & 0xFFFFFFFF, (0, 0))
                identities[u] = sequence_identity(pid, tid, self.instance)
            else:
                identities[u] = identity_of(u, state, self.instance)
        return uuid, identities

    def _sources(self, name_col: np.ndarray, names: list[str], cat_col: np.ndarray, cats: list[str],
                 track_of_row: np.ndarray, ident: list[Identity]) -> pa.DictionaryArray:
        width = len(cats) + 1
        key = name_col.astype(np.int64) * width + (cat_col + 1)
        pair_codes, pair_u = pd.factorize(key)
        per_pair = [event_source(names[k // width], cats[k % width - 1] if k % width else None) for k in pair_u]
        src = np.array(per_pair, dtype=object)[pair_codes]
        forced = np.array([i.source for i in ident], dtype=object)
        if len(forced) and any(f is not None for f in forced):
            by_track = forced[track_of_row]
            src = np.where(pd.isna(by_track), src, by_track)
        codes, values = pd.factorize(pd.Series(src, dtype=object))
        return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(list(values), pa.string()))

    def _args(self, events: np.ndarray, begin: np.ndarray, end: np.ndarray, n: int) -> PerfettoArgs:
        from .perfetto_args import PerfettoArgs, gather

        p = self.p
        ev = events
        has = p.has_args[ev]

        def blobs(which: np.ndarray) -> pa.Array:
            valid = which >= 0
            idx = np.where(valid, which, 0)
            take = valid & has[idx]
            return gather(self.buf, np.where(take, p.ev_off[ev][idx], 0), np.where(take, p.ev_len[ev][idx], 0))

        end_blob = np.where(end == begin, -1, end)  # an instant's annotations are read once
        flows = self._flows(events, begin, end, n)
        return PerfettoArgs(blobs(begin), blobs(end_blob), self.state.generation[ev][begin], self.state.arg_names,
                            self.state.arg_strings, flows)

    def _flows(self, events: np.ndarray, begin: np.ndarray, end: np.ndarray, n: int) -> pa.Array:
        p = self.p
        if p.flow_id.size == 0:
            return pa.nulls(n, pa.list_(pa.string()))
        row_of_packet = np.full(p.kind.size, -1, np.int64)
        rows = np.arange(n)
        row_of_packet[events[begin]] = rows
        closed = end >= 0
        row_of_packet[events[end[closed]]] = rows[closed]
        row = row_of_packet[p.flow_packet]
        bound = row >= 0
        self.warnings.add(f"{self.origin}: flow ids on events that are not drawn (arrows not drawn)", int((~bound).sum()))
        return flow_lists(row[bound], p.flow_id[bound], n)

    def _counters(self, events: np.ndarray, is_counter: np.ndarray, ts: np.ndarray, track_uuid: np.ndarray,
                  identities: dict[int, Identity]) -> pd.DataFrame | None:
        if not is_counter.any():
            return None
        uu = track_uuid[is_counter]
        labels = {u: (identities[u].label or f"counter {u}") for u in np.unique(uu).tolist()}
        name = np.array([labels[u] for u in uu.tolist()], dtype=object)
        df = pd.DataFrame({"timestamp": ts[is_counter],
                           "instance_id": [identities[u].instance_id or self.instance for u in uu.tolist()],
                           "process_id": [identities[u].process_id or 0 for u in uu.tolist()],
                           "name": name, "series": name, "value": self.p.counter[events[is_counter]]})
        return df.sort_values("timestamp", kind="stable").reset_index(drop=True)


def _strings(per_track: list[Any], track_of_row: np.ndarray) -> pa.DictionaryArray:
    codes, uniques = pd.factorize(pd.Series(per_track, dtype=object))
    row_codes = codes[track_of_row] if len(codes) else np.zeros(0, np.int64)
    return pa.DictionaryArray.from_arrays(pa.array(row_codes.astype(np.int32), mask=row_codes < 0),
                                          pa.array([str(u) for u in uniques] or [""], pa.string()))


def _ints(per_track: list[int | None], track_of_row: np.ndarray, fill: int | None) -> pa.Array:
    values = [fill if v is None else v for v in per_track]
    if fill is not None or all(v is not None for v in values):
        arr = np.array(values, dtype=np.int64) if values else np.zeros(0, np.int64)
        return pa.array(arr[track_of_row] if arr.size else np.zeros(track_of_row.size, np.int64))
    arr = pa.array(values, pa.int64())
    return arr.take(pa.array(track_of_row.astype(np.int64))) if len(arr) else pa.nulls(track_of_row.size, pa.int64())


def _instance_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".pftrace", ".perfetto-trace", ".pb", ".trace"):
        name = name.removesuffix(suffix)
    return name or "host"
