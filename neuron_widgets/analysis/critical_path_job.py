"""The critical path and what-if of a multi-node Job, part by part on Dask, never the whole graph in one process.

A first pass over the parts (one task each, as `across` runs them; kept in the job's result store)
ships what the path needs of each part: a Neuron part its stretches between collectives
(`critical_path_stretches`), a Kineto or Chrome part its NCCL kernels' arrivals
(`critical_path_chrome_job`). From it the caller learns what each part's graph needs of the others
(the job's facts: each collective's last arrival and first release, the run's start). The Neuron
path is walked over the stretches; a Kineto job's parts are asked again, with those facts, for the
stretches its path takes. What-if asks the parts again with the facts and the changes
(`what_if_job`): each replays its own graph and ships it reduced. Only one part's Profile is held
at a time (in a worker).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .critical_path import COLUMNS, JOB_PATH, _empty
from .critical_path_chrome_job import chrome_facts, chrome_job_path, job_tracks
from .critical_path_graph import KINDS
from .critical_path_parts import REFUSED, gathered
from .critical_path_stretches import TASK, Joined, stretches_path
from .frame import notes_of
from .what_if import JOB_WHAT_IF, WhatIf
from .what_if_job import job_what_if, job_what_ifs

WORKER_COLS = ("instance_id", "process_id", "thread_id", "nc_idx")
MIXED = (f"{REFUSED} is computed part by part for parts of one kind: this job mixes Neuron parts with Kineto or "
         "Chrome traces; analyse them as separate jobs, or load them as one profile (nw.load_profile([...]))")


def first_pass(job: Any, client: Any = None, **kw: Any) -> tuple[str | None, list[tuple[str, dict[str, Any]]],
                                                                   list[str]]:
    """Every part's first-pass result (kept in the job's store), the job's kind ('neuron', 'chrome'; None: no
    part has any), and the notes."""
    pieces, notes = gathered(job, TASK, client, **kw)
    kinds = {str(p.get("graph", "neuron")) for _, p in pieces}
    if len(kinds) > 1:
        raise TypeError(MIXED)
    return (kinds.pop() if kinds else None), pieces, notes


def job_facts(job: Any, client: Any = None, **kw: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """What each part's graph needs of the others to be bound as in the job's graph (None: no part has one)."""
    kind, pieces, notes = first_pass(job, client, **kw)
    if kind is None:
        return None, notes
    if kind == "neuron":
        return Joined(pieces).facts, notes
    return chrome_facts(pieces), notes


def job_critical_path(job: Any, client: Any = None, **kw: Any) -> pd.DataFrame:
    """`critical_path` of a Job: the same frame as its parts loaded as one profile, `part` filled,
    `event_id` the part's own (what `job.load(part)` shows). Neuron parts: walked over the parts'
    stretches between collectives (`critical_path_stretches`); Kineto or Chrome parts: over the
    stretches each part walks with the job's NCCL arrivals known (`critical_path_chrome_job`)."""
    kind, pieces, notes = first_pass(job, client, **kw)
    if kind is None:
        return notes_of(_empty(), notes)
    if kind == "chrome":
        return chrome_job_path(job, pieces, notes, client, **kw)
    joined, segs, notes = stretches_path(job, pieces, notes, client, **kw)
    df = _segments(joined, *segs)
    df.attrs["tracks"] = job_tracks(df, pieces)
    return notes_of(df, notes)


def _segments(jg: Any, start: np.ndarray, end: np.ndarray, kind: np.ndarray, row: np.ndarray, event: np.ndarray,
              on_core: np.ndarray) -> pd.DataFrame:
    r = np.maximum(row, 0)
    combo = jg.combo[r]
    cols: dict[str, Any] = {}
    for c in WORKER_COLS:
        per = jg.workers[c].to_numpy(dtype=object)
        if c == "instance_id":
            cols[c] = per[combo] if row.size else np.zeros(0, object)
            continue
        ints = pd.array(per, dtype="Int64")  # once per worker, then gathered per segment
        mask = ints.isna()[combo] | (on_core if c == "thread_id" else False)
        cols[c] = pd.arrays.IntegerArray(ints.to_numpy(dtype=np.int64, na_value=0)[combo], np.asarray(mask, bool))
    parts = np.array(jg.parts, dtype=object)
    df = pd.DataFrame({
        "start_ts": start.astype(np.int64), "end_ts": end.astype(np.int64), "duration_ns": (end - start).astype(np.int64),
        "kind": pd.Categorical.from_codes(kind, KINDS),
        **{c: cols[c] for c in ("instance_id", "process_id", "thread_id", "nc_idx")},
        "event_id": np.where(event, jg.ids[r], -1).astype(np.int64),
        "name": np.where(event, jg.names[jg.name[r]], None),
        "step": jg.step[r].astype(np.int64) if row.size else np.zeros(0, np.int64),
        "part": pd.Series(parts[jg.part_of[r]] if row.size else [], dtype=object),
    })
    return df[COLUMNS]


def job_what_if_of(job: Any, where: Any = None, scale: float | None = None, client: Any = None,
                   **kw: Any) -> WhatIf:
    """`what_if` of a Job: each part replays its own graph (bound as in the job's) and ships it reduced to what the
    others depend on; the caller replays those joined. `where` filters as for a Profile, `part` too (a
    boolean mask over events is refused: a job's events are not in one table)."""
    facts, notes = job_facts(job, client, **kw)
    return job_what_if(job, where, scale, facts, notes, client, **kw)


def job_savings(job: Any, variants: list[list[tuple[Any, float]]], client: Any = None, **kw: Any) -> list[WhatIf]:
    """Several what-ifs of a job (each a list of changes) in one pass over its parts, without their per-step
    frames: what findings(job) needs for its rows' gains."""
    facts, notes = job_facts(job, client, **kw)
    return job_what_ifs(job, variants, facts, notes, client, steps=False, **kw)


JOB_PATH["critical_path"] = job_critical_path
JOB_WHAT_IF["what_if"] = job_what_if_of
