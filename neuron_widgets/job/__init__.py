"""A multi-node job: one profile per node or rank, opened by metadata, loaded a part at a time.

`load_job(directory | glob | list)` reads no events; `job.parts` describes each part;
`job.load(part)` loads one (kept for the next call, as a drill-down is); `analysis.across(job, ...)`
analyses every part on Dask, one task per part, and puts the job-wide answers together.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..model.profile import Profile
from .parts import PartSpec, describe, find_parts, part_names
from .store import ResultStore, default_root

__all__ = ["Job", "load_job"]


class Job:
    """The parts of a job. `parts` is a DataFrame (part, path, format, events, instances, cores,
    start_ts, end_ts, bytes), read from metadata only."""

    def __init__(self, paths: list[Path], *, filters: dict[str, Any] | None = None, keep: int = 2,
                 results: str | os.PathLike[str] | None = None, notes: list[str] | None = None) -> None:
        # What opening set aside or found wrong (a part given twice, a listed path that is not there);
        # across() repeats them in its `parts` notes.
        self.notes = list(notes or [])
        self.filters = {k: v for k, v in (filters or {}).items() if v is not None}
        names = part_names(paths)
        self.specs = [PartSpec(n, str(p), self.filters) for n, p in zip(names, paths, strict=True)]
        rows = [{"part": s.name, "path": s.path, **describe(Path(s.path))} for s in self.specs]
        self.parts = pd.DataFrame(rows, columns=["part", "path", "format", "events", "instances", "cores", "start_ts",
                                                 "end_ts", "bytes", *(["error"] if any("error" in r for r in rows) else [])])
        for c in ("events", "instances", "cores", "start_ts", "end_ts"):
            self.parts[c] = self.parts[c].astype("Int64")
        self.store = ResultStore(str(results if results is not None else default_root()))
        self._keep = max(keep, 1)
        self._loaded: OrderedDict[str, Profile] = OrderedDict()

    def __len__(self) -> int:
        return len(self.specs)

    def __repr__(self) -> str:
        events = self.parts["events"]
        known = int(events.notna().sum())
        total = f"{int(events.sum()):,} events" + ("" if known == len(self) else f" in {known} of them")
        return f"<Job of {len(self)} parts: {total}>"

    def spec(self, part: int | str) -> PartSpec:
        if isinstance(part, int | float) and not isinstance(part, bool):
            i = int(part)
            if not -len(self.specs) <= i < len(self.specs):
                raise IndexError(f"part {i} is out of range: the job has {len(self.specs)} parts")
            return self.specs[i]
        for s in self.specs:
            if part in (s.name, s.path):
                return s
        names = ", ".join(s.name for s in self.specs[:8]) + (", ..." if len(self.specs) > 8 else "")
        raise KeyError(f"no part named {part!r}; the parts are {names}")

    def load(self, part: int | str) -> Profile:
        """One part's Profile, loaded now (filters of load_job applied) and kept for the next call."""
        spec = self.spec(part)
        if spec.name in self._loaded:
            self._loaded.move_to_end(spec.name)
            return self._loaded[spec.name]
        profile = spec.load()
        self._loaded[spec.name] = profile
        while len(self._loaded) > self._keep:
            self._loaded.popitem(last=False)
        return profile


def load_job(where: str | os.PathLike[str] | list[str | os.PathLike[str]] | tuple[str | os.PathLike[str], ...], *,
             neuron_cores: str | int | Iterable[int] | None = None, event_types: str | Sequence[str] | None = None,
             time_range: Sequence[int | float | str] | None = None, keep: int = 2,
             results: str | os.PathLike[str] | None = None) -> Job:
    """Open a job: a directory with one profile (directory or file) per node or rank, a glob
    (`"run/node-*"`), or a list of paths, in any format `load_profile` reads. A part given twice
    (the same file or directory, links followed) is kept once; a listed path that does not exist
    is left out of the analyses and named (`job.notes`, `across(...)["parts"]`); a job directory
    or pattern that is not there raises ProfileError.

    Opening reads metadata only (Parquet footers, the parse cache); a part's events are read when
    `job.load(part)` or an analysis asks for them. The filters (as for load_profile) are pushed
    into every part's load. `keep` parts stay loaded for `job.load`. `results` is where each
    part's analysis results are kept (default: beside the parse cache).
    """
    paths, notes = find_parts(where)
    return Job(paths, filters={"neuron_cores": neuron_cores, "event_types": event_types, "time_range": time_range},
               keep=keep, results=results, notes=notes)
