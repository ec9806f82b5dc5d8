"""What the analyses read of a profile, as NumPy columns, built once per profile.

No pandas frame of the whole profile is ever made: names and sources stay dictionary codes,
times stay the profile's int64 arrays, and arguments are read only for the rows an analysis
asks about (`Profile.values_at`), then parsed per key with one Arrow regex pass.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..model import jsonscan
from ..model.profile import Profile, set_read_threads
from ..model.schema import INCOMPLETE

# Kineto device events (GPU kernels, memory copies and sets), as HTA's kernel categories.
KERNEL_CATEGORIES = frozenset({"kernel", "Kernel", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset", "mtia_ccp_events"})
# Events whose arguments the Neuron analyses read (exec_id, model_name, ret), fetched in one pass.
ARG_EVENTS = ("nc_exec_running", "nrt_execute", "cc_exec_barrier")
FLOW_EVENTS = ("nc_exec_running", "nrt_execute")
_NULL = -1


@dataclass
class Frame:
    profile: Profile
    names: list[str]
    name: np.ndarray  # int32 code per event
    start: np.ndarray
    end: np.ndarray
    source: np.ndarray  # code per event into `sources`
    sources: list[str]
    _cache: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _building: dict = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return int(self.name.size)

    # -- rows ----------------------------------------------------------------------------
    def codes_of(self, names: Iterable[str]) -> np.ndarray:
        wanted = set(names)
        return np.array([i for i, n in enumerate(self.names) if n in wanted], np.int64)

    def rows_named(self, *names: str) -> np.ndarray:
        def build() -> np.ndarray:
            return self.rows_with_codes(self.codes_of(names))

        return self._cached(("named", names), build)

    def rows_with_codes(self, codes: np.ndarray) -> np.ndarray:
        """Rows whose name code is one of `codes` (a table look-up per event, not a set test)."""
        if codes.size == 0:
            return np.zeros(0, np.int64)
        if codes.size == 1:
            return np.flatnonzero(self.name == codes[0])
        table = np.zeros(len(self.names) + 1, bool)
        table[codes] = True
        return np.flatnonzero(table[self.name])

    def rows_of_source(self, source: str) -> np.ndarray:
        if source not in self.sources:
            return np.zeros(0, np.int64)
        return np.flatnonzero(self.source == self.sources.index(source))

    @property
    def incomplete(self) -> np.ndarray:
        return self._cached(INCOMPLETE, lambda: (
            self.profile.column(INCOMPLETE).fill_null(False).to_numpy(zero_copy_only=False)
            if INCOMPLETE in self.profile.column_names else np.zeros(len(self), bool)))

    # -- per-event keys from the few distinct combos ------------------------------------
    def combo_values(self, column: str, rows: np.ndarray) -> np.ndarray:
        """A grouping column (instance_id, process_id, nc_idx, ...) at some rows, through the combos table."""
        combos = self.profile._combo_codes()
        vals = combos.table[column].to_numpy(dtype=object)
        return vals[combos.codes[rows]]

    def combo_codes(self, columns: tuple[str, ...], rows: np.ndarray | None = None) -> np.ndarray:
        """A code for the distinct values of some grouping columns (e.g. a thread), at rows (default: every event)."""
        def build() -> np.ndarray:
            combos = self.profile._combo_codes()
            return np.asarray(pd.MultiIndex.from_frame(combos.table[list(columns)].astype(object)).factorize()[0], np.int32)

        per_combo = self._cached(("combo", columns), build)
        codes = self.profile._combo_codes().codes
        return per_combo[codes if rows is None else codes[rows]]

    def core_codes(self) -> tuple[RowCodes, pd.DataFrame]:
        """A NeuronCore code per event (-1 for events not on a core) and one row per core.

        A core is (instance, process, nc_idx): nc_idx is process-local. Its worker_gid is the
        one its hardware events carry (unique across the job). Codes are computed at the events
        the analyses read (executions, runtime calls, collectives, errors, unfinished events)
        from their own columns, without the profile's combos (a join over every event that a
        timeline may be building meanwhile); `RowCodes.full()` gives every event's code.
        """
        def build() -> tuple[RowCodes, pd.DataFrame]:
            from ..model.problems import error_name_codes

            rows = sorted_union(self.rows_named(*ARG_EVENTS, "cc_running"),
                                self.rows_with_codes(error_name_codes(self.names)), np.flatnonzero(self.incomplete))
            table = self.profile._table
            take = pa.array(rows)
            # The profile's joined copies (a timeline builds them too): one contiguous chunk to take from.
            inst = self.profile._joined("instance_id").chunk(0).take(take)
            if not pa.types.is_dictionary(inst.type):
                inst = inst.dictionary_encode()
            inst_code = inst.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
            inst_names = inst.dictionary.to_pylist()

            def ints(c: str) -> tuple[np.ndarray, np.ndarray]:
                if c not in table.column_names:
                    return np.zeros(rows.size, np.int64), np.zeros(rows.size, bool)
                col = self.profile._joined(c).chunk(0).take(take)
                valid = col.is_valid().to_numpy(zero_copy_only=False)
                return col.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64), valid

            pid, _ = ints("process_id")
            nc, has = ints("nc_idx")
            gid, has_gid = ints("worker_gid")
            codes = np.full(rows.size, _NULL, np.int32)
            if has.any():
                # One int64 per (instance, process, core): small codes packed, then numbered.
                pid_code, pid_u = pd.factorize(pid[has])
                nc_code, nc_u = pd.factorize(nc[has])
                key = (inst_code[has] * len(pid_u) + pid_code) * len(nc_u) + nc_code
                got, inverse = np.unique(key, return_inverse=True)
                codes[has] = inverse
                where = np.flatnonzero(has)
                first = np.full(got.size, -1, np.int64)
                np.maximum.at(first, inverse[::-1], where[::-1])  # any row of the core
                cores = pd.DataFrame({"instance_id": [inst_names[inst_code[r]] for r in first],
                                      "process_id": pid[first], "nc_idx": nc[first]})
                with_gid = has_gid[has]
                gid_of = np.full(got.size, -1, np.int64)
                gid_of[inverse[with_gid]] = gid[has][with_gid]
                cores["worker_gid"] = pd.array(np.where(gid_of >= 0, gid_of, 0), dtype="Int64")
                cores.loc[gid_of < 0, "worker_gid"] = pd.NA
            else:
                cores = pd.DataFrame(columns=["instance_id", "process_id", "nc_idx", "worker_gid"])
            cores["nc_idx"] = cores["nc_idx"].astype("Int64")
            cores["process_id"] = cores["process_id"].astype("Int64")
            cores["worker_gid"] = cores["worker_gid"].astype("Int64")
            return RowCodes(self, rows, codes, cores), cores

        return self._cached("cores", build)

    def on_cores(self, *names: str) -> tuple[np.ndarray, np.ndarray]:
        """Rows of the events with these names that run on a NeuronCore, and their core codes."""
        codes, _ = self.core_codes()
        rows = self.rows_named(*names)
        core = codes[rows]
        keep = core >= 0
        return rows[keep], core[keep]

    def column_codes(self, column: str) -> tuple[np.ndarray, list]:
        """Dictionary codes of a held string column (nulls: -1) and its values."""
        def build() -> tuple[np.ndarray, list]:
            chunk = self.profile.column(column).combine_chunks()
            if not pa.types.is_dictionary(chunk.type):
                chunk = chunk.dictionary_encode()
            codes = chunk.indices.fill_null(_NULL).to_numpy(zero_copy_only=False).astype(np.int64)
            return codes, chunk.dictionary.to_pylist()

        return self._cached(f"codes:{column}", build)

    # -- arguments ----------------------------------------------------------------------
    def _store(self, column: str, prefetch: tuple[str, ...]) -> tuple[np.ndarray, pa.Array]:
        """One read of a lazy column for every event the analyses ask about (sorted rows, values)."""
        def build() -> tuple[np.ndarray, pa.Array]:
            rows = self.rows_named(*prefetch)
            if column == "extra_attributes_json":
                from ..model.problems import error_name_codes

                self._prefetch_flows()  # while this thread reads the arguments

                errs = self.rows_with_codes(error_name_codes(self.names))
                rows = sorted_union(rows, errs, np.flatnonzero(self.incomplete))
            return rows, self.profile.values_at(column, rows)

        return self._cached(("store", column), build)

    def _lazy_at(self, column: str, rows: np.ndarray, prefetch: tuple[str, ...]) -> pa.Array:
        rows = np.asarray(rows, np.int64)
        if column not in self.profile.column_names:
            typ = pa.list_(pa.string()) if column == "flow_id" else pa.string()
            return pa.nulls(rows.size, typ)
        have, values = self._store(column, prefetch)
        pos = np.searchsorted(have, rows)
        if have.size and rows.size and (pos < have.size).all() and (have[np.minimum(pos, have.size - 1)] == rows).all():
            return values.take(pa.array(pos))
        if rows.size == 0:
            return values.slice(0, 0)
        return self._cached((column, _fingerprint(rows)), lambda: self.profile.values_at(column, rows))

    def arg_texts(self, rows: np.ndarray) -> pa.Array:
        """extra_attributes_json at rows (the usual events are read together once, then kept)."""
        return self._lazy_at("extra_attributes_json", rows, ARG_EVENTS).cast(pa.string())

    def arg(self, rows: np.ndarray, key: str, kind: str = "int") -> np.ndarray:
        """One argument of events as a NumPy array: int64 (missing: -1), float, or object strings (missing: None)."""
        rows = np.asarray(rows, np.int64)
        if "extra_attributes_json" in self.profile.column_names and rows.size:
            have, texts = self._store("extra_attributes_json", ARG_EVENTS)
            pos = np.searchsorted(have, rows)
            if (pos < have.size).all() and (have[pos] == rows).all():
                # The events the analyses read: one scan of the key over all of them, kept; each
                # question is then an index into it, not a copy of its texts.
                every = self._cached(("arg-all", key, kind), lambda: values_of(texts, key, kind))
                return every[pos]
        return self._cached(("arg", key, kind, _fingerprint(rows)), lambda: values_of(self.arg_texts(rows), key, kind))

    def flow_ids(self, rows: np.ndarray) -> pa.Array:
        return self._lazy_at("flow_id", rows, FLOW_EVENTS)

    def _cached(self, key, build):
        """build() once per key: other threads asking meanwhile wait for it instead of building it again."""
        while True:
            with self._lock:
                if key in self._cache:
                    return self._cache[key]
                waiting = self._building.get(key)
                if waiting is None:
                    done = self._building[key] = threading.Event()
                    break
            waiting.wait()
        try:
            got = build()
            with self._lock:
                self._cache[key] = got
            return got
        finally:
            with self._lock:
                self._building.pop(key, None)
            done.set()

    def prefetch(self) -> None:
        """Start reading the arguments and the flow ids the analyses use, each in a thread (Parquet decodes
        off the GIL), so the work that needs only times runs meanwhile."""
        self._prefetch_flows()
        if "extra_attributes_json" in self.profile.column_names and ("store", "extra_attributes_json") not in self._cache:
            threading.Thread(target=lambda: self._background(lambda: self._store("extra_attributes_json", ARG_EVENTS)),
                             daemon=True, name="neuron-widgets-analysis-args").start()

    def _prefetch_flows(self) -> None:
        if "flow_id" in self.profile.column_names and ("store", "flow_id") not in self._cache:
            threading.Thread(target=lambda: self._background(lambda: self._store("flow_id", FLOW_EVENTS)), daemon=True,
                             name="neuron-widgets-analysis-flows").start()

    @staticmethod
    def _background(read) -> None:
        # One decode thread each: the analyses that need no arguments keep a core meanwhile.
        set_read_threads(1)
        read()


class RowCodes:
    """Core codes known at some rows (sorted), read like a per-event array: `codes[rows]`, `codes.full()`."""

    UNKNOWN = -2  # a row whose code was not computed (not one of the events the analyses read)

    def __init__(self, frame: Frame, rows: np.ndarray, codes: np.ndarray, cores: pd.DataFrame) -> None:
        self.frame, self.rows, self.codes, self.cores = frame, rows, codes, cores
        self._full: np.ndarray | None = None
        self._dense = np.full(len(frame), self.UNKNOWN, np.int32)
        self._dense[rows] = codes

    def __getitem__(self, rows):
        want = np.asarray(rows, np.int64)
        out = self._dense[want]
        if np.ndim(out) == 0:
            return int(out) if out != self.UNKNOWN else int(self.full()[want])
        unknown = out == self.UNKNOWN
        if unknown.any():  # a whole-profile question: every event's code, through the combos
            out = out.copy()
            out[unknown] = self.full()[want[unknown]]
        return out

    def max(self) -> int:
        return int(self.codes.max()) if self.codes.size else -1

    def full(self) -> np.ndarray:
        """Every event's core code (through the profile's combos, built once)."""
        if self._full is None:
            combos = self.frame.profile._combo_codes()
            t = combos.table
            key = {(str(r.instance_id), int(r.process_id), int(r.nc_idx)): k for k, r in enumerate(self.cores.itertuples())}
            per_combo = np.array([key.get((str(i), int(p), int(n)), _NULL) if n is not None and n == n and p is not None
                                  else _NULL for i, p, n in zip(t["instance_id"], t["process_id"], t["nc_idx"],
                                                                strict=True)] or [_NULL], np.int32)
            self._full = per_combo[combos.codes] if len(t) else np.zeros(0, np.int32)
        return self._full


def sorted_union(*arrays: np.ndarray) -> np.ndarray:
    """Distinct values of int arrays, sorted (a sort, not NumPy's hashing unique, which is slow on millions)."""
    c = np.concatenate([np.asarray(a, np.int64) for a in arrays])
    c.sort()
    return c[np.r_[True, c[1:] != c[:-1]]] if c.size else c


def _fingerprint(rows: np.ndarray) -> tuple[int, int, int]:
    return (rows.size, int(rows[:64].sum()), int(rows[-64:].sum())) if rows.size else (0, 0, 0)


def values_of(texts: pa.Array, key: str, kind: str = "int") -> np.ndarray:
    """A top-level JSON value by key, for each text, without a JSON parse per event.

    A byte scan (jsonscan) reads integers and plain strings in place; the few values it cannot
    read exactly (fractions, exponents, escapes, 19+ digits) and floats go through one regex pass.
    """
    n = len(texts)
    if n == 0:
        return np.zeros(0, np.int64) if kind == "int" else np.zeros(0, object)
    if kind == "str":
        out, slow = jsonscan.str_values(texts, key)
        if slow.any():
            out[slow] = _regex_values(pa.array(texts).take(pa.array(np.flatnonzero(slow))), key, kind)
        return out
    if kind == "int":
        out, slow = jsonscan.int_values(texts, key, _NULL)
        if slow.any():
            out[slow] = _regex_values(pa.array(texts).take(pa.array(np.flatnonzero(slow))), key, kind)
        return out
    return _regex_values(texts, key, kind)


def _regex_values(texts: pa.Array, key: str, kind: str) -> np.ndarray:
    n = len(texts)
    k = re.escape(key)
    if kind == "str":
        got = pc.extract_regex(texts, rf'"{k}"\s*:\s*"(?P<v>(?:[^"\\]|\\.)*)"')
        out = got.field("v").to_numpy(zero_copy_only=False).astype(object)
        out = np.where(pc.is_null(got).to_numpy(zero_copy_only=False), None, out)
        # Escapes kept by the pattern are decoded as JSON would.
        return np.array([orjson.loads(b'"' + v.encode() + b'"') if isinstance(v, str) and "\\" in v else v
                         for v in out], dtype=object)
    got = pc.extract_regex(texts, rf'"{k}"\s*:\s*"?(?P<v>-?[0-9][0-9.eE+-]*)')
    # A text the pattern missed is a null struct whose field still holds "": null it.
    vals = pc.if_else(pc.is_null(got), pa.scalar(None, pa.string()), got.field("v"))
    if kind == "float":
        return pc.cast(vals, pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)
    floats = pc.cast(vals, pa.float64()).fill_null(_NULL).to_numpy(zero_copy_only=False)
    ints = np.full(n, _NULL, np.int64)
    ok = np.isfinite(floats) & (np.abs(floats) < 2**63)
    ints[ok] = floats[ok].astype(np.int64)
    # Large integers lose nothing: read them exactly where float64 would round.
    big = ok & (np.abs(floats) >= 2**53)
    if big.any():
        exact = vals.to_numpy(zero_copy_only=False)
        ints[big] = [int(float(v)) if ("." in v or "e" in v.lower()) else int(v) for v in exact[big]]
    return ints


_FRAMES: weakref.WeakKeyDictionary[Profile, Frame] = weakref.WeakKeyDictionary()
_FRAMES_LOCK = threading.Lock()


def frame_of(profile: Profile) -> Frame:
    """The analyses' view of a profile (built once, kept while the profile lives)."""
    if not isinstance(profile, Profile):
        raise TypeError(f"expected a Profile (neuron_widgets.load_profile), got {type(profile).__name__}")
    with _FRAMES_LOCK:
        got = _FRAMES.get(profile)
    if got is not None:
        return got
    names = profile.name_dictionary()
    src = profile._joined("trace_event_source").chunk(0) if len(profile) else None
    if src is not None and pa.types.is_dictionary(src.type):
        source = src.indices.fill_null(_NULL).to_numpy(zero_copy_only=False)
        sources = src.dictionary.to_pylist()
    else:
        source, sources = np.zeros(len(profile), np.int32), []
    fr = Frame(profile, names, profile.name_codes() if len(profile) else np.zeros(0, np.int32),
               profile.array("start_ts"), profile.array("end_ts"), source, sources)
    with _FRAMES_LOCK:
        _FRAMES.setdefault(profile, fr)
        return _FRAMES[profile]


def notes_of(df: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """Attach what an analysis could not know (`df.attrs["notes"]`, each said once)."""
    seen: list[str] = []
    for n in notes:
        if n not in seen:
            seen.append(n)
    df.attrs["notes"] = seen
    return df
