"""What the analyses read of a profile, as NumPy columns, built once per profile.

No pandas frame of the whole profile is ever made: names and sources stay dictionary codes,
times stay the profile's int64 arrays, and arguments are read only for the rows the analyses
ask about (`Profile.values_at`, once), then read per key by a byte scan (`model.jsonscan`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from ..model import jsonscan
from ..model.lazy import set_read_threads
from ..model.problem_rows import error_name_codes
from ..model.profile import Profile
from ..model.schema import INCOMPLETE
from .cores import CoreCodes, core_codes

# Kineto device events (GPU kernels, memory copies and sets), as HTA's kernel categories.
KERNEL_CATEGORIES = frozenset({"kernel", "Kernel", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset", "mtia_ccp_events"})
# Events whose arguments the Neuron analyses read (exec_id, model_name, ret), fetched in one pass.
ARG_EVENTS = ("nc_exec_running", "nrt_execute", "cc_exec_barrier", "cc_running")
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
    _cache: dict[Hashable, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _building: dict[Hashable, threading.Event] = field(default_factory=dict, repr=False)

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
        if self.profile._combos is None and _few(rows, len(self)):
            if column not in self.profile.column_names:
                return np.full(len(rows), None, object)
            return np.asarray(self.profile.values_at(column, np.asarray(rows, np.int64)).to_pylist(), dtype=object)
        combos = self.profile._combo_codes()
        vals = combos.table[column].to_numpy(dtype=object)
        return vals[combos.codes[rows]]

    def combo_codes(self, columns: tuple[str, ...], rows: np.ndarray | None = None) -> np.ndarray:
        """A code for the distinct values of some grouping columns (e.g. a thread), at rows (default: every event).

        Before a timeline has built the profile's combos, a few rows are coded from their own
        values rather than building the combos of every event.
        """
        if rows is not None and self.profile._combos is None and _few(rows, len(self)):
            values = [self.profile.values_at(c, rows) if c in self.profile.column_names else pa.nulls(len(rows))
                      for c in columns]
            frame = pd.DataFrame({c: v.to_pandas() for c, v in zip(columns, values, strict=True)}, dtype=object)
            return np.asarray(pd.MultiIndex.from_frame(frame).factorize()[0], np.int32) if len(rows) else \
                np.zeros(0, np.int32)

        def build() -> np.ndarray:
            combos = self.profile._combo_codes()
            return np.asarray(pd.MultiIndex.from_frame(combos.table[list(columns)].astype(object)).factorize()[0], np.int32)

        per_combo = self._cached(("combo", columns), build)
        codes = self.profile._combo_codes().codes
        return per_combo[codes if rows is None else codes[rows]]

    def core_codes(self) -> tuple[CoreCodes, pd.DataFrame]:
        """A NeuronCore code per event (-1 for events not on a core) and one row per core (see `cores`).

        The cores are those of the events the analyses read: executions, runtime calls,
        collectives, errors and unfinished events.
        """
        def build() -> tuple[CoreCodes, pd.DataFrame]:
            rows = sorted_union(self.read_rows(), self.rows_named("cc_running"))
            return core_codes(self, rows)

        return self._cached("cores", build)

    def on_cores(self, *names: str) -> tuple[np.ndarray, np.ndarray]:
        """Rows of the events with these names that run on a NeuronCore, and their core codes."""
        codes, _ = self.core_codes()
        rows = self.rows_named(*names)
        core = codes[rows]
        keep = core >= 0
        return rows[keep], core[keep]

    def column_codes(self, column: str) -> tuple[np.ndarray, list[str]]:
        """Dictionary codes of a held string column (nulls: -1) and its values."""
        def build() -> tuple[np.ndarray, list[str]]:
            chunk = self.profile.column(column).combine_chunks()
            if not pa.types.is_dictionary(chunk.type):
                chunk = chunk.dictionary_encode()
            codes = chunk.indices.fill_null(_NULL).to_numpy(zero_copy_only=False).astype(np.int64)
            return codes, chunk.dictionary.to_pylist()

        return self._cached(f"codes:{column}", build)

    # -- arguments ----------------------------------------------------------------------
    def read_rows(self) -> np.ndarray:
        """The events whose lazy columns the analyses read (sorted): executions, runtime calls,
        barriers, errors and unfinished events."""
        def build() -> np.ndarray:
            return sorted_union(self.rows_named(*ARG_EVENTS), self.rows_with_codes(error_name_codes(self.names)),
                                np.flatnonzero(self.incomplete))

        return self._cached("read-rows", build)

    def _store(self, column: str) -> pa.Array:
        """One read of a lazy column at every row of `read_rows()`, kept."""
        def build() -> pa.Array:
            if column == "extra_attributes_json" and self.read_rows().size and pa.cpu_count() > 1:
                # While this thread reads the arguments (none to read: no thread). Not where Arrow was told
                # to decode on one thread (a job's worker): it would contend with it, and hold flow ids no
                # analysis asked for beside the arguments (a part's peak, issue 35.11); read when asked.
                self._prefetch_flows()
            rows = self.read_rows()
            if rows.size <= _STORE_BLOCK:
                return self.profile.values_at(column, rows)
            # In blocks, kept as chunks: one read of every row then joined held the texts twice, plus the
            # decoded row groups (a job part's peak, issue 35.11); the scans go a chunk at a time.
            blocks = [self.profile.values_at(column, rows[i:i + _STORE_BLOCK]) for i in range(0, rows.size, _STORE_BLOCK)]
            return pa.chunked_array(blocks, type=blocks[0].type)

        return self._cached(("store", column), build)

    def _lazy_at(self, column: str, rows: np.ndarray) -> pa.Array:
        rows = np.asarray(rows, np.int64)
        if column not in self.profile.column_names:
            typ = pa.list_(pa.string()) if column == "flow_id" else pa.string()
            return pa.nulls(rows.size, typ)
        values = self._store(column)
        if rows.size == 0:
            return _one(values.slice(0, 0))
        pos = self._positions(rows)
        if pos is not None:
            return _one(values.take(pa.array(pos)))
        return self._cached((column, _fingerprint(rows)), lambda: self.profile.values_at(column, rows))

    def _positions(self, rows: np.ndarray) -> np.ndarray | None:
        """Where rows are in the kept reads (None if some are not among `read_rows()`).

        Asked about many times: a position per event, so each question is a gather, not a search.
        """
        def dense() -> np.ndarray:
            have = self.read_rows()
            out = np.full(len(self), -1, np.int32)
            out[have] = np.arange(have.size, dtype=np.int32)
            return out

        pos = self._cached("positions", dense)[rows]
        return pos if (pos >= 0).all() else None

    def kept_texts(self) -> tuple[np.ndarray, pa.Array | pa.ChunkedArray]:
        """The rows whose arguments are kept (`read_rows()`) and those texts, as kept (chunked when large)."""
        return self.read_rows(), self._store("extra_attributes_json")

    def arg_texts(self, rows: np.ndarray) -> pa.Array:
        """extra_attributes_json at rows (the usual events are read together once, then kept)."""
        return self._lazy_at("extra_attributes_json", rows).cast(pa.string())

    def arg(self, rows: np.ndarray, key: str, kind: str = "int") -> np.ndarray:
        """One argument of events as a NumPy array: int64 (missing: -1), float, or object strings (missing: None)."""
        rows = np.asarray(rows, np.int64)
        if kind == "str":  # one scan serves both the codes and the strings
            return _strings_of(*self.arg_codes(rows, key))
        if (kind == "int" and rows.size and ("store", "extra_attributes_json") not in self._cache
                and self.rows_named(*ARG_EVENTS).size == 0):
            # No execution or runtime call (a Kineto trace): the kept reads would hold at most errors
            # and unfinished events, and finding those scans every name; read these rows' own.
            return self._int_arg(rows, key)
        if "extra_attributes_json" in self.profile.column_names and rows.size:
            texts = self._store("extra_attributes_json")
            pos = self._positions(rows)
            if pos is not None:
                # The events the analyses read: one scan of the key over all of them, kept; each
                # question is then an index into it, not a copy of its texts.
                every = self._cached(("arg-all", key, kind), lambda: values_of(texts, key, kind))
                return every[pos]
        if kind == "int" and rows.size:
            return self._int_arg(rows, key)
        return self._cached(("arg", key, kind, _fingerprint(rows)), lambda: values_of(self.arg_texts(rows), key, kind))

    def _int_arg(self, rows: np.ndarray, key: str) -> np.ndarray:
        """An integer argument at rows, each event's read once and kept: analyses ask for overlapping sets
        (a Kineto trace's kernels, then the same less the last step's), and a read costs a copy of the
        events' arguments."""
        values, have = self._cached(("arg-each", key), lambda: (np.full(len(self), _NULL, np.int64),
                                                                 np.zeros(len(self), bool)))
        need = rows[~have[rows]]
        if need.size:
            need = sorted_union(need)
            column = "extra_attributes_json"
            if ("store", column) in self._cache or column not in self.profile.column_names:
                texts = self.arg_texts(need)
            else:  # not through the kept reads: building them scans every name for errors
                texts = self.profile.values_at(column, need).cast(pa.string())
            got = values_of(texts, key, "int")
            with self._lock:  # another thread may be filling other rows of the same arrays
                values[need] = got
                have[need] = True
        return values[rows]

    def arg_codes(self, rows: np.ndarray, key: str) -> tuple[np.ndarray, list[str]]:
        """A string argument as codes into its distinct values (-1: missing), with no string made per event."""
        rows = np.asarray(rows, np.int64)
        if "extra_attributes_json" in self.profile.column_names and rows.size:
            texts = self._store("extra_attributes_json")
            pos = self._positions(rows)
            if pos is not None:
                codes, words = self._cached(("arg-codes", key), lambda: codes_of(texts, key))
                return codes[pos], words
        return codes_of(self.arg_texts(rows), key)

    def flow_ids(self, rows: np.ndarray) -> pa.Array:
        return self._lazy_at("flow_id", rows)

    def _cached(self, key: Hashable, build: Callable[[], Any]) -> Any:
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
            threading.Thread(target=lambda: self._background(lambda: self._store("extra_attributes_json")),
                             daemon=True, name="neuron-widgets-analysis-args").start()

    def _prefetch_flows(self) -> None:
        if "flow_id" in self.profile.column_names and ("store", "flow_id") not in self._cache:
            threading.Thread(target=lambda: self._background(lambda: self._store("flow_id")), daemon=True,
                             name="neuron-widgets-analysis-flows").start()

    @staticmethod
    def _background(read: Callable[[], object]) -> None:
        # One decode thread each: the analyses that need no arguments keep a core meanwhile.
        set_read_threads(1)
        read()


def sorted_union(*arrays: np.ndarray) -> np.ndarray:
    """Distinct values of int arrays, sorted (a sort, not NumPy's hashing unique, which is slow on millions)."""
    c = np.concatenate([np.asarray(a, np.int64) for a in arrays])
    c.sort(kind="stable")  # sorted runs end to end: a merge, near linear
    return c[np.r_[True, c[1:] != c[:-1]]] if c.size else c


# Rows of a lazy column read (and kept) per chunk: about a row group's worth of texts at a time.
_STORE_BLOCK = 1 << 18


def _one(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """An array of one chunk (what the kept reads give, chunked, is a chunked array)."""
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    return values


def _few(rows: np.ndarray, n: int) -> bool:
    """Few enough rows to read their own values rather than build the combos of every event."""
    return len(rows) <= max(n // 10, 1000)


def _fingerprint(rows: np.ndarray) -> tuple[int, int, int]:
    return (rows.size, int(rows[:64].sum()), int(rows[-64:].sum())) if rows.size else (0, 0, 0)


def values_of(texts: pa.Array, key: str, kind: str = "int") -> np.ndarray:
    """A top-level JSON value by key, for each text, without a JSON parse per event.

    A byte scan (jsonscan) reads integers and plain strings in place; the few values it cannot
    read exactly (fractions, exponents, escapes, 19+ digits) are parsed as JSON, one text each.
    Floats are always parsed (no analysis reads one).
    """
    n = len(texts)
    if n == 0:
        return np.zeros(0, np.int64) if kind == "int" else np.zeros(0, object)
    if kind == "str":
        return _strings_of(*codes_of(texts, key))
    if kind == "int":
        out, slow = jsonscan.int_values(texts, key, _NULL)
        if slow.any():
            out[slow] = _parsed_values(_one(texts.take(pa.array(np.flatnonzero(slow)))), key, kind)
        return out
    return _parsed_values(_one(texts), key, kind)


def _strings_of(codes: np.ndarray, words: list[str]) -> np.ndarray:
    """Codes back to strings (object array; -1: None)."""
    return np.array([*words, None], dtype=object)[codes]


def codes_of(texts: pa.Array, key: str) -> tuple[np.ndarray, list[str]]:
    """A top-level string value by key, for each text, as codes into its distinct values (-1: missing)."""
    if len(texts) == 0:
        return np.zeros(0, np.int32), []
    codes, words, slow = jsonscan.str_codes(texts, key)
    index: dict[str, int] = {}
    same = np.array([index.setdefault(w, len(index)) for w in words] or [0], np.int32)
    if len(index) < len(words):  # two byte strings decoded alike (invalid UTF-8): one value
        codes = np.where(codes >= 0, same[np.maximum(codes, 0)], -1).astype(np.int32)
        words = list(index)
    if slow.any():  # escapes: decoded as JSON would, then numbered with the rest
        where = np.flatnonzero(slow)
        for r, v in zip(where.tolist(), _parsed_values(_one(texts.take(pa.array(where))), key, "str"), strict=True):
            if v is not None:
                codes[r] = index.setdefault(v, len(index))
        words = list(index)
    return codes, words


def _parsed_values(texts: pa.Array, key: str, kind: str) -> np.ndarray:
    """The key's top-level value in each text by a full JSON parse: exact, for the few texts the scan hands back."""
    out = np.full(len(texts), np.nan if kind == "float" else _NULL if kind == "int" else None,
                  np.float64 if kind == "float" else np.int64 if kind == "int" else object)
    for r, t in enumerate(texts.to_pylist()):
        try:
            obj = orjson.loads(t) if t is not None else None
        except orjson.JSONDecodeError:
            continue
        v = obj.get(key) if isinstance(obj, dict) else None
        if kind == "str":
            out[r] = v if isinstance(v, str) else None
            continue
        if isinstance(v, str):  # a quoted number, as the runtime writes some
            try:
                v = float(v) if any(c in v for c in ".eE") else int(v)
            except ValueError:
                continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if kind == "float":
            out[r] = float(v)
        elif isinstance(v, int) and -2**63 <= v < 2**63:
            out[r] = v
        elif isinstance(v, float) and abs(v) < 2**63:
            out[r] = int(v)
    return out


# A profile's Frame is kept on the profile itself: a weak-keyed table would hold it forever, since
# the Frame refers to its profile (a value keeping its own key alive), and every profile ever
# analysed would stay in memory.
_FRAME_ATTR = "_analysis_frame"
_FRAMES_LOCK = threading.Lock()


def frame_of(profile: Profile) -> Frame:
    """The analyses' view of a profile (built once, kept while the profile lives)."""
    if not isinstance(profile, Profile):
        raise TypeError(f"expected a Profile (neuron_widgets.load_profile), got {type(profile).__name__}")
    if str(getattr(profile, "format", "")).startswith("device:"):
        raise TypeError(f"{profile.source}: is a device trace (one execution's instructions, DMA and semaphores), "
                        "not a system profile: these analyses read NeuronCore executions or GPU kernels. Read its "
                        "numbers with nw.model.device.strip.engine_strip(trace) or "
                        "nw.analysis.device_profiles.device_profile_summary(profile) on the system profile, "
                        "and see it with DeviceTraceViewer(trace)")
    got = getattr(profile, _FRAME_ATTR, None)
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
        if getattr(profile, _FRAME_ATTR, None) is None:
            setattr(profile, _FRAME_ATTR, fr)
        return getattr(profile, _FRAME_ATTR)


def notes_of(df: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """Attach what an analysis could not know (`df.attrs["notes"]`, each said once)."""
    seen: list[str] = []
    for n in notes:
        if n not in seen:
            seen.append(n)
    df.attrs["notes"] = seen
    return df
