"""Did the fix work, like for like: the steps and job parts both runs cover, and findings that only look gone or new."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.timefmt import duration

# Step counts that differ by more than this share (and more than one step) mean captures of different lengths:
# a warm-up step more or less stays like for like.
STEP_SHARE = 0.10
NOT_COMPARABLE = "not comparable"


@dataclass
class Coverage:
    """What two runs both cover: their step counts, the matched steps' window in each run's clock, the job parts
    one run has and the other lacks."""

    like_for_like: bool = True
    steps_before: int = 0
    steps_after: int = 0
    matched: int = 0
    window_before: tuple[int, int] | None = None
    window_after: tuple[int, int] | None = None
    fewer_after: bool = False
    fewer_before: bool = False
    missing_after: list[str] = field(default_factory=list)
    missing_before: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def matched_span_before_ns(self) -> int:
        return self.window_before[1] - self.window_before[0] if self.window_before else 0

    @property
    def matched_span_after_ns(self) -> int:
        return self.window_after[1] - self.window_after[0] if self.window_after else 0

    def sentence(self, span_b: int, span_a: int) -> str:
        """Why the runs are not like for like, and what is compared instead ("" when they are)."""
        said = []
        if self.missing_after:
            said.append(f"{', '.join(self.missing_after)} {'is' if len(self.missing_after) == 1 else 'are'} missing "
                        "in the after-run (unreadable or absent)")
        if self.missing_before:
            said.append(f"{', '.join(self.missing_before)} {'is' if len(self.missing_before) == 1 else 'are'} missing "
                        "in the before-run (unreadable or absent)")
        if said:
            said[-1] += ", so steps are compared over the parts both runs have"
        if self.fewer_after or self.fewer_before:
            said.append(f"the runs cover different numbers of steps ({self.steps_before:,} before, "
                        f"{self.steps_after:,} after), so their spans ({duration(span_b)}, {duration(span_a)}) are "
                        "not compared")
        return f"Not like for like: {'; '.join(said)}" if said else ""


def readable_parts(x: Any, found: pd.DataFrame) -> list[str]:
    """A job's parts that could be read, in the job's order ([] for a Profile)."""
    if isinstance(x, Profile) or not hasattr(x, "parts"):
        return []
    parts = x.parts
    bad: set[str] = set()
    if len(found) and "part" in found and "rule" in found:
        bad |= {str(p) for p in found.loc[found["rule"] == "unread_part", "part"]}
    if "error" in parts:
        bad |= {str(p) for p in parts.loc[parts["error"].notna(), "part"]}
    return [str(p) for p in parts["part"] if str(p) not in bad]


def _window(steps: pd.DataFrame, side: str) -> tuple[int, int] | None:
    m = steps[steps["status"] == "matched"]
    if m.empty:
        return None
    start = m[f"start_{side}_ts"].astype(np.int64)
    end = start + m[f"duration_{side}_ns"].astype(np.int64)
    return int(start.min()), int(end.max())


def coverage(steps: pd.DataFrame, parts_b: list[str], parts_a: list[str]) -> Coverage:
    """The aligned steps' and the parts' coverage of each run (align's table; readable_parts of each)."""
    nb, na = int(steps["step_before"].notna().sum()), int(steps["step_after"].notna().sum())
    matched = int((steps["status"] == "matched").sum())
    differ = abs(nb - na) > max(1.0, STEP_SHARE * max(nb, na)) and matched > 0
    cov = Coverage(steps_before=nb, steps_after=na, matched=matched, window_before=_window(steps, "before"),
                   window_after=_window(steps, "after"), fewer_after=differ and na < nb, fewer_before=differ and nb < na,
                   missing_after=[p for p in parts_b if p not in set(parts_a)],
                   missing_before=[p for p in parts_a if p not in set(parts_b)])
    cov.like_for_like = not (differ or cov.missing_after or cov.missing_before)
    if cov.fewer_after or cov.fewer_before:
        cov.notes.append(f"the runs cover different numbers of steps ({nb:,} before, {na:,} after): the measured "
                         f"saving is over the {matched:,} matched steps only (first start to last end in each run), "
                         "and findings outside the other run's capture are not comparable")
    for p in cov.missing_after:
        cov.notes.append(f"{p} is missing in the after-run: its steps and findings are left out of the comparison")
    for p in cov.missing_before:
        cov.notes.append(f"{p} is missing in the before-run: its steps and findings are left out of the comparison")
    return cov


def _outside(start: Any, end: Any, window: tuple[int, int] | None) -> bool:
    if window is None or pd.isna(start):
        return True  # no time to place it in the other run's capture
    end = start if pd.isna(end) else end
    return bool(int(end) < window[0] or int(start) > window[1])


def mark_not_comparable(table: pd.DataFrame, cov: Coverage) -> pd.DataFrame:
    """Findings gone (new) only because they lie in a part the after- (before-) run lacks or outside its capture:
    status "not comparable", no run saving, the reason in `note`."""
    if cov.like_for_like or table.empty:
        return table
    table = table.reset_index(drop=True)
    status, saving = table["status"].to_numpy(object).copy(), table["run_saving_ns"].to_numpy(float).copy()
    note = table["note"].to_numpy(object).copy()
    for i, r in enumerate(table.itertuples(index=False)):
        if r.rule == "unread_part":
            continue  # the missing part itself: that is what changed
        gone = r.status == "gone"
        if not gone and r.status != "new":
            continue
        missing = cov.missing_after if gone else cov.missing_before
        fewer, window = (cov.fewer_after, cov.window_before) if gone else (cov.fewer_before, cov.window_after)
        other = "after" if gone else "before"
        why = None
        if isinstance(r.part, str) and r.part in missing:
            why = f"not comparable: in {r.part}, which the {other}-run lacks"
        elif fewer and _outside(r.start_ts, r.end_ts, window):
            why = f"not comparable: outside the {other}-run's capture"
        if why is not None:
            status[i], saving[i], note[i] = NOT_COMPARABLE, np.nan, why
    return table.assign(status=status, run_saving_ns=saving, note=note)
