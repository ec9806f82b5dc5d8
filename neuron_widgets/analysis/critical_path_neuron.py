"""The critical-path graph of a Neuron profile, built with array operations.

- On a core, executions (`nc_exec_running`) run in order: the next starts after the previous ends.
- An execution is a chain: compute up to its first collective's arrival, the collective, compute
  up to the next, ..., compute to its end. A collective (matched across cores as `collectives`
  matches them: NEFF, execution, ordinal in the execution) is a `cc_exec_barrier` with the
  `cc_running` after it, or either alone; a core arrives at its barrier's start (else its
  `cc_running`'s start), and its release (the barrier's end, else the `cc_running`'s start) comes
  no earlier than the last participant's arrival. The `cc_running` is the collective's work.
- A host thread's `nrt_execute` calls run in order; a call leads to its execution (flow id, else
  the latest call on that core before it, as `launch_stats` links them) and returns after it ends.

The pieces are per core and per collective label, so a job can later build each part's graph and
join the parts' arrivals at the collectives by label (NEFF, execution, ordinal).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import pandas as pd

from ..memory import give_back
from .collectives import _execution_of, ordinal
from .critical_path_graph import (
    ARRIVAL,
    COLLECTIVE,
    COMPUTE,
    CORE_ORDER,
    DEPENDENCY,
    END,
    GAP,
    HOST,
    HOST_ORDER,
    LAST_ARRIVAL,
    LAUNCH,
    LAUNCHED,
    OTHERS_ARRIVED,
    OWN,
    RETURNED,
    START,
    Graph,
    RowValues,
)
from .critical_path_workers import codes_at
from .devices import BARRIER, EXECUTION, RUNTIME_EXECUTE
from .devices import COLLECTIVE as CC_RUNNING
from .frame import Frame
from .launches import neuron_launchers

THREAD = ("instance_id", "process_id", "thread_id")


class _Edges:
    """Edges added in groups, joined once (`arrays`), each group let go then; moments and rows in `index` ints."""

    def __init__(self, index: type[np.signedinteger[Any]] = np.int64) -> None:
        self.parts: list[tuple[np.ndarray, ...]] = []
        self.index = index

    def add(self, src: np.ndarray, dst: np.ndarray, cls: int, kind: int = DEPENDENCY, row: np.ndarray | None = None,
            w: np.ndarray | None = None, t: np.ndarray | None = None) -> None:
        src, dst = np.asarray(src, self.index), np.asarray(dst, self.index)
        n = src.size
        if kind == DEPENDENCY:
            weight = np.zeros(n, np.int64)
        elif t is not None:
            weight = t[dst] - t[src]
        else:
            raise ValueError("an edge that is work needs the instants' times (t)")
        if w is not None:
            weight = w
        rows = np.full(n, -1, self.index) if row is None else np.asarray(row, self.index)
        self.parts.append((src, dst, weight.astype(np.int64), np.full(n, kind, np.int8), rows, np.full(n, cls, np.int8)))

    def arrays(self) -> list[np.ndarray]:
        if not self.parts:
            z = np.zeros(0, self.index)
            return [z, z, np.zeros(0, np.int64), np.zeros(0, np.int8), z, np.zeros(0, np.int8)]
        out = []
        for k in range(6):  # one column at a time, its groups let go as it is joined: not every edge held twice
            out.append(np.concatenate([p[k] for p in self.parts]))
            self.parts = [(*p[:k], np.zeros(0, p[k].dtype), *p[k + 1:]) for p in self.parts]
        self.parts = []
        return out


def forget_lazy(fr: Frame) -> None:
    """Let go of the frame's kept reads of the arguments and flow ids, once a job's part task has read what it
    needs of them: the part's graph is built without them beside it (a worker's peak). A profile's own graph
    keeps them (the other analyses read them too)."""
    with fr._lock:
        for column in ("extra_attributes_json", "flow_id"):
            fr._cache.pop(("store", column), None)
    give_back(len(fr))


def neuron_graph(fr: Frame) -> Graph:
    return neuron_pieces(fr)[0].bind()


def neuron_job_graph(fr: Frame, facts: dict[str, Any]) -> tuple[Graph, np.ndarray, list[str]]:
    """A part's graph as it is in its job's: each collective's last arrival and first release the job's (`facts`:
    per job-wide label its NEFF code into `neffs`, `key`, `k`, `m_t`, `first`), bound from the job's run start.
    Also the job-wide label of each of its last-arrival moments, and its notes."""
    g, join = neuron_pieces(fr, lean=True)
    b_m = int(join["b_m"])
    code = {n: i for i, n in enumerate(facts["neffs"])}
    local_neff = np.array([code.get(n, -2) for n in g.neffs] + [-1], np.int64)[np.asarray(join["step_neff"], np.int64)]
    want = pd.MultiIndex.from_arrays([np.asarray(facts["neff"], np.int64), np.asarray(facts["key"], np.int64),
                                      np.asarray(facts["k"], np.int64)])
    lab = want.get_indexer(pd.MultiIndex.from_arrays([local_neff, np.asarray(join["step_key"], np.int64),
                                                      np.asarray(join["step_k"], np.int64)]))
    if (lab < 0).any():
        raise RuntimeError("the part's collectives differ from what the job's first pass read of it: was it changed "
                           "meanwhile? Run it again")
    first = np.asarray(facts["first"], np.int64)[lab]
    g.t[b_m:] = np.asarray(facts["m_t"], np.int64)[lab]
    virt = np.asarray(join["virt"], np.int64)
    g.t[virt] = np.minimum(np.asarray(join["virt_cc"], np.int64), first[np.asarray(join["virt_step"], np.int64)])
    _work_times(g.t, g.src, g.dst, g.wkind, g.w, DEPENDENCY)  # work from the job's times (in place: no copies)
    g.bind(int(facts["run_start"]))
    give_back(g.t.size)  # binding's freed arrays back to the system before the replays allocate theirs
    return g, lab, list(g.notes)


def neuron_pieces(fr: Frame, lean: bool = False) -> tuple[Graph, dict[str, np.ndarray | np.int64]]:
    """The graph before binding, and what a job needs to join it to other parts' at the collectives: each
    step label (`step_neff`, `step_key`, `step_k`), its last-arrival instant (`b_m` + label), the virtual
    arrivals (`virt`, their label `virt_step` and `cc_running` start `virt_cc`) and the first release.
    `lean` (a job's part task): the frame's kept arguments and flow ids are let go once read (`forget_lazy`)."""
    # The edges and the rows' steps are joined here, once the build's per-event and per-collective arrays are gone
    # (a job's part task peaks where they would all be held together).
    built = _built(fr, lean)
    if lean:  # the build's freed arrays back to the system before the joins allocate theirs
        give_back(len(fr))
    step_of = built.pop("step_of")
    keyed = [np.concatenate([np.asarray(p[k], np.int64) for p in step_of]) for k in range(3)]
    del step_of
    row_step, row_neff = RowValues(keyed[0], keyed[1], len(fr)), RowValues(keyed[0], keyed[2], len(fr))
    del keyed
    src, dst, w, wkind, wrow, cls = built.pop("edges").arrays()
    ne = int(built.pop("ne"))
    t, row, grow, role, gkind, gevent, lane_core = built.pop("instants")
    return Graph(t, row, grow, role, gkind, gevent, lane_core, src, dst, w, wkind, wrow, cls, len(fr),
                 built.pop("notes"), row_step, row_neff, built.pop("neffs"), np.arange(ne), ne + np.arange(ne)), \
        built["join"]


def _built(fr: Frame, lean: bool) -> dict[str, Any]:
    """The instants, the edges in groups (`_Edges`), each row's step and NEFF in groups, the join's pieces."""
    notes: list[str] = []
    start, end, n_rows = fr.start, fr.end, len(fr)
    exs, ex_core = fr.on_cores(EXECUTION)
    bars, bar_core = fr.on_cores(BARRIER)
    ccs, cc_core = fr.on_cores(CC_RUNNING)
    rts, _ = fr.on_cores(RUNTIME_EXECUTE)
    ex_core = ex_core.astype(np.int64)
    ne, nb, nc, nr = exs.size, bars.size, ccs.size, rts.size

    # Executions: NEFF and step (exec_id, else the ordinal among the core's runs of that NEFF), as stragglers.
    neff_code, neffs = fr.arg_codes(exs, "model_name") if ne else (np.zeros(0, np.int32), [])
    neff_code = np.asarray(neff_code, np.int64)
    ex_id = fr.arg(exs, "exec_id") if ne else np.zeros(0, np.int64)
    ex_ord = ordinal(ex_core * (len(neffs) + 1) + neff_code + 1, start[exs], exs)
    ex_key = np.where(ex_id >= 0, ex_id, -2 - ex_ord)
    ex_step = np.where(ex_id >= 0, ex_id, ex_ord)

    # Collective items: a barrier with the cc_running right after it in its execution, or either alone.
    rows = np.concatenate([bars, ccs])
    core = np.concatenate([bar_core, cc_core]).astype(np.int64)
    kind = np.r_[np.zeros(nb, np.int64), np.ones(nc, np.int64)]
    own = fr.arg(rows, "exec_id") if rows.size else np.zeros(0, np.int64)
    # What else is read of the arguments and flow ids, read now: in a job's part task they are let go before the
    # graph is built.
    launcher = neuron_launchers(fr, exs, ex_core, notes)[0] if nr else np.zeros(0, np.int64)
    rts_exec_id = fr.arg(rts, "exec_id") if nr else np.zeros(0, np.int64)
    if lean:
        forget_lazy(fr)
    match = _execution_of(core, own, start[rows], ex_core, ex_id, start[exs], end[exs], fr.incomplete[exs], exs)
    found = match >= 0
    m0 = np.maximum(match, 0)
    neff = np.where(found, neff_code[m0] if ne else -1, -1)
    key = np.where(own >= 0, own, np.where(found, ex_key[m0] if ne else -1, -1))
    o = np.lexsort((rows, kind, start[rows], key, neff, core))
    rows, core, kind, own, match, neff, key = (a[o] for a in (rows, core, kind, own, match, neff, key))
    grp = np.stack([core, neff, key], 1)
    same = (grp[1:] == grp[:-1]).all(axis=1) if rows.size > 1 else np.zeros(0, bool)
    paired_next = np.r_[same & (kind[:-1] == 0) & (kind[1:] == 1), False] if rows.size else np.zeros(0, bool)
    consumed = np.r_[False, paired_next[:-1]] if rows.size else np.zeros(0, bool)
    item = np.flatnonzero(~consumed)
    it_first = rows[item]
    it_bar = np.where(kind[item] == 0, rows[item], -1)
    it_cc = np.where(kind[item] == 1, rows[item], np.where(paired_next[item], rows[np.minimum(item + 1, rows.size - 1)], -1))
    it_core, it_exec, it_own = core[item], match[item], own[item]
    it_neff, it_key = neff[item], key[item]
    # The collectives' rows in their sort order are done with: only their items go on (a job part's peak).
    del rows, core, kind, own, match, found, m0, neff, key, o, grp, same, paired_next, consumed
    it_group = _codes(np.stack([it_core, it_neff, it_key], 1))
    it_k = ordinal(it_group, start[it_first], it_first)
    del it_group
    it_step_label = _codes(np.stack([it_neff, it_key, it_k], 1))
    n_items = item.size
    n_steps = int(it_step_label.max()) + 1 if n_items else 0

    # Instants, in blocks.
    b_ex, b_bar = 0, 2 * ne
    b_cc = b_bar + 2 * nb
    alone = np.flatnonzero(it_bar < 0)
    b_virt = b_cc + 2 * nc
    b_rt = b_virt + alone.size
    b_m = b_rt + 2 * nr
    n = b_m + n_steps

    # Moments, rows and cores in int32 where they fit (the graph's arrays are a job part task's peak).
    index = np.int32 if max(n, n_rows) < 2**31 - 1 else np.int64
    t = np.zeros(n, np.int64)
    row = np.full(n, -1, index)
    role = np.zeros(n, np.int8)
    gkind = np.full(n, GAP, np.int8)
    gevent = np.zeros(n, bool)
    grow = np.full(n, -1, index)
    lane_core = np.full(n, -1, index)

    def block(base: int, r: np.ndarray, times: np.ndarray, rl: int, gk: int, ev: bool, lane: np.ndarray) -> None:
        sl = slice(base, base + r.size)
        t[sl], row[sl], grow[sl], role[sl], gkind[sl], gevent[sl], lane_core[sl] = times, r, r, rl, gk, ev, lane

    block(b_ex, exs, start[exs], START, GAP, False, ex_core)
    block(b_ex + ne, exs, end[exs], END, COMPUTE, True, ex_core)
    block(b_bar, bars, start[bars], START, COLLECTIVE, True, bar_core)
    block(b_bar + nb, bars, end[bars], END, COLLECTIVE, True, bar_core)
    block(b_cc, ccs, start[ccs], START, COLLECTIVE, True, cc_core)
    block(b_cc + nc, ccs, end[ccs], END, COLLECTIVE, True, cc_core)
    # A core that recorded no barrier arrived at its cc_running's start, or at the step's first release if
    # that came earlier: no one is released before the last arrival (the others' cc_running start a little
    # after their release, as this one's does).
    released = np.flatnonzero((it_bar >= 0) & ~fr.incomplete[np.maximum(it_bar, 0)])
    first_release = np.full(n_steps, np.iinfo(np.int64).max)
    np.minimum.at(first_release, it_step_label[released], end[it_bar[released]])
    arrive_alone = np.minimum(start[it_cc[alone]], first_release[it_step_label[alone]])
    block(b_virt, it_cc[alone], arrive_alone, ARRIVAL, COLLECTIVE, True, it_core[alone])
    thread = codes_at(fr, THREAD, rts)
    block(b_rt, rts, start[rts], START, GAP, False, np.full(nr, -1))
    block(b_rt + nr, rts, end[rts], END, HOST, True, np.full(nr, -1))

    # Each item's arrival A, release R and the instant its execution resumes from, E.
    virt = np.full(n_items, -1, np.int64)
    virt[alone] = b_virt + np.arange(alone.size)
    has_bar = it_bar >= 0
    has_cc = it_cc >= 0
    # A row's position among its kind: the rows are sorted (on_cores), and the unset ones are never read.
    bi, ci = np.searchsorted(bars, np.maximum(it_bar, 0)), np.searchsorted(ccs, np.maximum(it_cc, 0))
    A = np.where(has_bar, b_bar + bi, virt)
    R = np.where(has_bar, b_bar + nb + bi, b_cc + ci)
    E = np.where(has_cc, b_cc + nc + ci, b_bar + nb + bi)
    M = b_m + it_step_label
    last = np.full(n_steps, np.iinfo(np.int64).min)
    np.maximum.at(last, it_step_label, t[A])
    block(b_m, np.full(n_steps, -1), last, LAST_ARRIVAL, COLLECTIVE, False, np.full(n_steps, -1))

    ed = _Edges(index)
    # Inside an execution: compute between its start, its collectives and its end.
    inside = np.flatnonzero(it_exec >= 0)
    inside = inside[np.lexsort((it_first[inside], t[A[inside]], it_exec[inside]))]
    ex_of = it_exec[inside]
    first = np.r_[True, ex_of[1:] != ex_of[:-1]] if inside.size else np.zeros(0, bool)
    lastc = np.r_[ex_of[1:] != ex_of[:-1], True] if inside.size else np.zeros(0, bool)
    prev_e = np.r_[-1, E[inside][:-1]] if inside.size else np.zeros(0, np.int64)
    ed.add(np.where(first, b_ex + ex_of, prev_e), A[inside], OWN, COMPUTE, exs[ex_of], t=t)
    ed.add(E[inside][lastc], b_ex + ne + ex_of[lastc], OWN, COMPUTE, exs[ex_of[lastc]], t=t)
    bare = np.ones(ne, bool)
    bare[ex_of] = False
    ed.add(b_ex + np.flatnonzero(bare), b_ex + ne + np.flatnonzero(bare), OWN, COMPUTE, exs[bare], t=t)
    # A collective: arrival -> release (its own, and the last participant's), release -> cc_running.
    ed.add(A, R, OWN)
    ed.add(A, M, OWN)
    ed.add(M, R, OTHERS_ARRIVED)
    paired = has_bar & has_cc
    ed.add(R[paired], b_cc + ci[paired], OWN)
    ed.add(b_cc + ci[has_cc], b_cc + nc + ci[has_cc], OWN, COLLECTIVE, it_cc[has_cc], t=t)
    # A core's executions in order.
    oc = np.lexsort((exs, start[exs], ex_core))
    same_core = ex_core[oc][1:] == ex_core[oc][:-1]
    ed.add((b_ex + ne + oc[:-1])[same_core], (b_ex + oc[1:])[same_core], CORE_ORDER)

    # Calls: launch, return, and a thread's calls in order.
    # Step and NEFF of the rows the graph reads (row, step, neff), later ones over earlier ones.
    step_of: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [(exs, ex_step, neff_code)]
    it_step = np.where(it_own >= 0, it_own, np.where(it_exec >= 0, ex_step[np.maximum(it_exec, 0)] if ne else -1, -1))
    for r in (it_bar, it_cc):
        ok = r >= 0
        step_of.append((r[ok], it_step[ok],
                        np.where(it_exec[ok] >= 0, neff_code[np.maximum(it_exec[ok], 0)] if ne else -1, -1)))
    if nr:
        linked = np.flatnonzero(launcher >= 0)
        ci_of = np.searchsorted(rts, launcher[linked])
        call_s, call_e = b_rt + ci_of, b_rt + nr + ci_of
        ex_s, ex_e = b_ex + linked, b_ex + ne + linked
        ed.add(call_s, ex_s, LAUNCHED)
        ed.add(ex_e, call_e, RETURNED)
        # The time between a call's start and its execution's start is the call's (a launch).
        gkind[ex_s], gevent[ex_s], grow[ex_s], lane_core[ex_s] = LAUNCH, True, rts[ci_of], -1
        ok = t[ex_e] <= t[call_e]
        returned = np.zeros(nr, bool)
        returned[ci_of[ok]] = True
        ed.add(b_rt + np.flatnonzero(~returned), b_rt + nr + np.flatnonzero(~returned), OWN, HOST,
               rts[~returned], t=t)
        call_step = rts_exec_id.copy()
        call_step[ci_of[::-1]] = ex_step[linked[::-1]]  # the first execution a call launched
        call_neff = np.full(nr, -1, np.int64)
        call_neff[ci_of] = neff_code[linked]
        step_of.append((rts, call_step, call_neff))
        ot = np.lexsort((rts, start[rts], thread))
        same_thread = thread[ot][1:] == thread[ot][:-1]
        ed.add((b_rt + nr + ot[:-1])[same_thread], (b_rt + ot[1:])[same_thread], HOST_ORDER)
    else:
        notes.append("no nrt_execute calls on the cores: the host side is not in the path")
    if ne == 0:
        notes.append("no nc_exec_running events: no NeuronCore work to find a critical path in")
    opened = int(fr.incomplete[exs].sum()) if ne else 0
    if opened:
        notes.append(f"{opened} executions never completed: they run to the profile's end")

    step_at = np.zeros(n_steps, np.int64)  # an item of each step label
    step_at[it_step_label] = np.arange(n_items)
    join = {"step_neff": it_neff[step_at], "step_key": it_key[step_at], "step_k": it_k[step_at],
            "b_m": np.int64(b_m), "virt": b_virt + np.arange(alone.size), "virt_step": it_step_label[alone],
            "virt_cc": start[it_cc[alone]], "first_release": first_release}
    return {"instants": (t, row, grow, role, gkind, gevent, lane_core), "edges": ed, "step_of": step_of,
            "notes": notes, "neffs": list(neffs), "ne": ne, "join": join}


@numba.njit(cache=True, nogil=True)
def _work_times(t: np.ndarray, src: np.ndarray, dst: np.ndarray, wkind: np.ndarray, w: np.ndarray,
                dependency: int) -> None:  # pragma: no cover - numba
    for e in range(src.size):
        w[e] = t[dst[e]] - t[src[e]] if wkind[e] != dependency else 0


def _codes(cols: np.ndarray) -> np.ndarray:
    """A dense code per distinct row of a 2-D int array: each column coded, the codes packed, coded again."""
    if cols.shape[0] == 0:
        return np.zeros(0, np.int64)
    packed = np.zeros(cols.shape[0], np.int64)
    for k in range(cols.shape[1]):
        code, uniq = pd.factorize(cols[:, k])
        packed = packed * len(uniq) + code  # fewer distinct packed values than rows: no overflow
        packed = pd.factorize(packed)[0].astype(np.int64)
    return packed
