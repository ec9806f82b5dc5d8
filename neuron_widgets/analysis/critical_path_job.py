"""The critical path and what-if of a multi-node Job, built part by part on Dask.

Each part's task (through `across.run_parts`: its scheduler, its workers, its result store) loads
the part, builds the part's graph before binding (`critical_path_neuron.neuron_pieces`) and
returns it as compact arrays: instants and edges, and per event the graph uses its start, end,
worker code, id, name code, step and NEFF. The parts' pieces are joined here at the collectives
by label (NEFF name, execution, ordinal in the execution): one last-arrival moment per label for
the whole job, the virtual arrivals moved to the job's first release, the work times read again
from the instants' times. Rows are ranked as one merged profile orders them (start, longest
first, part, row in the part), so ties break as they would there, and the joined graph is bound,
walked and replayed as a Profile's is. Only one part's Profile is held at a time (in a worker).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .across import INTERNAL, run_parts
from .critical_path import COLUMNS, JOB_PATH, _empty
from .critical_path_graph import COLLECTIVE, DEPENDENCY, KINDS, LAST_ARRIVAL, Graph
from .critical_path_neuron import _codes, neuron_pieces
from .critical_path_stretches import stretches_path
from .critical_path_workers import codes_at, column_at, objects, used_rows
from .devices import kind_of
from .frame import frame_of, notes_of
from .stragglers_job import narrow
from .what_if import (
    JOB_WHAT_IF,
    WhatIf,
    _changes,
    _null,
    _steps,
    _steps_empty,
    _values,
    filtered,
    kind_matches,
    pinned_span,
    unended_note,
    warn_empty,
    without_unended,
)

TASK = "critical_graph:3"  # the part task's name in `across` (the number: the pieces' format)
NOT_NEURON = ("the critical path of a job is computed part by part for Neuron profiles only: load a job of Kineto or "
              "Chrome traces as one profile (nw.load_profile([...]))")
WORKER_COLS = ("instance_id", "process_id", "thread_id", "nc_idx")


def part_pieces(profile: Any) -> dict[str, Any]:
    """A part's graph pieces, with the rows it uses renumbered 0.. in the part's order."""
    fr = frame_of(profile)
    if len(fr) and kind_of(fr) != "neuron" and not {"neuron_rt", "neuron_hw"} & set(fr.sources):
        raise TypeError(NOT_NEURON)
    if len(fr) == 0:
        g, join = None, None
    else:
        g, join = neuron_pieces(fr)
    if g is None or len(g) == 0:
        return {"empty": True, "notes": (g.notes if g is not None else ["the profile has no events"])}
    used, local = used_rows(g.n_rows, g.row, g.grow, g.wrow)  # local: a used row's position among them

    def renum(a: np.ndarray) -> np.ndarray:
        return np.where(a >= 0, local[np.maximum(a, 0)], -1).astype(np.int32)

    small = np.int32 if len(g) < 2**31 - 1 else np.int64  # half the bytes to ship; widened again in the join

    combo = codes_at(fr, WORKER_COLS, used)  # read at the rows used: no per-event combos, no Python tuples
    combo_code, first = np.unique(combo, return_index=True)
    combo_local = np.searchsorted(combo_code, combo)
    workers = pd.DataFrame({c: objects(*column_at(fr, c, used[first])) for c in WORKER_COLS})
    name_code, names = pd.factorize(fr.name[used])
    all_names = np.array([*fr.names, None], dtype=object)
    # The smallest int types that hold each column (widened again in the join): a part's pieces are pickled,
    # shipped to the parent and held there with every other part's until the join has copied them.
    return {
        "empty": False, "notes": list(g.notes),
        "t": g.t, "row": renum(g.row), "grow": renum(g.grow), "role": g.role, "gkind": g.gkind, "gevent": g.gevent,
        "lane_core": narrow(g.lane_core), "src": g.src.astype(small), "dst": g.dst.astype(small),
        "wkind": g.wkind, "wrow": renum(g.wrow),
        "cls": g.cls, "ex_start": g.ex_start.astype(small), "ex_end": g.ex_end.astype(small), "neffs": list(g.neffs),
        "row_start": fr.start[used], "row_end": fr.end[used], "row_combo": narrow(combo_local),
        "workers": workers, "row_id": narrow(profile.array("id")[used]), "row_name": narrow(name_code),
        "names": list(all_names[np.asarray(names, np.int64)]), "row_step": narrow(g.row_step[used]),
        "row_neff": narrow(g.row_neff[used]), "row_incomplete": fr.incomplete[used], **join,
    }


INTERNAL[TASK] = part_pieces  # a building block `across` runs in its part tasks


class JobGraph:
    """The joined graph of a job and, per joined row, its part, worker, event id, name, step."""

    def __init__(self, g: Graph, part: np.ndarray, parts: list[str], combo: np.ndarray, workers: pd.DataFrame,
                 ids: np.ndarray, name: np.ndarray, names: np.ndarray) -> None:
        self.g, self.part, self.parts, self.combo, self.workers = g, part, parts, combo, workers
        self.ids, self.name, self.names = ids, name, names
        self.step, self.part_of = g.row_step, part
        self.incomplete = np.zeros(g.n_rows, bool)  # per joined row: the event never ended (set by the join)


def job_graph(job: Any, client: Any = None, *, scheduler: str | None = None, num_workers: int | None = None,
              cache: bool = True) -> tuple[JobGraph | None, list[str]]:
    """Every part's pieces from Dask (as `across` runs them), joined at the collectives; None if no part has any."""
    got = run_parts(job, [TASK], client, scheduler=scheduler, num_workers=num_workers, cache=cache)
    other = [g for g in got if g["error"] is not None and g["error"].startswith(f"TypeError: {NOT_NEURON[:40]}")]
    if other:
        raise TypeError(f"{other[0]['part']}: {NOT_NEURON}")
    notes = [f"{g['part']} ({g['path']}) was left out: {g['error']}" for g in got if g["error"] is not None]
    pieces = []
    for g in got:
        if g["error"] is None:
            p = g["tables"][TASK]
            notes += [f"{g['part']}: {n}" for n in p["notes"]]
            if not p["empty"]:
                pieces.append((g["part"], p))
    del got
    if not pieces:
        return None, notes
    return _join(pieces, notes), notes


def _join(pieces: list[tuple[str, dict[str, Any]]], notes: list[str]) -> JobGraph:
    parts = [name for name, _ in pieces]
    ps = [p for _, p in pieces]
    # Rows ranked as a merged profile orders its events: start, longest first, then part and row.
    n_rows = [p["row_start"].size for p in ps]
    row_base = np.r_[0, np.cumsum(n_rows)]
    # Each part's arrays are let go once copied into the job's (pop): the parts' pieces and the joined graph are
    # not held in full at once.
    start = np.concatenate([p.pop("row_start") for p in ps])
    end = np.concatenate([p.pop("row_end") for p in ps])
    part_of = np.repeat(np.arange(len(ps)), n_rows)
    order = np.lexsort((np.arange(start.size), part_of, -end, start))
    n_all = int(start.size)
    rank = np.empty(n_all, np.int32 if n_all < 2**31 - 1 else np.int64)
    rank[order] = np.arange(n_all)
    del order, start, end  # per row, and the joined graph is yet to be built: not held through it
    # NEFF names job-wide; step labels (NEFF, execution, ordinal) job-wide.
    neffs: list[str] = []
    neff_maps = []
    for p in ps:
        index = {n: neffs.index(n) if n in neffs else (neffs.append(n) or len(neffs) - 1) for n in p["neffs"]}
        neff_maps.append(np.array([*(index[n] for n in p["neffs"]), -1], np.int64))
    lab = np.concatenate([np.stack([m[p["step_neff"]], p["step_key"], p["step_k"]], 1) for p, m in zip(ps, neff_maps,
                                                                                                      strict=True)])
    step_glob = _codes(lab) if lab.size else np.zeros(0, np.int64)
    n_steps = int(step_glob.max()) + 1 if step_glob.size else 0
    step_base = np.r_[0, np.cumsum([p["step_key"].size for p in ps])]
    # Instants: each part's own (its last-arrival block left out), then one last arrival per job-wide label.
    own = [int(p["b_m"]) for p in ps]
    inst_base = np.r_[0, np.cumsum(own)]
    n_real = int(inst_base[-1])
    m_base = n_real
    lane_base = np.r_[0, np.cumsum([int(p["lane_core"].max()) + 1 if p["lane_core"].size else 0 for p in ps])]

    # Indices in int32 where the job's rows and instants fit: the joined graph is the parent's peak.
    idx = np.int32 if max(n_all, n_real + n_steps, int(lane_base[-1])) < 2**31 - 1 else np.int64

    def inst(i: int, v: np.ndarray) -> np.ndarray:
        b, v = own[i], v.astype(np.int64)
        return np.where(v < b, inst_base[i] + v, m_base + step_glob[step_base[i] + np.maximum(v - b, 0)]).astype(idx)

    def rows(i: int, r: np.ndarray) -> np.ndarray:
        r = r.astype(np.int64)
        return np.where(r >= 0, rank[row_base[i] + np.maximum(r, 0)], -1).astype(idx)

    def cat(name: str, i_fn: Any = None) -> np.ndarray:
        return np.concatenate([i_fn(i, p.pop(name)[:own[i]]) if i_fn else p.pop(name)[:own[i]]
                               for i, p in enumerate(ps)])

    def tail(a: np.ndarray, fill: Any, dtype: Any) -> np.ndarray:  # the last-arrival block after the own instants
        out = np.empty(a.size + n_steps, dtype)
        out[:a.size] = a
        out[a.size:] = fill
        return out

    t = tail(cat("t"), 0, np.int64)
    row = tail(cat("row", rows), -1, idx)
    grow = tail(cat("grow", rows), -1, idx)
    role = tail(cat("role"), LAST_ARRIVAL, np.int8)
    gkind = tail(cat("gkind"), COLLECTIVE, np.int8)
    gevent = tail(cat("gevent"), False, bool)
    lane = tail(np.concatenate([np.where(p["lane_core"][:own[i]] >= 0, p["lane_core"][:own[i]] + idx(lane_base[i]), -1)
                                for i, p in enumerate(ps)]).astype(idx), -1, idx)
    src = np.concatenate([inst(i, p.pop("src")) for i, p in enumerate(ps)])
    dst = np.concatenate([inst(i, p.pop("dst")) for i, p in enumerate(ps)])
    wkind = np.concatenate([p.pop("wkind") for p in ps])
    wrow = np.concatenate([rows(i, p.pop("wrow")) for i, p in enumerate(ps)])
    cls = np.concatenate([p.pop("cls") for p in ps])
    # A core that recorded no barrier arrives at its cc_running's start or the step's first release job-wide.
    first = np.full(n_steps, np.iinfo(np.int64).max)
    for i, p in enumerate(ps):
        np.minimum.at(first, step_glob[step_base[i] + np.arange(p["step_key"].size)], p["first_release"])
    for i, p in enumerate(ps):
        v = inst_base[i] + p["virt"]
        t[v] = np.minimum(p["virt_cc"], first[step_glob[step_base[i] + p["virt_step"]]])
    to_m = dst >= m_base
    last = np.full(n_steps, np.iinfo(np.int64).min)
    np.maximum.at(last, dst[to_m] - m_base, t[src[to_m]])
    t[m_base:] = last
    w = np.where(wkind != DEPENDENCY, t[dst] - t[src], 0).astype(np.int64)  # work: the time between its moments
    row_neff = np.concatenate([np.where(p["row_neff"] >= 0, m[np.maximum(p.pop("row_neff"), 0)], -1)
                               for p, m in zip(ps, neff_maps, strict=True)]).astype(np.int64)
    row_step = np.concatenate([p.pop("row_step") for p in ps]).astype(np.int64)
    g = Graph(t, row, grow, role, gkind, gevent, lane, src, dst, w, wkind, wrow, cls, n_all, [],
              _by_rank(row_step, rank), _by_rank(row_neff, rank), neffs,
              np.concatenate([inst_base[i] + p["ex_start"] for i, p in enumerate(ps)]),
              np.concatenate([inst_base[i] + p["ex_end"] for i, p in enumerate(ps)])).bind()
    g.notes = notes
    combo_base = np.r_[0, np.cumsum([len(p["workers"]) for p in ps])]
    name_base = np.r_[0, np.cumsum([len(p["names"]) for p in ps])]
    incomplete = np.concatenate([p.pop("row_incomplete") for p in ps]).astype(bool)
    combo = np.concatenate([p.pop("row_combo").astype(np.int64) + combo_base[i] for i, p in enumerate(ps)])
    name = np.concatenate([p.pop("row_name").astype(np.int64) + name_base[i] for i, p in enumerate(ps)])
    names = np.array([n for p in ps for n in p["names"]] + [None], dtype=object)
    jg = JobGraph(g, _by_rank(part_of, rank), parts, _by_rank(combo, rank),
                  pd.concat([p["workers"] for p in ps], ignore_index=True), _by_rank(np.concatenate(
                      [p.pop("row_id") for p in ps]).astype(np.int64), rank), _by_rank(name, rank), names)
    jg.incomplete = _by_rank(incomplete, rank)
    return jg


def _by_rank(a: np.ndarray, rank: np.ndarray) -> np.ndarray:
    out = np.empty_like(a)
    out[rank] = a
    return out


def job_critical_path(job: Any, client: Any = None, **kw: Any) -> pd.DataFrame:
    """`critical_path` of a Job: the same frame as its parts loaded as one profile, `part` filled,
    `event_id` the part's own (what `job.load(part)` shows). Walked over the parts' stretches between
    collectives (`critical_path_stretches`): no joined graph is built."""
    joined, segs, notes = stretches_path(job, client, **kw)
    if joined is None:
        return notes_of(_empty(), notes)
    return notes_of(_segments(joined, *segs), notes)


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


def job_what_if(job: Any, where: Any = None, scale: float | None = None, client: Any = None,
                **kw: Any) -> WhatIf:
    """`what_if` of a Job: the joined graph replayed; `where` filters as for a Profile, `part` too (a
    boolean mask over events is refused: a job's events are not in one table)."""
    changes = _changes(where, scale)
    jg, notes = job_graph(job, client, **kw)
    if jg is None:
        return WhatIf(0, 0, 0, _steps_empty(), 0, list(notes))
    g = jg.g
    w_scale = np.ones(g.src.size)
    g_scale = np.ones(len(g))
    selected = 0
    empty = []
    cut: dict[int, int] = {}
    for k, (sel, factor) in enumerate(changes):
        on_edges, on_gaps = _selected(jg, sel)
        on_edges, on_gaps, n_cut = without_unended(g, jg.incomplete, on_edges, on_gaps)
        if n_cut:
            cut[k] = n_cut
        w_scale[on_edges] *= factor
        g_scale[on_gaps] *= factor
        n = int((on_edges & (g.w > 0)).sum() + (on_gaps & (g.g > 0)).sum())
        selected += n
        if not n:
            empty.append(sel)
    t = g.replay(w_scale, g_scale)
    span, predicted = pinned_span(g, t, jg.incomplete)
    if cut:
        notes = [*notes, unended_note(cut)]
    if not selected:
        notes = [*notes, "the changes select no work or gap: nothing changes"]
    warn_empty(empty, stacklevel=4, only_unended=[changes[k][0] for k in cut])
    return WhatIf(span, predicted, span - predicted, _steps(g, t), selected, list(notes), sum(cut.values()))


def _selected(jg: JobGraph, where: Any) -> tuple[np.ndarray, np.ndarray]:
    g = jg.g
    work = g.wkind != DEPENDENCY
    if where is None:
        return work.copy(), np.ones(len(g), bool)
    if not isinstance(where, dict):
        raise TypeError(f"where must be a dict of column filters or None for a job, not {type(where).__name__} (a "
                        f"mask over events needs one profile: job.load(part) or the parts as one profile)")
    return filtered(g, where, lambda *a: _matches(jg, *a))


def _matches(jg: JobGraph, col: str, want: Any, side: str, row: np.ndarray, kind: np.ndarray, event: np.ndarray,
             on_core: np.ndarray) -> np.ndarray:
    vals = _values(want)
    null = any(_null(v) for v in vals)
    if col == "kind":
        return kind_matches(kind, vals)
    if col == "part":
        hit_part = np.array([p in set(vals) for p in jg.parts])
        return hit_part[jg.part[row]]
    if col == "event_id":
        return np.isin(np.where(event, jg.ids[row], -1), np.asarray([int(v) for v in vals], np.int64))
    if col == "step":
        return np.isin(jg.g.row_step[row], np.asarray([int(v) for v in vals], np.int64))
    if col == "name":
        hit_name = np.array([n in set(v for v in vals if isinstance(v, str)) for n in jg.names])
        return (hit_name[jg.name[row]] & event) | (~event if null else False)
    per_combo = jg.workers[col].to_numpy(dtype=object)
    wanted = set(v for v in vals if not _null(v))
    hit_combo = np.array([(v in wanted) if not _null(v) else null for v in per_combo] or [False])
    hit = hit_combo[jg.combo[row]]
    if col == "thread_id":  # work on a core is on no thread
        hit = np.where(on_core, null, hit)
    return hit


JOB_PATH["critical_path"] = job_critical_path
JOB_WHAT_IF["what_if"] = job_what_if
