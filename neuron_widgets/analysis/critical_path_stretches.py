"""A job's critical path from each part's stretches between collectives, walked across parts in the caller.

In a part's graph only two kinds of moment depend on other parts: a collective's release (it waits for
the job's last arrival at that collective) and a virtual arrival (a core that recorded no barrier
arrives no later than the job's first release). Every other moment binds to the same dependency in
the part's own graph as in the job's, so a part task binds its graph itself and ships only the
stretches of it the path can take: walked back from the part's latest moment and from each arrival
that can be a collective's last one (the latest per collective, ties kept; for cores without a
barrier, the arrivals that are last for some first release), each down to a release, a virtual
arrival or a source. Per moment a stretch holds its one segment (the work or the gap before it).
The caller finds each collective's last arrival job-wide, then walks: at a release, to the last
arrival when the release waited for it, else to the core's own arrival.

A walk that needs a stretch a part did not ship (a release that did not wait, behind a node whose
clock runs early, or equal arrival times) asks those parts again for every stretch
(`full=True`): the same frame, at the cost of loading them twice.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import pandas as pd

from ..memory import give_back
from ..model.track_names import TrackNames
from .across import INTERNAL
from .critical_path_chrome_job import chrome_arrivals
from .critical_path_graph import ARRIVAL, COLLECTIVE, COMPUTE, DEPENDENCY, GAP, LAST_ARRIVAL, OWN, START, visit
from .critical_path_neuron import _codes, neuron_pieces
from .critical_path_parts import gathered
from .critical_path_workers import codes_at, column_at, objects, used_rows
from .devices import kind_of
from .frame import frame_of
from .stragglers_job import narrow

# The part task's name in `across` (the number: what it ships; 2: a Kineto or Chrome part ships its arrivals;
# 3: the part's track names).
TASK = "critical_stretches:3"
TASK_FULL = "critical_stretches:3:full"
WORKER_COLS = ("instance_id", "process_id", "thread_id", "nc_idx")
SOURCE = np.int64(np.iinfo(np.int64).min)  # a segment that starts at the run's start (a source: known job-wide only)
MISSING = np.int64(np.iinfo(np.int64).min)  # a stretch the part did not ship
R_BOUND, VIRT_BOUND = 0, 1
Arr = np.ndarray  # (the walk kernel's many arrays)


def part_stretches(profile: Any, full: bool = False) -> dict[str, Any]:
    """A part's stretches and its collectives' arrivals (see the module's docstring); `full`: every stretch. A
    Kineto or Chrome part ships its NCCL kernels' arrivals instead (`critical_path_chrome_job`)."""
    fr = frame_of(profile)
    if len(fr) and kind_of(fr) != "neuron" and not {"neuron_rt", "neuron_hw"} & set(fr.sources):
        return chrome_arrivals(fr)
    g, join = neuron_pieces(fr, lean=True) if len(fr) else (None, None)
    if g is None or join is None or len(g) == 0:
        return {"empty": True, "graph": "neuron", "notes": (g.notes if g is not None else ["the profile has no events"])}
    n, b_m = len(g), int(join["b_m"])
    start, end = fr.start, fr.end
    # Ties break on rows ranked as a merged profile orders them (start, longest first, row): the part's own order.
    used, pos = used_rows(g.n_rows, g.row)
    row_step = g.row_step if g.row_step is not None else np.full(g.n_rows, -1, np.int64)
    rank_used = np.empty(used.size, np.int64)
    rank_used[np.lexsort((used, -end[used], start[used]))] = np.arange(used.size)
    # Per-moment arrays in int32 where a part fits (a part's moments and rows < 2^31): the worker's peak is the
    # part's graph, and these sit beside it.
    i32 = np.int32 if max(n, g.n_rows) < 2**31 - 1 else np.int64
    prow = g.row.astype(i32)
    g.row = np.where(prow >= 0, rank_used[pos[np.maximum(prow, 0)]], -1).astype(i32)  # type: ignore[operator]
    del pos

    # The collectives' moments, from the edges before binding (binding drops the ones the times contradict).
    src, dst = g.src, g.dst
    to_m = dst >= b_m
    a_inst, a_lab = src[to_m], dst[to_m] - b_m
    is_a = np.zeros(n, bool)
    is_a[a_inst] = True
    own_r = (g.cls == OWN) & (g.wkind == DEPENDENCY) & is_a[src] & (dst < b_m)
    r_of = np.full(n, -1, i32)
    r_of[src[own_r]] = dst[own_r]
    a_r = r_of[a_inst].astype(np.int64)
    del r_of, own_r
    item_of = np.full(n, -1, i32)  # an arrival's item (its A->M edge), by arrival and by release
    item_of[a_inst] = np.arange(a_inst.size)
    item_of[a_r] = np.arange(a_inst.size)
    virt = np.asarray(join["virt"], np.int64)
    is_virt = np.zeros(n, bool)
    is_virt[virt] = True
    t_a = g.t[a_inst].copy()  # a virtual arrival's: its cc_running start (its time job-wide comes in the walk)
    t_a[item_of[virt]] = join["virt_cc"]
    into_virt = is_virt[dst] & (g.wkind != DEPENDENCY)
    c_src = np.full(n, -1, i32)
    c_row = np.full(n, -1, i32)
    c_src[dst[into_virt]], c_row[dst[into_virt]] = src[into_virt], g.wrow[into_virt]
    del src, dst, to_m, into_virt  # the edges before binding: binding replaces them
    boundary = np.zeros(n, bool)
    boundary[a_r] = True
    boundary[virt] = True
    boundary[b_m:] = True
    # Releases' and virtual arrivals' gap attributes as built (binding may make a virtual arrival a source).
    bnd = np.flatnonzero(boundary[:b_m])
    gkind0, grow0, gevent0, lane0 = g.gkind[bnd], g.grow[bnd], g.gevent[bnd], g.lane_core[bnd]
    g.bind()
    give_back(g.t.size)  # binding's freed arrays back to the system before the walk allocates its own
    real = (g.role != LAST_ARRIVAL) & ~is_virt
    run_start = int(np.where(real, g.t, np.iinfo(np.int64).max).min()) if real.any() else 0
    del real
    sink = g.sink()

    # Arrivals that can be a collective's last: the latest per collective (ties kept); for cores without a
    # barrier (arriving at min(cc_running start, first release job-wide)), the earliest-ranked one at or after
    # each possible first release: down the cc_running starts, each one ranked before all later ones.
    a_virt = is_virt[a_inst]
    a_rank = g.row[a_inst].astype(np.int64)
    if full:
        cand = np.ones(a_inst.size, bool)
    else:
        latest = np.full(n - b_m, np.iinfo(np.int64).min)
        np.maximum.at(latest, a_lab[~a_virt], t_a[~a_virt])
        cand = ~a_virt & (t_a == latest[a_lab])
        vi = np.flatnonzero(a_virt)
        o = vi[np.lexsort((a_rank[vi], -t_a[vi], a_lab[vi]))]
        if o.size:
            best = pd.Series(a_rank[o]).groupby(a_lab[o]).cummin().to_numpy()
            first = np.r_[True, a_lab[o][1:] != a_lab[o][:-1]]
            prev_best = np.r_[np.iinfo(np.int64).max, best[:-1]]
            cand[o[first | (a_rank[o] < prev_best)]] = True
    starts = np.where(a_virt, c_src[a_inst], a_inst)[cand]
    binding = g.bound()[2]
    nodes, local = visit(np.r_[sink, starts[starts >= 0]].astype(np.int64), binding, g.src, boundary, n)

    # Each walked moment's segment: the work on its binding edge, or its gap.
    e = binding[nodes]
    has = e >= 0
    e0 = np.maximum(e, 0)
    u = np.where(has, g.src[e0], -1)
    work = has & (g.wkind[e0] != DEPENDENCY)
    seg_start = np.where(has, g.t[np.maximum(u, 0)], SOURCE)
    kind = np.where(work, g.wkind[e0], g.gkind[nodes]).astype(np.int8)
    row = np.where(work, g.wrow[e0], g.grow[nodes])
    event = np.where(work, True, g.gevent[nodes])
    on_core = np.where(work, np.isin(g.wkind[e0], (COMPUTE, COLLECTIVE)), g.lane_core[nodes] >= 0)
    # Boundaries: those a stretch ends at, the sink if it is one, and the candidates' virtual arrivals.
    to_b = has & boundary[np.maximum(u, 0)]
    b_inst = np.unique(np.r_[u[to_b], [sink] if sink >= 0 and boundary[sink] else [], a_inst[cand & a_virt]]
                       .astype(np.int64))
    cs = c_src[b_inst]  # a virtual arrival's compute may start at a release (a core's barrier without cc_running)
    b_inst = np.unique(np.r_[b_inst, cs[(cs >= 0) & boundary[np.maximum(cs, 0)]]])
    b_of = np.full(n, -1, np.int64)
    b_of[b_inst] = np.arange(b_inst.size)
    nxt = np.where(~has, -1, np.where(to_b, -2 - b_of[np.maximum(u, 0)], local[np.maximum(u, 0)]))
    b_item = item_of[b_inst].astype(np.int64)
    b_type = np.where(is_virt[b_inst], VIRT_BOUND, R_BOUND).astype(np.int8)
    # The items shipped: the candidates and those of the boundaries reached; their arrival as a pointer.
    items = np.unique(np.r_[np.flatnonzero(cand), b_item])
    it_a = a_inst[items]
    # A virtual arrival not among the boundaries, or an arrival not walked: the part did not ship its stretch.
    a_ptr = np.where(is_virt[it_a], np.where(b_of[it_a] >= 0, -2 - b_of[it_a], MISSING),
                     np.where(local[it_a] >= 0, local[it_a], MISSING))
    cs = c_src[b_inst]
    c0 = np.maximum(cs, 0)
    b_cptr = np.where(cs < 0, -1, np.where(boundary[c0], -2 - b_of[c0], np.where(local[c0] >= 0, local[c0], MISSING)))
    b_ct = np.where(cs >= 0, g.t[np.maximum(cs, 0)], 0)
    at = np.searchsorted(bnd, b_inst)
    b_row = grow0[at]
    # The rows the frame and the ties read, renumbered 0.. among them.
    rows_used, rpos = used_rows(g.n_rows, row, b_row, c_row[b_inst], prow[it_a], prow[[max(sink, 0)]])
    def rmap(a: np.ndarray) -> np.ndarray:
        return np.where(a >= 0, rpos[np.maximum(a, 0)], -1).astype(np.int32)

    combo = codes_at(fr, WORKER_COLS, rows_used)
    combo_code, first_at = np.unique(combo, return_index=True)
    workers = pd.DataFrame({c: objects(*column_at(fr, c, rows_used[first_at])) for c in WORKER_COLS})
    name_code, names = pd.factorize(fr.name[rows_used])
    all_names = np.array([*fr.names, None], dtype=object)
    rank_rows = np.full(rows_used.size, -1, np.int64)  # a row's rank among the part's (ties), where it has one
    ranked = np.flatnonzero(np.isin(rows_used, used))
    rank_rows[ranked] = rank_used[np.searchsorted(used, rows_used[ranked])]
    return {
        "empty": False, "graph": "neuron", "notes": list(g.notes), "run_start": run_start,
        "track_names": TrackNames.of(profile.metadata),
        "sink": (int(nxt_of(sink, boundary, local, b_of)), int(g.t[sink]), int(rpos[prow[sink]]), int(g.role[sink]))
        if sink >= 0 else None,
        # Collectives: label (NEFF name, execution key, ordinal) and the part's first release.
        "neffs": list(g.neffs), "step_neff": join["step_neff"], "step_key": join["step_key"], "step_k": join["step_k"],
        "first_release": join["first_release"],
        # Items: label, arrival time (a virtual one: its cc_running start), its row, role, pointer.
        "it_lab": narrow(a_lab[items]), "it_virt": is_virt[it_a], "it_t": t_a[items], "it_row": rmap(prow[it_a]),
        "it_ptr": a_ptr,
        # Boundaries: type, item, time (a release's), segment's row, on a core, compute edge into a virtual arrival.
        "b_type": b_type, "b_item": np.searchsorted(items, b_item), "b_t": g.t[b_inst],
        "b_kind": gkind0[at], "b_event": gevent0[at], "b_core": lane0[at] >= 0, "b_row": rmap(b_row),
        "b_cptr": b_cptr, "b_ct": b_ct, "b_crow": rmap(c_row[b_inst]),
        # Walked moments: time, segment start, kind, row, inside the event, on a core, the next moment.
        "t": g.t[nodes], "start": seg_start, "kind": kind, "row": rmap(row), "event": event, "on_core": on_core,
        "nxt": nxt,
        # Rows: start, end, rank, worker, id, name, step.
        "row_start": start[rows_used], "row_end": end[rows_used], "row_rank": rank_rows,
        "row_combo": narrow(np.searchsorted(combo_code, combo)), "workers": workers,
        "row_id": narrow(profile.array("id")[rows_used]), "row_name": narrow(name_code),
        "names": list(all_names[np.asarray(names, np.int64)]), "row_step": narrow(row_step[rows_used]),
    }


def nxt_of(v: int, boundary: np.ndarray, local: np.ndarray, b_of: np.ndarray) -> int:
    """A moment as a pointer: its position among the walked moments, or -2 - its boundary's."""
    return int(-2 - b_of[v]) if boundary[v] else int(local[v])


INTERNAL[TASK] = part_stretches  # building blocks `across` runs in its part tasks
INTERNAL[TASK_FULL] = lambda p: part_stretches(p, full=True)


@numba.njit(cache=True, nogil=True)
def _walk(ptr: int | np.int64, run_start: int | np.int64, n_t: Arr, n_start: Arr, n_kind: Arr, n_row: Arr,
          n_event: Arr, n_core: Arr, n_nxt: Arr, b_type: Arr, b_item: Arr, b_t: Arr, b_kind: Arr, b_row: Arr,
          b_event: Arr, b_core: Arr, b_cptr: Arr, b_ct: Arr, b_crow: Arr, it_lab: Arr, it_t: Arr, it_ptr: Arr,
          m_t: Arr, m_item: Arr) -> tuple[Arr, Arr, Arr, Arr, Arr, Arr, int]:  # pragma: no cover - numba
    """The path back from `ptr` over the parts' stretches, latest first: segments (start, end, kind, row, inside
    its event, on a core) and the item whose stretch was not shipped (-1: none)."""
    cap = 2 * (n_t.size + b_type.size) + 4
    s = np.empty(cap, np.int64)
    e = np.empty(cap, np.int64)
    k = np.empty(cap, np.int64)
    r = np.empty(cap, np.int64)
    ev = np.empty(cap, np.bool_)
    oc = np.empty(cap, np.bool_)
    c = 0
    missing = -1
    for _ in range(cap):
        if ptr == -1:
            break
        if ptr >= 0:
            st = n_start[ptr]
            s[c], e[c], k[c], r[c], ev[c], oc[c] = (run_start if st == SOURCE else st), n_t[ptr], n_kind[ptr], \
                n_row[ptr], n_event[ptr], n_core[ptr]
            c += 1
            ptr = n_nxt[ptr]
            continue
        b = -2 - ptr
        if b_type[b] == R_BOUND:  # a release: after the last arrival if it waited for it, else after its own
            it = b_item[b]
            ta, tm, tr = it_t[it], m_t[it_lab[it]], b_t[b]
            waited = ta < tm and tm <= tr
            s[c], e[c], k[c], r[c], ev[c], oc[c] = (tm if waited else ta), tr, b_kind[b], b_row[b], b_event[b], b_core[b]
            c += 1
            if waited:
                it = m_item[it_lab[it]]
            ptr = it_ptr[it]
            if ptr == MISSING:
                missing = it
                break
        else:  # a virtual arrival: after its execution's compute, or a source
            tv = b_t[b]
            if b_cptr[b] != -1 and b_ct[b] <= tv:
                s[c], e[c], k[c], r[c], ev[c], oc[c] = b_ct[b], tv, COMPUTE, b_crow[b], True, True
                c += 1
                ptr = b_cptr[b]
                if ptr == MISSING:
                    missing = b_item[b]
                    break
            else:
                s[c], e[c], k[c], r[c], ev[c], oc[c] = run_start, tv, GAP, b_row[b], False, b_core[b]
                c += 1
                break
    return s[:c], e[:c], k[:c], r[:c], ev[:c], oc[:c], missing


class Joined:
    """The parts' stretches put together: rows, items, boundaries and walked moments with job-wide indices."""

    def __init__(self, pieces: list[tuple[str, dict[str, Any]]]) -> None:
        ps = [p for _, p in pieces]
        self.parts = [name for name, _ in pieces]
        def cat(k: str) -> np.ndarray:
            return np.concatenate([np.asarray(p[k]) for p in ps])

        def base(k: str) -> np.ndarray:
            return np.r_[0, np.cumsum([len(p[k]) for p in ps])].astype(np.int64)

        # Collectives job-wide: NEFF names, labels (NEFF, execution, ordinal), the first release of each.
        index: dict[str, int] = {}
        maps = []
        for p in ps:
            for nm in p["neffs"]:
                index.setdefault(nm, len(index))
            maps.append(np.array([*(index[nm] for nm in p["neffs"]), -1], np.int64))
        lab = np.concatenate([np.stack([m[np.asarray(p["step_neff"], np.int64)], p["step_key"], p["step_k"]], 1)
                              for p, m in zip(ps, maps, strict=True)]) if ps else np.zeros((0, 3), np.int64)
        glob = _codes(lab) if lab.size else np.zeros(0, np.int64)
        n_lab = int(glob.max()) + 1 if glob.size else 0
        lab_base = base("step_key")
        first = np.full(n_lab, np.iinfo(np.int64).max)
        np.minimum.at(first, glob, cat("first_release").astype(np.int64))
        # Rows.
        self.row_base = row_base = base("row_start")
        self.row_part = self.part_of = np.repeat(np.arange(len(ps)), np.diff(row_base))
        r_start, r_end, r_rank = cat("row_start"), cat("row_end"), cat("row_rank")
        # Items: their label job-wide, a virtual arrival's time, the last arrival of each label.
        it_base = base("it_lab")
        part_of_it = np.repeat(np.arange(len(ps)), np.diff(it_base))
        self.it_part = part_of_it
        it_lab = glob[np.concatenate([lab_base[i] + np.asarray(p["it_lab"], np.int64) for i, p in enumerate(ps)])]
        it_virt = cat("it_virt").astype(bool)
        it_t = cat("it_t").astype(np.int64)
        it_t = np.where(it_virt, np.minimum(it_t, first[it_lab]), it_t)
        it_row = np.concatenate([row_base[i] + np.asarray(p["it_row"], np.int64) for i, p in enumerate(ps)])
        role = np.where(it_virt, ARRIVAL, START)
        o = np.lexsort((role, r_rank[it_row], self.row_part[it_row], -r_end[it_row], r_start[it_row], -it_t, it_lab))
        head = o[np.r_[True, it_lab[o][1:] != it_lab[o][:-1]]] if o.size else o
        m_item = np.full(n_lab, -1, np.int64)
        m_item[it_lab[head]] = head
        m_t = np.where(m_item >= 0, it_t[np.maximum(m_item, 0)], np.iinfo(np.int64).min)
        # Pointers job-wide: moments after the earlier parts' moments, boundaries after theirs.
        n_base, b_base = base("t"), base("b_type")

        def ptrs(i: int, a: np.ndarray) -> np.ndarray:
            a = np.asarray(a, np.int64)
            return np.where(a == MISSING, MISSING, np.where(a >= 0, n_base[i] + a, np.where(
                a == -1, -1, -2 - (b_base[i] + (-2 - a)))))

        def rows(i: int, a: np.ndarray) -> np.ndarray:
            a = np.asarray(a, np.int64)
            return np.where(a >= 0, row_base[i] + a, -1)

        b_type = cat("b_type").astype(np.int8)
        b_item = np.concatenate([it_base[i] + np.asarray(p["b_item"], np.int64) for i, p in enumerate(ps)])
        b_t = np.where(b_type == VIRT_BOUND, it_t[np.maximum(b_item, 0)] if it_t.size else 0, cat("b_t"))
        self.walk_args = (
            cat("t").astype(np.int64), cat("start").astype(np.int64), cat("kind").astype(np.int64),
            np.concatenate([rows(i, p["row"]) for i, p in enumerate(ps)]), cat("event").astype(bool),
            cat("on_core").astype(bool), np.concatenate([ptrs(i, p["nxt"]) for i, p in enumerate(ps)]),
            b_type, b_item, b_t.astype(np.int64), cat("b_kind").astype(np.int64),
            np.concatenate([rows(i, p["b_row"]) for i, p in enumerate(ps)]), cat("b_event").astype(bool),
            cat("b_core").astype(bool), np.concatenate([ptrs(i, p["b_cptr"]) for i, p in enumerate(ps)]),
            cat("b_ct").astype(np.int64), np.concatenate([rows(i, p["b_crow"]) for i, p in enumerate(ps)]),
            it_lab, it_t, np.concatenate([ptrs(i, p["it_ptr"]) for i, p in enumerate(ps)]), m_t, m_item)
        self.run_start = min(int(p["run_start"]) for p in ps)
        # What a part's graph needs of the others to be bound as in the job's (what-if, `what_if_job`).
        at = np.unique(glob, return_index=True)[1]
        self.facts = {"kind": "neuron", "run_start": self.run_start, "neffs": list(index), "neff": lab[at, 0],
                      "key": lab[at, 1], "k": lab[at, 2], "m_t": m_t, "first": first}
        # The sink: the latest moment job-wide, ties to the earliest-ranked row, then role.
        sinks = [(i, p["sink"]) for i, p in enumerate(ps) if p["sink"] is not None]
        key = [(-t, int(r_start[row_base[i] + rw]), -int(r_end[row_base[i] + rw]), i, int(r_rank[row_base[i] + rw]), rl)
               for i, (_, t, rw, rl) in sinks]
        if sinks:
            i, (ptr, *_) = sinks[min(range(len(sinks)), key=lambda j: key[j])]
            self.sink = int(ptrs(i, np.array([ptr]))[0])
        else:
            self.sink = -1
        # Per row: part, worker, id, name, step, for the frame.
        combo_base, name_base = base("workers"), base("names")
        self.combo = np.concatenate([combo_base[i] + np.asarray(p["row_combo"], np.int64) for i, p in enumerate(ps)])
        self.workers = pd.concat([p["workers"] for p in ps], ignore_index=True)
        self.ids = cat("row_id").astype(np.int64)
        self.name = np.concatenate([name_base[i] + np.asarray(p["row_name"], np.int64) for i, p in enumerate(ps)])
        self.names = np.array([n for p in ps for n in p["names"]] + [None], dtype=object)
        self.step = cat("row_step").astype(np.int64)

    def walk(self) -> tuple[tuple[np.ndarray, ...], int]:
        """The path's segments in time order (start, end, kind, row, event, on_core), and the part whose stretch
        was not shipped (-1: none)."""
        *segs, missing = _walk(np.int64(self.sink), np.int64(self.run_start), *self.walk_args)
        keep = np.flatnonzero(segs[1] > segs[0])[::-1]
        return tuple(a[keep] for a in segs), (int(self.it_part[missing]) if missing >= 0 else -1)


def stretches_path(job: Any, pieces: list[tuple[str, dict[str, Any]]], notes: list[str], client: Any = None,
                   **kw: Any) -> tuple[Joined, tuple[np.ndarray, ...], list[str]]:
    """The path of a job over its parts' stretches (`pieces`, from `TASK`): the joined tables, the segments, the
    notes. A part whose stretch the walk needs but did not ship is asked again for every stretch."""
    notes = list(notes)
    full: set[str] = set()
    while True:
        joined = Joined(pieces)
        segs, missing = joined.walk()
        if missing < 0 or joined.parts[missing] in full:
            break
        # A stretch the part did not ship: that part again, every stretch of it.
        name = joined.parts[missing]
        full.add(name)
        again, why = gathered(job, TASK_FULL, client, parts=[name], **kw)
        if not again:
            notes.append(f"{name}: the path stops where it needed this part again: {'; '.join(why) or 'no result'}")
            break
        pieces = [(n, again[0][1] if n == name else p) for n, p in pieces]
    return joined, segs, notes
