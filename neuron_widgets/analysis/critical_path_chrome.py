"""The critical-path graph of a plain Chrome trace (and, as far as flows go, a Kineto trace).

- A thread (instance, process, thread, async stream, as `threads` keys them) runs its top-level
  events in order: the next starts after the previous ends. An event inside another is part of
  its top-level event's work.
- A flow (the events sharing a flow id, upstream first by start) leads from the moment its
  upstream event starts to the start of the downstream event's top-level event. A top-level
  event that flows leave is split at those moments, so the path can leave it there.
- A synchronising call (`cuda`/`hip` `Device`/`Stream`/`EventSynchronize`) returns no earlier than
  the device work (kernels, copies) its thread launched before it started, since the previous
  such call; from its start to its end the thread waits rather than works.

Kineto's GPU streams are threads here, its launch -> kernel flows (`ac2g`) and correlation ids are
flows, and `critical_path_kineto` says which kernels a synchronising call waits for (the stream or
event it names, else what its thread launched), which kernel a `cudaStreamWaitEvent` holds back,
and which NCCL kernels of several ranks are one collective: such a kernel waits (no work) until
the last rank's kernel starts, then transfers (`collective` work) until it ends. A top-level event
is a `kernel`, `memcpy` or `collective` (NCCL) by its category and name, else `host` work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd

from .critical_path_graph import (
    ARRIVAL,
    COLLECTIVE,
    DEPENDENCY,
    END,
    GAP,
    HOST,
    HOST_ORDER,
    KERNEL,
    LAST_ARRIVAL,
    LAUNCH,
    LAUNCHED,
    MEMCPY,
    OTHERS_ARRIVED,
    OWN,
    START,
    Graph,
)
from .critical_path_kineto import (
    INFO_CATEGORY,
    Launched,
    ProfilerSteps,
    correlation_pairs,
    info_rows,
    nccl_collectives,
    stream_waits,
    sync_waits,
)
from .devices import COMMUNICATION, kernel_type
from .frame import KERNEL_CATEGORIES, Frame
from .launches import _exploded

THREAD_KEYS = ("instance_id", "process_id", "thread_id", "framework_stream_id")
MEMORY_CATEGORIES = frozenset({"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"})
SYNC_NAMES = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "hipDeviceSynchronize",
              "hipStreamSynchronize", "hipEventSynchronize")
SKIPPED_CATEGORIES = frozenset({"Trace", "gpu_user_annotation", "user_annotation", INFO_CATEGORY})


@dataclass
class JobCollectives:
    """What a part of a job needs of the other parts (`critical_path_chrome_job`): whether any part has flows (then
    threads no flow touches are left out, in every part), and per NCCL kernel of the part its collective's
    job-wide label (-1: no other rank has it) and per label its last rank's start."""

    has_flows: bool
    label_of: Callable[[Frame, np.ndarray], np.ndarray]
    last: np.ndarray


@dataclass
class Tops:
    """A trace's modelled events: their threads, the top-level ones and their kinds, the flows between them."""

    notes: list[str]
    thread: np.ndarray
    used: np.ndarray
    src_rows: np.ndarray
    dst_rows: np.ndarray
    is_top: np.ndarray
    ancestor: np.ndarray
    tops: np.ndarray
    kind_top: np.ndarray


def chrome_graph(fr: Frame) -> Graph:
    return chrome_pieces(fr)[0].bind()


def tops_of(fr: Frame, has_flows: bool | None = None) -> Tops:
    """The events the model reads and the top-level ones among them. `has_flows`: whether the trace (a job: any of
    its parts) has flows, when threads no flow touches are left out (None: this trace's own)."""
    notes: list[str] = []
    n_rows = len(fr)
    start, end = fr.start, fr.end
    cols = tuple(c for c in THREAD_KEYS if c in fr.profile.column_names)
    thread = np.asarray(fr.combo_codes(cols), np.int64)
    used = _modelled(fr)
    if used.size < n_rows:
        notes.append(f"{n_rows - used.size} events are markers the model leaves out (instants, Kineto's trace span, step "
                     "and GPU annotation spans, its cuda_sync records, events of negative process ids)")
    src_rows, dst_rows = _flow_pairs(fr, used)
    if not (src_rows.size > 0 if has_flows is None else has_flows):
        notes.append("no flows: each thread's path stands alone, joined only where one thread's work ends the run")
    else:  # threads no flow touches (pollers, loaders) are not in the run's chain of dependencies
        linked = np.zeros(int(thread.max()) + 1 if thread.size else 1, bool)
        linked[thread[src_rows]] = True
        linked[thread[dst_rows]] = True
        alone = ~linked[thread[used]]
        if alone.any():
            notes.append(f"{int(alone.sum())} events on {len(np.unique(thread[used][alone]))} threads that no flow "
                         "touches are left out")
            used = used[~alone]

    # A profile's rows are in time order (start, longest first): a stable sort by thread keeps it within threads.
    order = used[np.argsort(thread[used], kind="stable")]
    is_top_sorted, anc_sorted = _tops(thread[order], start[order], end[order])
    is_top = np.zeros(n_rows, bool)
    is_top[order] = is_top_sorted
    ancestor = np.full(n_rows, -1, np.int64)
    ancestor[order] = order[anc_sorted]
    tops = np.flatnonzero(is_top)  # rows, in row (time) order
    return Tops(notes, thread, used, src_rows, dst_rows, is_top, ancestor, tops, _kinds(fr, tops))


def chrome_pieces(fr: Frame, job: JobCollectives | None = None) -> tuple[Graph, np.ndarray]:
    """The graph before binding, and per last-arrival moment its collective's label (the job's, for a part)."""
    n_rows = len(fr)
    start, end = fr.start, fr.end
    tp = tops_of(fr, job.has_flows if job is not None else None)
    notes, thread, used, src_rows, dst_rows = tp.notes, tp.thread, tp.used, tp.src_rows, tp.dst_rows
    is_top, ancestor, tops, kind_top = tp.is_top, tp.ancestor, tp.tops, tp.kind_top
    nt = tops.size
    top_pos = np.full(n_rows, -1, np.int64)
    top_pos[tops] = np.arange(nt)

    # NCCL kernels of several ranks matched as one collective: each waits until the last one starts.
    coll = tops[kind_top == COLLECTIVE]
    if job is None:
        label = nccl_collectives(fr, coll)
        coll, label = coll[label >= 0], label[label >= 0]
        n_m = int(label.max()) + 1 if label.size else 0
        last = np.full(n_m, np.iinfo(np.int64).min, np.int64)
        np.maximum.at(last, label, start[coll])
        m_label = np.arange(n_m)
    else:  # a job's part: labels and last starts job-wide
        glob = job.label_of(fr, coll)
        coll, glob = coll[glob >= 0], glob[glob >= 0]
        m_label, label = np.unique(glob, return_inverse=True)
        label = label.astype(np.int64)
        n_m = int(m_label.size)
        last = np.asarray(job.last, np.int64)[m_label]
    release = np.zeros(n_rows, np.int64)
    release[coll] = np.clip(last[label], start[coll], end[coll])

    # Instants: top-level starts and ends, and inside them the moments flows leave, synchronising calls
    # start and end, and NCCL kernels are released.
    sync_code = fr.codes_of(SYNC_NAMES)
    syncs = used[np.isin(fr.name[used], sync_code)] if sync_code.size else np.zeros(0, np.int64)
    inner = _distinct(src_rows[~is_top[src_rows]]) if src_rows.size else np.zeros(0, np.int64)
    nested = syncs[~is_top[syncs]]
    key = _distinct(np.concatenate([inner * 4 + START, nested * 4 + START, nested * 4 + END, coll * 4 + ARRIVAL]))
    p_row, p_role = key // 4, (key % 4).astype(np.int8)
    n_pts = p_row.size
    n = 2 * nt + n_pts + n_m
    p_t = np.where(p_role == START, start[p_row], np.where(p_role == END, end[p_row], release[p_row]))
    t = np.concatenate([start[tops], end[tops], p_t, last])
    row = np.concatenate([tops, tops, p_row, np.full(n_m, -1, np.int64)])
    role = np.concatenate([np.full(nt, START), np.full(nt, END), p_role, np.full(n_m, LAST_ARRIVAL)]).astype(np.int8)
    p_owner = top_pos[ancestor[p_row]]
    sync_end = np.isin(p_row, syncs) & (p_role == END)  # a call's own time after what it waited for
    gkind = np.concatenate([np.full(nt, GAP), kind_top, np.where(sync_end, HOST, kind_top[p_owner]),
                            np.full(n_m, COLLECTIVE)]).astype(np.int8)
    gevent = np.concatenate([np.zeros(nt, bool), np.ones(nt + n_pts, bool), np.zeros(n_m, bool)])
    grow = np.concatenate([tops, tops, np.where(sync_end, p_row, ancestor[p_row]), np.full(n_m, -1, np.int64)])
    point_of = np.full(n_rows, -1, np.int64)  # an event's start moment, where flows leave
    point_of[tops] = np.arange(nt)
    starts = p_role == START
    point_of[p_row[starts]] = 2 * nt + np.flatnonzero(starts)
    end_of = np.full(n_rows, -1, np.int64)  # a synchronising call's end moment
    end_of[tops] = nt + np.arange(nt)
    ends = p_role == END
    end_of[p_row[ends]] = 2 * nt + np.flatnonzero(ends)

    src, dst, w, wkind, wrow, cls, gk = ([] for _ in range(7))

    def add(s: np.ndarray, d: np.ndarray, c: int, k: int | np.ndarray = DEPENDENCY, r: np.ndarray | None = None,
            g: int = -1) -> None:
        s, d = np.asarray(s, np.int64), np.asarray(d, np.int64)
        src.append(s)
        dst.append(d)
        work = np.ndim(k) > 0 or k != DEPENDENCY
        w.append(t[d] - t[s] if work else np.zeros(s.size, np.int64))
        wkind.append(np.asarray(k if np.ndim(k) else np.full(s.size, k), np.int8))
        wrow.append(np.full(s.size, -1, np.int64) if r is None else np.asarray(r, np.int64))
        cls.append(np.full(s.size, c, np.int8))
        gk.append(np.full(s.size, g, np.int8))

    # Each top-level event: its start, the moments inside it (in time order), its end, as work; but from a
    # synchronising call's start to its end the thread waits (no work), and an NCCL kernel waits until its release.
    po = np.lexsort((p_role, p_row, t[2 * nt:2 * nt + n_pts], p_owner))
    owner = np.concatenate([np.arange(nt), p_owner[po], np.arange(nt)])
    inst = np.concatenate([np.arange(nt), 2 * nt + po, nt + np.arange(nt)])
    rank = np.concatenate([np.zeros(nt, np.int64), np.ones(n_pts, np.int64), np.full(nt, 2, np.int64)])
    co = np.argsort(owner * 3 + rank, kind="stable")  # the points keep their time order
    owner, inst = owner[co], inst[co]
    nxt = np.flatnonzero(owner[1:] == owner[:-1])
    x, y = inst[nxt], inst[nxt + 1]
    waits = ((row[x] == row[y]) & (role[x] == START) & (role[y] == END) & np.isin(row[x], syncs)) | (role[y] == ARRIVAL)
    add(x[~waits], y[~waits], OWN, kind_top[owner[nxt][~waits]], tops[owner[nxt][~waits]])
    add(x[waits], y[waits], OWN)
    # A thread's top-level events in order.
    to = np.argsort(thread[tops], kind="stable")
    same_thread = thread[tops][to][1:] == thread[tops][to][:-1]
    add((nt + to[:-1])[same_thread], to[1:][same_thread], HOST_ORDER)
    # A collective's last arrival: every participant's start leads to it, it leads to every release.
    if n_m:
        add(top_pos[coll], 2 * nt + n_pts + label, OWN)
        add(2 * nt + n_pts + label, 2 * nt + np.searchsorted(key, coll * 4 + ARRIVAL), OTHERS_ARRIVED)
    # Flows: from the moment the upstream event starts to the downstream's top-level start.
    if src_rows.size:
        add(point_of[src_rows], top_pos[ancestor[dst_rows]], LAUNCHED, r=src_rows, g=LAUNCH)
        # A synchronising call returns after the device work it waits for (critical_path_kineto says which);
        # work still running when it returned was not waited for (the edge is dropped).
        on_device = kind_top[top_pos[ancestor[dst_rows]]] != HOST
        la = Launched(fr, thread, src_rows[on_device], dst_rows[on_device])
        k_dev, k_sync = sync_waits(fr, la, syncs)
        add(end_of[ancestor[k_dev]], end_of[k_sync], OTHERS_ARRIVED)
        # cudaStreamWaitEvent: the waiting stream's next kernel starts after the recorded one ends.
        k_src, k_dst = stream_waits(fr, la)
        add(end_of[ancestor[k_src]], top_pos[ancestor[k_dst]], OTHERS_ARRIVED)
        if syncs.size and la.dev.size and info_rows(fr).size == 0:
            notes.append("no cuda_sync records: a stream or event synchronisation is taken to wait for the last kernel "
                         "its thread launched on each stream, and cudaStreamWaitEvent is not seen (PyTorch records them "
                         "with _ExperimentalConfig(enable_cuda_sync_events=True))")
    n_coll = int((kind_top == COLLECTIVE).sum())
    if n_m:
        notes.append(f"{n_m} NCCL collectives matched across ranks ({coll.size} of {n_coll} NCCL kernels)")
    elif n_coll and job is None:
        notes.append("NCCL kernels of one rank only: not matched across ranks (load the ranks' traces as one profile)")
    e_src, e_dst, e_w, e_wkind, e_wrow, e_cls = (np.concatenate(a) if a else np.zeros(0, np.int64)
                                                 for a in (src, dst, w, wkind, wrow, cls))
    # Kineto's steps: a segment is in the ProfilerStep#N of its rank its start falls in; what_if's per-step frame
    # reads the top-level events by their start (from the first one's start to the last one's end per step).
    steps = ProfilerSteps(fr)
    row_step = np.full(n_rows, -1, np.int64)
    row_step[tops] = steps.at(tops, start[tops])
    in_step = np.flatnonzero(row_step[tops] >= 0)
    g = Graph(t, row, grow, role, gkind, gevent, np.full(n, -1, np.int64), e_src, e_dst, e_w, e_wkind, e_wrow, e_cls,
              n_rows, notes, row_step, np.where(row_step >= 0, 0, -1), ["ProfilerStep"] if steps.size else [],
              in_step, nt + in_step, gk=np.concatenate(gk) if gk else np.zeros(0, np.int8), device_lanes=False,
              time_steps=steps if steps.size else None)
    g.wkind = g.wkind.astype(np.int8)
    g.cls = g.cls.astype(np.int8)
    return g, m_label


def _flow_pairs(fr: Frame, used: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(upstream, downstream) rows: per flow id, its events upstream first (start, row), consecutive pairs; and
    Kineto's runtime calls to the device events with their correlation id."""
    src_rows = dst_rows = np.zeros(0, np.int64)
    n_rows = len(fr)
    if "flow_id" in fr.profile.column_names and n_rows:
        ids, of = _exploded(fr.profile.values_at("flow_id", used))
        of = used[of] if of.size else of
        if ids.size:
            code = pd.factorize(ids)[0].astype(np.int64)
            o = np.argsort(code, kind="stable")  # rows ascend: upstream first within a flow
            code, of = code[o], of[o]
            same = code[1:] == code[:-1]
            src_rows, dst_rows = of[:-1][same], of[1:][same]
    c_src, c_dst = correlation_pairs(fr, used, _kinds(fr, used) != HOST)
    if c_src.size:
        both = _distinct(np.concatenate([src_rows, c_src]) * n_rows + np.concatenate([dst_rows, c_dst]))
        src_rows, dst_rows = both // n_rows, both % n_rows
    keep = src_rows != dst_rows
    return src_rows[keep], dst_rows[keep]


def _distinct(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (a sort, not NumPy's hashing unique, which is slow on millions)."""
    a = np.sort(a)
    return a[np.r_[True, a[1:] != a[:-1]]] if a.size else a


def _next_in_group(group: np.ndarray, start: np.ndarray, g: np.ndarray, t: np.ndarray) -> np.ndarray:
    """For each (g, t), the index of the first item of group g starting at or after t in (group, start) order, -1."""
    both = np.concatenate([start, t])
    o = np.argsort(both, kind="stable")
    rank = np.empty(both.size, np.int64)
    rank[o] = np.cumsum(np.r_[0, np.diff(both[o]) != 0]) if both.size else rank[o]
    span = int(rank.max()) + 1 if rank.size else 1
    items, asked = group * span + rank[:start.size], g * span + rank[start.size:]
    j = np.searchsorted(items, asked, "left")
    ok = j < items.size
    ok[ok] = group[j[ok]] == g[ok]
    return np.where(ok, j, -1)


def _modelled(fr: Frame) -> np.ndarray:
    """Rows the model reads: all but markers (instants, Kineto's trace span, GPU annotations, negative process ids)."""
    # An instant takes no time: a global one (pid 0, tid 0) at the trace's end would otherwise end the run on a
    # thread of its own, the path one gap across the whole span.
    keep = fr.end > fr.start
    if "category" in fr.profile.column_names and len(fr):
        codes, cats = fr.column_codes("category")
        drop = np.array([c in SKIPPED_CATEGORIES for c in cats] + [False])
        keep &= ~drop[np.where(codes < 0, len(cats), codes)]
    if "process_id" in fr.profile.column_names and len(fr):
        pid = fr.profile.column("process_id").combine_chunks().fill_null(0).to_numpy(zero_copy_only=False)
        keep &= pid >= 0
    return np.flatnonzero(keep)


def _kinds(fr: Frame, rows: np.ndarray) -> np.ndarray:
    """host, kernel, memcpy or collective per top-level event, decided once per (category, name)."""
    out = np.full(rows.size, HOST, np.int8)
    if "category" not in fr.profile.column_names or rows.size == 0:
        return out
    cat_codes, cats = fr.column_codes("category")
    device = np.array([c in KERNEL_CATEGORIES for c in cats] + [False])
    memory = np.array([c in MEMORY_CATEGORIES for c in cats] + [False])
    comm = np.array([kernel_type(nm) == COMMUNICATION if nm else False for nm in fr.names] + [False])
    cc = cat_codes[rows]
    cc = np.where(cc < 0, len(cats), cc)
    is_dev = device[cc]
    out[is_dev] = KERNEL
    out[is_dev & memory[cc]] = MEMCPY
    out[is_dev & comm[fr.name[rows]]] = COLLECTIVE
    return out


@numba.njit(cache=True, nogil=True)
def _tops(thread: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """In (thread, start, longest first) order: whether each event is top-level, and its top-level ancestor."""
    n = thread.size
    top = np.zeros(n, np.bool_)
    anc = np.zeros(n, np.int64)
    reach = np.int64(0)
    last = -1
    for i in range(n):
        if i == 0 or thread[i] != thread[i - 1] or start[i] >= reach:
            top[i] = True
            last = i
            reach = end[i]
        else:
            if end[i] > reach:
                reach = end[i]
        anc[i] = last
    return top, anc


def warm() -> None:
    """Compile (or load) the kernel."""
    z = np.zeros(1, np.int64)
    _tops(z, z, z)
