"""Analyses of a whole job, one Dask task per part, put together from each part's small tables.

A task loads its part (filters pushed down), runs the analyses asked for, and returns small
frames: a row per core, the part's arrivals at collectives, its problems. Per-core results are
concatenated; stragglers are matched across every core of the job by step (a core that holds
back another node is found, which no part alone can show); problems are listed job-wide. The
job is anything with `specs` (parts that `load()` themselves and have a `name`) and `store`
(where each part's results are kept by content): `neuron_widgets.job.Job`.
"""

from __future__ import annotations

import hashlib
import inspect
import time
import traceback
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd
import pyarrow as pa

from .. import __version__
from ..memory import give_back
from . import workers
from .density import busy_density
from .frame import notes_of
from .idle import idle_time_breakdown
from .kernels import kernel_breakdown
from .launches import launch_stats
from .overlap import comm_comp_overlap
from .problems import errors_and_hangs
from .stragglers_job import job_stragglers, part_arrivals
from .temporal import temporal_breakdown
from .totals import totals

# Bumped when what a part's task returns or stores changes: results kept from before are not used
# (3: entries hold no part name or path; 4: a part's stragglers are narrow columns, stragglers_job).
VERSION = 4

PER_PART: dict[str, Callable[..., Any]] = {
    "temporal_breakdown": temporal_breakdown, "idle_time_breakdown": idle_time_breakdown,
    "comm_comp_overlap": comm_comp_overlap, "launch_stats": launch_stats, "kernel_breakdown": kernel_breakdown,
    "errors_and_hangs": errors_and_hangs, "busy_density": busy_density,
}
JOB_WIDE: dict[str, Callable[..., Any]] = {"stragglers": part_arrivals}
# Building blocks other job analyses ask for (compare of two jobs, the job views).
INTERNAL: dict[str, Callable[..., Any]] = {"totals:name": lambda p: totals(p, "name"),
                                           "totals:neff": lambda p: totals(p, "neff")}
ANALYSES = [*PER_PART, *JOB_WIDE]
DEFAULT = ["temporal_breakdown", "stragglers", "errors_and_hangs"]


def across(job: Any, analyses: str | Iterable[str] | None = None, client: Any = None, *, scheduler: str | None = None,
           num_workers: int | None = None, cache: bool = True, **kw: Any) -> dict[str, Any]:
    """Run analyses on every part of `job` (from `nw.load_job`) as Dask tasks, and put them together.

    `analyses`: names from ANALYSES (default: temporal_breakdown, stragglers, errors_and_hangs).
    Keyword arguments go to the analyses that take them (`kind="neuron"`, `kernel_wait_ns=...`).
    Runs on Dask's local process scheduler (every core works; a part's memory is freed when its task
    ends), or on `client` (a `dask.distributed.Client`) when given; `scheduler="threads"` or
    `"sync"` run in this process instead.

    Returns `{name: DataFrame}`: each per-part analysis with a `part` column first (kernel_breakdown:
    a pair); `stragglers`, `straggler_steps` and `straggler_lag` (each core's lag at each step)
    matched across the whole job; `errors_and_hangs` job-wide, oldest first; and `parts`: each
    part's `status` ("computed", "cached" or "left out"), its events, seconds and error. A part that
    cannot be read is left out, named in `parts` and in every result's notes; the rest are analysed.
    Each part's results are kept by its content: a second call computes only parts that changed.
    """
    wanted = _names(analyses)
    _check_kwargs(wanted, kw)
    return _put_together(job, wanted, run_parts(job, wanted, client, scheduler=scheduler, num_workers=num_workers,
                                                cache=cache, **kw))


def run_parts(job: Any, wanted: list[str], client: Any = None, *, scheduler: str | None = None,
              num_workers: int | None = None, cache: bool = True, **kw: Any) -> list[dict[str, Any]]:
    """Each part's task result, in part order: cached ones read here, the rest computed on Dask."""
    # Dask (~0.25 s of CPU to import) loads when a job's parts are first run, not with the analyses.
    from dask.base import compute
    from dask.delayed import delayed
    from dask.system import CPU_COUNT

    tag = _tag(wanted, kw)
    store = job.store if cache else None
    out: list[dict[str, Any] | None] = [None] * len(job.specs)
    todo = []
    for i, spec in enumerate(job.specs):
        key = store.known_key(spec) if store is not None else None
        hit = store.get(key, tag) if store is not None and key is not None else None
        if hit is not None:  # what the bytes say from the store; the name and path from this job
            out[i] = {**hit, "part": spec.name, "path": spec.path, "status": "cached", "seconds": 0.0}
        else:
            todo.append(i)
    if todo:
        # In worker processes the parts are the parallel work: one thread each within a part.
        solo = client is not None or (scheduler or "processes") == "processes"
        tasks = [delayed(part_task, pure=False)(job.specs[i], wanted, kw, store, tag, solo) for i in todo]
        if client is not None:
            got = client.gather(client.compute(tasks))
        elif (scheduler or "processes") == "processes":
            # Dask's process scheduler on workers that never run the user's script (workers.py), one
            # part per hand-out (Dask batches 6 by default: parts are large and uneven), no more
            # workers than parts.
            with workers.pool(min(num_workers or CPU_COUNT, len(tasks))) as executor:
                got = compute(*tasks, scheduler="processes", pool=executor, chunksize=1)  # type: ignore[no-untyped-call]
        else:
            got = compute(*tasks, scheduler=scheduler, num_workers=num_workers)  # type: ignore[no-untyped-call]
        for i, g in zip(todo, got, strict=True):
            out[i] = g
    return [o for o in out if o is not None]


def part_task(spec: Any, wanted: list[str], kw: dict[str, Any], store: Any, tag: str, solo: bool = False) -> dict[str, Any]:
    """One part, in a worker: its results from the store, or loaded and analysed (and then stored)."""
    t0 = time.perf_counter()
    if solo:
        _one_thread()
    try:
        key = store.content_key(spec) if store is not None else None
        hit = store.get(key.content, tag) if key is not None else None
        if hit is not None:
            return {**hit, "part": spec.name, "path": spec.path, "status": "cached",
                    "seconds": time.perf_counter() - t0}
        profile = spec.load()
        _let_go(len(profile))  # the load's scratch (decoded pages, Arrow's pool) is not held under the analyses' peak
        tables = {}
        for name in wanted:
            tables[name] = _call(_function(name), profile, kw)
            _let_go(len(profile))  # nor one analysis's temporaries under the next one's
        start, end = (profile.start_ts, profile.end_ts) if len(profile) else (None, None)
        done = {"part": spec.name, "path": spec.path, "tables": tables, "events": len(profile), "start_ts": start,
                "end_ts": end, "error": None}
        if key is not None and store.still(spec, key):  # kept only under the key of the bytes analysed
            store.put(key.content, tag, done)
        del profile
        _let_go(done["events"])
        return {**done, "status": "computed", "seconds": time.perf_counter() - t0}
    except Exception as exc:  # one bad part must not stop the job: it is named and left out
        what = str(exc) if str(exc) else traceback.format_exception_only(type(exc), exc)[-1].strip()
        return {"part": spec.name, "path": spec.path, "tables": {}, "events": None, "start_ts": None, "end_ts": None,
                "error": f"{type(exc).__name__}: {what}", "status": "left out", "seconds": time.perf_counter() - t0}


def _one_thread() -> None:
    """Arrow decodes on one thread in a worker process: the other cores run other parts, and threads
    contending for them cost more than they give."""
    if pa.cpu_count() != 1:
        pa.set_cpu_count(1)


def _let_go(events: int) -> None:
    """Free the part's memory before the worker's next task: cycles, the heap's freed pages, Arrow's pool (a part
    of `events` events; a small one's scratch is not worth a full collection)."""
    give_back(events)


def _put_together(job: Any, wanted: list[str], got: list[dict[str, Any]]) -> dict[str, Any]:
    parts = pd.DataFrame([{k: g[k] for k in ("part", "path", "status", "events", "start_ts", "end_ts", "seconds", "error")}
                          for g in got])
    for c in ("events", "start_ts", "end_ts"):
        parts[c] = parts[c].astype("Int64")
    ok = [g for g in got if g["error"] is None]
    left = [f"{g['part']} ({g['path']}) was left out: {g['error']}" for g in got if g["error"] is not None]
    opened = [str(n) for n in getattr(job, "notes", [])]  # what opening the job set aside
    out: dict[str, Any] = {}
    for name in wanted:
        if name == "stragglers":
            cores, steps, lag = job_stragglers([(g["part"], g["tables"][name]) for g in ok])
            for key, df in (("stragglers", cores), ("straggler_steps", steps), ("straggler_lag", lag)):
                out[key] = notes_of(df, left + df.attrs.get("notes", []))
        elif name == "kernel_breakdown":
            out[name] = tuple(_concat([(g["part"], g["tables"][name][i]) for g in ok], left) for i in range(2))
        elif name in INTERNAL:
            out[name] = [(g["part"], g["tables"][name]) for g in ok]
        else:
            df = _concat([(g["part"], g["tables"][name]) for g in ok], left)
            if name == "errors_and_hangs" and len(df):
                df = notes_of(df.sort_values(["start_ts", "part"], kind="stable", ignore_index=True), df.attrs["notes"])
            out[name] = df
    out["parts"] = notes_of(parts, opened + left)
    return out


def _concat(frames: list[tuple[str, pd.DataFrame]], left: list[str]) -> pd.DataFrame:
    notes = [f"{part}: {n}" for part, df in frames for n in df.attrs.get("notes", [])]
    shaped = [df.assign(part=part)[["part", *df.columns]] for part, df in frames]
    nonempty = [df for df in shaped if len(df)]
    if nonempty:
        df = pd.concat(nonempty, ignore_index=True)
    elif shaped:
        df = shaped[0].iloc[:0].reset_index(drop=True)
    else:
        df = pd.DataFrame(columns=["part"])
    return notes_of(df, left + notes)


def _function(name: str) -> Callable[..., Any]:
    return {**PER_PART, **JOB_WIDE, **INTERNAL}[name]


def _call(fn: Callable[..., Any], profile: Any, kw: dict[str, Any]) -> Any:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(profile)
    return fn(profile, **{k: v for k, v in kw.items() if k in params})


def _names(analyses: str | Iterable[str] | None) -> list[str]:
    if analyses is None:
        return list(DEFAULT)
    names = [analyses] if isinstance(analyses, str) else list(analyses)
    known = {*ANALYSES, *INTERNAL}
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"unknown analysis {', '.join(map(repr, bad))}: across runs {', '.join(ANALYSES)}")
    return list(dict.fromkeys(names))


def _check_kwargs(wanted: list[str], kw: dict[str, Any]) -> None:
    taken: set[str] = set()
    for name in wanted:
        try:
            taken |= set(inspect.signature(_function(name)).parameters)
        except (TypeError, ValueError):
            continue
    stray = sorted(set(kw) - taken)
    if stray:
        raise TypeError(f"no analysis asked for takes {', '.join(stray)} (asked: {', '.join(wanted)})")


def _tag(wanted: list[str], kw: dict[str, Any]) -> str:
    text = repr((sorted(wanted), sorted((k, repr(v)) for k, v in kw.items()), __version__, VERSION))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
