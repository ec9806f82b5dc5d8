"""align(before, after, step=k): two runs' Timelines linked on a chosen step, each showing the same window from its start.

The steps are `compare(before, after, by="step")`'s: each NEFF's k-th execution (Kineto: its k-th
`ProfilerStep`) in one run beside its k-th in the other. Aligned on step k, a view [t0, t1] of one
run is `anchor_other + (t - anchor_this)` in the other, where an anchor is that run's step k start
(ns from its origin): the clocks of two runs differ, the distance from the step does not.

Two paths move the partner, and neither echoes: in the page, the views publish their window on a
page-wide bus (js/src/common/viewsync.ts, as jupyter-scatter's `view_sync` does) and the partner
applies it without publishing back; in the kernel, a change of one timeline's view sets the other's
under a busy flag, and only when it moves by a nanosecond or more (the page has usually set it
already, to within rounding).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd

from ..analysis.compare_steps import align as align_steps
from ..analysis.compare_steps import run_steps
from ..model.profile import Profile
from .linking import NoEcho
from .timeline import Timeline

MARGIN = 0.05  # room either side of a step, as a share of the longer of its two durations
ROLES = ("before", "after")
Handler = Callable[[dict[str, Any]], None]


def step_table(before: Profile, after: Profile) -> pd.DataFrame:
    """The two runs' steps aligned as compare(before, after, by="step") aligns them (without the findings)."""
    notes: list[str] = []
    sb, _ = run_steps(before, notes, "before")
    sa, _ = run_steps(after, notes, "after")
    return align_steps(sb, sa)


def _neff_label(neff: Any) -> str:
    return "the executions without a NEFF name" if neff is None else f"NEFF {neff!r}"


class TimelineAlignment:
    """Two Timelines aligned on a step until `unlink()`; `step` (settable) re-aligns them on another.

    `steps` holds the NEFF's steps found in both runs: `ordinal` (k), each run's start (ns from its
    origin) and duration. The step's window shows in both at once (the longer of its two durations,
    with 5% either side); a pan or zoom in either is followed by the other, in the page and in the
    kernel. Setting one timeline's view to exactly one of its steps (a Summary's step click does)
    re-aligns the pair on that step.
    """

    def __init__(self, before: Timeline, after: Timeline, step: int = 0, neff: str | None = None,
                 table: pd.DataFrame | None = None) -> None:
        if before is after:
            raise ValueError("align needs two Timelines, one per run; both arguments are the same widget")
        self.before, self.after = before, after
        self.group = uuid.uuid4().hex
        table = step_table(before.profile, after.profile) if table is None else table
        self.neff = self._choose_neff(table, neff)
        names = table["model_name"].astype(object).where(table["model_name"].notna(), None)
        self._mine = table[[n == self.neff for n in names]].reset_index(drop=True)
        both = self._mine[self._mine["status"] == "matched"]
        self.steps = pd.DataFrame({
            "ordinal": both["ordinal"].to_numpy(np.int64),
            "step_before": both["step_before"].to_numpy(np.int64), "step_after": both["step_after"].to_numpy(np.int64),
            "start_before": (both["start_before_ts"].to_numpy(np.int64) - before.profile.origin_ts).astype(float),
            "start_after": (both["start_after_ts"].to_numpy(np.int64) - after.profile.origin_ts).astype(float),
            "duration_before_ns": both["duration_before_ns"].to_numpy(np.int64),
            "duration_after_ns": both["duration_after_ns"].to_numpy(np.int64)})
        self._index = {int(k): i for i, k in enumerate(self.steps["ordinal"])}
        # What the page gets does not change with the step: made once (thousands of steps re-align in ms).
        d = np.maximum(np.maximum(self.steps["duration_before_ns"].to_numpy(float),
                                  self.steps["duration_after_ns"].to_numpy(float)), 1.0)
        self._windows = np.stack([-MARGIN * d, (1 + MARGIN) * d], axis=1) if len(d) else np.zeros((0, 2))
        self._lists = self._page_lists()
        self._step = self._check(step)
        self._echo = NoEcho()
        self._handlers: list[tuple[Timeline, Handler, str]] = []
        for src, dst in ((before, after), (after, before)):
            for handler, name in ((self._view_handler(src, dst), "view"), (self._state_handler(src), "aligned")):
                src.observe(handler, names=[name])
                self._handlers.append((src, handler, name))
            src.observe(self._retargeted, names=["generation"])  # another profile shown: the steps are not its
            self._handlers.append((src, self._retargeted, "generation"))
        self._apply(self._step)

    # -- which step ---------------------------------------------------------------------------
    @staticmethod
    def _choose_neff(table: pd.DataFrame, neff: str | None) -> str | None:
        if table.empty:
            raise ValueError("neither run has steps to align on: no executions (nc_exec_running) or ProfilerStep "
                             "markers in either profile")
        names = list(dict.fromkeys(table["model_name"].astype(object).where(table["model_name"].notna(), None)))
        if neff is None:
            return names[0]  # the NEFF of the before-run's first step
        if neff not in names:
            said = ", ".join(repr(n) for n in names if n is not None) or "none named"
            raise ValueError(f"no steps of NEFF {neff!r} in either run; their NEFFs: {said}")
        return neff

    def _run_range(self, which: str) -> str:
        have = self._mine[self._mine[f"step_{which}"].notna()]["ordinal"].to_numpy(np.int64)
        if have.size == 0:
            return f"the {which}-run has none of {_neff_label(self.neff)}"
        return f"the {which}-run has steps 0 to {int(have.max())} of {_neff_label(self.neff)} ({have.size:,} steps)"

    def _check(self, step: Any) -> int:
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
            raise TypeError(f"step must be a whole number (the k-th step of {_neff_label(self.neff)}, from 0), "
                            f"not {step!r}")
        k = int(step)
        if k in self._index:
            return k
        if k < 0:
            raise ValueError(f"step {k} is before the first: steps count from 0 ({self._run_range('before')}; "
                             f"{self._run_range('after')})")
        missing = [w for w in ROLES if not (self._mine[f"step_{w}"].notna() & (self._mine["ordinal"] == k)).any()]
        where = " and ".join(f"the {w}-run" for w in missing)
        raise ValueError(f"step {k} of {_neff_label(self.neff)} is not in {where}: "
                         f"{self._run_range('before')}; {self._run_range('after')}. Pick a step both runs have")

    @property
    def step(self) -> int:
        """The step (k-th of the NEFF, from 0) the two timelines are aligned on; set it to re-align."""
        return self._step

    @step.setter
    def step(self, k: int) -> None:
        if not self.linked:
            raise RuntimeError("this alignment was unlinked: align(before, after, step=k) links the timelines again")
        self._apply(self._check(k))

    def anchors(self, step: int | None = None) -> tuple[float, float]:
        """Each run's start of `step` (the aligned one by default), ns from its own origin."""
        i = self._index[self._step if step is None else self._check(step)]
        return float(self.steps["start_before"].iat[i]), float(self.steps["start_after"].iat[i])

    def window(self, step: int | None = None) -> tuple[float, float]:
        """The step's window relative to its start, the same in both runs: the longer duration, 5% either side."""
        i = self._index[self._step if step is None else self._check(step)]
        return float(self._windows[i, 0]), float(self._windows[i, 1])

    # -- the traits ---------------------------------------------------------------------------------
    def _page_lists(self) -> dict[str, list[Any]]:
        mark = "#" if self.neff == "ProfilerStep" else "exec "
        labels = [f"step {k} · {mark}{b}" + ("" if b == a else f" → {a}")
                  for k, b, a in zip(self.steps["ordinal"].tolist(), self.steps["step_before"].tolist(),
                                     self.steps["step_after"].tolist(), strict=True)]
        return {"steps": self.steps["ordinal"].tolist(), "labels": labels, "windows": self._windows.tolist(),
                "before": self.steps["start_before"].tolist(), "after": self.steps["start_after"].tolist()}

    def _state(self, role: str) -> dict[str, Any]:
        """What one timeline's page needs to follow its partner, and to re-align or unlink without the kernel."""
        mine, theirs = ("before", "after") if role == "before" else ("after", "before")
        other = self.after if role == "before" else self.before
        lists = self._lists
        return {"group": self.group, "role": role, "neff": "" if self.neff is None else str(self.neff),
                "partner": other.title or f"the {theirs}-run", "step": self._step,
                "steps": lists["steps"], "labels": lists["labels"], "starts": lists[mine],
                "partner_starts": lists[theirs], "partner_span": [float(x) for x in other.span],
                "windows": lists["windows"]}

    def _apply(self, k: int) -> None:
        """Both timelines on step k: their traits say so, and each shows the step's window from its own start."""
        self._step = k
        a_before, a_after = self.anchors(k)
        w0, w1 = self.window(k)
        with self._echo.quiet():
            for tl, role, anchor in ((self.before, "before", a_before), (self.after, "after", a_after)):
                with tl.hold_sync():
                    tl.aligned = self._state(role)
                    tl.view = [anchor + w0, anchor + w1]

    # -- following ------------------------------------------------------------------------------------
    def _anchor_of(self, tl: Timeline) -> float:
        a_before, a_after = self.anchors()
        return a_before if tl is self.before else a_after

    def _step_at(self, tl: Timeline, view: list[float]) -> int | None:
        """The step whose extent `view` is in this run (a Summary's step click sets that), else None.

        Its start and width are the step's to the nanosecond (the comparison's starts are exact int64 ns;
        from the origin they are exact in float64 too), the nanosecond left for the view's arithmetic.
        """
        mine = "before" if tl is self.before else "after"
        starts = self.steps[f"start_{mine}"].to_numpy(float)
        durations = self.steps[f"duration_{mine}_ns"].to_numpy(float)
        off = np.abs(starts - view[0])
        ok = (np.abs((view[1] - view[0]) - durations) <= 1) & (off <= 1)
        if not ok.any():
            return None
        return int(self.steps["ordinal"].iat[int(np.argmin(np.where(ok, off, np.inf)))])

    def _view_handler(self, src: Timeline, dst: Timeline) -> Handler:
        def on_view(change: dict[str, Any]) -> None:
            if self._echo.busy:
                return
            v = [float(x) for x in change["new"]]
            from_page = "view" in getattr(src, "_property_lock", {})
            k = None if from_page else self._step_at(src, v)
            if k is not None and k != self._step:
                with self._echo.quiet():  # keep the clicked extent in src; the partner shows its own step k
                    self._step = k
                    a_src, a_dst = self._anchor_of(src), self._anchor_of(dst)
                    for tl in (self.before, self.after):
                        tl.aligned = self._state("before" if tl is self.before else "after")
                    dst.view = [a_dst + (v[0] - a_src), a_dst + (v[1] - a_src)]
                return
            a_src, a_dst = self._anchor_of(src), self._anchor_of(dst)
            new = [a_dst + (v[0] - a_src), a_dst + (v[1] - a_src)]
            old = [float(x) for x in dst.view]
            if len(old) == 2 and abs(new[0] - old[0]) < 1 and abs(new[1] - old[1]) < 1:
                return  # the page moved it already (to within rounding): no round trip back
            with self._echo.quiet():
                dst.view = new
        return on_view

    def _state_handler(self, src: Timeline) -> Handler:
        def on_state(change: dict[str, Any]) -> None:
            if self._echo.busy:
                return
            new = change["new"] or {}
            if new.get("group") != self.group:
                self.unlink()  # the page's Unlink (or another alignment took this timeline)
                return
            k = new.get("step")
            if isinstance(k, int) and k != self._step and k in self._index:
                self._apply(k)  # the page's step picker (the page has moved both views already)
        return on_state

    def _retargeted(self, _change: dict[str, Any]) -> None:
        self.unlink()

    # -- the end -----------------------------------------------------------------------------------------
    @property
    def linked(self) -> bool:
        return bool(self._handlers)

    def unlink(self) -> None:
        """Each timeline on its own again (their views stay where they are)."""
        for src, handler, name in self._handlers:
            src.unobserve(handler, names=[name])
        self._handlers.clear()
        with self._echo.quiet():
            for tl in (self.before, self.after):
                if (tl.aligned or {}).get("group") == self.group:
                    tl.aligned = {}

    @property
    def widget(self) -> W.VBox:
        """The two timelines one above the other (before, then after)."""
        return W.VBox([self.before, self.after], layout=W.Layout(width="100%"))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        state = f"on step {self._step} of {_neff_label(self.neff)}" if self.linked else "unlinked"
        return f"TimelineAlignment({state}, {len(self.steps):,} steps in both runs)"


def align(before: Timeline, after: Timeline, step: int = 0, neff: str | None = None) -> TimelineAlignment:
    """Link two runs' Timelines aligned on a step (the k-th of a NEFF, from 0, as compare(before, after) counts).

    Both show the same window relative to that step's start in each run; panning or zooming one moves
    the other. `alignment.step = k` re-aligns, `alignment.unlink()` ends it. Shown as the last value of
    a cell, the alignment draws the two timelines one above the other.
    """
    for name, tl in (("before", before), ("after", after)):
        if not isinstance(tl, Timeline):
            raise TypeError(f"align takes two Timelines; {name} is a {type(tl).__name__}")
    olds = [getattr(tl, "_alignment", None) for tl in (before, after)]
    pair = TimelineAlignment(before, after, step, neff)  # refused (a missing step): the old links stay
    for old in olds:  # a timeline follows one partner at a time
        if old is not None and old.linked:
            old.unlink()
    before._alignment = after._alignment = pair
    return pair
