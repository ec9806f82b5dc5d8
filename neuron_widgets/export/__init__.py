"""Export views as one self-contained HTML file: bundle, styles and data inline, no kernel, no network.

The page runs the grouping (events to tracks, lanes) and the level-of-detail logic itself over
the columns embedded here. Past the size budget the longest events stay exact and the rest are
merged into per-bucket blocks (see selection.py); the page says so.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..model.color_keys import color_codes
from ..model.counter_series import counter_series
from ..model.filters import parse_time
from ..model.problem_rows import error_rows, incomplete_rows
from ..model.profile import Profile
from .blob import Blob, b64_size
from .dataset import Source, ViewState, arg_texts, key_sets, left_out_note, row_flags, write
from .page import page_overhead, write_page_file
from .selection import Blocks, blocks, priority, rows_in

DEFAULT_MAX_MB = 25.0
RESOLUTION = 4  # blocks per pixel of the exported view
VIEW_PX = 1920
MIN_BUCKET_NS = 1


def export_html(path: str | Path, *widgets: Any, title: str | None = None, max_mb: float = DEFAULT_MAX_MB,
                time_range: tuple[Any, Any] | str | None = None) -> dict[str, Any]:
    """Write the widgets (Timeline, DeviceTraceViewer, EventDetails, GroupingSelector) to one HTML file.

    `time_range` picks the events exported: None for the timeline's visible range (for an aligned
    pair exported together, each run's whole range: the page's step picker reaches every step), "all"
    for the whole profile, or (start, end) as `parse_time` reads them ('12.5ms', absolute ns...).
    `max_mb` caps the file (MB = 10**6 bytes). Returns what was written: sizes and counts.
    """
    if not widgets:
        raise ValueError("export_html needs at least one widget (a Timeline, DeviceTraceViewer or EventDetails)")
    timelines: list[Any] = []
    layout: list[dict[str, Any]] = []
    extras: dict[str, Any] = {}

    def timeline_index(tl: Any) -> int:
        for i, x in enumerate(timelines):
            if x is tl:
                return i
        timelines.append(tl)
        return len(timelines) - 1

    for wdg in widgets:
        # Every view settled first: a Summary following a viewer is told of the trace the viewer is still loading.
        tl = wdg if getattr(type(wdg), "export_role", None) == "timeline" else getattr(wdg, "timeline", None)
        if tl is not None:
            _settled(tl)
    for wdg in widgets:
        role = getattr(type(wdg), "export_role", None)
        if role == "timeline":
            layout.append({"kind": "timeline", "source": timeline_index(wdg)})
        elif role == "details":
            i = timeline_index(wdg.timeline)
            if not any(v["kind"] == "timeline" and v["source"] == i for v in layout):
                layout.append({"kind": "timeline", "source": i})
            layout.append({"kind": "details", "source": i})
        elif role == "grouping":
            layout.append({"kind": "grouping", "source": timeline_index(wdg.timeline)})
        elif role == "summary":
            source = -1
            if wdg.timeline is not None and any(x is wdg.timeline for x in widgets):
                source = timeline_index(wdg.timeline)
            key = f"summary{len(extras)}"
            extras[key] = summary_item(wdg)
            layout.append({"kind": "summary", "source": source, "item": key})
        else:
            raise TypeError(f"cannot export a {type(wdg).__name__}: export Timeline, DeviceTraceViewer, EventDetails, "
                            "GroupingSelector or Summary widgets (a DeviceProfilePicker needs a kernel to load traces)")
    for i in range(len(timelines)):
        if not any(v["kind"] == "timeline" and v["source"] == i for v in layout):
            layout.insert(0, {"kind": "timeline", "source": i})
    sources = [_source_of(tl) for tl in timelines]
    groups = [str((getattr(tl, "aligned", None) or {}).get("group", "")) for tl in timelines]
    for src, tl, group in zip(sources, timelines, groups, strict=True):
        if group and groups.count(group) == 2:  # an aligned pair exported together stays linked in the page
            src.state.aligned = dict(tl.aligned)
    # A linked pair's page re-aligns on any step (its picker): each run goes in whole, not just the window
    # shown (past the size budget the rest is merged into blocks, never left out).
    ranges = [_range_of(s, "all" if time_range is None and s.state.aligned else time_range) for s in sources]
    page_title = title or next((s.state.title for s in sources if s.state.title), "") or "neuron-widgets export"
    return write_page(path, sources, ranges, layout, page_title, max_mb, extras)


def summary_item(summary: Any) -> dict[str, Any]:
    """A Summary's charts as a bokeh JSON item, built from its finished results in a document of their own."""
    # bokeh and the Summary's builders load only for a page that holds a Summary (bokeh: ~0.3 s)
    from bokeh.embed import json_item

    from ..summary import SummaryCharts

    if not summary.done.wait(SETTLE_S):
        warnings.warn(f"export_html: the Summary was still computing after {SETTLE_S:.0f} s; the page shows what "
                      "it had (export again once its status line says it is done)", stacklevel=3)
    if getattr(summary, "kind", "") == "job":
        from ..summary.job import JobSummaryCharts  # bokeh's charts, as above: only for a job's Summary

        if summary.charts is None:
            raise ValueError("the job Summary has no charts to export yet (its analyses failed or are still "
                             "running: see its status line)")
        # Opening a part at a step needs the kernel: the page keeps the charts and their hover details.
        return json_item(JobSummaryCharts(summary.results, summary.charts.kind).layout)
    if getattr(summary, "kind", "") == "device":
        from ..summary.device_charts import DeviceSummaryCharts  # bokeh's charts, as above: only for a device's

        origin = summary.timeline.profile.origin_ts if summary.timeline is not None else None
        return json_item(DeviceSummaryCharts(summary.device_trace, summary.results, origin).layout)
    window = summary._range()
    shown = summary.profile if window is None else summary.profile.filter(time_range=window)
    charts = SummaryCharts(shown, summary.results, range_note=f"Summarised: {summary._describe(window)}.",
                           device_numbers=summary.device_numbers if window is None else None,
                           compare=summary.charts.compare_profile)
    return json_item(charts.layout)


def export_profile(path: str | Path, profile: Profile, *, grouping: str | None = None,
                   time_range: tuple[Any, Any] | str | None = "all", title: str | None = None,
                   max_mb: float = DEFAULT_MAX_MB) -> dict[str, Any]:
    """Export a profile (no widget needed): a timeline over `time_range` and the event details below it."""

    grouping = profile.check_grouping(grouping or profile.default_grouping)
    src = Source(profile, ViewState(grouping, (0.0, 1.0), height=640), {"error": error_rows(profile),
                                                           "incomplete": incomplete_rows(profile)},
                 counters=counter_series(profile))
    a, b = _range_of(src, time_range)
    origin = profile.origin_ts
    src.state.view = (float(a - origin), float(b - origin))
    name = title or f"{Path(str(profile.source)).name or 'profile'}: {len(profile):,} events"
    return write_page(path, [src], [(a, b)], [{"kind": "timeline", "source": 0}, {"kind": "details", "source": 0}],
                      name, max_mb)


SETTLE_S = 120.0  # as long as an exported Summary waits for its analyses


def _settled(tl: Any) -> None:
    """Wait for what the timeline is still computing in its threads (critical path, findings, the scan of
    arguments for errors, bandwidth tracks, a device trace loading, a job's densities): a page exported right
    after `findings=True` would otherwise carry the toggle without its marks, one exported right after
    `Timeline(...)` would merge error events found only by their arguments into blocks and lack the bandwidth
    tracks, one exported right after a drill-down would show the trace half loaded."""
    # The bandwidth tracks wait for a first view to be answered (their CPU after the first paint): an export
    # is the view, in a script there is no other.
    painted = getattr(tl, "_painted", None)
    if painted is not None:
        painted.set()
    threads = {"_arg_scan": "scan of arguments for errors", "_bandwidth": "bandwidth tracks",
               "_load_thread": "device trace loading"}

    def busy() -> list[str]:
        out = [what for attr, what in threads.items()
               if (th := getattr(tl, attr, None)) is not None and th.is_alive()]
        summarised = getattr(tl, "summarised", None)  # a job's timeline: every part's density
        if summarised is not None and not summarised.is_set():
            out.append("densities of the job's parts")
        if getattr(tl, "critical_path", False) and (getattr(tl, "critical_info", {}) or {}).get("state") == "computing":
            out.append("critical path")
        if getattr(tl, "findings", False) and (getattr(tl, "findings_info", {}) or {}).get("state") == "computing":
            out.append("findings")
        return out

    timeout_s = SETTLE_S
    end = time.monotonic() + timeout_s
    while busy() and time.monotonic() < end:
        time.sleep(0.05)  # the work runs on the widget's own threads, which may be replaced meanwhile
    if left := busy():

        warnings.warn(f"export_html: the timeline's {' and '.join(left)} still computing after {timeout_s:.0f} s; "
                      "the page leaves them out (export again once the toolbar shows them)", stacklevel=3)


def _source_of(tl: Any) -> Source:
    _settled(tl)
    v = tl.view
    choices = [dict(c) for c in getattr(tl, "color_choices", [])]
    st = ViewState(tl.grouping, (float(v[0]), float(v[1])), list(tl.brush), int(tl.selected_row), bool(tl.show_cpu),
                   int(tl.height), str(tl.title), list(tl.notes), [dict(c) for c in tl.strip], str(tl.color_by),
                   dict(getattr(tl, "hierarchy", {})), str(getattr(tl, "picked_node", "")), choices,
                   critical=_critical_of(tl), critical_available=bool(getattr(tl, "critical_available", True)),
                   findings=_findings_of(tl), findings_available=bool(getattr(tl, "findings_available", True)))
    # The page's colour menu works without a kernel: every colouring it offers goes in.
    sets = {}
    for c in choices:
        codes, keys = color_codes(tl.profile, c["value"])
        if codes is not None:
            sets[c["value"]] = (codes, keys)
    return Source(tl.profile, st, dict(tl._marked), tl._color, list(tl._color_keys), tl._counter_data,
                  node=getattr(tl, "_node", None), color_sets=sets)


def _critical_of(tl: Any) -> dict[str, Any]:
    """The critical path the timeline shows (its events are already its highlight markers), else {}."""
    shown = getattr(tl, "_critical", None)
    if not getattr(tl, "critical_path", False) or shown is None:
        return {}
    return shown.exported()  # text, headline, jumps as rows (and a job's spans on its folded parts)


def _findings_of(tl: Any) -> dict[str, Any]:
    """The findings' marks the timeline shows (times from the profile's origin, as the page's), else {}."""
    info = getattr(tl, "findings_info", {}) or {}
    if not getattr(tl, "findings", False) or info.get("state") != "shown":
        return {}
    return {"text": str(info.get("text", "")), "marks": [dict(m) for m in info.get("marks", [])]}


def _range_of(src: Source, time_range: tuple[Any, Any] | str | None) -> tuple[int, int]:

    p = src.profile
    origin = p.origin_ts
    if time_range is None:
        v = src.state.view
        a, b = origin + math.floor(v[0]), origin + math.ceil(v[1])
        # A view that reaches the last end shows an instant there (nccl_data's last event): the range
        # is half-open, so it goes one past, as "all" does (the page said 26,934 events, the Summary 26,935).
        return (a, max(b, p.end_ts + 1)) if len(p) and b >= p.end_ts else (a, b)
    if isinstance(time_range, str):
        if time_range != "all":
            parts = time_range.split(":")
            if len(parts) != 2:
                raise ValueError(f"a time range is START:END, e.g. '12.5ms:40ms' or absolute ns; got {time_range!r}")
            return _range_of(src, (parts[0], parts[1]))
        # Past the last end: the range is half-open, and an instant at the very end (Kineto's "Record
        # Window End") is an event too ("Exported 75,549 events" of 75,550, issue 35 item 13).
        return (min(p.start_ts, origin), max(p.end_ts + 1, origin + 1)) if len(p) else (origin, origin + 1)
    a, b = (parse_time(x, origin) for x in time_range)
    if b <= a:
        raise ValueError(f"a time range must end after it starts: {time_range!r}")
    return a, b


def write_page(path: str | Path, sources: Sequence[Source], ranges: Sequence[tuple[int, int]],
               layout: list[dict[str, Any]], title: str, max_mb: float,
               extras: dict[str, Any] | None = None) -> dict[str, Any]:
    t_start = time.perf_counter()
    extras = extras or {}
    charts = any(v["kind"] == "summary" for v in layout)
    if max_mb <= 0:
        raise ValueError(f"max_mb must be positive, got {max_mb}")
    budget = int(max_mb * 1e6) - page_overhead(title, charts)
    if budget < 100_000:
        raise ValueError(f"max_mb={max_mb} leaves no room for data: the page's code alone takes "
                         f"{page_overhead(title, charts) / 1e6:.2f} MB")
    plans = [_Plan(s, r) for s, r in zip(sources, ranges, strict=True)]
    if not plans:  # a summary alone: no events to fit
        blob = Blob()
        for key, value in extras.items():
            blob.json(key, value)
        blob.json("layout", {"views": layout, "title": title, "timelines": 0})
        manifest, data = blob.pack()
        size = write_page_file(Path(path), title, manifest, data, charts)
        return {"path": str(path), "bytes": size, "seconds": time.perf_counter() - t_start, "timelines": []}
    share = budget / len(plans)
    # The share of each timeline's events kept exact: searched so that the file fills most of
    # its budget. Size grows about linearly with it, so a few builds find it.
    frac = min(plan.estimate_fit(share) / max(plan.rows.size, 1) for plan in plans)
    fits: list[tuple[float, int]] = []
    over: tuple[float, int] | None = None
    fitted: tuple[dict[str, Any], str, list[dict[str, Any]]] | None = None
    target = 0.9 * budget
    for _attempt in range(12):
        for plan in plans:
            plan.keep = plan.rows.size if frac >= 1 else int(frac * plan.rows.size)
        blob = Blob()
        for i, plan in enumerate(plans):
            plan.write(blob, f"t{i}:")
        for key, value in extras.items():
            blob.json(key, value)
        blob.json("layout", {"views": layout, "title": title, "timelines": len(plans)})
        manifest, data = blob.pack()
        del blob  # its sections (copies of columns) are not needed past the packing
        size = b64_size(len(data))
        if size <= budget:
            fitted = (manifest, data, [dict(plan.stats) for plan in plans])
            fits.append((frac, size))
            if frac >= 1 or size >= 0.8 * budget:
                break
        else:
            over = (frac, size)
            if not fits:
                if frac == 0 or any(plan.blocks_dominate() for plan in plans):
                    for plan in plans:
                        plan.coarsen()
                frac = frac * min(0.95 * budget / size, 0.85) if frac > 1e-7 else 0.0
                continue
        lo = fits[-1]
        if over is not None and over[0] > lo[0]:
            frac = lo[0] + (target - lo[1]) * (over[0] - lo[0]) / max(over[1] - lo[1], 1)
            frac = min(max(frac, lo[0] + (over[0] - lo[0]) * 0.1), lo[0] + (over[0] - lo[0]) * 0.9)
        elif len(fits) >= 2 and lo[0] > fits[-2][0] and lo[1] > fits[-2][1]:
            slope = (lo[1] - fits[-2][1]) / (lo[0] - fits[-2][0])
            frac = lo[0] + (target - lo[1]) / slope
        else:
            frac = max(lo[0] * target / lo[1], lo[0] * 1.05, 1e-6)
        frac = min(frac, 1.0)
    if fitted is None:
        raise ValueError(f"could not fit the export in {max_mb} MB; raise max_mb or export a shorter time range")
    manifest, data, stats = fitted
    for plan, st in zip(plans, stats, strict=True):
        plan.stats = st
    out = Path(path)
    size = write_page_file(out, title, manifest, data, charts)
    return {"path": str(out), "bytes": size, "seconds": time.perf_counter() - t_start,
            "timelines": [p.stats for p in plans]}


class _Plan:
    """One timeline's export: its rows in range in priority order, and how many stay exact."""

    def __init__(self, src: Source, data_range: tuple[int, int]) -> None:
        p = src.profile
        self.src, self.range = src, data_range
        start, end = p.array("start_ts"), p.array("end_ts")
        self.rows = rows_in(start, end, *data_range)
        if len(p) < 2**31:  # held through the export with its priority order: 40 MB each at 10M, not 80
            self.rows = self.rows.astype(np.int32)
        must = [np.zeros(0, np.int64)]
        sel = src.state.selected_row
        if 0 <= sel < len(p):
            must.append(np.array([sel]))
            deps = p.dependencies(row=sel)
            must += [deps[s]["row"].to_numpy(np.int64) for s in ("upstream", "downstream") if "row" in deps[s]]
        must += [v for v in src.marked.values() if v is not None]
        self.must = np.unique(np.concatenate(must)).astype(np.int64)
        at = np.minimum(np.searchsorted(self.rows, self.must), max(self.rows.size - 1, 0))
        self.n_must = int((self.rows[at] == self.must).sum()) if self.rows.size else 0
        self._ordered: np.ndarray | None = None
        self.keys, self.groupings, left_out = key_sets(p)
        if left_out:
            if src.state.grouping not in self.groupings:
                src.state.grouping = next(iter(self.groupings))
            src.state.notes = [*src.state.notes, left_out_note(left_out, p.groupings, src.state.grouping)]
        span = max(data_range[1] - data_range[0], 1)
        self.bucket_ns = max(math.ceil(span / (RESOLUTION * VIEW_PX)), MIN_BUCKET_NS)
        self.n_buckets = math.ceil(span / self.bucket_ns)
        self.keep = self.rows.size
        self.stats: dict[str, Any] = {}

    def blocks_dominate(self) -> bool:
        """Most of what the last build wrote was blocks: only coarser blocks make the file smaller."""
        blocks = self.stats.get("blocks", 0)
        return blocks > self.stats.get("exact", 0)

    def coarsen(self) -> None:
        span = max(self.range[1] - self.range[0], 1)
        self.bucket_ns = min(self.bucket_ns * 2, span)
        self.n_buckets = math.ceil(span / self.bucket_ns)

    def ordered(self) -> np.ndarray:
        if self._ordered is None:
            p = self.src.profile
            self._ordered = priority(self.rows, p.array("start_ts"), p.array("end_ts"), self.must)
        return self._ordered

    def estimate_fit(self, budget: int) -> int:
        """Exact events that should fit in `budget` bytes.

        Two small builds: every event as blocks with no exact one (the fixed cost: counters,
        tables, blocks), then the same plus a sample of exact events (their cost each).
        """
        n = self.rows.size
        if n <= 50_000:
            return n
        p = self.src.profile
        sample = np.sort(self.ordered()[np.linspace(0, n - 1, 20_000).astype(np.int64)])
        # The builds' arguments read in the same pass as the sample's: as many as would fit at 16 bytes each
        # (an exact event of the 10M sample takes about 22).
        arg_texts(self.src).want(self.ordered()[:min(n, int(budget // 16))])
        merged = blocks(self.rows, p.array("start_ts"), p.array("end_ts"), self.keys,
                        row_flags(self.src), self.range[0], self.bucket_ns, self.n_buckets)
        sizes = []
        for exact in (np.zeros(0, np.int64), sample):
            blob = Blob()
            self._write(blob, "s:", exact, merged)
            sizes.append(b64_size(len(blob.pack()[1])))
        per_event = max((sizes[1] - sizes[0]) / sample.size, 1e-3)
        fit = int((0.92 * budget - sizes[0]) / per_event)
        return min(n, max(fit, 0))

    def write(self, blob: Blob, prefix: str) -> None:
        p = self.src.profile
        if self.keep >= self.rows.size:
            exact, rest = self.rows, np.zeros(0, np.int64)
        else:
            # A later build keeps a little more or less: its arguments come in this build's read.
            arg_texts(self.src).want(self.ordered()[self.keep:min(self.rows.size, self.keep + self.keep // 4)])
            chosen = self.ordered()[: self.keep]
            exact = np.sort(chosen)
            mask = np.ones(len(p), bool)
            mask[exact] = False
            rest = self.rows[mask[self.rows]]
        merged = blocks(rest, p.array("start_ts"), p.array("end_ts"), self.keys, row_flags(self.src),
                        self.range[0], self.bucket_ns, self.n_buckets) if rest.size else Blocks.empty()
        # "Every event this long or longer is exact": the last one kept for its length, not as a must.
        by_length = self.ordered()[self.n_must:self.keep] if rest.size else np.zeros(0, np.int64)
        shortest = p.array("end_ts")[by_length] - p.array("start_ts")[by_length]
        self.stats = {"events": int(self.rows.size), "exact": int(exact.size), "merged": int(rest.size),
                      "blocks": len(merged), "bucket_ns": int(self.bucket_ns),
                      "shortest_exact_ns": int(shortest.min()) if shortest.size else 0}
        self._write(blob, prefix, exact, merged)

    def _write(self, blob: Blob, prefix: str, exact: np.ndarray, merged: Blocks) -> None:
        write(blob, self.src, prefix, exact, merged, self.keys, self.groupings, self.range, self.stats)


__all__ = ["DEFAULT_MAX_MB", "export_html", "export_profile"]
