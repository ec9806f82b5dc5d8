"""Findings on memory and data movement of Neuron system profiles: HBM near capacity, host-device transfers
while the NeuronCore is idle (thresholds: README, section "Findings"). Each rule takes the `ctx` that
`findings.neuron_findings` makes (p, temporal, span, start, end, label, measures)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..model.grouping import TRANSFERS
from ..model.timefmt import duration
from ..model.transfers import SIZE_KEYS
from .critical_path_build import graph_of
from .critical_path_graph import LAST_ARRIVAL, Graph
from .devices import EXECUTION
from .findings_rows import check, measure, pct, row, saved, severity_of
from .frame import Frame, frame_of
from .intervals import Intervals, union

HBM_CAPACITY_SHARE = 0.90  # a device's HBM use reaches 90% of its capacity
TRANSFER_IDLE_SHARE = 0.05  # transfers while their core executes nothing: >= 5% of the cores' summed span


# ---- HBM near capacity ---------------------------------------------------------------------------------

def device_hbm_peaks(hbm: pd.DataFrame) -> pd.DataFrame:
    """Per device (`instance_id`, `device_idx`) and per HBM: the peak of `total_bytes` and when.

    A device's use at a time is the sum of its HBMs' last samples then (samples of one device's
    HBMs need not share timestamps). Columns: `instance_id`, `device_idx`, `hbm_idx` (-1: the
    device's sum), `peak_bytes`, `peak_ts`, `first_ts`, `last_ts` (the samples' range), `row`
    (the sample row of the peak, or of the device sum's largest HBM then).
    """
    cols = ["instance_id", "device_idx", "hbm_idx", "peak_bytes", "peak_ts", "first_ts", "last_ts", "row"]
    if hbm is None or hbm.empty or not {"timestamp", "total_bytes"} <= set(hbm.columns):
        return pd.DataFrame(columns=cols)
    n = len(hbm)

    def ints(c: str) -> np.ndarray:
        v = pd.to_numeric(hbm[c], errors="coerce") if c in hbm else pd.Series(np.zeros(n))
        return np.asarray(v.fillna(-1).to_numpy(np.float64), np.int64)

    total = pd.to_numeric(hbm["total_bytes"], errors="coerce").to_numpy(np.float64)
    stamp = pd.to_numeric(hbm["timestamp"], errors="coerce")  # epoch ns: int64, never through float64 when whole
    ok = np.isfinite(total) & stamp.notna().to_numpy()
    if not ok.any():
        return pd.DataFrame(columns=cols)
    inst = (hbm["instance_id"].astype(str).to_numpy(object) if "instance_id" in hbm else np.full(n, "", object))[ok]
    dev, hidx, label = ints("device_idx")[ok], ints("hbm_idx")[ok], hbm.index.to_numpy()[ok]
    total, ts = total[ok], stamp[ok].astype(np.int64).to_numpy()
    pos = np.arange(total.size)
    # Devices in (instance, device) order, as a sorted groupby; an HBM within its device.
    g, devices = pd.MultiIndex.from_arrays([inst, dev]).factorize(sort=True)
    g = np.asarray(g, np.int64)
    hb, hbms = pd.MultiIndex.from_arrays([g, hidx]).factorize(sort=True)
    hb = np.asarray(hb, np.int64)
    # A device's use after each sample: its HBMs' last samples summed, kept as a running sum of each sample's change
    # from its HBM's previous one (samples in time order, ties in row order: the later one is that time's).
    by_hbm = np.lexsort((pos, ts, hb))
    prev = np.r_[0.0, total[by_hbm][:-1]]
    prev[np.r_[True, hb[by_hbm][1:] != hb[by_hbm][:-1]]] = 0.0
    change = np.empty(total.size)
    change[by_hbm] = total[by_hbm] - prev
    by_dev = np.lexsort((pos, ts, g))
    gs, tss = g[by_dev], ts[by_dev]
    running = np.empty(total.size)
    for k in range(len(devices)):  # a few devices: one cumulative sum each
        m = gs == k
        running[m] = np.cumsum(change[by_dev][m])
    # The use at a time is the running sum after that time's last sample.
    last_at = np.r_[(gs[1:] != gs[:-1]) | (tss[1:] != tss[:-1]), True]
    out = []
    for k, (i_d, d_d) in enumerate(devices):
        m = (gs == k) & last_at
        at = int(np.argmax(running[m]))  # the first time at the peak, as idxmax over times in order
        times = tss[gs == k]
        first, last = int(times.min()), int(times.max())
        out.append({"instance_id": i_d, "device_idx": int(d_d), "hbm_idx": -1, "peak_bytes": float(running[m][at]),
                    "peak_ts": int(tss[m][at]), "first_ts": first, "last_ts": last, "row": None})
        for j in np.flatnonzero(np.asarray(hbms.get_level_values(0)) == k).tolist():
            rows = np.flatnonzero(hb == j)  # in row order: the first row at the peak, as idxmax
            i = rows[int(np.argmax(total[rows]))]
            out.append({"instance_id": i_d, "device_idx": int(d_d), "hbm_idx": int(hbms[j][1]),
                        "peak_bytes": float(total[i]), "peak_ts": int(ts[i]), "first_ts": first, "last_ts": last,
                        "row": label[i]})
    return pd.DataFrame(out, columns=cols)


def device_total(d: pd.DataFrame) -> pd.Series:
    """One device's use over time: at each sample time, the sum of its HBMs' last samples."""
    per = d.pivot_table(index="timestamp", columns="hbm_idx", values="total_bytes", aggfunc="last").sort_index()
    return per.ffill().fillna(0).sum(axis=1)


def hbm_near_capacity(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    p = ctx["p"]
    try:
        hbm = p.hbm_usage
    except Exception:  # a profile without counters
        return []
    if hbm is None or hbm.empty:
        return []
    capacity = pd.to_numeric(pd.Series([p.metadata.get("hbm_capacity_bytes")]), errors="coerce").iloc[0]
    if not np.isfinite(capacity) or capacity <= 0:  # no capacity in the metadata: nothing to measure against
        measure(ctx, "hbm_capacity", [], unmeasured="the profile's metadata has no hbm_capacity_bytes")
        return []
    peaks = device_hbm_peaks(hbm)
    if peaks.empty:
        return []
    devices = peaks[peaks["hbm_idx"] == -1]
    # Whether hbm_capacity_bytes is per device or per HBM is not documented: a device's use above it can
    # only mean each HBM's, else it is read as the device's (the larger, so fewer false alarms).
    per_hbm = bool((devices["peak_bytes"] > capacity).any()) and bool((peaks["hbm_idx"] >= 0).any())
    units = peaks[peaks["hbm_idx"] >= 0] if per_hbm else devices
    full = units[units["peak_bytes"] >= HBM_CAPACITY_SHARE * capacity]
    measure(ctx, "hbm_capacity", [check(f"the fullest {'HBM' if per_hbm else 'device'}'s peak use of its capacity",
                                        float(units["peak_bytes"].max()) / capacity, HBM_CAPACITY_SHARE)],
            reported=not full.empty)
    if full.empty:
        return []
    worst = full.sort_values(["peak_bytes", "instance_id", "device_idx", "hbm_idx"],
                             ascending=[False, True, True, True]).iloc[0]
    # As the Timeline's HBM track names it.
    where = f"{worst['instance_id']}/HBM usage/Device:{int(worst['device_idx'])}" + (
        f"/HBM:{int(worst['hbm_idx'])}" if per_hbm else "")
    share = float(worst["peak_bytes"]) / capacity
    parts = _categories_at(hbm, worst, per_hbm)
    top = ", ".join(f"{k} {_bytes(v)}" for k, v in list(parts.items())[:3])
    unit = "HBM" if per_hbm else "device"
    mine = hbm[(hbm["instance_id"].astype(str) == worst["instance_id"])] if "instance_id" in hbm else hbm
    above = _above(mine, worst, per_hbm, HBM_CAPACITY_SHARE * capacity)
    title = (f"{where} uses {_bytes(worst['peak_bytes'])} of its {_bytes(capacity)} (hbm_capacity_bytes, read as "
             f"each {unit}'s), {pct(share)} at its peak {duration(int(worst['peak_ts']) - int(ctx['start']))} into "
             f"the run" + (f" (most: {top})" if top else "") +
             (f"; {len(full)} {unit}s of {len(units)} reach {pct(HBM_CAPACITY_SHARE)}" if len(full) > 1 else "") +
             "; a risk of running out of memory, no time gain")
    evidence = {"where": where, "peak_bytes": float(worst["peak_bytes"]), "capacity_bytes": float(capacity),
                "share": share, "capacity_per": unit, "units_full": len(full), "units": len(units),
                "peak_ts": int(worst["peak_ts"]), "categories": parts}
    return [row("hbm_capacity", "high" if share >= 0.98 else "medium", title, float("nan"), above[0], above[1],
                evidence, "Little HBM is left: a larger batch, sequence or model will not fit. Shrink the largest "
                "category (the HBM track's hover): tensors kept on the device, scratchpad, weights (sharding).")]


def _bytes(v: float) -> str:
    v = float(v)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(v) >= size:
            return f"{v / size:.1f} {unit}"
    return f"{v:.0f} B"


def _categories_at(hbm: pd.DataFrame, worst: Any, per_hbm: bool) -> dict[str, float]:
    """The bytes per category (the trace's column names less `_bytes`) at the peak, largest first."""
    cats = [c for c in hbm.columns if c.endswith("_bytes") and c != "total_bytes"]
    if not cats:
        return {}
    m = (pd.to_numeric(hbm["timestamp"], errors="coerce") == worst["peak_ts"])
    if "instance_id" in hbm:
        m &= hbm["instance_id"].astype(str) == worst["instance_id"]
    if "device_idx" in hbm:
        m &= pd.to_numeric(hbm["device_idx"], errors="coerce") == worst["device_idx"]
    if per_hbm and "hbm_idx" in hbm:
        m &= pd.to_numeric(hbm["hbm_idx"], errors="coerce") == worst["hbm_idx"]
    got = hbm.loc[m, cats].apply(pd.to_numeric, errors="coerce").sum()
    got = got[got > 0].sort_values(ascending=False)
    return {c.removesuffix("_bytes"): float(v) for c, v in got.items()}


def _above(hbm: pd.DataFrame, worst: Any, per_hbm: bool, bar: float) -> tuple[int, int]:
    """First and last sample time at which the worst device (or HBM) is at or above the bar."""
    d = hbm.assign(timestamp=pd.to_numeric(hbm["timestamp"], errors="coerce"),
                   total_bytes=pd.to_numeric(hbm["total_bytes"], errors="coerce"),
                   hbm_idx=pd.to_numeric(hbm.get("hbm_idx", 0), errors="coerce").fillna(-1))
    d = d[d["timestamp"].notna() & d["total_bytes"].notna()]
    if "device_idx" in d:
        d = d[pd.to_numeric(d["device_idx"], errors="coerce").fillna(-1) == worst["device_idx"]]
    if per_hbm:
        d = d[d["hbm_idx"] == worst["hbm_idx"]]
    by_t = device_total(d) if len(d) else pd.Series(dtype=float)
    hit = by_t[by_t >= bar]
    if hit.empty:
        return int(worst["peak_ts"]), int(worst["peak_ts"])
    return int(hit.index.min()), int(hit.index.max())


# ---- Host-device transfers while the device is idle --------------------------------------------------------

def idle_transfers(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    p, temporal, span = ctx["p"], ctx["temporal"], ctx["span"]
    if temporal.empty:
        return []
    fr = frame_of(p)
    # A transfer's idle part is at most its length: when all of them together stay under the bar the rule cannot
    # fire, and finding each one's core and idle parts costs a second at 10M events.
    every = fr.rows_named(*TRANSFERS)
    total_span = float(temporal["span_ns"].sum())
    if total_span <= 0:
        return []
    figure = "host-device transfer time while the core executes nothing, as a share of the cores' time"
    moving = float(np.maximum(fr.end[every] - fr.start[every], 0).sum())
    if moving < TRANSFER_IDLE_SHARE * total_span:
        measure(ctx, "idle_transfers", [check(figure, moving / total_span, TRANSFER_IDLE_SHARE, upper=True)],
                amount=("transfer time", moving))
        return []
    rows, core = fr.on_cores(*TRANSFERS)
    ok = fr.end[rows] > fr.start[rows] if rows.size else np.zeros(0, bool)
    rows, core = rows[ok], core[ok].astype(np.int64)
    if rows.size == 0:
        measure(ctx, "idle_transfers", [check(figure, 0.0, TRANSFER_IDLE_SHARE)], amount=("idle transfer time", 0.0))
        return []
    idle = idle_parts(fr, rows, core)
    _, cores = fr.core_codes()
    n = len(cores)
    idle_ns = idle.length(n)
    total_idle = int(idle_ns.sum())
    share = total_idle / total_span if total_span > 0 else 0.0
    measure(ctx, "idle_transfers", [check(figure, share, TRANSFER_IDLE_SHARE)], reported=share >= TRANSFER_IDLE_SHARE,
            amount=("idle transfer time", float(total_idle)))
    if share < TRANSFER_IDLE_SHARE:
        return []
    k = int(np.argmax(idle_ns))
    label = ctx["label"](cores.loc[k, "instance_id"], cores.loc[k, "process_id"], cores.loc[k, "nc_idx"])
    key = ["instance_id", "process_id", "nc_idx"]
    t = temporal.set_index(key)
    ck = (cores.loc[k, "instance_id"], cores.loc[k, "process_id"], cores.loc[k, "nc_idx"])
    worst_share = float(idle_ns[k]) / float(t.loc[ck, "span_ns"]) if ck in t.index and t.loc[ck, "span_ns"] else \
        float("nan")
    names = [fr.names[c] for c in np.unique(fr.name[rows])]
    size = transfer_bytes(fr, rows)
    moved = f"{_bytes(size.sum())} in {rows.size:,} transfers" if size.sum() > 0 else f"{rows.size:,} transfers"
    gain, hidden = transfer_gain(fr, rows, core, idle, span)
    if hidden <= 0:  # no transfer time in a gap the model holds (another thread): say so, predict nothing
        gain = float("nan")
    fix = (f"moving them under the executions {saved(gain, span)}" if np.isfinite(gain) else
           "what moving them under the executions would save is not known (they are not on the threads of the "
           "nrt_execute calls, which the model holds)")
    title = (f"{' and '.join(names)} run while their NeuronCore executes nothing {duration(total_idle)} in all "
             f"({pct(share)} of the cores' time; {moved}; most {label}, "
             f"{pct(worst_share) if np.isfinite(worst_share) else duration(idle_ns[k])}); {fix}")
    first = int(fr.start[rows].min())
    evidence = {"names": names, "transfers": int(rows.size), "idle_transfer_ns": total_idle, "share": share,
                "bytes": int(size.sum()), "worst_core": label, "worst_core_ns": int(idle_ns[k]),
                "hidden_in_model_ns": int(hidden)}
    return [row("idle_transfers", severity_of(gain, span, "medium"), title, gain, first, int(fr.end[rows].max()),
                evidence, "Prefetch the next step's inputs while the device computes (and copy outputs out after "
                "the next launch), or keep the tensors on the device between steps.")]


def idle_parts(fr: Frame, rows: np.ndarray, core: np.ndarray) -> Intervals:
    """The parts of the transfers at `rows` (on cores `core`) when their core runs no execution, per core."""
    exs, ex_core = fr.on_cores(EXECUTION)
    busy = union(ex_core.astype(np.int64), fr.start[exs], np.maximum(fr.end[exs], fr.start[exs]))
    moving = union(core, fr.start[rows], fr.end[rows])
    return moving - busy


def transfer_bytes(fr: Frame, rows: np.ndarray) -> np.ndarray:
    """Each transfer's bytes, from the first size-like argument it carries (0 when none)."""
    out = np.zeros(rows.size, np.int64)
    for key in SIZE_KEYS:
        got = fr.arg(rows, key)
        fill = (out <= 0) & (got > 0)
        out[fill] = got[fill]
    return out


def transfer_gain(fr: Frame, rows: np.ndarray, core: np.ndarray, idle: Intervals, span: int) -> tuple[float, int]:
    """What the run would save with the transfers' idle parts taken out of the gaps they fall in (the what-if
    replay, each gap of a runtime thread's call shortened by the transfer time inside it), and that time.

    A transfer inside an `nrt_execute` call before its execution is part of the launch (the gap before the
    execution's start), one after it part of the return, one between calls part of the host gap before the
    next: each is attributed to the call of its own thread whose gap it lies in."""
    g, _ = graph_of(fr)
    if g is None or len(g) == 0 or span <= 0:
        return float("nan"), 0
    # The transfers' idle parts, per host thread (a thread's parts from several cores joined).
    tkey = _thread_keys(fr, np.concatenate([rows, np.maximum(g.grow, 0)]))
    t_rows, t_inst = tkey[: rows.size], tkey[rows.size:]
    # Each idle piece belongs to the transfers of its core that cover it; a piece per (core, transfer) overlap.
    pieces_thread, pieces_s, pieces_e = _pieces_by_thread(fr, rows, core, t_rows, idle)
    if pieces_s.size == 0:
        return float("nan"), 0
    per = union(pieces_thread, pieces_s, pieces_e)
    gap = g.g
    if gap is None:  # an unbound graph has no gaps (graph_of binds every graph it builds)
        return float("nan"), 0
    cand = np.flatnonzero((gap > 0) & (g.grow >= 0) & (g.lane_core < 0) & (g.role != LAST_ARRIVAL))
    hidden = _covered(per, t_inst[cand], (g.t[cand] - gap[cand]), g.t[cand])
    if not (hidden > 0).any():
        return 0.0, 0
    g_scale = np.ones(len(g))
    g_scale[cand] = np.maximum(gap[cand] - hidden, 0) / gap[cand]
    return _replayed_saving(fr, g, g_scale, span), int(hidden.sum())


def _thread_keys(fr: Frame, rows: np.ndarray) -> np.ndarray:
    p = fr.profile
    inst, _ = fr.column_codes("instance_id") if "instance_id" in p.column_names else (np.zeros(len(fr), np.int64), [])
    pid = pd.to_numeric(pd.Series(p.array("process_id")[rows]), errors="coerce").fillna(-1).to_numpy(np.int64) \
        if "process_id" in p.column_names else np.zeros(rows.size, np.int64)
    tid = pd.to_numeric(pd.Series(p.array("thread_id")[rows]), errors="coerce").fillna(-1).to_numpy(np.int64) \
        if "thread_id" in p.column_names else np.zeros(rows.size, np.int64)
    codes, _ = pd.MultiIndex.from_arrays([inst[rows], pid, tid]).factorize()
    return np.asarray(codes, np.int64)


def _pieces_by_thread(fr: Frame, rows: np.ndarray, core: np.ndarray, thread: np.ndarray, idle: Intervals
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each transfer clipped to its core's idle intervals, labelled with the transfer's thread."""
    out_t, out_s, out_e = [], [], []
    for c in np.unique(core).tolist():
        m = core == c
        sel = idle.group == c
        s_i, e_i = idle.start[sel], idle.end[sel]
        if s_i.size == 0:
            continue
        s, e, th = fr.start[rows[m]], fr.end[rows[m]], thread[m]
        # The idle intervals each transfer overlaps: from the first ending after its start to the last
        # starting before its end (idle intervals of a core are disjoint and sorted).
        lo = np.searchsorted(e_i, s, side="right")
        hi = np.searchsorted(s_i, e, side="left")
        count = np.maximum(hi - lo, 0)
        if not count.any():
            continue
        which = np.repeat(np.arange(s.size), count)
        k = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count) + np.repeat(lo, count)
        out_t.append(th[which])
        out_s.append(np.maximum(s[which], s_i[k]))
        out_e.append(np.minimum(e[which], e_i[k]))
    if not out_t:
        z = np.zeros(0, np.int64)
        return z, z, z
    return (np.concatenate(out_t).astype(np.int64), np.concatenate(out_s).astype(np.int64),
            np.concatenate(out_e).astype(np.int64))


def _covered(iv: Intervals, group: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """How much of [lo, hi) per query the intervals of the query's group cover (disjoint sorted intervals)."""
    out = np.zeros(group.size, np.int64)
    for gr in np.unique(iv.group).tolist():
        q = np.flatnonzero(group == gr)
        if q.size == 0:
            continue
        m = iv.group == gr
        s, e = iv.start[m], iv.end[m]
        before = np.r_[0, np.cumsum(e - s)]  # covered time before interval i's start

        def cum(x: np.ndarray, s: np.ndarray = s, e: np.ndarray = e, before: np.ndarray = before) -> np.ndarray:
            i = np.searchsorted(s, x, side="right")  # intervals starting at or before x
            last = np.maximum(i - 1, 0)
            inside = np.where(i > 0, np.clip(x - s[last], 0, e[last] - s[last]), 0)
            return before[np.maximum(i - 1, 0)] * (i > 0) + inside

        out[q] = cum(hi[q]) - cum(lo[q])
    return out


def _replayed_saving(fr: Frame, g: Graph, g_scale: np.ndarray, span: int) -> float:
    """`what_if`'s replay with these gap scales: the run's recorded span less its predicted one."""
    order = fr._cached("critical-order", g.order)
    t = g.replay(None, g_scale, order)
    real = g.role != LAST_ARRIVAL
    if not real.any():
        return float("nan")
    recorded = int(g.t[real].max() - g.run_start)
    predicted = round(float(t[real].max()))
    return float(min(max(recorded - predicted, 0), span))
