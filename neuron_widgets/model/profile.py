"""Profile: one loaded trace, its events as Arrow columns and the caches views share."""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import LoadWarnings
from . import clusters, viewport
from .background import background_priority
from .clusters import Split
from .event_access import EventAccess
from .filters import Filters
from .grouping import COMBO_COLUMNS, GROUPINGS, Combos, check_grouping, tracks_of
from .info import summarise
from .lazy import LazyColumns, is_identity, take_lazy
from .order import time_order
from .problem_rows import error_rows, incomplete_rows
from .schema import EVENT_COLUMNS, INCOMPLETE, ROW
from .track_index import TrackIndex as TrackIndex  # re-exported: model/__init__ and the device wing import it here
from .track_index import build_track_index
from .track_lod import build_lod
from .track_names import TrackNames
from .viewport import LodIndex

if TYPE_CHECKING:
    from .device.trace import DeviceTrace

# A preview (Profile.preview) holds about this many events, and every event of at least
# 1/PREVIEW_PX of the profile's length.
PREVIEW_EVENTS = 400_000
PREVIEW_PX = 4096
# Profiles of at least this many events get a preview while their grouping is built.
PREVIEW_MIN_EVENTS = 2_000_000


@dataclass
class Counters:
    """Sampled series (CPU, host memory, HBM, Chrome `C` events) read on first use."""

    loaders: dict[str, Callable[[], pd.DataFrame] | pd.DataFrame] = field(default_factory=dict)

    def names(self) -> list[str]:
        return sorted(self.loaders)

    def get(self, name: str) -> pd.DataFrame:
        got = self.loaders.get(name)
        if got is None:
            return pd.DataFrame()
        if callable(got):
            got = got()
            self.loaders[name] = got
        return got


class Profile(EventAccess):
    """A loaded profile.

    Events are held as Arrow columns in time order; nothing per event is a Python object.
    Heavy columns (`extra_attributes_json`, `flow_id`) are read on first use. Grouping
    results are computed on first use and cached, so several widgets on one profile share
    them.
    """

    def __init__(
        self,
        table: pa.Table,
        *,
        source: str,
        format: str,
        warnings: LoadWarnings | None = None,
        lazy: LazyColumns | None = None,
        counters: Counters | None = None,
        device_profiles: pd.DataFrame | None = None,
        metadata: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
        _ordered: bool = False,
    ) -> None:
        if ROW not in table.column_names:
            n = table.num_rows
            table = table.append_column(ROW, pa.array(np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)))
        if not _ordered:
            order = time_order(table.column("start_ts").to_numpy(), table.column("end_ts").to_numpy())
            if order is not None:
                table = table.take(order)
        self._table = table
        self.source = source
        self.format = format
        self.warnings = warnings if warnings is not None else LoadWarnings()
        self._lazy = lazy
        self._counters = counters if counters is not None else Counters()
        self._device_profiles = device_profiles
        self.metadata: dict[str, Any] = dict(metadata or {})
        # Reader-specific extras (device table locations, capture info) for later views.
        self.extra: dict[str, Any] = dict(extra or {})
        self._lock = threading.RLock()
        self._indexes: dict[str, TrackIndex] = {}
        self._lods: dict[str, LodIndex] = {}
        self._flows = None  # FlowIndex, built on first dependencies() call
        self._device_cache: dict[str, DeviceTrace] = {}  # as read, device clock
        self._aligned_cache: OrderedDict[int, DeviceTrace] = OrderedDict()  # per event, host clock
        self._combos: Combos | None = None
        self._building: dict[str, threading.Event] = {}  # what one thread builds while others wait
        self._preview: Profile | None = None
        # For a preview: its rows' places in the profile it samples.
        self.source_rows: np.ndarray | None = None
        self._materialised: dict[str, pa.ChunkedArray] = {}

    # -- sizes and times ---------------------------------------------------------------
    def __len__(self) -> int:
        return self._table.num_rows

    @cached_property
    def start_ts(self) -> int:
        col = self._table.column("start_ts")
        return int(col[0].as_py()) if len(col) else 0

    @cached_property
    def end_ts(self) -> int:
        col = self.array("end_ts")
        return int(col.max()) if col.size else 0

    @cached_property
    def clock_split(self) -> Split:
        """The dense part of the profile when some events sit on a clock far from the rest (model.clusters)."""
        start = self.array("start_ts")
        end = self.array("end_ts")
        if INCOMPLETE in self._table.column_names:  # an unfinished event reaches the end: not a bridge
            end = np.where(self._table.column(INCOMPLETE).to_numpy(zero_copy_only=False), start, end)
        return clusters.split(start, end)

    @property
    def home_range(self) -> tuple[int, int]:
        """Where a view of the profile opens (absolute ns): all of it, or its dense part (clock_split)."""
        if not len(self):
            return (self.origin_ts, self.origin_ts + 1)
        a, b = self.clock_split.dense
        if (a, b) == (0, len(self)):
            return (self.start_ts, self.end_ts)
        start, end = self.array("start_ts"), self.array("end_ts")
        return (int(start[a]), int(max(end[a:b].max(), start[b - 1] + 1)))

    @cached_property
    def origin_ts(self) -> int:
        """Where relative times ("12.5ms") count from: the profile's first timestamp.

        It is the reader's (the capture's first timestamp), so a filtered view keeps the
        origin of the profile it came from. When that timestamp is on a far clock (a few events
        a million seconds before the rest, see clock_split), times count from the dense part's
        start instead, so that they read as the trace's own (12.5 ms, not 18706 min).
        """
        origin = self.metadata.get("origin_ts")
        origin = int(origin) if origin is not None else self.start_ts
        split = self.clock_split
        a = split.dense[0]
        before = [hi for _lo, hi in split.outliers if hi <= a]
        if before and origin <= int(self.array("end_ts")[: max(before)].max()):
            return int(self.array("start_ts")[a])
        return origin

    @property
    def far_clock_events(self) -> int:
        """Events outside the dense part (on a clock far from the rest; 0 for most profiles)."""
        return self.clock_split.outlier_rows

    @property
    def home_duration_ns(self) -> int:
        """The span of the dense part: the profile's duration when no events sit on a far clock."""
        a, b = self.home_range
        return b - a

    @property
    def duration_ns(self) -> int:
        return self.end_ts - self.start_ts

    # -- columns ----------------------------------------------------------------------
    @property
    def core(self) -> pa.Table:
        """The loaded columns as they are held (no lazy column is read)."""
        return self._table.drop_columns([ROW])

    def column(self, name: str) -> pa.ChunkedArray:
        """One column, reading it from the source first if it is a lazy one."""
        if name in self._table.column_names and name != ROW:
            return self._joined(name)
        with self._lock:
            if name not in self._materialised:
                if self._lazy is None or name not in self._lazy.names():
                    raise KeyError(f"profile has no column {name!r}; it has {', '.join(self.column_names)}")
                full = self._lazy.column(name)
                rows = self._table.column(ROW)
                self._materialised[name] = full.take(rows) if len(full) != len(rows) or not is_identity(rows) else full
            return self._materialised[name]

    def _joined(self, name: str) -> pa.ChunkedArray:
        """A held column as one contiguous chunk (joined on first use, then kept joined)."""
        col = self._table.column(name)
        if col.num_chunks == 1:
            return col

        def joined() -> pa.ChunkedArray | None:
            got = self._table.column(name)
            return got if got.num_chunks == 1 else None

        def build() -> pa.ChunkedArray:
            col = self._table.column(name)
            if pa.types.is_dictionary(col.type):
                col = col.unify_dictionaries()
            # An empty column (a filter that kept nothing) becomes one empty chunk, not none.
            one = col.combine_chunks() if col.num_chunks else pa.array([], type=col.type)
            col = pa.chunked_array([one], type=col.type)
            with self._lock:
                i = self._table.schema.get_field_index(name)
                self._table = self._table.set_column(i, self._table.field(i), col)
            return col

        # Joined outside the lock: other columns stay readable, and other threads join theirs.
        return self._once(f"join:{name}", joined, build)

    def values_at(self, name: str, rows: np.ndarray) -> pa.Array:
        """One column (held or lazy) at some rows, in the order given, without reading the rest.

        A lazy column is read only at those rows (Parquet streams its batches), so the arguments
        of the hardware events of a 10M-event profile cost what those events hold, not the profile.
        """
        rows = np.asarray(rows, dtype=np.int64)
        if name in self._table.column_names or name in self._materialised:
            return self.column(name).take(pa.array(rows)).combine_chunks()
        if self._lazy is None or name not in self._lazy.names():
            raise KeyError(f"profile has no column {name!r}; it has {', '.join(self.column_names)}")
        source = self._table.column(ROW).to_numpy()[rows] if rows.size else np.zeros(0, np.int64)
        if source.size < 2 or bool((source[1:] >= source[:-1]).all()):
            return take_lazy(self._lazy, name, source)  # already in file order (an unsorted load's rows)
        order = np.argsort(source, kind="stable")
        got = take_lazy(self._lazy, name, source[order])
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        return got.take(pa.array(back))

    def array(self, name: str) -> np.ndarray:
        """A held numeric column as a NumPy view (no copy once joined)."""
        col = self._joined(name)
        return col.chunk(0).to_numpy(zero_copy_only=False) if col.num_chunks else np.zeros(0)

    @property
    def column_names(self) -> list[str]:
        names = [c for c in self._table.column_names if c != ROW]
        if self._lazy is not None:
            names += [c for c in self._lazy.names() if c not in names]
        return names

    @property
    def table(self) -> pa.Table:
        """Every column, in SystemProfileEvents order then the extras (reads lazy ones)."""
        names = self.column_names
        ordered = [c for c in EVENT_COLUMNS if c in names]
        ordered += [c for c in ("flow_id", "extra_attributes_json") if c in names]
        ordered += [c for c in names if c not in ordered]
        return pa.table({c: self.column(c) for c in ordered})

    @cached_property
    def events(self) -> pd.DataFrame:
        """All events as pandas (built on first access, then kept)."""
        return self.table.to_pandas(types_mapper=_pandas_types)

    # -- grouping --------------------------------------------------------------------
    def _once(self, key: str, cached: Callable[[], Any], build: Callable[[], Any]) -> Any:
        """`cached()` if not None, else `build()` run by one thread while the others wait for it.

        The profile's lock is not held while building: a view can read columns, events and
        other groupings while a grouping's lanes or index are being built in the background.
        """
        while True:
            with self._lock:
                got = cached()
                if got is not None:
                    return got
                waiting = self._building.get(key)
                if waiting is None:
                    done = self._building[key] = threading.Event()
                    break
            waiting.wait()  # then look again; if the builder failed, this thread tries (and raises)
        try:
            return build()
        finally:
            with self._lock:
                self._building.pop(key, None)
            done.set()

    def _combo_codes(self) -> Combos:
        def build() -> Combos:
            for name in COMBO_COLUMNS:
                self._joined(name)
            combos = Combos.of(self._table)
            with self._lock:
                self._combos = combos
            return combos

        return self._once("combos", lambda: self._combos, build)

    def track_index(self, grouping: str = "default") -> TrackIndex:
        """Tracks and lanes of one grouping mode (computed once, then cached)."""
        check_grouping(grouping)

        def build() -> TrackIndex:
            combos = self._combo_codes()
            combo_track, tracks = tracks_of(combos.table, grouping, self.track_names)
            idx = self._build_index(grouping, tracks, combo_track, combos.codes, combos.counts)
            pa.default_memory_pool().release_unused()  # the joined columns' old chunks
            return idx

        return self._once(f"index:{grouping}", lambda: self._indexes.get(grouping), build)

    @cached_property
    def track_names(self) -> TrackNames:
        """The process and thread names (and order) the trace carries, for the grouping labels."""
        return TrackNames.of(self.metadata)

    def preview(self) -> Profile:
        """A sample of the profile a view can paint within a fraction of a second (built once).

        Every event at least 1/PREVIEW_PX of the profile long, every error and unfinished
        event, and one in k of the others (about PREVIEW_EVENTS in all). Its `source_rows` are
        the sampled rows in this profile. `prepare()` builds it first, then the whole profile's
        grouping, so a Timeline opened meanwhile draws the preview instead of waiting.
        """
        def build() -> Profile:
            n = len(self)
            start, end = self._table.column("start_ts"), self._table.column("end_ts")
            span = max(self.end_ts - self.start_ts, 1)
            mask = np.zeros(n, dtype=bool)
            if n:
                mask |= pc.greater_equal(pc.subtract(end, start), span // PREVIEW_PX).to_numpy()
            mask[::max(n // PREVIEW_EVENTS, 1)] = True
            mask[error_rows(self, scan_args=False)] = True
            mask[incomplete_rows(self)] = True
            # The name column is joined first (error_rows did), so the sample shares the
            # profile's name dictionary: replies drawn from it name events with the profile's codes.
            sub = Profile(self._table.filter(pa.array(mask)), source=self.source, format=self.format,
                          warnings=self.warnings, lazy=self._lazy,
                          metadata={**self.metadata, "origin_ts": self.origin_ts}, extra=self.extra, _ordered=True)
            sub.source_rows = np.flatnonzero(mask)
            with self._lock:
                self._preview = sub
            return sub

        return self._once("preview", lambda: self._preview, build)

    def ready(self, grouping: str) -> bool:
        """Whether a grouping's tracks, lanes and level-of-detail index are built (a view of it paints at once)."""
        with self._lock:
            return grouping in self._lods

    def grouping_keys(self, grouping: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """A grouping without its lanes: per event a combo code, each combo's track, the track labels.

        Cheap at any size (the labels are computed on the few distinct combos); HTML export uses
        it to let the page group events itself.
        """
        check_grouping(grouping)
        with self._lock:
            idx = self._indexes.get(grouping)
        if idx is not None:
            return idx.combo, idx.combo_track, [str(x) for x in idx.tracks["label"]]
        combos = self._combo_codes()
        combo_track, tracks = tracks_of(combos.table, grouping, self.track_names)
        return combos.codes, combo_track, [str(x) for x in tracks["label"]]

    def _build_index(self, grouping: str, tracks: pd.DataFrame, combo_track: np.ndarray,
                     combo: np.ndarray, combo_events: np.ndarray | None = None) -> TrackIndex:
        """Lanes and per-track counts for events whose track is combo_track[combo]; cached under `grouping`."""
        idx = build_track_index(grouping, tracks, combo_track, combo, self.array("start_ts"), self.array("end_ts"),
                                combo_events)
        with self._lock:
            self._indexes[grouping] = idx
        return idx

    def lod(self, grouping: str = "default") -> LodIndex:
        """The level-of-detail index of a grouping (built on first use, then cached)."""
        def build() -> LodIndex:
            lod = build_lod(self.track_index(grouping), self.array("start_ts"), self.array("end_ts"))
            with self._lock:
                self._lods[grouping] = lod
            return lod

        return self._once(f"lod:{grouping}", lambda: self._lods.get(grouping), build)

    def prepare(self, grouping: str = "default", background: bool = True) -> threading.Thread | None:
        """Build a grouping's tracks, lanes and level-of-detail index now rather than on first view.

        In the background (the numba kernels release the GIL) the kernel stays free; a view that
        needs the index meanwhile waits for the thread through the profile's lock.
        """
        def work() -> None:
            if background:
                background_priority()
            # A failure here is not lost: the view that asks for the index raises the same error.
            with contextlib.suppress(Exception):
                if len(self) >= PREVIEW_MIN_EVENTS:
                    self.preview().lod(grouping)  # what a view opened meanwhile draws
                # The preview is kept (4% of the events): a switch to a grouping not yet built draws it at once.
                self.lod(grouping)

        if not background:
            work()
            return None
        thread = threading.Thread(target=work, name=f"neuron-widgets-prepare-{grouping}", daemon=True)
        thread.start()
        return thread

    def viewport(self, grouping: str, start_ts: int, end_ts: int, width_px: int,
                 tracks: Sequence[int] | np.ndarray | None = None) -> dict[str, np.ndarray]:
        """What to draw for [start_ts, end_ts) at `width_px`: NumPy columns, at most ~2 items per pixel per lane.

        Columns: `start_ts`, `end_ts` (absolute ns), `offset_start`, `offset_end` (float64 ns from
        `base`, exact to the nanosecond), `track`, `lane`, `name` (code into `names`), `id`, `row`,
        `count` (1 for an exact event; more for a merged run, whose longest event gives the name).
        `tracks` limits the reply to those track indices (the rows on screen).
        """
        lod = self.lod(grouping)
        idx = self.track_index(grouping)
        got = viewport.query(lod, self.array("start_ts"), self.array("end_ts"), int(start_ts), int(end_ts),
                             int(width_px), tracks)
        row = got["row"]
        seg_track = np.repeat(np.arange(len(idx.tracks)), np.diff(lod.track_segs))
        name_col = self._joined("name").chunk(0)
        base = int(start_ts)
        return {
            "base": np.int64(base), "px_ns": got["px_ns"],
            "start_ts": got["start_ts"], "end_ts": got["end_ts"],
            "offset_start": (got["start_ts"] - base).astype(np.float64),
            "offset_end": (got["end_ts"] - base).astype(np.float64),
            "track": seg_track[got["segment"]].astype(np.int32) if row.size else np.zeros(0, np.int32),
            "lane": (got["segment"] - lod.track_segs[seg_track[got["segment"]]]).astype(np.int16)
            if row.size else np.zeros(0, np.int16),
            "name": name_col.indices.to_numpy(zero_copy_only=False)[row].astype(np.int32),
            "names": name_col.dictionary,
            "id": self.array("id")[row], "row": row, "count": got["count"],
        }

    def name_codes(self) -> np.ndarray:
        """Each event's name as a code into `name_dictionary()` (the codes viewport replies carry)."""
        return self._joined("name").chunk(0).indices.to_numpy(zero_copy_only=False)

    def name_dictionary(self) -> list[str]:
        return self._joined("name").chunk(0).dictionary.to_pylist()

    def tracks(self, grouping: str = "default") -> pd.DataFrame:
        """One row per track of a grouping mode, with Neuron Explorer's `label`."""
        return self.track_index(grouping).tracks.copy()

    @property
    def groupings(self) -> dict[str, str]:
        return dict(GROUPINGS)

    def check_grouping(self, grouping: str) -> str:
        """The grouping if this profile has it; a ValueError naming the ones it has if not."""
        return check_grouping(grouping)

    @property
    def default_grouping(self) -> str:
        return next(iter(self.groupings))

    # -- filters ---------------------------------------------------------------------
    def filter(self, neuron_cores: str | int | Iterable[int] | None = None,
               event_types: str | Sequence[str] | None = None, instances: str | Iterable[str] | None = None,
               time_range: Sequence[int | float | str] | None = None) -> Profile:
        """A new Profile with only the matching events (a mask over columns, shared lazies).

        neuron_cores: "0,2-3" or ints (events not tied to a core are kept);
        event_types: "hardware,^cc_exec_barrier" (groups, names, `*` wildcards, `^` excludes);
        instances: ids or wildcards; time_range: (start, end) as absolute ns or "12.5ms" from
        the profile start.
        """
        f = Filters.make(neuron_cores, event_types, instances, time_range)
        if not f:
            return self
        mask = f.mask(self._table, self.origin_ts)
        sub = Profile(
            self._table.filter(pa.array(mask)),
            source=self.source, format=self.format, warnings=self.warnings, lazy=self._lazy,
            counters=_filtered_counters(self._counters, f, self.origin_ts),
            device_profiles=self._device_profiles, metadata={**self.metadata, "origin_ts": self.origin_ts},
            extra=self.extra, _ordered=True,
        )
        return sub

    # -- side tables -----------------------------------------------------------------
    @property
    def counters(self) -> Counters:
        return self._counters

    def counter(self, name: str) -> pd.DataFrame:
        return self._counters.get(name)

    @property
    def cpu_usage(self) -> pd.DataFrame:
        return self._counters.get("cpu_usage")

    @property
    def host_memory(self) -> pd.DataFrame:
        return self._counters.get("host_memory")

    @property
    def hbm_usage(self) -> pd.DataFrame:
        return self._counters.get("hbm_usage")

    @property
    def device_profiles(self) -> pd.DataFrame:
        if self._device_profiles is None:
            return pd.DataFrame(columns=["device_profile_name", "instance_id", "process_id", "nc_id",
                                         "session_id", "model_id"])
        return self._device_profiles

    # -- memory ----------------------------------------------------------------------
    def nbytes(self) -> dict[str, int]:
        """Resident bytes of what the timeline needs: columns plus cached grouping data."""
        cols = self._table.nbytes
        grouping = sum(i.nbytes() for i in self._indexes.values()) + sum(v.nbytes() for v in self._lods.values())
        combos = self._combos.codes.nbytes if self._combos is not None else 0
        lazy = sum(c.nbytes for c in self._materialised.values())
        return {"columns": cols, "grouping": grouping + combos, "lazy": lazy,
                "total": cols + grouping + combos + lazy}

    # -- text ------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        return summarise(self)

    def __repr__(self) -> str:
        far = self.far_clock_events
        span = f"{self.home_duration_ns / 1e6:,.3f} ms" + (f" (and {far:,} events on a far clock)" if far else "")
        return (f"<Profile {self.format} {self.source!r}: {len(self):,} events, {span}, "
                f"warnings={sum(self.warnings.counts.values())}>")


def _pandas_types(t: pa.DataType) -> pd.Int64Dtype | None:
    if pa.types.is_integer(t):
        return pd.Int64Dtype() if t == pa.int64() else None
    return None


def _filtered_counters(counters: Counters, f: Filters, origin: int) -> Counters:
    win = f.window(origin)
    if win is None and f.instances is None:
        return counters

    def cut(name: str) -> Callable[[], pd.DataFrame]:
        def load() -> pd.DataFrame:
            df = counters.get(name)
            if df.empty:
                return df
            keep = np.ones(len(df), dtype=bool)
            if win is not None and "timestamp" in df:
                ts = df["timestamp"].to_numpy()
                keep &= (ts >= win[0]) & (ts < win[1])
            if f.instances is not None and "instance_id" in df:
                keep &= df["instance_id"].isin(f.instances).to_numpy()
            return df[keep].reset_index(drop=True)

        return load

    return Counters({name: cut(name) for name in counters.names()})

