"""The dependency graph behind the critical path and what-if: instants, edges, and their passes (numba).

An instant is a moment some event starts or ends (or a virtual moment: a collective's arrival
when the core recorded no barrier, a collective's last arrival). An edge u -> v says v cannot
happen before u: a *work* edge also carries the time of a segment of work (compute, a
collective's transfer, a host call), a *dependency* edge carries none. Edges the recorded
times contradict (v before u, clock skew or overlapping records) are dropped, so the graph
agrees with what was recorded.

Each instant's binding edge is the one whose ready time (t(u) + weight) is latest, ties to the
smallest (class, u's row, u's role); what is left between that ready time and the instant is
its *gap*, a time the model keeps but cannot explain (latency, unrecorded host work). An
instant with no edge into it is a source: its gap runs from the run's start. So replaying the
graph with unchanged weights gives back the recorded times, and walking back from the latest
instant along binding edges covers the run end to end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numba
import numpy as np

KINDS = ("compute", "collective", "host", "launch", "gap", "kernel", "memcpy")
COMPUTE, COLLECTIVE, HOST, LAUNCH, GAP, KERNEL, MEMCPY = range(len(KINDS))
DEPENDENCY = -1  # an edge's kind when it carries no work

# Roles of an instant: an event's start or end, a virtual arrival, a collective's last arrival.
START, END, ARRIVAL, LAST_ARRIVAL = range(4)

# Edge classes, in the order ties are broken (lower first).
OWN, CORE_ORDER, LAUNCHED, RETURNED, OTHERS_ARRIVED, HOST_ORDER = range(6)


class RowValues:
    """A value per profile row, held for the rows that have one (-1 for the others), read like an array:
    `values[rows]`. A graph reads a few kinds of events; an array over every event (10M) costs more to
    allocate than the whole graph build's other work."""

    def __init__(self, rows: np.ndarray, values: np.ndarray, n_rows: int) -> None:
        order = np.argsort(rows, kind="stable")
        rows, values = rows[order], values[order]
        last = np.r_[rows[1:] != rows[:-1], True] if rows.size else np.zeros(0, bool)  # a row set twice: the last
        self.rows, self.values, self.n_rows = rows[last], values[last].astype(np.int64), n_rows

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        want = np.asarray(rows, np.int64)
        want = np.where(want < 0, want + self.n_rows, want)  # as an array over every row reads -1
        pos = np.minimum(np.searchsorted(self.rows, want), max(self.rows.size - 1, 0))
        if self.rows.size == 0:
            return np.full(want.shape, -1, np.int64)
        return np.where(self.rows[pos] == want, self.values[pos], -1)


class StepsAt(Protocol):
    def at(self, rows: np.ndarray, t: np.ndarray) -> np.ndarray: ...

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


@dataclass
class Graph:
    """Instants and edges. An instant is known by (row, role) (ties are broken on these); its gap is of kind
    `gkind`, attributed to the event at row `grow` (`gevent`: inside that event, else a gap with no event), on
    core `lane_core` (-1: on the host thread of `grow`)."""

    t: np.ndarray
    row: np.ndarray
    grow: np.ndarray
    role: np.ndarray
    gkind: np.ndarray
    gevent: np.ndarray  # the gap lies inside the instant's event (else it is a gap with no event)
    lane_core: np.ndarray  # core code, -1: on a host thread
    src: np.ndarray
    dst: np.ndarray
    w: np.ndarray
    wkind: np.ndarray
    wrow: np.ndarray
    cls: np.ndarray
    n_rows: int
    notes: list[str] = field(default_factory=list)
    row_step: np.ndarray | RowValues | None = None  # per profile row: its step (execution ordinal), -1 unknown
    row_neff: np.ndarray | RowValues | None = None  # per profile row: its NEFF code into `neffs`, -1
    neffs: list[str] = field(default_factory=list)
    ex_start: np.ndarray | None = None  # the executions' start and end instants (per-step times)
    ex_end: np.ndarray | None = None
    # Per edge: the kind its target's gap takes when it binds (-1: the target's own), attributed to `wrow`.
    gk: np.ndarray | None = None
    device_lanes: bool = True  # compute and collective work is on a NeuronCore (no thread)
    # Kineto: the ProfilerStep a moment falls in (`at(rows, t)`), read at a segment's start; None: `row_step`.
    time_steps: StepsAt | None = None
    # Filled by `bind`.
    ptr: np.ndarray | None = None
    g: np.ndarray | None = None
    binding: np.ndarray | None = None
    run_start: int = 0

    def __len__(self) -> int:
        return int(self.t.size)

    def step_at(self, rows: np.ndarray, t: np.ndarray | None = None) -> np.ndarray:
        """The step of segments of events at `rows` starting at `t`: a ProfilerStep by time (Kineto), else the row's."""
        if self.time_steps is not None and t is not None:
            return self.time_steps.at(rows, t)
        if self.row_step is None:
            return np.full(np.shape(rows), -1, np.int64)
        return np.asarray(self.row_step[rows], np.int64)

    def bind(self, run_start: int | None = None) -> Graph:
        """Drop the edges the recorded times contradict, sort edges by target, find each instant's binding edge.

        `run_start`: where a source's gap starts (default: the graph's first real moment; a job's part binds
        with the job's, so its sources' gaps are the job's)."""
        # One pass each, no per-edge temporaries: the keep mask and the kept edges' order by target.
        order = _by_target(_kept(self.src, self.dst, self.w, self.t), self.dst, len(self))
        if self.gk is None:
            self.gk = np.full(self.src.size, -1, np.int8)
        for name in ("src", "dst", "w", "wkind", "wrow", "cls", "gk"):
            setattr(self, name, getattr(self, name)[order])
        n = len(self)
        self.ptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(self.dst, minlength=n), out=self.ptr[1:])
        self.run_start = run_start if run_start is not None else self.first_real()
        # Ties go to the smallest (class, u's row, u's role), computed in the kernel: no array per edge for it.
        self.g, self.binding = _bind(self.ptr, self.src, self.w, self.cls, self.row, self.role,
                                     np.int64(4 * (self.n_rows + 1)), self.t, self.run_start)
        source = self.binding < 0
        self.gkind = np.where(source, GAP, self.gkind).astype(np.int8)
        self.gevent = self.gevent & ~source
        by_edge = np.flatnonzero(~source)
        by_edge = by_edge[self.gk[self.binding[by_edge]] >= 0]
        if by_edge.size:  # e.g. a flow's target waited for its source: the gap is the source's
            e = self.binding[by_edge]
            self.gkind[by_edge], self.grow[by_edge] = self.gk[e], self.wrow[e]
            self.gevent[by_edge], self.lane_core[by_edge] = True, -1
        return self

    def first_real(self) -> int:
        """The earliest moment's time, last arrivals aside (0 when there is none)."""
        if not (self.role != LAST_ARRIVAL).any():
            return 0
        return int(np.where(self.role != LAST_ARRIVAL, self.t, np.iinfo(np.int64).max).min())

    def sink(self) -> int:
        """The latest instant (ties: the smallest row, then role); -1 when there is none."""
        real_t = np.where(self.role != LAST_ARRIVAL, self.t, np.iinfo(np.int64).min)
        if not (self.role != LAST_ARRIVAL).any():
            return -1
        latest = np.flatnonzero(real_t == real_t.max())
        return int(latest[np.lexsort((self.role[latest], self.row[latest]))[0]])

    def walk(self) -> tuple[np.ndarray, np.ndarray]:
        """The path back from the sink: (is_edge, index) pairs, latest first: an instant's gap, then the
        work on its binding edge, then the same at that edge's source, down to a source."""
        s = self.sink()
        if s < 0:
            return np.zeros(0, bool), np.zeros(0, np.int64)
        return _walk(s, self.bound()[2], self.src, len(self))

    def order(self) -> np.ndarray:
        """A topological order of the instants (edges kept satisfy t(u) <= t(v); equal times need Kahn)."""
        return _topo(self.src, self.dst, self.t, len(self))

    def replay(self, w_scale: np.ndarray | None = None, g_scale: np.ndarray | None = None,
               order: np.ndarray | None = None) -> np.ndarray:
        """Each instant's time (float64 ns from the run's start: absolute times would lose the last 8 bits)
        with the work edges' and the gaps' times scaled."""
        # The scales are applied in the kernel: no float copies of the weights, gaps and times per replay.
        ptr, gap, _ = self.bound()
        ws = np.ones(1) if w_scale is None else np.broadcast_to(np.asarray(w_scale, np.float64), self.w.shape)
        gs = np.ones(1) if g_scale is None else np.broadcast_to(np.asarray(g_scale, np.float64), gap.shape)
        return _replay(self.order() if order is None else order, ptr, self.src, self.w, np.ascontiguousarray(ws),
                       w_scale is not None, gap, np.ascontiguousarray(gs), g_scale is not None, self.t,
                       self.run_start)

    def bound(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The edges' pointers by target, each instant's gap and binding edge (`bind` fills them; a job part's
        what-if lets the binding go: an empty array then)."""
        if self.ptr is None or self.g is None:
            raise ValueError("the graph is not bound yet: call bind() first")
        return self.ptr, self.g, self.binding if self.binding is not None else np.zeros(0, np.int64)


@numba.njit(cache=True, nogil=True)
def _kept(src: np.ndarray, dst: np.ndarray, w: np.ndarray, t: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Which edges the recorded times allow: work not negative, u's time plus it no later than v's, not a loop."""
    out = np.empty(src.size, np.bool_)
    for e in range(src.size):
        out[e] = w[e] >= 0 and t[src[e]] + w[e] <= t[dst[e]] and src[e] != dst[e]
    return out


@numba.njit(cache=True, nogil=True)
def _by_target(keep: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:  # pragma: no cover - numba
    """The kept edges in (target, position) order: a counting sort, stable."""
    start = np.zeros(n + 1, np.int64)
    kept = 0
    for e in range(dst.size):
        if keep[e]:
            start[dst[e] + 1] += 1
            kept += 1
    for v in range(n):
        start[v + 1] += start[v]
    out = np.empty(kept, np.int64)
    for e in range(dst.size):
        if keep[e]:
            out[start[dst[e]]] = e
            start[dst[e]] += 1
    return out


@numba.njit(cache=True, nogil=True)
def _bind(ptr: np.ndarray, src: np.ndarray, w: np.ndarray, cls: np.ndarray, row: np.ndarray, role: np.ndarray,
          per_class: int | np.int64, t: np.ndarray,
          run_start: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    n = ptr.size - 1
    g = np.empty(n, np.int64)
    b = np.full(n, -1, np.int64)
    for v in range(n):
        best = np.int64(0)
        bi = -1
        best_prio = np.int64(0)
        for e in range(ptr[v], ptr[v + 1]):
            r = t[src[e]] + w[e]
            u = src[e]
            prio = np.int64(cls[e]) * per_class + (np.int64(row[u]) + 1) * 4 + np.int64(role[u])
            if bi < 0 or r > best or (r == best and prio < best_prio):
                best = r
                bi = e
                best_prio = prio
        b[v] = bi
        g[v] = t[v] - (run_start if bi < 0 else best)
    return g, b


@numba.njit(cache=True, nogil=True)
def _walk(sink: int, binding: np.ndarray, src: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    is_edge = np.zeros(2 * n + 2, np.bool_)
    idx = np.zeros(2 * n + 2, np.int64)
    k = 0
    v = sink
    for _ in range(n + 1):  # a bound: binding edges of equal times could in principle loop
        idx[k] = v
        k += 1
        e = binding[v]
        if e < 0:
            break
        is_edge[k] = True
        idx[k] = e
        k += 1
        v = src[e]
    return is_edge[:k], idx[:k]


@numba.njit(cache=True, nogil=True)
def _topo(src: np.ndarray, dst: np.ndarray, t: np.ndarray, n: int) -> np.ndarray:  # pragma: no cover - numba
    indeg = np.zeros(n, np.int32)  # (int32: a job part's what-if orders its graph beside it)
    for e in range(src.size):
        indeg[dst[e]] += 1
    sptr = np.zeros(n + 1, np.int64)
    for e in range(src.size):
        sptr[src[e] + 1] += 1
    for v in range(n):
        sptr[v + 1] += sptr[v]
    fill = sptr[:-1].copy()
    succ = np.empty(src.size, np.int32)
    for e in range(src.size):
        succ[fill[src[e]]] = dst[e]
        fill[src[e]] += 1
    order = np.empty(n, np.int64)
    head = 0
    tail = 0
    for v in range(n):
        if indeg[v] == 0:
            order[tail] = v
            tail += 1
    while head < tail:
        v = order[head]
        head += 1
        for j in range(sptr[v], sptr[v + 1]):
            u = succ[j]
            indeg[u] -= 1
            if indeg[u] == 0:
                order[tail] = u
                tail += 1
    if tail < n:  # a cycle of equal times: the rest in time order, from whatever is known then
        rest = np.flatnonzero(indeg > 0)
        rest = rest[np.argsort(t[rest], kind="mergesort")]
        order[tail:] = rest
    return order


@numba.njit(cache=True, nogil=True)
def _replay(order: np.ndarray, ptr: np.ndarray, src: np.ndarray, w: np.ndarray, ws: np.ndarray, w_scaled: bool,
            g: np.ndarray, gs: np.ndarray, g_scaled: bool, t: np.ndarray,
            run_start: int) -> np.ndarray:  # pragma: no cover - numba
    # Times from the run's start as float64 (absolute ns would lose their last bits); each weight and gap is
    # float64(int) * scale, as the arrays' own product would give.
    out = np.empty(t.size, np.float64)
    for v in range(t.size):
        out[v] = np.float64(t[v] - run_start)
    for v in order:
        gv = np.float64(g[v]) * gs[v] if g_scaled else np.float64(g[v])
        if ptr[v] == ptr[v + 1]:
            out[v] = gv
            continue
        best = -np.inf
        for e in range(ptr[v], ptr[v + 1]):
            r = out[src[e]] + (np.float64(w[e]) * ws[e] if w_scaled else np.float64(w[e]))
            if r > best:
                best = r
        out[v] = best + gv
    return out

@numba.njit(cache=True, nogil=True)
def visit(starts: np.ndarray, binding: np.ndarray, src: np.ndarray, boundary: np.ndarray,
          n: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """The moments walked back from each start along binding edges, up to a boundary, a source or a moment
    already walked: in walk order, and each moment's position among them (-1: not walked)."""
    local = np.full(n, -1, np.int32)
    nodes = np.empty(n, np.int32)
    k = 0
    for s in starts:
        v = s
        while v >= 0 and not boundary[v] and local[v] < 0:
            local[v] = k
            nodes[k] = v
            k += 1
            e = binding[v]
            v = src[e] if e >= 0 else -1
    return nodes[:k], local


def warm() -> None:
    """Compile (or load) the kernels."""
    z = np.zeros(1, np.int64)
    ptr = np.zeros(2, np.int64)
    _kept(z[:0], z[:0], z[:0], z)
    _by_target(np.zeros(0, np.bool_), z[:0], 1)
    _bind(ptr, z[:0], z[:0], np.zeros(0, np.int8), z, np.zeros(1, np.int8), np.int64(4), z, 0)
    _walk(0, np.full(1, -1, np.int64), z[:0], 1)
    _topo(z[:0], z[:0], z, 1)
    _replay(np.zeros(1, np.int64), ptr, z[:0], z[:0], np.zeros(0), True, z, np.zeros(1), True, z, 0)
    visit(z[:0], np.full(1, -1, np.int64), z[:0], np.zeros(1, np.bool_), 1)
