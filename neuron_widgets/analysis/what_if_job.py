"""`what_if` of a Job, part by part: each part replays its own graph and ships it reduced; the caller joins those.

A part's graph is the same as in the job's graph once it knows what the other parts decide for it:
each collective's last arrival and first release (Neuron), or each NCCL collective's last start
(Kineto), and the run's start. Those come from a first pass over the parts (the path's own task,
kept in the job's result store: `critical_path_job.job_facts`). Then each part's task builds its
graph with them, applies each set of changes asked for (`variants`: several what-ifs in one pass
over the parts, as findings(job) asks for its rows' gains) and reduces the replay onto the
collectives' last arrivals (`critical_path_reduce`). The caller replays the joined small graphs:
a few terms per collective and part instead of every moment of every part. The result equals the
parts loaded as one profile (tests/test_critical_path_job.py against the whole graph joined).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np
import pandas as pd

from .across import INTERNAL
from .critical_path_chrome_job import chrome_job_graph
from .critical_path_graph import LAST_ARRIVAL, Graph, _topo
from .critical_path_neuron import neuron_job_graph
from .critical_path_parts import gathered, pack, part_name, unpacked
from .critical_path_reduce import ZERO, PartReducer, StepGroups
from .critical_path_workers import GraphWorkers
from .frame import Frame, frame_of
from .what_if import (
    FILTER_COLUMNS,
    WhatIf,
    _changes,
    _selected,
    _steps_empty,
    _values,
    kind_matches,
    unended_note,
    warn_empty,
    without_unended,
)

TASK = "what_if:part:1"  # the part task's name in `across` (the number: what it ships)
Changes = list[tuple[Any, float]]


def job_part_graph(fr: Frame, facts: dict[str, Any]) -> tuple[Graph, np.ndarray, list[str]] | None:
    """A part's graph bound as in the job's, the job-wide label of each of its last-arrival moments, its notes."""
    if len(fr) == 0:
        return None
    return neuron_job_graph(fr, facts) if facts["kind"] == "neuron" else chrome_job_graph(fr, facts)


def for_part(where: Any, part: str | None) -> Any:
    """A change's filter as it reads in one part: its `part` filter decided there (None: it selects nothing)."""
    if not isinstance(where, dict) or "part" not in where:
        return where
    if part is None or part not in {str(v) for v in _values(where["part"]) if v is not None}:
        return None
    return {k: v for k, v in where.items() if k != "part"}


def part_replays(profile: Any, packed: bytes | None = None) -> dict[str, Any]:
    """(A part task.) The part's replay under each variant (a list of changes), reduced; `packed`: the job's
    `facts` and the `variants`."""
    args = unpacked(packed)
    facts, variants = args.get("facts"), args.get("variants", [])
    fr = frame_of(profile)
    built = job_part_graph(fr, facts) if facts is not None else None
    if built is None:
        return {"empty": True, "notes": ["the profile has no events"] if len(fr) == 0 else []}
    g, m_label, notes = built
    if len(g) == 0:
        return {"empty": True, "notes": notes}
    name = part_name(profile)
    red = PartReducer(g, fr.incomplete)
    steps = StepGroups(g, list(g.neffs))
    workers = GraphWorkers(fr, g)
    last = g.role == LAST_ARRIVAL
    out = []
    for changes in variants:
        w_scale, g_scale = np.ones(g.src.size), np.ones(len(g))
        chosen, cut = [], []
        for where, factor in changes:
            sel = for_part(where, name)
            if sel is None and isinstance(where, dict):
                chosen.append(0)
                cut.append(0)
                continue
            on_edges, on_gaps = _selected(fr, g, sel, workers)
            on_gaps &= ~last  # a last arrival's gap in a part is the other parts' lateness (job-wide: none)
            on_edges, on_gaps, n_cut = without_unended(g, fr.incomplete, on_edges, on_gaps)
            w_scale[on_edges] *= factor
            g_scale[on_gaps] *= factor
            chosen.append(int((on_edges & (g.w > 0)).sum() + (on_gaps & (g.bound()[1] > 0)).sum()))
            cut.append(n_cut)
        r = red.reduce(w_scale, g_scale, steps)
        out.append({**r, "selected": chosen, "cut": cut})
    bounds = g.time_steps.bounds() if g.time_steps is not None else None
    return {"empty": False, "notes": notes, "variants": out, "m_label": np.asarray(m_label, np.int64),
            "n_fixed": 1 + red.m_inst.size, "real_max": red.real_max, "ended_max": red.ended_max,
            "has_cut": bool(red.cut.any()), "steps": steps.table, "bounds": bounds, "neffs": list(g.neffs)}


INTERNAL[TASK] = part_replays  # a building block `across` runs in its part tasks


def checked(changes: Changes) -> Changes:
    """Changes a job can replay, refused here rather than in every part's task (where an error leaves the part out):
    a dict of known columns (and kinds) or None; a mask over events needs one profile."""
    for sel, _ in changes:
        if sel is None:
            continue
        if not isinstance(sel, dict):
            raise TypeError(f"where must be a dict of column filters or None for a job, not {type(sel).__name__} (a "
                            f"mask over events needs one profile: job.load(part) or the parts as one profile)")
        unknown = [k for k in sel if k not in FILTER_COLUMNS]
        if unknown:
            raise ValueError(f"where filters on {unknown}: the columns are {list(FILTER_COLUMNS)}")
        if "kind" in sel:
            kind_matches(np.zeros(0, np.int8), _values(sel["kind"]))  # an unknown kind is an error, not no match
    return changes


def job_what_ifs(job: Any, variants: Sequence[Changes], facts: dict[str, Any] | None, notes: list[str],
                 client: Any = None, *, steps: bool = True, **kw: Any) -> list[WhatIf]:
    """Each variant's WhatIf over the job, from one pass over its parts. `facts`: the job's (None: no graph);
    `steps`: the per-step frame too (findings need the span only)."""
    for changes in variants:
        checked(changes)
    if facts is None:
        return [WhatIf(0, 0, 0, _steps_empty(), 0, list(notes)) for _ in variants]
    pieces, more = gathered(job, TASK, client, named=True, packed=pack(facts=facts, variants=list(variants)), **kw)
    notes = [*notes, *(n for n in more if n not in notes)]
    if not pieces:
        return [WhatIf(0, 0, 0, _steps_empty(), 0, list(notes)) for _ in variants]
    return [_one(pieces, k, changes, facts, notes, steps) for k, changes in enumerate(variants)]


@numba.njit(cache=True, nogil=True)
def _replay_small(order: np.ndarray, ptr: np.ndarray, src: np.ndarray, c: np.ndarray,
                  gap: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    out = np.zeros(gap.size, np.float64)
    for v in order:
        if ptr[v] == ptr[v + 1]:
            out[v] = gap[v]
            continue
        best = -np.inf
        for e in range(ptr[v], ptr[v + 1]):
            r = out[src[e]] + c[e]
            if r > best:
                best = r
        out[v] = best + gap[v]
    return out


def _one(pieces: list[tuple[str, dict[str, Any]]], k: int, changes: Changes, facts: dict[str, Any],
         notes: list[str], with_steps: bool) -> WhatIf:
    run_start = int(facts["run_start"])
    n_labels = int(np.asarray(facts["m_t"]).size)
    ids, tgt, srcs, cs, gaps, ts = [], [], [], [], [], []
    base = 1 + n_labels
    for _, p in pieces:
        r = p["variants"][k]
        m = p["m_label"]
        n_fixed = int(p["n_fixed"])

        def glob(local: np.ndarray, lut: np.ndarray = np.r_[ZERO, 1 + m], n_fixed: int = n_fixed,
                 base: int = base) -> np.ndarray:
            # A part's kept moments job-wide: the run's start, its last arrivals by label, its own after the others'.
            local = np.asarray(local, np.int64)
            return np.where(local < n_fixed, lut[np.minimum(local, n_fixed - 1)], base + local - n_fixed)

        ids.append(glob)
        tgt.append(glob(r["edges_t"]))
        srcs.append(glob(r["edges_s"]))
        cs.append(np.asarray(r["edges_c"], np.float64))
        n_new = int(np.asarray(r["kept_gap"]).size) - (n_fixed - 1)
        gaps.append(np.asarray(r["kept_gap"], np.float64)[n_fixed - 1:])
        ts.append(np.asarray(r["kept_t"], np.int64)[n_fixed - 1:])
        base += n_new
    n = base
    t_rec = np.concatenate([np.array([run_start], np.int64), np.asarray(facts["m_t"], np.int64), *ts])
    gap = np.concatenate([np.zeros(1 + n_labels), *gaps])
    dst = np.concatenate(tgt)
    src = np.concatenate(srcs)
    c = np.concatenate(cs)
    by = np.argsort(dst, kind="stable")
    dst, src, c = dst[by], src[by], c[by]
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=ptr[1:])
    pred = _replay_small(_topo(src, dst, t_rec, n), ptr, src, c, gap)

    def value(glob_of: Any, keys: Any, consts: Any) -> np.ndarray:
        return pred[glob_of(keys)] + np.asarray(consts, np.float64)

    real = [p["real_max"] for _, p in pieces if p["real_max"] is not None]
    ended = [p["ended_max"] for _, p in pieces if p["ended_max"] is not None]
    cut_any = any(p["has_cut"] for _, p in pieces)
    ends = [value(ids[i], p["variants"][k]["end_k"], p["variants"][k]["end_c"]) for i, (_, p) in enumerate(pieces)]
    latest = max((float(e.max()) for e in ends if e.size), default=0.0)
    if not real:
        span, predicted = 0, 0
    else:
        span = int(max(real)) - run_start
        if not cut_any:
            predicted = round(latest)
        elif not ended:
            predicted = span
        else:
            predicted = span - ((int(max(ended)) - run_start) - round(latest))
    chosen = np.sum([p["variants"][k]["selected"] for _, p in pieces], axis=0).astype(np.int64)
    cut = np.sum([p["variants"][k]["cut"] for _, p in pieces], axis=0).astype(np.int64)
    out_notes = list(notes)
    cut_of = {j: int(x) for j, x in enumerate(cut) if x}
    if cut_of:
        out_notes.append(unended_note(cut_of))
    selected = int(chosen.sum()) if chosen.size else 0
    if not selected:
        out_notes.append("the changes select no work or gap: nothing changes")
    empty = [changes[j][0] for j in range(len(changes)) if not (chosen[j] if chosen.size else 0)]
    warn_empty(empty, stacklevel=5, only_unended=[changes[j][0] for j in cut_of])
    frame = _steps_frame(pieces, k, ids, pred, run_start) if with_steps else _steps_empty()
    return WhatIf(span, predicted, span - predicted, frame, selected, out_notes, int(cut.sum()) if cut.size else 0)


def _steps_frame(pieces: list[tuple[str, dict[str, Any]]], k: int, ids: list[Any], pred: np.ndarray,
                 run_start: int) -> pd.DataFrame:
    """The per-step frame as `what_if` of a profile gives it: per (NEFF, step) over every part's executions."""
    rows, p_start, p_end = [], [], []
    for i, (_, p) in enumerate(pieces):
        t = p["steps"]
        if t is None or len(t) == 0:
            continue
        r = p["variants"][k]
        rows.append(t.assign(part=i))
        # The earliest of a group's starts (each start: the latest of its terms), the latest of its ends.
        v = pred[ids[i](r["st_k"])] + r["st_c"]
        cand = pd.Series(v).groupby(r["st_cand"]).max()
        grp = pd.Series(r["st_g"]).groupby(r["st_cand"]).first()
        p_start.append(pd.DataFrame({"part": i, "g": grp.to_numpy(), "p": cand.to_numpy()}))
        p_end.append(pd.DataFrame({"part": i, "g": r["en_g"], "p": pred[ids[i](r["en_k"])] + r["en_c"]}))
    if not rows:
        return _steps_empty()
    t = pd.concat(rows, ignore_index=False).rename_axis("g").reset_index()
    ps = pd.concat(p_start).groupby(["part", "g"])["p"].min()
    pe = pd.concat(p_end).groupby(["part", "g"])["p"].max()
    key = pd.MultiIndex.from_arrays([t["part"], t["g"]])
    t["p_start"], t["p_end"] = ps.reindex(key).to_numpy(), pe.reindex(key).to_numpy()
    # A step's first execution in the merged profile's order (start, longest first, part, row) places it among
    # steps that start together, as its first appearance does in a profile's frame.
    t["neg_end"] = -t["first_end"]
    t = t.sort_values(["start_ts", "neg_end", "part", "first_row"], kind="stable")
    t["neff_key"] = t["neff"].astype(object).where(t["neff"].notna(), "\0")
    by = t.groupby(["neff_key", "step"], sort=False).agg(neff=("neff", "first"), start_ts=("start_ts", "min"),
                                                          end_ts=("end_ts", "max"), p_start=("p_start", "min"),
                                                          p_end=("p_end", "max")).reset_index()
    out = pd.DataFrame({"model_name": by["neff"].to_numpy(dtype=object), "step": by["step"].to_numpy(np.int64),
                        "start_ts": by["start_ts"].to_numpy(np.int64), "end_ts": by["end_ts"].to_numpy(np.int64)})
    out["duration_ns"] = out["end_ts"] - out["start_ts"]
    out["predicted_start_ts"] = np.round(by["p_start"].to_numpy()).astype(np.int64) + run_start
    out["predicted_end_ts"] = np.round(by["p_end"].to_numpy()).astype(np.int64) + run_start
    bounds = [p["bounds"] for _, p in pieces if p["bounds"] is not None]
    if bounds:  # Kineto: a ProfilerStep is its markers' span over the ranks, moved as its first and last events move
        b = pd.concat([pd.DataFrame({"n": n, "s": s, "e": e}) for n, s, e in bounds])
        b = b.groupby("n").agg(s=("s", "min"), e=("e", "max"))
        at = b.reindex(out["step"].to_numpy())
        moved_s, moved_e = out["predicted_start_ts"] - out["start_ts"], out["predicted_end_ts"] - out["end_ts"]
        out["start_ts"], out["end_ts"] = at["s"].to_numpy(np.int64), at["e"].to_numpy(np.int64)
        out["duration_ns"] = out["end_ts"] - out["start_ts"]
        out["predicted_start_ts"], out["predicted_end_ts"] = out["start_ts"] + moved_s, out["end_ts"] + moved_e
    out["predicted_duration_ns"] = out["predicted_end_ts"] - out["predicted_start_ts"]
    out["saved_ns"] = out["duration_ns"] - out["predicted_duration_ns"]
    out["ends_earlier_ns"] = out["end_ts"] - out["predicted_end_ts"]
    return out.sort_values(["start_ts", "step"], kind="stable", ignore_index=True)


def job_what_if(job: Any, where: Any, scale: float | None, facts: dict[str, Any] | None, notes: list[str],
                client: Any = None, **kw: Any) -> WhatIf:
    """One what-if of a job (`what_if(job, ...)`): a mask over events is refused."""
    changes = _changes(where, scale)
    checked(changes)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = job_what_ifs(job, [changes], facts, notes, client, **kw)[0]
    for w in caught:  # said again from here, where the caller sees it
        warnings.warn(w.message, w.category, stacklevel=4)
    return got
