"""Summary(job): a multi-node job's answers, computed part by part on Dask, and a way into any part.
`Summary(JobTimeline(job))` follows the job's timeline: a finding opens its part there.

The analyses run in a thread (`analysis.across`), so the cell returns at once and the charts
appear when every part is done. A click on the lag heat map (a core at a step) or on a core's
straggler bar loads that part, once, and shows its Timeline below, at that step, with the
core's arrival selected.
"""

from __future__ import annotations

import html
import threading
import time
from typing import Any

import ipywidgets as W
import numpy as np

from ...analysis.across import across
from ...summary.charts import apply_theme
from ...summary.job import JobSummaryCharts
from ..bokeh_host import ThemeProbe, load_bokehjs, source_of
from ..timeline import Timeline
from .compare import compare_jobs, job_to_compare, wire_step_clicks
from .kind import is_job

__all__ = ["JOB_ANALYSES", "JobSummaryMixin", "is_job"]

JOB_ANALYSES = ["temporal_breakdown", "stragglers", "errors_and_hangs"]


class JobSummaryMixin:
    """The job path of Summary (its methods use the Summary's status line, probe and chart view)."""

    def _job_init(self, source: Any, client: Any = None, compare: Any = None, **kwargs: Any) -> None:
        load_bokehjs()
        self.kind = "job"
        self.compare_job = job_to_compare(compare)  # did the fix work: compared after the findings
        # Following a JobTimeline(job), a finding's part opens in that timeline, else below the charts.
        self.timeline = source if isinstance(source, Timeline) else None
        job = source.job if self.timeline is not None else source
        self.job, self.client = job, client if client is not None or self.timeline is None else self.timeline.client
        self.profile = None
        self.results: dict[str, Any] = {}
        self.charts = None
        self.part_timeline: Timeline | None = None
        self.part_shown: str | None = None
        self._lock = threading.Lock()
        self._dark = False
        self.done = threading.Event()
        self.status = W.HTML(layout=W.Layout(min_height="22px"))
        self.probe = ThemeProbe()
        self.part_box = W.VBox([])
        self._view_ready, self._patched = threading.Event(), False  # findings come after the charts
        self.probe.observe(lambda ch: self._job_themed(bool(ch["new"])), "dark")
        self.probe.observe(self._view_drawn, "bokeh_ready")  # type: ignore[attr-defined]
        self._hook_probe()  # type: ignore[attr-defined]
        super().__init__(self._parts_shown(), **kwargs)  # type: ignore[call-arg, attr-defined]
        self.add_class("nw-summary-widget")
        self._say(f"Analysing {len(job)} parts on Dask ({'your client' if client is not None else 'local processes'})...",
                  busy=True)
        threading.Thread(target=self._job_run, name="neuron-widgets-job-summary", daemon=True).start()

    def _job_run(self) -> None:
        started = time.perf_counter()
        try:
            results = across(self.job, JOB_ANALYSES, self.client)
            if self.compare_job is not None:
                results["compare"] = None  # the section says it is comparing until compare_jobs fills it
            kind = "kineto" if "rank" in results["stragglers"].columns else "neuron"
            charts = JobSummaryCharts(results, kind)
        except Exception as exc:  # said in the widget: the kernel goes on
            self._say(f"Could not analyse the job: {type(exc).__name__}: {exc}", busy=False, error=True)
            self.done.set()
            return
        with self._lock:
            self.results, self.charts = results, charts
            charts.cells.selected.on_change("image_indices", lambda _a, _o, new: self._cell_clicked(new))
            src = source_of(charts.stragglers)
            src.selected.on_change("indices", lambda _a, _o, new: self._core_clicked(src, new))
            charts.problems.source.selected.on_change("indices", lambda _a, _o, new: self._problem_clicked(new))
            self._wire_findings(charts)  # type: ignore[attr-defined]
            wire_step_clicks(self, charts)  # "Did the fix work": a step's bar fits the job's timeline or opens a part
            self.bokeh = self._chart_view()
            self._arrange()  # type: ignore[attr-defined]
            apply_theme(None, self._dark, charts.figures)
        parts = results["parts"]
        left = int((parts["status"] == "left out").sum())
        cached = int((parts["status"] == "cached").sum())
        said = f"Summarised {len(parts)} parts in {time.perf_counter() - started:.1f} s"
        said += f" ({cached} from earlier results)" if cached else ""
        said += f"; {left} left out (see the parts table)" if left else ""
        self._say(said + "; looking for findings and the critical path...", busy=True)
        try:
            self._job_findings(results)  # type: ignore[attr-defined]
        except Exception as exc:  # the charts stay; the status says what failed
            said += f"; findings failed ({type(exc).__name__}: {exc})"
        if self.compare_job is not None:
            self._say(said + "; comparing with the other job...", busy=True)
            said += compare_jobs(self, results)
        self._say(said + ". Click a finding, a cell of the heat map or a core's bar to open that part there.", busy=False)
        self.done.set()

    def _job_themed(self, dark: bool) -> None:
        with self._lock:
            self._dark = dark
            if self.charts is not None:
                apply_theme(None, dark, self.charts.figures)

    # -- clicks ---------------------------------------------------------------------------
    def _cell_clicked(self, cells: list[Any]) -> None:
        """A tapped cell of the heat map: its image is the row, its `i` the column."""
        if not cells:
            return
        cell = cells[0]
        get = cell.get if isinstance(cell, dict) else lambda k: getattr(cell, k)
        m = self.charts.matrix
        r, c = int(get("index")), int(get("i"))
        if not (0 <= r < len(m.rows) and 0 <= c < len(m.col_start)):
            return
        keys = m.row_keys.iloc[r].to_dict()
        self.open_part(m.row_part[r], (int(m.col_start[c]), int(m.col_end[c])), keys)

    def _problem_clicked(self, indices: list[int]) -> None:
        """An error or hang row opens its part at the event, selected."""
        problems = self.results.get("errors_and_hangs")
        if not indices or problems is None or not 0 <= indices[0] < len(problems):
            return
        p = problems.iloc[indices[0]]
        start = int(p["start_ts"])
        tl = self.open_part(str(p["part"]), (start, start + 1))
        tl.select(int(p["id"]), focus=False)

    def _core_clicked(self, src: Any, indices: list[int]) -> None:
        if not indices:
            return
        s = self.results["stragglers"].iloc[indices[0]]
        lag = self.results["straggler_lag"]
        keys = [k for k in ("part", "instance_id", "process_id", "nc_idx", "rank") if k in lag.columns]
        mine = lag[np.logical_and.reduce([lag[k] == s[k] for k in keys])]
        if mine.empty:
            return
        worst = mine.loc[mine["lag_ns"].idxmax()]
        self.open_part(str(s["part"]), (int(worst["start_ts"]), int(worst["start_ts"] + worst["lag_ns"])),
                       {k: s[k] for k in keys})

    def open_part(self, part: str, window: tuple[int, int], core: dict[str, Any] | None = None,
                  pad: bool = True) -> Timeline:
        """Show `part`'s Timeline under the charts at `window` (absolute ns; padded around a step unless `pad` is
        False), its core's arrival selected."""
        self._say(f"Loading {part}...", busy=True)
        try:
            profile = self.job.load(part)
        except Exception as exc:
            self._say(f"Could not load {part}: {type(exc).__name__}: {exc}", busy=False, error=True)
            raise
        if self.part_timeline is None or self.part_shown != part:
            old = self.part_timeline
            self.part_timeline = Timeline(profile)
            self.part_shown = part
            self.part_box.children = [W.HTML(f'<div style="font-size:13px;font-weight:600;margin:6px 0">'
                                             f"{html.escape(part)}</div>"), self.part_timeline]
            if old is not None:
                old.close()
        t0, t1 = window
        margin = max((t1 - t0) * 2, 200_000) if pad else 0
        self.part_timeline.time_range = (t0 - margin, t1 + margin)
        target = self._arrival_event(core, window) if core else None
        if target is not None:
            self.part_timeline.select(target, focus=False)
        self._say(f"{part}: {len(profile):,} events, shown at {t0 - profile.start_ts:,} ns from its start.", busy=False)
        return self.part_timeline

    def _arrival_event(self, core: dict[str, Any], window: tuple[int, int]) -> int | None:
        lag = self.results.get("straggler_lag")
        if lag is None or "id" not in lag.columns or "nc_idx" not in core:
            return None
        keys = [k for k in ("part", "instance_id", "process_id", "nc_idx") if k in core and k in lag.columns]
        mine = lag[np.logical_and.reduce([lag[k] == core[k] for k in keys]) & (lag["start_ts"] >= window[0])
                   & (lag["start_ts"] <= window[1]) & (lag["id"] >= 0)]
        return int(mine["id"].iloc[0]) if len(mine) else None

