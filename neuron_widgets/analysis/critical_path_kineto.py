"""Kineto's dependencies for the critical-path graph: launches, synchronisation, stream waits, NCCL across ranks.

HTA's lightweight model, read from what a PyTorch profiler trace records:
- a runtime call (`cudaLaunchKernel`, `cudaMemcpyAsync`, ...) launches the device event that shares
  its correlation id in its rank (besides any `ac2g` flow);
- `cudaDeviceSynchronize` returns no earlier than the last kernel launched before it (by any thread of
  its rank) on each stream of its rank; `cudaStreamSynchronize` the last one on the stream its
  `cuda_sync` record ("Stream Sync") names; `cudaEventSynchronize` the last one launched on the
  recorded stream before the `cudaEventRecord` its "Event Sync" record names. A call whose stream
  or event the trace does not name (no `cuda_sync` records: the profiler's option is off) waits
  for the last kernel its own thread launched before it on each stream that thread launched to;
- `cudaStreamWaitEvent` ("Stream Wait Event" record): the next kernel its thread launches on the
  waiting stream starts no earlier than the recorded kernel (as above) ends;
- NCCL kernels of several ranks are one collective when they share their process group ("Process
  Group Name", else the kernel's name) and their ordinal in it on their rank.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .collectives import ordinal
from .devices import _STEP, correlation, launch_rows, pair_key, rank_codes
from .frame import Frame

INFO_CATEGORY = "cuda_sync"  # Kineto's records of what a synchronising call named (on the GPU side)
DEVICE_SYNC = ("cudaDeviceSynchronize", "hipDeviceSynchronize")
EMPTY = np.zeros(0, np.int64)


def correlation_pairs(fr: Frame, used: np.ndarray, on_device: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(runtime call, device event) pairs sharing a correlation id in a rank, among the rows `used`."""
    is_used = np.zeros(len(fr), bool)
    is_used[used] = True
    calls = launch_rows(fr)
    calls = calls[is_used[calls]]
    devs = used[on_device]
    if calls.size == 0 or devs.size == 0:
        return EMPTY, EMPTY
    rank = rank_codes(fr)[0]
    found = _by_correlation(fr, rank, calls, rank[devs], correlation(fr, devs))
    ok = found >= 0
    return found[ok], devs[ok]


def _by_correlation(fr: Frame, rank: np.ndarray, calls: np.ndarray, q_rank: np.ndarray, q_corr: np.ndarray) -> np.ndarray:
    """Per (rank, correlation id) asked, the last of `calls` carrying it (-1: none)."""
    corr = correlation(fr, calls)
    ok = corr >= 0
    key, row = pair_key(rank[calls[ok]], corr[ok]), calls[ok]
    o = np.argsort(key, kind="stable")
    key, row = key[o], row[o]
    asked = pair_key(q_rank, q_corr)
    j = np.searchsorted(key, asked, "right") - 1
    hit = (j >= 0) & (q_corr >= 0)
    hit[hit] = key[j[hit]] == asked[hit]
    return np.where(hit, row[np.maximum(j, 0)] if row.size else -1, -1)


class ProfilerSteps:
    """Kineto's `ProfilerStep#N` spans per rank: the step a moment of a rank falls in (the span of its rank that
    contains it: start <= t < end; a rank's steps do not overlap), -1 outside any."""

    def __init__(self, fr: Frame) -> None:
        want = [n for n in fr.names if isinstance(n, str) and _STEP.match(n)]
        rows = fr.rows_named(*want) if want else EMPTY
        self.rank = rank_codes(fr)[0]
        names = np.asarray(fr.names, dtype=object)[fr.name[rows]] if rows.size else np.zeros(0, object)
        step = np.array([int(_STEP.match(n).group(1)) for n in names], np.int64)  # type: ignore[union-attr]
        r = self.rank[rows]
        o = np.lexsort((rows, fr.start[rows], r))
        self.r, self.s, self.e, self.n = r[o], fr.start[rows][o], fr.end[rows][o], step[o]
        self.size = int(rows.size)

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each step N (ascending) over the ranks, as `compare` aligns them: its first start and its last end."""
        n, inv = np.unique(self.n, return_inverse=True)
        s = np.full(n.size, np.iinfo(np.int64).max, np.int64)
        e = np.full(n.size, np.iinfo(np.int64).min, np.int64)
        np.minimum.at(s, inv, self.s)
        np.maximum.at(e, inv, np.maximum(self.e, self.s))
        return n, s, e

    def at(self, rows: np.ndarray, t: np.ndarray) -> np.ndarray:
        rows, t = np.asarray(rows, np.int64), np.asarray(t, np.int64)
        out = np.full(rows.size, -1, np.int64)
        if self.size == 0 or rows.size == 0:
            return out
        rk = np.where(rows >= 0, self.rank[np.maximum(rows, 0)], -1)
        for r in np.unique(self.r):  # a few ranks: a search per rank's spans
            lo, hi = np.searchsorted(self.r, [r, r + 1])
            ask = np.flatnonzero(rk == r)
            j = lo + np.searchsorted(self.s[lo:hi], t[ask], "right") - 1
            ok = (j >= lo) & (t[ask] < self.e[np.maximum(j, lo)])
            out[ask[ok]] = self.n[j[ok]]
        return out


class Launched:
    """Device events with their launch: lane (the device event's thread: its stream), launching thread, time."""

    def __init__(self, fr: Frame, thread: np.ndarray, call: np.ndarray, dev: np.ndarray) -> None:
        self.fr, self.thread = fr, thread
        self.rank = rank_codes(fr)[0]
        self.dev, self.lane, self.by, self.at = dev, thread[dev], thread[call], fr.start[call]
        # A stream as a trace names it (rank, device pid, stream id) -> its lane, read at one event per lane.
        _, one = np.unique(self.lane, return_index=True)
        at = dev[one]
        pid = np.asarray(fr.combo_values("process_id", at), dtype=object) if at.size else np.zeros(0, object)
        tid = np.asarray(fr.combo_values("thread_id", at), dtype=object) if at.size else np.zeros(0, object)
        self.lane_of = {(int(r), _int(p), _int(s)): int(ln)
                        for r, p, s, ln in zip(self.rank[at], pid, tid, self.lane[one], strict=True)}

    def last_before(self, lane: np.ndarray, t: np.ndarray, by: np.ndarray | None = None) -> np.ndarray:
        """Per (lane, t[, launching thread]): of the device rows launched on that lane at or before t, the one
        that starts last (the lane runs in order: it ends last), -1."""
        return self._find(lane, t, by, last=True)

    def first_after(self, lane: np.ndarray, t: np.ndarray, by: np.ndarray) -> np.ndarray:
        """Per (lane, t, launching thread): the device row first launched on that lane at or after t, -1."""
        return self._find(lane, t, by, last=False)

    def _find(self, lane: np.ndarray, t: np.ndarray, by: np.ndarray | None, last: bool) -> np.ndarray:
        if lane.size == 0 or self.dev.size == 0:
            return np.full(lane.size, -1, np.int64)
        span = int(max(self.thread.max(), 0)) + 1
        g_items = self.lane if by is None else self.lane * span + self.by
        g_asked = lane if by is None else lane * span + by
        codes, _ = pd.factorize(np.concatenate([g_items, g_asked]))
        gi, ga = codes[:g_items.size].astype(np.int64), codes[g_items.size:].astype(np.int64)
        both = np.concatenate([self.at, t])
        o = np.argsort(both, kind="stable")
        dense = np.empty(both.size, np.int64)
        dense[o] = np.cumsum(np.r_[0, np.diff(both[o]) != 0])
        width = int(dense.max()) + 2
        # Items in (group, launch time, row) order; ties in time: the later row is the later launch.
        order = np.lexsort((self.dev, dense[:self.at.size], gi))
        items = (gi * width + dense[:self.at.size])[order]
        asked = ga * width + dense[self.at.size:]
        n = self.dev.size
        if last:
            j = np.searchsorted(items, asked, "right") - 1
            ok = j >= 0
            # The latest start (then row) among a group's items so far: a running maximum of (group, start order).
            by_start = np.empty(n, np.int64)
            by_start[np.lexsort((self.dev, self.fr.start[self.dev]))] = np.arange(n)
            best = np.maximum.accumulate((gi * n + by_start)[order]) % n
            of_start = np.empty(n, np.int64)
            of_start[by_start] = np.arange(n)
            pick = of_start[best]
        else:
            j = np.searchsorted(items, asked, "left")
            ok = j < items.size
            pick = order
        jj = np.clip(j, 0, items.size - 1)
        ok &= gi[order][jj] == ga
        return np.where(ok, self.dev[pick[jj]], -1)


def _int(v: object) -> int:
    try:
        return int(v)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return -1


def info_rows(fr: Frame) -> np.ndarray:
    """Kineto's `cuda_sync` records (what each synchronising call or stream wait named)."""
    if "category" not in fr.profile.column_names or len(fr) == 0:
        return EMPTY
    codes, cats = fr.column_codes("category")
    if INFO_CATEGORY not in cats:
        return EMPTY
    return np.flatnonzero(codes == cats.index(INFO_CATEGORY))


def sync_waits(fr: Frame, la: Launched, syncs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(device row, synchronising call row) pairs: the call returns no earlier than that device event ends."""
    if syncs.size == 0 or la.dev.size == 0:
        return EMPTY, EMPTY
    rank, start = la.rank, fr.start
    info = info_rows(fr)
    names = np.array([*fr.names, ""], dtype=object)
    rec = _by_correlation(fr, rank, info, rank[syncs], correlation(fr, syncs)) if info.size else np.full(syncs.size, -1)
    what = np.where(rec >= 0, names[fr.name[np.maximum(rec, 0)]], "")
    device = np.isin(fr.name[syncs], fr.codes_of(DEVICE_SYNC)) | (what == "Context Sync")
    stream = ~device & (what == "Stream Sync")
    sync_row, lanes, before = [], [], []
    # Stream Sync: the stream its record is on.
    s = syncs[stream]
    sync_row.append(s)
    lanes.append(la.thread[rec[stream]])
    before.append(start[s])
    # Event Sync: the stream recorded on, before the cudaEventRecord the record names.
    event = ~device & (what == "Event Sync")
    named = np.zeros(syncs.size, bool)
    if event.any():
        r = rec[event]
        at = _by_correlation(fr, rank, launch_rows(fr), rank[r], fr.arg(r, "wait_on_cuda_event_record_corr_id"))
        lane = _lanes(fr, la, r, fr.arg(r, "wait_on_stream"))
        ok = (at >= 0) & (lane >= 0)
        named[np.flatnonzero(event)[ok]] = True
        sync_row.append(syncs[event][ok])
        lanes.append(lane[ok])
        before.append(start[at[ok]])
    q = pd.DataFrame({"sync": np.concatenate(sync_row), "lane": np.concatenate(lanes), "t": np.concatenate(before)})
    pairs = [q.assign(by=-1)]
    # cudaDeviceSynchronize: every stream of its rank.
    per_rank = pd.DataFrame({"rank": la.rank[la.dev], "lane": la.lane}).drop_duplicates()
    d = pd.DataFrame({"sync": syncs[device], "rank": rank[syncs[device]]}).merge(per_rank, on="rank")
    pairs.append(pd.DataFrame({"sync": d["sync"], "lane": d["lane"], "t": start[d["sync"].to_numpy(np.int64)], "by": -1}))
    # The rest: the streams its own thread launched to, that thread's launches.
    rest = syncs[~device & ~stream & ~named]
    per_thread = pd.DataFrame({"by": la.by, "lane": la.lane}).drop_duplicates()
    f = pd.DataFrame({"sync": rest, "by": la.thread[rest]}).merge(per_thread, on="by")
    pairs.append(pd.DataFrame({"sync": f["sync"], "lane": f["lane"], "t": start[f["sync"].to_numpy(np.int64)],
                               "by": f["by"]}))
    out_dev, out_sync = [], []
    for p in pairs:
        s, ln, t, b = (p[c].to_numpy(np.int64) for c in ("sync", "lane", "t", "by"))
        any_thread = b < 0
        got = np.full(s.size, -1, np.int64)
        got[any_thread] = la.last_before(ln[any_thread], t[any_thread])
        got[~any_thread] = la.last_before(ln[~any_thread], t[~any_thread], b[~any_thread])
        ok = got >= 0
        out_dev.append(got[ok])
        out_sync.append(s[ok])
    return np.concatenate(out_dev), np.concatenate(out_sync)


def _lanes(fr: Frame, la: Launched, rec: np.ndarray, stream: np.ndarray) -> np.ndarray:
    """The lane of stream `stream` on the device of each `cuda_sync` record (-1: no kernel ran there)."""
    pid = np.asarray(fr.combo_values("process_id", rec), dtype=object) if rec.size else np.zeros(0, object)
    return np.array([la.lane_of.get((int(r), _int(p), int(s)), -1) for r, p, s in zip(la.rank[rec], pid, stream, strict=True)],
                    np.int64)


def stream_waits(fr: Frame, la: Launched) -> tuple[np.ndarray, np.ndarray]:
    """(recorded device row, waiting device row) pairs of `cudaStreamWaitEvent` calls ("Stream Wait Event" records)."""
    info = info_rows(fr)
    if info.size == 0 or la.dev.size == 0:
        return EMPTY, EMPTY
    rec = info[fr.name[info] == _code(fr, "Stream Wait Event")]
    if rec.size == 0:
        return EMPTY, EMPTY
    rank, calls = la.rank, launch_rows(fr)
    call = _by_correlation(fr, rank, calls, rank[rec], correlation(fr, rec))
    record = _by_correlation(fr, rank, calls, rank[rec], fr.arg(rec, "wait_on_cuda_event_record_corr_id"))
    src_lane = _lanes(fr, la, rec, fr.arg(rec, "wait_on_stream"))
    ok = (call >= 0) & (record >= 0) & (src_lane >= 0)
    rec, call, record, src_lane = rec[ok], call[ok], record[ok], src_lane[ok]
    src = la.last_before(src_lane, fr.start[record])
    dst = la.first_after(la.thread[rec], fr.start[call], la.thread[call])
    ok = (src >= 0) & (dst >= 0) & (src != dst)
    return src[ok], dst[ok]


def _code(fr: Frame, name: str) -> int:
    c = fr.codes_of([name])
    return int(c[0]) if c.size else -2


def nccl_keys(fr: Frame, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """Per NCCL kernel row: its rank's code, its group's code into the returned keys (its "Process Group Name",
    else its kernel's name, each marked as which), and its ordinal in its group on its rank."""
    rank = rank_codes(fr)[0][rows]
    pg, words = fr.arg_codes(rows, "Process Group Name")
    group = np.where(pg >= 0, pg, len(words) + fr.name[rows]).astype(np.int64)
    nth = ordinal(rank * (len(words) + len(fr.names) + 1) + group, fr.start[rows], rows)
    keys = [f"group {w}" for w in words] + [f"kernel {n}" for n in fr.names]
    return rank, group, keys, nth


def nccl_collectives(fr: Frame, rows: np.ndarray) -> np.ndarray:
    """Per NCCL kernel row, a code it shares with its matches on the other ranks (-1: no other rank has it)."""
    if rows.size == 0:
        return EMPTY
    rank, group, _, nth = nccl_keys(fr, rows)
    label, _ = pd.MultiIndex.from_arrays([group, nth]).factorize()
    label = np.asarray(label, np.int64)
    ranks = pd.Series(rank).groupby(label).nunique()
    shared = ranks.index[ranks.to_numpy() >= 2].to_numpy()
    code = np.full(int(label.max()) + 1, -1, np.int64)
    code[shared] = np.arange(shared.size)
    return code[label]
