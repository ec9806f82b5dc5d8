"""Findings of Kineto traces in HTA's vocabulary (GPU idle, launch delay, comm-compute overlap, synchronous
memcpy/memset), and of plain Chrome traces (errors and unended events); gains from `what_if` over the
Chrome dependency graph (threads and streams in order, launch -> kernel flows, synchronising calls)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.timefmt import duration
from ..model.worker_labels import core_label
from .critical_path import critical_path
from .devices import kineto_kernels
from .findings_problems import problem_findings
from .findings_rows import (
    check,
    gain_of,
    launch_gain,
    measure,
    pct,
    row,
    run_span,
    saved,
    severity_of,
    straggler_checks,
)
from .frame import frame_of
from .idle import idle_time_breakdown
from .launches import LAUNCH_NAMES, kineto_launchers, launch_stats
from .overlap import comm_comp_overlap
from .rank_labels import rank_label, rank_labels
from .stragglers import stragglers
from .temporal import temporal_breakdown

GPU_IDLE_SHARE = 0.10       # a rank's GPU idle >= 10% of its span (as the Neuron host-wait rule)
LAUNCH_GAIN_SHARE = 0.02    # removing launch delay saves >= 2% of the run
OVERLAP_BELOW = 50.0        # HTA's comm_comp_overlap_pctg below half ...
COMM_SHARE = 0.05           # ... on a rank whose communication is >= 5% of its span
SYNC_COPY = re.compile(r"^(cuda|hip)Mem(cpy|set)(2D|3D)?(ToSymbol|FromSymbol)?$")
SYNC_CALL = re.compile(r"^(cuda|hip)(Device|Stream|Event)Synchronize$")
LAST_SHARE, LAST_WAIT_SHARE = 0.5, 0.01  # as the Neuron straggler rule
FUSION_RUNS = 100          # a run of three kernels repeated at least 100 times ...
MEMORY_KERNEL = re.compile(r"^(Memcpy|Memset)\b")
FUSION_SHORT_NS = 10_000   # ... of kernels 10 µs or shorter on average, about what a launch call costs
SYNC_WAIT_SHARE = 0.05      # the host waits in synchronising calls on the critical path >= 5% of the run


def chrome_findings(p: Profile, kind: str, notes: list[str], measures: list[dict[str, Any]] | None = None
                    ) -> list[dict[str, Any]]:
    """A Kineto trace's rules (a plain trace's: errors and unended events only); what each measured against its
    bar goes to `measures`."""
    span = run_span(p)
    ctx: dict[str, Any] = {"p": p, "span": span, "start": p.start_ts, "end": p.end_ts, "notes": notes,
                           "label": lambda inst, pid, nc: core_label(inst, pid, nc, p.track_names),
                           "measures": measures if measures is not None else []}
    # An event still open at the end is named by its track as the Timeline labels it (the index the Timeline builds
    # anyway; built here only when such an event is named).
    ctx["track_label"] = lambda row: track_label(p, row)
    if kind == "kineto":
        # A rank as the Timeline labels its GPU ("rank0/GPU 0"): the track filter finds what a finding names.
        ranks = rank_labels(p)
        ctx["rank"] = lambda r: rank_label(ranks, r)
    out: list[dict[str, Any]] = []
    if kind == "kineto":
        for rule in (_late_rank, _gpu_idle, _launch_delay, _overlap, _sync_copies, _sync_on_path, _fusion):
            out.extend(rule(ctx))
    else:
        notes.append("a plain trace: only errors and events that never ended are looked for (no rule predicts a gain)")
    out.extend(problem_findings(ctx))
    return out


OFF_PATH = "that time is not on the critical path (the what-if saves nothing)"


def track_label(p: Profile, row: int) -> str:
    """The Default grouping's label of the track an event (its row) is drawn on."""
    ti = p.track_index("default")
    return str(ti.tracks["label"].iloc[int(ti.combo_track[ti.combo[row]])])


def off_path(ctx: dict[str, Any], rule: str, gain: float, what: str) -> bool:
    """Whether a rule's what-if saves nothing: then it is no finding (nothing to fix first), only a note."""
    if not (np.isfinite(gain) and gain <= 0):
        return False
    ctx.setdefault("notes", []).append(f"{rule}: {what}, but {OFF_PATH}: not reported")
    return True


def _rank_span(p: Profile, rank: Any, fallback: tuple[Any, Any]) -> tuple[Any, Any]:
    """The first start and last end of a rank's device kernels (where its GPU span is), else `fallback`."""
    k = kineto_kernels(frame_of(p), round_us=False)
    mine = np.asarray(k.ranks, dtype=object)[k.rank] == rank if k.rank.size else np.zeros(0, bool)
    if not mine.any():
        return fallback
    return int(k.start[mine].min()), int(k.end[mine].max())


def _streams(p: Profile) -> set[int]:
    ls = launch_stats(p)
    return {int(s) for s in pd.to_numeric(ls.get("stream", pd.Series(dtype=float)), errors="coerce").dropna()}


def _host_threads(p: Profile) -> list[int]:
    """Threads that are not GPU streams (a stream is the `tid` of its kernels)."""
    tids = pd.to_numeric(pd.Series(p.array("thread_id")), errors="coerce").dropna().astype(np.int64).unique()
    streams = _streams(p)
    return sorted(int(t) for t in tids if int(t) not in streams)


def _late_rank(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """Several ranks loaded together: the rank last at most NCCL collectives (`stragglers`)."""
    p, span = ctx["p"], ctx["span"]
    st = stragglers(p)
    if len(st) < 2 or "rank" not in st:
        return []
    top = st.iloc[0]
    steps = int(top["steps"])
    fires = not (steps < 2 or top["times_last"] < LAST_SHARE * steps
                 or float(top["wait_caused_ns"]) < LAST_WAIT_SHARE * span)
    for r in st.itertuples(index=False):  # each rank's figures (a rank new as the straggler: was it near the bar?)
        checks = straggler_checks(float(r.times_last), float(r.steps), float(r.wait_caused_ns), span, len(st),
                                  LAST_SHARE, LAST_WAIT_SHARE)
        me = fires and r.rank == top["rank"]
        measure(ctx, "straggler", checks, who={"rank": r.rank, "gpu": ctx["rank"](r.rank)}, reported=me,
                why_not=None if me or not all(c["met"] for c in checks) else "another rank is the one reported",
                amount=("others' wait", float(r.wait_caused_ns)))
    if not fires:
        return []
    per = stragglers(p, per_step=True)
    mine = per[per["rank"] == top["rank"]] if "rank" in per else per[:0]
    who = ctx["rank"](top["rank"])
    title = (f"{who} arrives last at {int(top['times_last'])} of {steps} NCCL collectives, "
             f"{duration(top['mean_lag_ns'])} late on average (the other ranks wait {duration(top['wait_caused_ns'])} "
             "in all); what a fix would save is not known (its lateness is not one kind of work a what-if scales)")
    evidence = {"rank": top["rank"], "gpu": who, "times_last": int(top["times_last"]), "steps": steps,
                "mean_lag_ns": float(top["mean_lag_ns"]), "max_lag_ns": int(top["max_lag_ns"]),
                "wait_caused_ns": int(top["wait_caused_ns"]), "ranks": len(st)}
    return [row("straggler", "high", title, np.nan, mine["start_ts"].min() if len(mine) else ctx["start"],
                mine["start_ts"].max() if len(mine) else ctx["end"], evidence,
                "See what that rank runs before its collectives (more work, a slower GPU, its data loader).")]


def _gpu_idle(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    p, span = ctx["p"], ctx["span"]
    t = temporal_breakdown(p)
    if t.empty:
        return []
    worst = t.sort_values("idle_time_pctg", ascending=False).iloc[0]
    share = float(worst["idle_time_pctg"]) / 100.0
    checks = [check("share of the idlest GPU's span it is idle", share, GPU_IDLE_SHARE)]
    if share < GPU_IDLE_SHARE:
        measure(ctx, "gpu_idle", checks, amount=("idle", float(worst["idle_time_ns"])))
        return []
    idle = idle_time_breakdown(p)
    mine = idle[idle["rank"] == worst["rank"]] if "rank" in idle else idle
    host = float(mine.loc[mine["idle_category"] == "host_wait", "idle_time_ns"].sum())
    all_idle = float(mine["idle_time_ns"].sum())
    threads = _host_threads(p)
    gain = gain_of(p, {"kind": "gap", "thread_id": threads}, 0.0, span) if threads else float("nan")
    who = ctx["rank"](worst["rank"])
    gone = off_path(ctx, "gpu_idle", gain, f"{who} is idle {pct(share)} of its span")
    measure(ctx, "gpu_idle", checks, reported=not gone, why_not=OFF_PATH if gone else None,
            amount=("idle", float(worst["idle_time_ns"])))
    if gone:
        return []
    ranks = int((t["idle_time_pctg"] / 100.0 >= GPU_IDLE_SHARE).sum())
    title = (f"{who} is idle {pct(share)} of its {duration(worst['span_ns'])} span "
             f"({duration(worst['idle_time_ns'])}; {pct(host / all_idle) if all_idle else '0%'} of the gaps wait on "
             f"the host{f'; {ranks} ranks over {pct(GPU_IDLE_SHARE)}' if ranks > 1 else ''}); host threads with no "
             f"untraced time between their ops {saved(gain, span)}")
    evidence = {"rank": worst["rank"], "gpu": who, "idle_ns": int(worst["idle_time_ns"]), "idle_share": share,
                "host_wait_ns": host, "ranks_over_threshold": ranks}
    start, end = _rank_span(p, worst["rank"], (ctx["start"], ctx["end"]))
    return [row("gpu_idle", severity_of(gain, span, "medium"), title, gain, start, end, evidence,
                "Keep the GPU fed: larger batches, CUDA graphs, data loading off the training thread.")]


def _launch_delay(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    span = ctx["span"]
    got = launch_gain(ctx, "launch_delay", LAUNCH_GAIN_SHARE)
    if got is None:
        return []
    ls, delay, gain = got
    worst = ls.loc[delay.idxmax()]
    latency = delay + pd.to_numeric(ls.loc[delay.index, "cpu_duration_ns"], errors="coerce").fillna(0).clip(lower=0)
    title = (f"Kernels start {duration(delay.mean())} after their launch call returns on average (longest "
             f"{duration(delay.max())}, {short_kernel(str(worst['name']))} from {worst['launch_name']}), "
             f"{duration(latency.mean())} after the call starts, over {len(delay):,} launches; with no launch latency "
             f"(each kernel free to start as its call starts) the run {saved(gain, span)}")
    evidence = {"launches": len(delay), "mean_delay_ns": float(delay.mean()), "max_delay_ns": float(delay.max()),
                "total_delay_ns": float(delay.sum()), "mean_latency_ns": float(latency.mean())}
    return [row("launch_delay", severity_of(gain, span), title, gain, worst["start_ts"],
                int(worst["start_ts"]) + int(worst["launch_delay_ns"]), evidence,
                "Fewer, larger kernels (fusion, CUDA graphs); keep the launching thread free of other work.")]


def _overlap(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    p, span = ctx["p"], ctx["span"]
    ov = comm_comp_overlap(p)
    t = temporal_breakdown(p)
    if ov.empty or t.empty or "rank" not in ov:
        return []
    every = ov.merge(t[["rank", "span_ns"]], on="rank")
    m = every[(every["comm_time_ns"] >= COMM_SHARE * every["span_ns"]) & (every["comp_comm_overlap_pctg"] < OVERLAP_BELOW)]
    if m.empty:
        if len(every):  # the rank nearest to firing: the least overlapped among those communicating enough, else any
            busy = every[every["comm_time_ns"] >= COMM_SHARE * every["span_ns"]]
            near = (busy if len(busy) else every).sort_values("comp_comm_overlap_pctg").iloc[0]
            measure(ctx, "low_overlap", _overlap_checks(near), amount=("exposed communication",
                                                                       float(near["comm_time_ns"] - near["overlap_time_ns"])))
        return []
    worst = m.sort_values("comp_comm_overlap_pctg").iloc[0]
    gain = gain_of(p, {"kind": "collective"}, 0.0, span)
    share = float(worst["comp_comm_overlap_pctg"])
    who = ctx["rank"](worst["rank"])
    gone = off_path(ctx, "low_overlap", gain, f"{who}'s communication runs {share:.0f}% under computation")
    measure(ctx, "low_overlap", _overlap_checks(worst), reported=not gone, why_not=OFF_PATH if gone else None,
            amount=("exposed communication", float(worst["comm_time_ns"] - worst["overlap_time_ns"])))
    if gone:
        return []
    exposed = float(worst["comm_time_ns"] - worst["overlap_time_ns"])
    under = "None" if share < 0.5 else f"Only {share:.0f}%"
    title = (f"{under} of {who}'s communication runs under computation ({duration(exposed)} "
             f"exposed of {duration(worst['comm_time_ns'])}"
             f"{f'; {len(m)} ranks under {OVERLAP_BELOW:.0f}%' if len(m) > 1 else ''}); hiding the NCCL kernels "
             f"entirely {saved(gain, span)}")
    evidence = {"rank": worst["rank"], "gpu": who, "overlap_pct": float(worst["comp_comm_overlap_pctg"]),
                "comm_ns": int(worst["comm_time_ns"]), "exposed_ns": exposed, "ranks": len(m)}
    start, end = _rank_span(p, worst["rank"], (ctx["start"], ctx["end"]))
    return [row("low_overlap", severity_of(gain, span), title, gain, start, end, evidence,
                "Overlap communication with compute (bucketed all-reduce, communication on its own stream).")]


def _overlap_checks(r: Any) -> list[dict[str, Any]]:
    return [check("the least overlapped rank's communication under computation", float(r["comp_comm_overlap_pctg"]),
                  OVERLAP_BELOW, unit="percent", below=True, strict=True),
            check("its communication, as a share of its span", float(r["comm_time_ns"]) / float(r["span_ns"])
                  if float(r["span_ns"]) > 0 else 0.0, COMM_SHARE)]


def _sync_copies(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    p, span = ctx["p"], ctx["span"]
    fr = frame_of(p)
    names = [n for n in fr.names if isinstance(n, str) and SYNC_COPY.match(n)]
    if not names:
        return []
    rows = fr.rows_named(*names)
    mask = np.zeros(len(fr), bool)
    mask[rows] = True
    start, end = p.array("start_ts")[rows], p.array("end_ts")[rows]
    total = float(np.nansum(np.asarray(end, float) - np.asarray(start, float)))
    gain = gain_of(p, mask, 0.0, span)
    gone = off_path(ctx, "sync_memcpy", gain, f"{rows.size:,} synchronous copies or sets")
    measure(ctx, "sync_memcpy", [check("synchronous cudaMemcpy / cudaMemset calls", rows.size, 1, unit="count")],
            reported=not gone, why_not=OFF_PATH if gone else None, amount=("time in those calls", total))
    if gone:
        return []
    counts = pd.Series(np.asarray(fr.names, dtype=object)[fr.name[rows]]).value_counts()
    what = ", ".join(f"{c:,} {n}" for n, c in counts.items())
    title = (f"{what} synchronise the host with the GPU ({duration(total)} in the calls); making them "
             f"asynchronous {saved(gain, span)}")
    return [row("sync_memcpy", severity_of(gain, span, "low"), title, gain, int(np.min(start)), int(np.nanmax(end)),
                {"calls": {str(n): int(c) for n, c in counts.items()}, "call_ns": total},
                "Use cudaMemcpyAsync / cudaMemsetAsync on a stream with pinned memory, and avoid .item() / .cpu() "
                "in the loop.")]


def _sync_on_path(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """Device synchronisation on the critical path: calls the path runs through, and the host's time in them."""
    p, span = ctx["p"], ctx["span"]
    fr = frame_of(p)
    names = [n for n in fr.names if isinstance(n, str) and SYNC_CALL.match(n)]
    if not names or span <= 0:
        return []
    path = critical_path(p)
    on = path[path["name"].isin(names)]
    ids = set(int(v) for v in on["event_id"])
    rows = fr.rows_named(*names)
    ev_id = np.asarray(p.array("id"))[rows].astype(np.int64)
    start = np.asarray(p.array("start_ts"), dtype=float)[rows]
    end = np.asarray(p.array("end_ts"), dtype=float)[rows]
    hit = np.isin(ev_id, np.fromiter(ids, np.int64, len(ids)))
    waited = float(np.nansum(end[hit] - start[hit]))
    fires = bool(hit.any()) and waited >= SYNC_WAIT_SHARE * span
    measure(ctx, "device_sync", [check("the host's wait in synchronising calls on the critical path, as a share of the run",
                                       waited / span, SYNC_WAIT_SHARE)], reported=fires, amount=("wait", waited))
    if not fires:
        return []
    counts = pd.Series(np.asarray(fr.names, dtype=object)[fr.name[rows[hit]]]).value_counts()
    what = ", ".join(f"{c:,} {n}" for n, c in counts.items())
    title = (f"The critical path runs through {what} ({int(hit.sum())} of {rows.size} synchronising calls): the host "
             f"waits {duration(waited)} in them, {pct(waited / span)} of the run, and launches nothing meanwhile; "
             "what removing them would save is not known")
    return [row("device_sync", "medium", title, np.nan, int(np.nanmin(start[hit])), int(np.nanmax(end[hit])),
                {"calls": {str(n): int(c) for n, c in counts.items()}, "on_path": int(hit.sum()),
                 "calls_total": int(rows.size), "wait_ns": waited},
                "Synchronise less: drop per-step .item() / .cpu() / torch.cuda.synchronize(), or move them off "
                "the training loop.")]


def _top_level(text: str, stop: str) -> int:
    """The first of `stop`'s characters outside <...>, (...), [...] and {...} in `text` (len(text) if none)."""
    depth = 0
    for i, ch in enumerate(text):
        if depth == 0 and ch in stop:
            return i
        depth += ch in "<([{"
        depth -= ch in ">)]}" and depth > 0
    return len(text)


def _bare(name: str) -> str:
    """A C++ name without its return type, namespaces, template arguments or parameters: 'sqrt_kernel_cuda'."""
    name = name.replace("(anonymous namespace)::", "").strip()
    if name.startswith("void "):
        name = name[5:]
    head = name[:_top_level(name, "<(")]
    return head.rsplit("::", 1)[-1].strip() or name


def short_kernel(name: str, most: int = 60) -> str:
    """A kernel's demangled name shortened to what tells it apart in a sentence: its function and, for a template,
    the first named argument ('vectorized_elementwise_kernel<sqrt_kernel_cuda>'); the name itself when short or
    not C++ (the evidence keeps every name whole)."""
    if len(name) <= most:
        return name
    base = _bare(name)
    plain = name.replace("(anonymous namespace)::", "")
    body = plain[plain.find(base) + len(base):] if base in plain else ""
    arg = ""
    if body.startswith("<"):
        inner = body[1:]
        inner = inner[:_top_level(inner, ">")]
        while inner:
            cut = _top_level(inner, ",")
            word = _bare(inner[:cut])
            if any(ch.isalpha() for ch in word):
                arg = word
                break
            inner = inner[cut + 1:]
    out = f"{base}<{arg}>" if arg else base
    return out if len(out) <= most else out[:most - 1] + "…"


def _fusion(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """Frequent short kernels: the commonest run of three kernels in a row on a stream, each about as short as
    a launch. Fused, each run is one launch instead of three."""
    p, span = ctx["p"], ctx["span"]
    fr = frame_of(p)
    k = kineto_kernels(fr, include_last_step=True, round_us=False)
    n = k.rows.size
    if n < 3 * FUSION_RUNS or span <= 0:
        return []
    copies = np.array([bool(MEMORY_KERNEL.match(str(nm))) for nm in fr.names] + [False])
    order = np.lexsort((k.start, k.stream, k.rank))
    order = order[~copies[fr.name[k.rows[order]]]]  # copies and sets are not fused with kernels
    if order.size < 3 * FUSION_RUNS:
        return []
    code = fr.name[k.rows[order]].astype(np.int64)
    lane = k.rank[order].astype(np.int64) * (int(k.stream.max()) + 2) + k.stream[order].astype(np.int64)
    dur = (k.end - k.start)[order]
    same = (lane[:-2] == lane[1:-1]) & (lane[1:-1] == lane[2:])
    base = len(fr.names) + 1
    key = (code[:-2] * base + code[1:-1]) * base + code[2:]
    key = np.where(same, key, -1)
    uniq, counts = np.unique(key[key >= 0], return_counts=True)
    if uniq.size == 0:
        return []
    best = uniq[np.argmax(counts)]
    hits = np.flatnonzero(key == best).tolist()
    starts: list[int] = []
    last = -3
    for i in hits:  # non-overlapping runs, first come first
        if i >= last + 3:
            starts.append(i)
            last = i
    runs = np.asarray(starts, np.int64)
    idx = np.concatenate([runs, runs + 1, runs + 2])
    mean = float(dur[idx].mean())
    fires = runs.size >= FUSION_RUNS and mean <= FUSION_SHORT_NS
    measure(ctx, "fusion", [check("runs of the commonest three kernels in a row", runs.size, FUSION_RUNS, unit="count"),
                            check("their mean kernel length", mean, FUSION_SHORT_NS, unit="ns", below=True)],
            reported=fires)
    if not fires:
        return []
    # The what-if keeps each kernel's wait after its launch as recorded (a gap it cannot explain), so it cannot
    # replay three launches becoming one: no gain is predicted.
    rt = kineto_launchers(fr, k, LAUNCH_NAMES, round_us=False)[0][order]
    later = rt[np.concatenate([runs + 1, runs + 2])]
    gain = float("nan")
    names = [str(fr.names[c]) for c in code[[runs[0], runs[0] + 1, runs[0] + 2]]]
    seq = " → ".join(short_kernel(nm) for nm in names)
    title = (f"The kernels {seq} run in this order {runs.size:,} times, {duration(mean)} each on average: a fusion "
             f"candidate ({int((later >= 0).sum()):,} launches fewer); what fusing them would save is not known")
    first = int(runs[0])
    return [row("fusion", "low", title, gain, k.start[order][first],
                k.end[order][int(runs[-1]) + 2], {"kernels": names, "runs": int(runs.size), "mean_kernel_ns": mean,
                                                  "launches_removed": int((later >= 0).sum())},
                "Fuse them (torch.compile, a fused op, CUDA graphs for the launches).")]
