"""A part's replay as a small graph over the moments other parts depend on, and the job's replay over those.

A replay gives each moment the latest of (its dependencies' times plus their work) plus its own gap:
a max-plus function of the moments before it. In a part of a job only a collective's last arrival
(`LAST_ARRIVAL`) depends on other parts, so each of the part's moments is, after its changes are
applied, the latest of a few terms "that last arrival's time plus a constant" (or "the run's start
plus a constant"). The part's task walks its moments in dependency order and keeps those terms per
moment (`_reduce`): a last arrival keeps its own, and a moment whose terms grow past `MAX_TERMS`
is kept as a moment of its own (its terms its dependencies), so the result is never larger than
the part's graph, and in a part whose cores meet at every step it is a term or two per collective.

The part ships: per kept moment its terms (the edges of the small graph) and gap, the terms of the
latest moment that ended (the run's end), and per step the terms of its executions' starts (the
earliest counts: a min over them, kept as separate candidates) and ends (the latest: one merged
set). The caller joins the parts at the collectives' last arrivals and replays the small graph
(`replay_reduced`). A term's constant is a sum of scaled times: the same as the whole graph's
replay, up to the order of the additions (exact for times in ns and scales such as 0.5, 2, 0).

Before reducing, a dependency `u -> v` beside `M -> v`, where `u -> M` too (an arrival's own release
beside the last arrival's), is dropped: M is never earlier than u, so it changes nothing, and without
it a core's terms do not pile up step after step.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import pandas as pd

from .critical_path_graph import DEPENDENCY, END, LAST_ARRIVAL, Graph

MAX_TERMS = 4  # a moment with more terms than this is kept as a moment of its own
ZERO = 0  # the kept moment "the run's start" (time 0 in a replay)


@numba.njit(cache=True, nogil=True)
def _reduce(order: np.ndarray, ptr: np.ndarray, src: np.ndarray, wsc: np.ndarray, gsc: np.ndarray,
            kept: np.ndarray, n_kept: int, max_terms: int) -> tuple[np.ndarray, ...]:  # pragma: no cover - numba
    """Each moment's terms (kept moment, constant), in dependency order; a moment with more than `max_terms` is
    kept. `kept`: per moment its kept id (>= 1), -1; `n_kept`: ids taken so far (0 is the run's start).
    Returns the terms' pool (id, constant) and each moment's first term and count, the small graph's edges
    (kept target, kept source, constant), and per newly kept moment its moment and gap."""
    n = order.size
    # Buffers sized for a term or so per moment and grown when more come: a part's graph is a worker's peak.
    cap = n + n // 4 + 16
    pk = np.empty(cap, np.int32)
    pc = np.empty(cap, np.float64)
    first = np.zeros(n, np.int64)
    count = np.zeros(n, np.int32)
    used = 0
    e_cap = 1024
    et = np.empty(e_cap, np.int32)
    es = np.empty(e_cap, np.int32)
    ec = np.empty(e_cap, np.float64)
    n_e = 0
    new_v = np.empty(16, np.int64)
    new_g = np.empty(16, np.float64)
    n_new = 0
    pos = np.full(n_kept + n + 1, -1, np.int32)
    tk = np.empty(64, np.int32)
    tc = np.empty(64, np.float64)
    for v in order:
        cnt = 0
        if ptr[v] == ptr[v + 1]:
            tk[0] = ZERO
            tc[0] = 0.0
            cnt = 1
        else:
            for e in range(ptr[v], ptr[v + 1]):
                u = src[e]
                w = wsc[e]
                for j in range(first[u], first[u] + count[u]):
                    k = pk[j]
                    c = pc[j] + w
                    p = pos[k]
                    if p < 0:
                        if cnt == tk.size:
                            tk = _grown(tk, cnt, 2 * cnt)
                            tc = _grown_f(tc, cnt, 2 * cnt)
                        pos[k] = np.int32(cnt)
                        tk[cnt] = k
                        tc[cnt] = c
                        cnt += 1
                    elif c > tc[p]:
                        tc[p] = c
            for i in range(cnt):
                pos[tk[i]] = -1
        own = kept[v]
        if own < 0 and cnt > max_terms:  # kept from here: its terms become its edges
            own = n_kept
            n_kept += 1
            if n_new == new_v.size:
                new_v = np.concatenate((new_v, np.empty(new_v.size, np.int64)))
                new_g = np.concatenate((new_g, np.empty(new_g.size, np.float64)))
            new_v[n_new] = v
            new_g[n_new] = gsc[v]
            n_new += 1
        if own >= 0:
            if n_e + cnt > e_cap:
                e_cap = 2 * (n_e + cnt) + 1024
                et = _grown(et, n_e, e_cap)
                es = _grown(es, n_e, e_cap)
                ec = _grown_f(ec, n_e, e_cap)
            if ptr[v] < ptr[v + 1]:  # (a kept source has no edges: a last arrival always has arrivals)
                for i in range(cnt):
                    et[n_e] = own
                    es[n_e] = tk[i]
                    ec[n_e] = tc[i]
                    n_e += 1
            tk[0] = own
            tc[0] = 0.0
            cnt = 1
        else:
            g = gsc[v]
            for i in range(cnt):
                tc[i] += g
        if used + cnt > cap:
            cap = 2 * (used + cnt)
            pk = _grown(pk, used, cap)
            pc = _grown_f(pc, used, cap)
        first[v] = used
        count[v] = cnt
        for i in range(cnt):
            pk[used + i] = tk[i]
            pc[used + i] = tc[i]
        used += cnt
    return pk[:used], pc[:used], first, count, et[:n_e], es[:n_e], ec[:n_e], new_v[:n_new], new_g[:n_new]


@numba.njit(cache=True, nogil=True)
def _grown(a: np.ndarray, n: int, cap: int) -> np.ndarray:  # pragma: no cover - numba
    out = np.empty(cap, a.dtype)
    out[:n] = a[:n]
    return out


@numba.njit(cache=True, nogil=True)
def _grown_f(a: np.ndarray, n: int, cap: int) -> np.ndarray:  # pragma: no cover - numba
    out = np.empty(cap, np.float64)
    out[:n] = a[:n]
    return out


@numba.njit(cache=True, nogil=True)
def _pruned(ptr: np.ndarray, src: np.ndarray, wkind: np.ndarray, is_m: np.ndarray,
            dependency: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """A bound graph's edges by target less each dependency `u -> v` where `M -> v` and `u -> M` (M a last
    arrival): pointers, sources and the kept edges' positions."""
    n = ptr.size - 1
    m_out = np.full(n, -1, np.int32)  # the last arrival an arrival leads to (one each)
    for v in range(n):
        if is_m[v]:
            for e in range(ptr[v], ptr[v + 1]):
                m_out[src[e]] = v
    out_ptr = np.zeros(n + 1, np.int64)
    keep = np.ones(src.size, np.bool_)
    for v in range(n):
        m = -1
        for e in range(ptr[v], ptr[v + 1]):
            if is_m[src[e]]:
                m = src[e]
        for e in range(ptr[v], ptr[v + 1]):
            u = src[e]
            if m >= 0 and u != m and wkind[e] == dependency and m_out[u] == m:
                keep[e] = False
        out_ptr[v + 1] = out_ptr[v]
        for e in range(ptr[v], ptr[v + 1]):
            if keep[e]:
                out_ptr[v + 1] += 1
    kept = np.empty(out_ptr[n], np.int32)
    idx = np.empty(out_ptr[n], np.int64)
    k = 0
    for e in range(src.size):
        if keep[e]:
            kept[k] = src[e]
            idx[k] = e
            k += 1
    return out_ptr, kept, idx


def prune_own(g: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A bound graph's edges by target without each dependency `u -> v` beside `M -> v` where `u -> M` (M a last
    arrival), which never binds a replay (M is the latest of its arrivals, u among them): pointers, sources,
    positions among the graph's edges."""
    ptr, _, _ = g.bound()
    return _pruned(ptr, g.src, g.wkind, g.role == LAST_ARRIVAL, DEPENDENCY)


class PartReducer:
    """A part's bound graph ready to be reduced under several changes: its order, kept moments, recorded ends."""

    def __init__(self, g: Graph, unended: np.ndarray) -> None:
        self.g = g
        self.ptr, self.src, self.edge = prune_own(g)
        self.order = g.order()
        # What a replay and its selections read of the bound graph stays; the rest is let go (a worker's peak).
        g.binding, g.gk, g.cls, g.dst = None, None, np.zeros(0, np.int8), np.zeros(0, g.dst.dtype)
        is_m = g.role == LAST_ARRIVAL
        self.m_inst = np.flatnonzero(is_m)
        self.kept = np.full(len(g), -1, np.int32)
        self.kept[self.m_inst] = 1 + np.arange(self.m_inst.size)
        real = ~is_m
        self.cut = real & (g.role == END) & (g.row >= 0) & unended[np.maximum(g.row, 0)]
        self.ended = np.flatnonzero(real & ~self.cut).astype(np.int32)
        self.real_max = int(g.t[real].max()) if real.any() else None
        self.ended_max = int(g.t[self.ended].max()) if self.ended.size else None

    def reduce(self, w_scale: np.ndarray, g_scale: np.ndarray, steps: StepGroups | None) -> dict[str, Any]:
        """The part's small graph under these scales (per edge and per moment of the bound graph)."""
        g = self.g
        wsc = g.w[self.edge] * w_scale[self.edge]
        gsc = g.bound()[1] * g_scale
        n_fixed = 1 + self.m_inst.size
        pk, pc, first, count, et, es, ec, new_v, new_g = _reduce(self.order, self.ptr, self.src, wsc, gsc, self.kept,
                                                                 n_fixed, MAX_TERMS)
        # The run's end: the latest moment that ended (an unended event's end stays where the recording stopped).
        s_k, s_c = latest_terms(pk, pc, first, count, self.ended)
        out: dict[str, Any] = {
            "edges_t": et, "edges_s": es, "edges_c": ec, "kept_t": np.r_[g.t[self.m_inst], g.t[new_v]],
            "kept_gap": np.r_[np.zeros(self.m_inst.size), new_g], "end_k": s_k, "end_c": s_c,
        }
        if steps is not None:
            out.update(steps.terms(g, pk, pc, first, count, self.cut))
        return out


def _terms_at(first: np.ndarray, count: np.ndarray, inst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pool positions of some moments' terms, and per position which of `inst` it is."""
    n_t = count[inst].astype(np.int64)
    at = np.repeat(first[inst], n_t) + (np.arange(int(n_t.sum())) - np.repeat(np.cumsum(n_t) - n_t, n_t))
    return at, np.repeat(np.arange(inst.size), n_t)


@numba.njit(cache=True, nogil=True)
def _latest(pk: np.ndarray, pc: np.ndarray, first: np.ndarray, count: np.ndarray, inst: np.ndarray,
            n_ids: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    best = np.full(n_ids, -np.inf)
    for v in inst:
        for j in range(first[v], first[v] + count[v]):
            if pc[j] > best[pk[j]]:
                best[pk[j]] = pc[j]
    ids = np.flatnonzero(best > -np.inf)
    return ids, best[ids]


def latest_terms(pk: np.ndarray, pc: np.ndarray, first: np.ndarray, count: np.ndarray,
                 inst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The latest of some moments as terms: per kept moment the largest constant among theirs."""
    n_ids = int(pk.max()) + 1 if pk.size else 0
    ids, c = _latest(pk, pc, first, count, inst, n_ids)
    return ids.astype(np.int64), c


class StepGroups:
    """A part's executions grouped into the job's steps: per group its label and recorded times."""

    def __init__(self, g: Graph, neff_names: list[str | None]) -> None:
        self.ok = g.ex_start is not None and g.ex_start.size > 0
        if not self.ok or g.ex_start is None or g.ex_end is None or g.row_neff is None or g.row_step is None:
            self.table = pd.DataFrame()
            return
        rows = g.row[g.ex_start]
        neff = np.asarray(g.row_neff[rows], np.int64)
        step = np.asarray(g.row_step[rows], np.int64)
        names = np.array([*neff_names, None], dtype=object)
        key = pd.MultiIndex.from_arrays([neff, step])
        self.group, uniq = key.factorize()
        self.group = np.asarray(self.group, np.int64)
        n = len(uniq)
        s_t, e_t = g.t[g.ex_start], g.t[g.ex_end]
        start = np.full(n, np.iinfo(np.int64).max)
        end = np.full(n, np.iinfo(np.int64).min)
        np.minimum.at(start, self.group, s_t)
        np.maximum.at(end, self.group, e_t)
        # A group's first execution in the profile's order (rows are in time order) and its end: where the group
        # stands among steps that start together, as in a profile's per-step frame.
        first = pd.DataFrame({"g": self.group, "row": rows, "end": e_t}).sort_values("row", kind="stable")
        first = first.drop_duplicates("g").set_index("g").sort_index()
        self.table = pd.DataFrame({"neff": names[uniq.get_level_values(0).to_numpy(np.int64)],
                                   "step": uniq.get_level_values(1).to_numpy(np.int64), "start_ts": start,
                                   "end_ts": end, "first_row": first["row"].to_numpy(np.int64),
                                   "first_end": first["end"].to_numpy(np.int64)})

    def terms(self, g: Graph, pk: np.ndarray, pc: np.ndarray, first: np.ndarray, count: np.ndarray,
              cut: np.ndarray) -> dict[str, Any]:
        """Per group: its executions' starts' terms (each start a candidate: the earliest counts) and its ends'
        terms merged (the latest counts; an unended execution's end pinned at the recording's cut)."""
        if not self.ok or g.ex_start is None or g.ex_end is None:
            return {}
        s = g.ex_start
        n_t = count[s].astype(np.int64)
        at = np.repeat(first[s], n_t) + (np.arange(int(n_t.sum())) - np.repeat(np.cumsum(n_t) - n_t, n_t))
        cand = np.repeat(np.arange(s.size), n_t)
        starts = pd.DataFrame({"cand": cand, "g": self.group[cand], "k": pk[at], "c": pc[at]})
        starts = _fewer_candidates(starts)
        e = g.ex_end
        pinned = cut[e]
        n_e = np.where(pinned, 1, count[e]).astype(np.int64)
        base = np.repeat(first[e], n_e) + (np.arange(int(n_e.sum())) - np.repeat(np.cumsum(n_e) - n_e, n_e))
        grp = np.repeat(self.group, n_e)
        pin = np.repeat(pinned, n_e)
        k = np.where(pin, ZERO, pk[np.where(pin, 0, base)] if pk.size else ZERO)
        c = np.where(pin, np.repeat((g.t[e] - g.run_start).astype(np.float64), n_e), pc[np.where(pin, 0, base)]
                     if pc.size else 0.0)
        ends = pd.DataFrame({"g": grp, "k": k, "c": c}).groupby(["g", "k"], sort=True)["c"].max().reset_index()
        return {"st_cand": starts["cand"].to_numpy(np.int64), "st_g": starts["g"].to_numpy(np.int64),
                "st_k": starts["k"].to_numpy(np.int64), "st_c": starts["c"].to_numpy(np.float64),
                "en_g": ends["g"].to_numpy(np.int64), "en_k": ends["k"].to_numpy(np.int64),
                "en_c": ends["c"].to_numpy(np.float64)}


def _fewer_candidates(df: pd.DataFrame) -> pd.DataFrame:
    """The start candidates that can be a group's earliest: of those with one term, the least per (group, kept
    moment); one with several terms goes when it holds a term no less than such a one's (it is never earlier)."""
    n = df.groupby("cand")["k"].transform("size").to_numpy()
    one = df[n == 1]
    best = one.groupby(["g", "k"], sort=False)["c"].min()
    keep_one = one.loc[one.groupby(["g", "k"], sort=False)["c"].idxmin()]
    many = df[n > 1]
    if len(many):
        floor = best.reindex(pd.MultiIndex.from_arrays([many["g"], many["k"]])).to_numpy()
        beaten = pd.Series(~np.isnan(floor) & (many["c"].to_numpy() >= np.nan_to_num(floor, nan=np.inf)),
                           index=many.index).groupby(many["cand"]).transform("any")
        many = many[~beaten.to_numpy()]
    return pd.concat([keep_one, many]).sort_values(["cand", "k"], kind="stable")
