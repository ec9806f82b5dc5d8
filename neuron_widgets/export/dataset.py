"""One timeline's data for an exported page: the events the page can show, and its starting view."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ..model.counter_series import CounterSeries
from ..model.flows import SOURCE_ORDER
from ..model.grouping_many import tracks_at_least
from ..model.markers import FLAG_ERROR, FLAG_HIGHLIGHT, FLAG_INCOMPLETE
from ..model.overview import overview
from ..model.profile import Profile
from .args import ArgTexts
from .blob import Blob
from .selection import Blocks

COUNTER_POINTS = 16384  # per series: a few points per pixel of the exported view
MAX_TRACKS = 50_000  # per grouping in an exported page (README "Limits and safety")


@dataclass
class ViewState:
    """What the exported page starts with (times are ns from the profile's first timestamp)."""

    grouping: str
    view: tuple[float, float]
    brush: list[float] = field(default_factory=list)
    selected_row: int = -1
    show_cpu: bool = False
    height: int = 480
    title: str = ""
    notes: list[str] = field(default_factory=list)
    strip: list[dict[str, Any]] = field(default_factory=list)
    color_by: str = "name"
    # A device trace's hierarchy panel and colour menu (DeviceTraceViewer), empty elsewhere.
    hierarchy: dict[str, Any] = field(default_factory=dict)
    picked_node: str = ""
    color_choices: list[dict[str, str]] = field(default_factory=list)
    # The critical path when the timeline shows it: {"text", "jump_rows": (n, 4) row, t, row, t (absolute ns)}.
    critical: dict[str, Any] = field(default_factory=dict)
    critical_available: bool = True
    # The findings' marks when the timeline shows them: {"text", "marks": [{t0, t1 (ns from the origin), ...}]}.
    findings: dict[str, Any] = field(default_factory=dict)
    findings_available: bool = True
    # Linked to another exported timeline on a step (widgets/timeline_align.py): the page keeps the link.
    aligned: dict[str, Any] = field(default_factory=dict)


@dataclass
class Source:
    """A timeline's profile and what the widget adds to it (markers, colours, counters)."""

    profile: Profile
    state: ViewState
    marked: dict[str, np.ndarray]
    color: np.ndarray | None = None
    color_keys: list[str] = field(default_factory=list)
    counters: CounterSeries | None = None
    node: np.ndarray | None = None  # per event its row in state.hierarchy's rows (-1: none)
    # Every colouring the page's colour menu offers: key -> (codes per event, their texts).
    color_sets: dict[str, tuple[np.ndarray, list[str]]] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)  # what every attempt at the budget reuses

    def cached(self, key: str, make: Any) -> Any:
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


def row_flags(src: Source) -> np.ndarray:
    """Every event's marker bits (as model.markers.flags_of gives them), set once from the marked rows."""

    def make() -> np.ndarray:
        n = len(src.profile)
        flags = np.zeros(n, np.uint8)
        for bit, key in ((FLAG_ERROR, "error"), (FLAG_INCOMPLETE, "incomplete"), (FLAG_HIGHLIGHT, "highlight")):
            sel = src.marked.get(key)
            if sel is not None and sel.size:
                sel = np.asarray(sel, np.int64)
                flags[sel[(sel >= 0) & (sel < n)]] |= bit
        return flags

    return src.cached("flags", make)


def _one_chunk(col: pa.ChunkedArray) -> pa.Array:
    """The column as one array: its chunk when it has one (no copy: combine_chunks copies even then)."""
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


def key_sets(profile: Profile, max_tracks: int | None = None
             ) -> tuple[list[np.ndarray], dict[str, dict[str, Any]], dict[str, int]]:
    """The distinct per-event key arrays of the profile's groupings, per grouping which one it uses, and
    the groupings left out for having more than `max_tracks` tracks (with how many they have, at least).

    A page of a million tracks shows nothing one can read, and their labels alone would outgrow its
    budget: such groupings are left out (bounded cheaply, see grouping_many.tracks_at_least), and
    when combos are that many the kept groupings key each event by its track, not its combo.
    """
    max_tracks = MAX_TRACKS if max_tracks is None else max_tracks
    arrays: list[np.ndarray] = []
    groupings: dict[str, dict[str, Any]] = {}
    left_out: dict[str, int] = {}
    # A device trace (a Profile subclass) groups by its own keys, never by thread.
    combos = profile._combo_codes() if type(profile) is Profile and len(profile) else None
    many = combos is not None and len(combos.table) > max_tracks
    for g, label in profile.groupings.items():
        if many:
            low = tracks_at_least(combos.table, g, profile.track_names)
            if low > max_tracks:
                left_out[g] = low
                continue
        codes, combo_track, labels = profile.grouping_keys(g)
        if many and len(labels) > max_tracks:
            left_out[g] = len(labels)
            continue
        if many:  # each event's track as its key: no per-combo table in the page
            codes, combo_track = combo_track[codes], np.arange(len(labels))
        at = next((i for i, a in enumerate(arrays) if a is codes or (a.size == codes.size and np.array_equal(a, codes))),
                  None)
        if at is None:
            arrays.append(codes)
            at = len(arrays) - 1
        groupings[g] = {"label": label, "key": at, "combo_track": [int(x) for x in combo_track], "labels": labels}
    if not groupings:  # every grouping is that large: the smallest still goes in (the page may not fit)
        g = min(left_out, key=left_out.__getitem__)
        del left_out[g]
        codes, combo_track, labels = profile.grouping_keys(g)
        arrays.append(combo_track[codes])
        groupings[g] = {"label": profile.groupings[g], "key": 0, "combo_track": list(range(len(labels))),
                        "labels": labels}
    return arrays, groupings, left_out


def left_out_note(left_out: dict[str, int], names: dict[str, str], shown: str) -> str:
    """What the page says of groupings left out for their number of tracks."""
    which = ", ".join(f"{names.get(g, g)} (at least {n:,} tracks)" for g, n in left_out.items())
    return (f"Left out of this page: {which}; an exported page holds at most {MAX_TRACKS:,} tracks per grouping. "
            f"Shown: {names.get(shown, shown)}. For the rest, open the profile in a notebook or export part of it "
            "(load_profile(..., instances=..., time_range=...)).")


def write(blob: Blob, src: Source, prefix: str, exact: np.ndarray, merged: Blocks, keys: list[np.ndarray],
          groupings: dict[str, dict[str, Any]], data_range: tuple[int, int], stats: dict[str, Any]) -> None:
    """Everything the page needs for one timeline, under section names starting with `prefix`."""
    p = src.profile
    origin = p.origin_ts
    start, end = p.array("start_ts"), p.array("end_ts")
    names = p.name_codes()
    n_exact = exact.size
    item_start = np.concatenate([start[exact], merged.start]) - origin
    item_dur = np.concatenate([end[exact] - start[exact], merged.end - merged.start])
    blob.deltas(f"{prefix}start", item_start[:n_exact])
    blob.deltas(f"{prefix}bstart", item_start[n_exact:])
    blob.array(f"{prefix}dur", item_dur, "u32" if item_dur.size == 0 or item_dur.max() < 2**32 else "f64")
    blob.small_ints(f"{prefix}name", np.concatenate([names[exact], names[merged.rep]]))
    for i, k in enumerate(keys):
        blob.small_ints(f"{prefix}key{i}", np.concatenate([k[exact], k[merged.rep]]))
    blob.array(f"{prefix}flags", np.concatenate([row_flags(src)[exact], merged.flags]), "u8")
    blob.array(f"{prefix}count", merged.count, "u32")
    blob.array(f"{prefix}total", merged.total, "f64")
    if src.color is not None:
        blob.small_ints(f"{prefix}color", np.concatenate([src.color[exact], src.color[merged.rep]]))
    if src.node is not None and src.node.size == len(p):
        blob.small_ints(f"{prefix}node", np.concatenate([src.node[exact], src.node[merged.rep]]))
    for key, (codes, _) in src.color_sets.items():
        blob.small_ints(f"{prefix}color:{key}", np.concatenate([codes[exact], codes[merged.rep]]))

    # Details of exact events: the table's columns, arguments, dependency links.
    fields = []
    skip = {"start_ts", "end_ts", "name", "duration_ns"}
    per_combo = _combo_fields(p, keys)
    for name in p.core.column_names:
        if name in per_combo:
            fields.append(per_combo[name])
        elif name not in skip:
            col = _one_chunk(p.column(name)).take(exact)
            fields.append({**blob.column(f"{prefix}f:{name}", col), "name": name})
    codes, texts = arg_texts(src).of(exact)
    blob.small_ints(f"{prefix}args", codes)
    blob.json(f"{prefix}args:values", texts)
    a, b = src.cached("links", p.link_pairs)
    where = np.full(len(p), -1, np.int32)  # page rows: the links are written as i32
    where[exact] = np.arange(n_exact)
    # Narrowed in two steps (pairs with an exact first end, then an exact second end): a few int32 arrays of
    # the pairs, not four of them at once.
    wa = where[a]
    sel = np.flatnonzero(wa >= 0)
    wa = wa[sel]
    wb = where[b[sel]]
    ok = wb >= 0
    blob.array(f"{prefix}link_a", wa[ok], "i32")
    blob.array(f"{prefix}link_b", wb[ok], "i32")
    del wa, wb, sel, ok
    device = hasattr(p, "trace")
    rank = src.cached("rank", lambda: _source_rank(p, device))[exact]
    blob.array(f"{prefix}rank", rank, "u8")

    counters = _write_counters(blob, prefix, src.counters, data_range, origin)
    st = src.state
    selected = int(np.searchsorted(exact, st.selected_row)) if st.selected_row >= 0 else -1
    if selected >= 0 and (selected >= n_exact or exact[selected] != st.selected_row):
        selected = -1
    blob.json(f"{prefix}meta", {
        "n_exact": int(n_exact), "n_blocks": len(merged), "origin_ns": str(origin),
        "span": [float(p.start_ts - origin), float(max(p.end_ts - origin, 1))] if len(p) else [0.0, 1.0],
        "overview": src.cached("overview", lambda: overview(p)),
        "range": [float(data_range[0] - origin), float(data_range[1] - origin)],
        "names": [str(x) for x in p.name_dictionary()], "groupings": groupings, "n_keys": len(keys),
        "columns": list(p.core.column_names), "fields": fields, "ties_upstream": device, "counters": counters,
        "color_keys": src.color_keys, "color_sets": {k: keys for k, (_, keys) in src.color_sets.items()},
        "stats": stats,
        "state": {"grouping": st.grouping, "view": list(st.view), "brush": list(st.brush), "selected": selected,
                  "show_cpu": st.show_cpu, "height": st.height, "title": st.title, "notes": st.notes,
                  "strip": st.strip, "color_by": st.color_by, "hierarchy": st.hierarchy,
                  "picked_node": st.picked_node, "color_choices": st.color_choices,
                  "critical_available": st.critical_available, "findings_available": st.findings_available,
                  **({"findings": st.findings} if st.findings else {}),
                  **({"aligned": st.aligned} if st.aligned else {}),
                  **({"critical": _critical_state(st.critical, exact, origin)} if st.critical else {})},
    })


def _critical_state(critical: dict[str, Any], exact: np.ndarray, origin: int) -> dict[str, Any]:
    """The path's jumps as page rows and times; a jump from or to an event the page does not hold is left out.

    A job's folded parts keep their own form: a row below 0 is the track labelled `labels[-row - 1]`, and
    each span is that label's index, its start and end (the page finds the label's track in each grouping).
    """
    j = np.asarray(critical.get("jump_rows", np.zeros((0, 4))), dtype=np.int64).reshape(-1, 4)
    out: list[float] = []
    if j.size and exact.size:
        a = np.clip(np.searchsorted(exact, j[:, 0]), 0, exact.size - 1)
        b = np.clip(np.searchsorted(exact, j[:, 2]), 0, exact.size - 1)
        a_track, b_track = j[:, 0] < 0, j[:, 2] < 0
        ok = (a_track | (exact[a] == j[:, 0])) & (b_track | (exact[b] == j[:, 2]))
        a, b = np.where(a_track, j[:, 0], a), np.where(b_track, j[:, 2], b)
        out = np.stack([a[ok], j[ok, 1] - origin, b[ok], j[ok, 3] - origin], axis=1).astype(np.float64).ravel().tolist()
    spans = np.asarray(critical.get("span_rows", np.zeros((0, 3))), dtype=np.int64).reshape(-1, 3)
    placed = np.stack([spans[:, 0], spans[:, 1] - origin, spans[:, 2] - origin], axis=1) if len(spans) else spans
    return {"text": str(critical.get("text", "")), "headline": str(critical.get("headline", "")), "jumps": out,
            "spans": placed.astype(np.float64).ravel().tolist(), "labels": [str(x) for x in critical.get("labels", [])],
            **({"span_detail": critical["span_detail"]} if "span_detail" in critical else {})}  # a job's spans' hover


def arg_texts(src: Source) -> ArgTexts:
    """The source's exact events' arguments, kept across the budget search's builds."""
    got: ArgTexts = src.cached("args", lambda: ArgTexts(src.profile))
    return got


def _combo_fields(p: Profile, keys: list[np.ndarray]) -> dict[str, dict[str, Any]]:
    """Columns that are one value per grouping combo (instance, process, thread, core...): written
    once per combo, not once per event, when the profile's combos are one of the key arrays."""
    combos = getattr(p, "_combos", None)
    if combos is None:
        return {}
    at = next((i for i, k in enumerate(keys) if k is combos.codes), None)
    if at is None:
        return {}
    return {name: {"name": name, "kind": "combo", "key": at,
                   "values": [None if v is None or (isinstance(v, float) and v != v) else
                              int(v) if isinstance(v, int | np.integer) else str(v) for v in combos.table[name]]}
            for name in combos.table.columns}


def _source_rank(p: Profile, device: bool) -> np.ndarray:
    """Per event its place in the dependency chain (framework, runtime, hardware); all equal on a device."""
    if device:
        return np.zeros(len(p), np.uint8)
    col = p.column("trace_event_source").combine_chunks().dictionary_encode()
    ranks = np.array([SOURCE_ORDER.get(str(s), 3) for s in col.dictionary.to_pylist()] + [3], np.uint8)
    return ranks[col.indices.fill_null(len(col.dictionary)).to_numpy(zero_copy_only=False)]


def _write_counters(blob: Blob, prefix: str, data: CounterSeries | None, data_range: tuple[int, int],
                    origin: int) -> list[dict[str, Any]]:
    """Counter series cut to the range (plus the sample in force at its start), at most COUNTER_POINTS each."""
    if data is None:
        return []
    t0, t1 = float(data_range[0] - origin), float(data_range[1] - origin)
    out = []
    for i, s in enumerate(data.series):
        t, v = data.data[s["key"]]
        lo = max(int(np.searchsorted(t, t0, side="right")) - 1, 0)
        hi = min(int(np.searchsorted(t, t1, side="left")) + 1, t.size)
        keep = _counter_points(t, v, lo, hi, t0, t1)
        blob.array(f"{prefix}ct{i}", t[keep], "f64")
        blob.array(f"{prefix}cv{i}", v[keep], "f64")
        parts: list[str] = []
        frame = data.frames.get(s["key"])
        if frame is not None:
            for c in frame.columns:
                if c.endswith("_bytes") and c != "total_bytes":
                    blob.array(f"{prefix}cb{i}:{len(parts)}", frame[c].to_numpy(np.float64, na_value=0.0)[keep], "f64")
                    parts.append(c.removesuffix("_bytes"))
        out.append({**s, "parts": parts})
    return out


def _counter_points(t: np.ndarray, v: np.ndarray, lo: int, hi: int, t0: float, t1: float) -> np.ndarray:
    """Indices of the samples kept of t[lo:hi]: all, or per bucket its first sample and its peak (so
    spikes survive), the peak being the first maximum as np.argmax finds it (a NaN counts as one)."""
    keep = np.arange(lo, hi)
    if keep.size <= COUNTER_POINTS:
        return keep
    bucket = np.floor((t[lo:hi] - t0) / ((t1 - t0) / (COUNTER_POINTS // 2))).astype(np.int64)
    firsts = np.flatnonzero(np.concatenate([[True], bucket[1:] != bucket[:-1]]))
    # One pass over the samples for every bucket (a slice per bucket cost a copy of the series each).
    vk = v[lo:hi]
    nan = np.isnan(vk)
    w = np.where(nan, np.inf, vk)
    seg = np.repeat(np.arange(firsts.size), np.diff(np.append(firsts, vk.size)))
    hit = w == np.maximum.reduceat(w, firsts)[seg]
    if nan.any():
        hit = np.where(np.logical_or.reduceat(nan, firsts)[seg], nan, hit)
    pos = np.flatnonzero(hit)
    _, at = np.unique(seg[pos], return_index=True)
    return keep[np.unique(np.concatenate([firsts, pos[at]]))]
