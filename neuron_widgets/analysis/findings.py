"""What to fix first: ranked findings of a profile or a device trace, each with what a fix would save.

`findings(x)` runs the rules for the kind of trace (Neuron system rules here, device-trace rules
in `findings_device`, Kineto and plain-trace rules in `findings_kineto`) and returns one row per
finding, largest gain first. A gain comes from `what_if` (the change the fix makes, replayed over
the profile's dependency graph) where the rule can say what the fix changes; else it is NaN and
the title says so. Thresholds and where they come from: README, section "Findings".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.timefmt import duration
from ..model.worker_labels import core_label
from .critical_path import path_arrays, worker_columns
from .critical_path_build import graph_of
from .critical_path_workers import column_at
from .device_breakdown import device_trace_of
from .devices import trace_kind
from .findings_device import device_findings
from .findings_kineto import chrome_findings
from .findings_memory import hbm_near_capacity, idle_transfers
from .findings_problems import problem_findings
from .findings_rows import (
    check,
    finish,
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
from .stragglers import stragglers
from .suite import shared

# Thresholds (README "Findings" says where each comes from).
STRAGGLER_LAST_SHARE = 0.5     # last to arrive in at least half its collective steps ...
STRAGGLER_WAIT_SHARE = 0.01    # ... making the others wait at least 1% of the run in all
HOST_WAIT_SHARE = 0.10         # devices idle waiting on the host >= 10% of their span
LAUNCH_GAIN_SHARE = 0.02       # removing launch latency saves >= 2% of the run
COLLECTIVE_SHARE = 0.10        # exposed collective time >= 10% of busy time
IMBALANCE_RATIO = 1.10         # a core computes >= 10% longer than the median core

# A Job's findings, filled in by findings_job (which imports this module, not the other way round).
JOB_FINDINGS: dict[str, Callable[..., list[dict[str, Any]]]] = {}


def _is_job(x: Any) -> bool:
    return hasattr(x, "specs") and hasattr(x, "store") and hasattr(x, "parts")



def findings(x: Any, **kw: Any) -> pd.DataFrame:
    """Ranked findings of a Profile (Neuron, Kineto, plain Chrome), a DeviceTrace (or a viewer of one) or a Job.

    Columns: `rule`, `severity` (high / medium / low), `title` (one sentence: who, with the numbers),
    `gain_ns` (the run time a fix would save, from `what_if`; NaN where the rule cannot say), `start_ts`
    / `end_ts` (where to look), `part` (None outside jobs), `evidence` (a dict of the figures the rule
    used), `advice` (what to try). Sorted by gain, largest first; findings without a gain after, by
    severity. `attrs["notes"]` says what could not be decided. A Job's keyword arguments go to `across`
    (`client`, `scheduler`, `cache`).
    """
    if _is_job(x) and "findings" in JOB_FINDINGS:
        notes: list[str] = []
        return finish(JOB_FINDINGS["findings"](x, notes, **kw), notes)
    if not isinstance(x, Profile):
        try:
            trace = device_trace_of(x)
        except TypeError:
            raise TypeError(f"findings takes a Profile, a DeviceTrace, a DeviceTraceViewer or a Job, not "
                            f"{type(x).__name__}") from None
        return finish(device_findings(trace), [])
    return profile_findings(x)


def profile_findings(x: Profile) -> pd.DataFrame:
    """The findings of one profile (what a job's part task runs on its part)."""
    fr = frame_of(x)
    notes: list[str] = []
    measures: list[dict[str, Any]] = []
    if len(fr) == 0:
        return finish([], ["the profile has no events"])
    kind = trace_kind(fr)
    if kind == "neuron":
        fr.prefetch()  # as all_analyses: arguments and flow ids decode in threads while the time-only work runs
        rows = neuron_findings(x, notes, measures)
    else:
        rows = chrome_findings(x, kind, notes, measures)
    return finish(rows, notes, measures)


# ---- Neuron system profiles -------------------------------------------------------------------------------

class _Cores:
    """Core labels as the Timeline's tracks read (model/worker_labels.py): what a finding names, the track filter finds."""

    def __init__(self, temporal: pd.DataFrame, names: Any = None) -> None:
        self.names = names

    def label(self, inst: Any, pid: Any, nc: Any) -> str:
        return core_label(inst, pid, nc, self.names)


def _core_where(r: Any, kind: str | None = None) -> dict[str, Any]:
    w = {"instance_id": r["instance_id"], "process_id": int(r["process_id"]), "nc_idx": int(r["nc_idx"])}
    if kind:
        w["kind"] = kind
    return w


def neuron_findings(p: Profile, notes: list[str], measures: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The Neuron rules' findings; what each measured against its bar goes to `measures`."""
    temporal = shared(p, "temporal")
    for first in ("overlap", "idle"):  # as all_analyses: what needs no arguments while the arguments are read
        shared(p, first)
    cores = _Cores(temporal, p.track_names)
    span = run_span(p)
    if span <= 0:
        notes.append("the profile has no executions, collectives or nrt_execute calls: no gain can be predicted")
    out: list[dict[str, Any]] = []
    ctx = {"p": p, "temporal": temporal, "cores": cores, "span": span, "start": p.start_ts, "end": p.end_ts,
           "label": cores.label, "measures": measures if measures is not None else []}
    # The HBM rule reads no event arguments: it runs first, while they are still being decoded (prefetch).
    for rule in (hbm_near_capacity, _straggler, _host_wait, _launch, _collectives, _imbalance, idle_transfers,
                 problem_findings):
        got = rule(ctx)
        if rule is _straggler and got:
            ctx["straggler"] = got[0]["evidence"]["core"]
        out.extend(got)
    return out


def _straggler(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    p, temporal, span = ctx["p"], ctx["temporal"], ctx["span"]
    st = stragglers(p)
    if st.empty:
        return []
    top = st.iloc[0]
    steps = int(top["steps"])
    fires = not (steps < 2 or top["times_last"] < STRAGGLER_LAST_SHARE * steps or len(st) < 2
                 or float(top["wait_caused_ns"]) < STRAGGLER_WAIT_SHARE * span)
    label = ctx["cores"].label(top["instance_id"], top["process_id"], top["nc_idx"])
    _straggler_measures(ctx, st, label if fires else None)
    if not fires:
        return []
    key = ["instance_id", "process_id", "nc_idx"]
    t = temporal.set_index(key)
    me = (top["instance_id"], top["process_id"], top["nc_idx"])
    mine = float(t.loc[me, "compute_time_ns"]) if me in t.index else float("nan")
    peers = t.drop(index=me, errors="ignore")["compute_time_ns"]
    median = float(peers.median()) if len(peers) else float("nan")
    scale = median / mine if mine > 0 and np.isfinite(median) else float("nan")
    steps_df = stragglers(p, per_step=True)
    mine_steps = steps_df[(steps_df["instance_id"] == me[0]) & (steps_df["process_id"] == me[1])
                          & (steps_df["nc_idx"] == me[2])]
    start = mine_steps["start_ts"].min() if len(mine_steps) else ctx["start"]
    end = mine_steps["start_ts"].max() if len(mine_steps) else ctx["end"]
    evidence = {"core": label, "times_last": int(top["times_last"]), "steps": steps,
                "mean_lag_ns": float(top["mean_lag_ns"]), "max_lag_ns": int(top["max_lag_ns"]),
                "wait_caused_ns": int(top["wait_caused_ns"]), "compute_ns": mine, "peers_median_compute_ns": median,
                "where": _core_where(top, "compute")}
    on_path = _steps_on_path(p, me)
    evidence["steps_on_path"] = on_path
    path = f", on the critical path in {on_path[0]} of {on_path[1]} steps" if on_path else ""
    head = (f"{label} arrives last at {int(top['times_last'])} of {steps} collective steps, "
            f"{duration(top['mean_lag_ns'])} late on average (others wait {duration(top['wait_caused_ns'])} in all)"
            f"{path}")
    if np.isfinite(scale) and scale < 1:
        gain = gain_of(p, _core_where(top, "compute"), scale, span)
        evidence["compute_scale"] = scale
        title = (f"{head}; its compute is {pct(1 / scale - 1)} longer than the other cores' median, and matching "
                 f"it {saved(gain, span)}")
    else:
        # Its compute is not longer: it starts late. The fix then is a host that submits its executions in time.
        threads = _runtime_threads(p, me)
        gain = gain_of(p, {"kind": "gap", "thread_id": threads}, 0.0, span) if threads else float("nan")
        evidence["runtime_threads"] = threads
        title = (f"{head}; its compute is no longer than the other cores', so its executions start late: a host "
                 f"thread with no time between its nrt_execute calls {saved(gain, span)}")
    return [row("straggler", severity_of(gain, span, "medium"), title, gain, start, end, evidence,
                "Look at what that core runs before its collectives (its device profile) and at its host's launches.")]


def _straggler_measures(ctx: dict[str, Any], st: pd.DataFrame, reported: str | None) -> None:
    """Each core's straggler figures (a core new as a straggler after a fix: was it near the bar before?)."""
    span = ctx["span"]
    for r in st.itertuples(index=False):
        label = ctx["cores"].label(r.instance_id, r.process_id, r.nc_idx)
        checks = straggler_checks(float(r.times_last), float(r.steps), float(r.wait_caused_ns), span, len(st),
                                  STRAGGLER_LAST_SHARE, STRAGGLER_WAIT_SHARE)
        met = all(c["met"] for c in checks)
        measure(ctx, "straggler", checks, who={"core": label}, reported=label == reported,
                why_not=None if not met or label == reported else "another core is the one reported (the first "
                "by steps last and wait caused)", amount=("others' wait", float(r.wait_caused_ns)))


def _steps_on_path(p: Profile, core: tuple[Any, Any, Any]) -> tuple[int, int] | None:
    """In how many steps the core's work is on the critical path, of how many, as `critical_path_breakdown` counts
    them: from the path's segments and their workers, without the path's frame or the breakdown of every worker
    (a second of a 10M-event profile's findings)."""
    fr = frame_of(p)
    g, _ = graph_of(fr)
    if g is None:
        return None
    _, _, _, rows, _, on_core = path_arrays(g)
    if rows.size == 0:
        return None
    w = worker_columns(fr, rows, on_core)
    # A core's segments: no thread (work on a core, or a call whose thread is unknown) and the core's columns.
    mine = (pd.isna(w["thread_id"]) & (w["instance_id"] == core[0]) & _equal(w["process_id"], core[1])
            & _equal(w["nc_idx"], core[2]))
    step = g.step_at(rows)
    known = step >= 0
    return (pd.unique(step[mine & known]).size, pd.unique(step[known]).size)


def _equal(values: Any, want: Any) -> np.ndarray:
    """values == want with nulls unequal (as a frame's filter reads NA)."""
    return np.asarray(pd.Series(values).eq(want).fillna(False), bool)


def _host_wait(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    p, temporal, span = ctx["p"], ctx["temporal"], ctx["span"]
    idle = shared(p, "idle")
    if idle.empty or temporal.empty:
        return []
    hw = idle[idle["idle_category"] == "host_wait"]
    total_span = float(temporal["span_ns"].sum())
    waited = float(hw["idle_time_ns"].sum())
    share = waited / total_span if total_span > 0 else 0.0
    checks = [check("share of the NeuronCores' time idle waiting on the host", share, HOST_WAIT_SHARE)]
    measure(ctx, "host_wait", checks, reported=share >= HOST_WAIT_SHARE, amount=("host wait", waited))
    if share < HOST_WAIT_SHARE:
        return []
    worst = hw.sort_values("idle_time_ns", ascending=False).iloc[0]
    t = temporal.set_index(["instance_id", "process_id", "nc_idx"])
    key = (worst["instance_id"], worst["process_id"], worst["nc_idx"])
    worst_share = float(worst["idle_time_ns"]) / float(t.loc[key, "span_ns"]) if key in t.index else float("nan")
    n_cores = int((hw["idle_time_ns"] > 0).sum())
    threads = _runtime_threads(p)
    gain = gain_of(p, {"kind": "gap", "thread_id": threads}, 0.0, span) if threads else float("nan")
    label = ctx["cores"].label(*key)
    title = (f"{n_cores} of {len(temporal)} NeuronCores sit idle waiting on the host {pct(share)} of their time "
             f"({duration(waited / max(len(temporal), 1))} per core; most {label}, {pct(worst_share)}); "
             f"a host with no time between nrt_execute calls {saved(gain, span)}")
    evidence = {"host_wait_ns": waited, "share": share, "cores": n_cores, "worst_core": label,
                "worst_share": worst_share, "runtime_threads": threads}
    return [row("host_wait", severity_of(gain, span, "high"), title, gain, ctx["start"], ctx["end"], evidence,
                "Overlap the host's work (input preparation, the framework) with the device: submit the next "
                "execution before the last one ends.")]


def _runtime_threads(p: Profile, core: tuple[Any, Any, Any] | None = None) -> list[int]:
    """The threads of the `nrt_execute` calls (of one core's when `core` is (instance, pid, nc))."""
    fr = frame_of(p)
    rows = fr.rows_named("nrt_execute")
    if rows.size and core is not None:  # read at the calls' rows only, each value decided once
        def at(c: str, want: Any, number: bool) -> np.ndarray:
            codes, uniq = column_at(fr, c, rows)
            hit = [(_number(v) == float(want)) if number else (v == want) for v in uniq]
            return np.array([*hit, False])[codes]

        rows = rows[at("instance_id", core[0], False) & at("process_id", core[1], True) & at("nc_idx", core[2], True)]
    if rows.size == 0:
        return []
    codes, uniq = column_at(fr, "thread_id", rows)
    seen = np.zeros(len(uniq) + 1, bool)
    seen[codes] = True
    tid = (_number(v) for v, s in zip(uniq, seen[:-1].tolist(), strict=True) if s)
    return sorted({int(v) for v in tid if np.isfinite(v)})


def _number(v: Any) -> float:
    """A value as pandas' to_numeric(errors="coerce") reads it: NaN when it is not a number."""
    got = pd.to_numeric(pd.Series([v], dtype=object), errors="coerce").iloc[0]
    return float(got) if pd.notna(got) else float("nan")


def _launch(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    span = ctx["span"]
    got = launch_gain(ctx, "launch_overhead", LAUNCH_GAIN_SHARE)
    if got is None:
        return []
    ls, delay, gain = got
    dev = pd.to_numeric(ls["device_duration_ns"], errors="coerce")
    worst = ls.loc[delay.idxmax()]
    title = (f"nrt_execute takes {duration(delay.median())} (median; longest {duration(delay.max())}) from the call "
             f"to its execution's start, {pct(delay.sum() / max(float(dev.sum()), 1.0))} of device time over "
             f"{len(delay):,} launches; without that latency the run {saved(gain, span)}")
    evidence = {"launches": len(delay), "median_delay_ns": float(delay.median()),
                "max_delay_ns": float(delay.max()), "total_delay_ns": float(delay.sum()),
                "device_ns": float(dev.sum())}
    return [row("launch_overhead", severity_of(gain, span), title, gain, worst["start_ts"],
                int(worst["start_ts"]) + int(worst["launch_delay_ns"]), evidence,
                "Fewer, larger executions (more work per NEFF), or submit ahead so launches overlap execution.")]


def _collectives(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    p, temporal, span = ctx["p"], ctx["temporal"], ctx["span"]
    if temporal.empty:
        return []
    ov = shared(p, "overlap")
    comm = float(temporal["collective_time_ns"].sum())
    overlapped = float(ov["overlap_time_ns"].sum()) if len(ov) else 0.0
    exposed = max(comm - overlapped, 0.0)
    busy = float(temporal["busy_time_ns"].sum())
    share = exposed / busy if busy > 0 else 0.0
    measure(ctx, "exposed_collectives", [check("collective time not under compute, as a share of busy time", share,
                                               COLLECTIVE_SHARE)],
            reported=share >= COLLECTIVE_SHARE, amount=("exposed collective time", exposed))
    if share < COLLECTIVE_SHARE:
        return []
    gain = gain_of(p, {"kind": "collective"}, 0.0, span)
    title = (f"Collectives run exposed (not under compute) {pct(share)} of the NeuronCores' busy time "
             f"({duration(exposed / len(temporal))} per core over {len(temporal)} cores); hiding them entirely "
             f"{saved(gain, span)}")
    evidence = {"collective_ns": comm, "overlapped_ns": overlapped, "exposed_ns": exposed, "busy_ns": busy,
                "share": share}
    return [row("exposed_collectives", severity_of(gain, span), title, gain, ctx["start"], ctx["end"], evidence,
                "Overlap collectives with compute (the compiler's collective scheduling), or fuse small ones.")]


def _imbalance(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    p, temporal, span = ctx["p"], ctx["temporal"], ctx["span"]
    if len(temporal) < 2:
        return []
    comp = temporal["compute_time_ns"].astype(float)
    median = float(comp.median())
    worst = temporal.loc[comp.idxmax()]
    ratio = float(worst["compute_time_ns"]) / median if median > 0 else float("nan")
    label = ctx["cores"].label(worst["instance_id"], worst["process_id"], worst["nc_idx"])
    said = label == ctx.get("straggler")  # its finding already predicts matching its compute to the median
    fires = bool(np.isfinite(ratio) and ratio >= IMBALANCE_RATIO) and not said
    for r in temporal.itertuples(index=False):  # each core's figure: a core new after a fix, was it near the bar?
        mine = ctx["cores"].label(r.instance_id, r.process_id, r.nc_idx)
        c = [check("its compute against the median core's", float(r.compute_time_ns) / median if median > 0 else
                   float("nan"), IMBALANCE_RATIO, unit="ratio")]
        why = None
        if c[0]["met"] and mine != label:
            why = "a core computing longer is the one reported"
        elif c[0]["met"] and said:
            why = "it is the straggler, whose finding predicts matching its compute"
        measure(ctx, "compute_imbalance", c, who={"core": mine}, reported=fires and mine == label, why_not=why,
                amount=("compute", float(r.compute_time_ns)))
    if not fires:
        return []
    gain = gain_of(p, _core_where(worst, "compute"), 1.0 / ratio, span)
    title = (f"{label} computes {duration(worst['compute_time_ns'])}, {pct(ratio - 1)} more than the median "
             f"core's {duration(median)} (over {len(temporal)} cores); computing as the median core "
             f"{saved(gain, span)}")
    evidence = {"core": label, "compute_ns": float(worst["compute_time_ns"]), "median_compute_ns": median,
                "ratio": ratio, "cores": len(temporal), "where": _core_where(worst, "compute")}
    return [row("compute_imbalance", severity_of(gain, span, "low"), title, gain, ctx["start"], ctx["end"], evidence,
                "Balance the work across cores (sharding, sequence lengths per rank), or see why that core is slower.")]
