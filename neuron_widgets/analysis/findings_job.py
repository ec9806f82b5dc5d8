"""Findings of a multi-node job, from `across` (each part's small tables, stragglers matched job-wide):
the core that is last in many steps, a node slower on all its cores, parts that could not be read,
and every part's errors and hangs. No gain is predicted for these: `what_if(job)` replays the job
part by part, but a straggler's lateness or a slow node is not one kind of work it scales (the
title names the what-if to try). Each part's own rules run too (findings_parts: host wait, launch
overhead, ..., with the job's gain where it can be replayed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..model.timefmt import duration
from ..model.worker_labels import core_label
from .across import across
from .findings import JOB_FINDINGS
from .findings_parts import part_rows
from .findings_problems import problem_findings
from .findings_rows import pct, row

JOB_LAST_SHARE = 0.5     # as the profile's straggler rule: last in at least half the steps
SLOW_NODE_RATIO = 1.10   # every core of a node computes >= 10% longer than the other nodes' median core
# what_if(job, ...) replays the job part by part, but lateness or a slower node is not one kind of work it can scale.
NO_JOB_GAIN = ("the gain is not modelled (lateness is not one kind of work to scale: try analysis.what_if(job, ...) "
               "on that part's work)")


def no_job_gain(part: str, kineto: bool) -> str:
    """NO_JOB_GAIN with the what-if to try spelt out for the part: its compute (Neuron), its kernels and host work
    (Kineto: a rank's device and host work; a Kineto path has no compute)."""
    kind = '["kernel", "host"]' if kineto else '"compute"'
    return ("the gain is not modelled (lateness is not one kind of work to scale: try "
            f'analysis.what_if(job, {{"part": "{part}", "kind": {kind}}}, 0.5))')


def is_job(x: Any) -> bool:
    return hasattr(x, "specs") and hasattr(x, "store") and hasattr(x, "parts")


def job_findings(job: Any, notes: list[str], **kw: Any) -> list[dict[str, Any]]:
    got = across(job, ["temporal_breakdown", "stragglers", "errors_and_hangs"], **kw)
    mine = {k: kw[k] for k in ("client", "scheduler", "num_workers", "cache") if k in kw}
    notes.extend(got["parts"].attrs.get("notes", []))
    parts = got["parts"]
    ok = parts[parts["status"] != "left out"]
    start = int(ok["start_ts"].min()) if len(ok) and ok["start_ts"].notna().any() else None
    end = int(ok["end_ts"].max()) if len(ok) and ok["end_ts"].notna().any() else None
    temporal = got["temporal_breakdown"]

    def label(inst: Any, pid: Any, nc: Any) -> str:
        # The part's own track label: in the job's Timeline it reads "<part>/<this>", the filter finds it there too.
        return core_label(inst, pid, nc)

    ctx = {"start": start or 0, "end": end, "label": label, "p": None}
    out = _last_often(got, label) + _slow_node(temporal, start, end) + _unread(parts, start, end)
    out += problem_findings(ctx, got["errors_and_hangs"])
    run_ns = end - start if start is not None and end is not None else 0
    return out + part_rows(job, notes, **mine, run_ns=run_ns)


JOB_FINDINGS["findings"] = job_findings


def clip(text: str, most: int) -> str:
    """`text` within `most` characters, cut at a word's end with an ellipsis (never mid-word)."""
    if len(text) <= most:
        return text
    cut = text[:most].rsplit(None, 1)[0] if " " in text[:most] else text[:most]
    return cut.rstrip(" ,;:") + "…"


def _last_often(got: dict[str, Any], label: Any) -> list[dict[str, Any]]:
    st = got["stragglers"]
    if len(st) < 2:
        return []
    top = st.iloc[0]
    steps = int(top["steps"])
    if steps < 2 or top["times_last"] < JOB_LAST_SHARE * steps or not top["mean_lag_ns"] > 0:
        return []
    mine = got["straggler_steps"]
    if "rank" in st.columns:  # Kineto ranks: a rank is the worker
        who = f"rank {top['rank']}"
        mine = mine[(mine["part"] == top["part"]) & (mine["rank"] == top["rank"])] if "rank" in mine else mine[:0]
    else:
        who = label(top["instance_id"], top["process_id"], top["nc_idx"])
        mine = mine[(mine["part"] == top["part"]) & (mine["instance_id"] == top["instance_id"])
                    & (mine["process_id"] == top["process_id"]) & (mine["nc_idx"] == top["nc_idx"])]
    workers = "ranks" if "rank" in st.columns else "cores"
    title = (f"{top['part']} {who} is last at {int(top['times_last'])} of {steps} collective steps across the job's "
             f"{len(st)} {workers}, {duration(top['mean_lag_ns'])} late on average (others wait "
             f"{duration(top['wait_caused_ns'])} in all); {no_job_gain(str(top['part']), 'rank' in st.columns)}")
    evidence = {"part": top["part"], "core": who, "times_last": int(top["times_last"]), "steps": steps,
                "mean_lag_ns": float(top["mean_lag_ns"]), "wait_caused_ns": int(top["wait_caused_ns"]),
                workers: len(st)}
    return [row("job_straggler", "high", title, np.nan, mine["start_ts"].min() if len(mine) else None,
                mine["start_ts"].max() if len(mine) else None, evidence,
                "Open that part at its worst step: its device profile and its host's launches say why it is late.",
                top["part"])]


def _slow_node(temporal: pd.DataFrame, start: Any, end: Any) -> list[dict[str, Any]]:
    if temporal.empty or temporal["part"].nunique() < 2:
        return []
    out = []
    for part, mine in temporal.groupby("part", sort=True):
        others = temporal.loc[temporal["part"] != part, "compute_time_ns"].astype(float)
        median = float(others.median())
        fastest = float(mine["compute_time_ns"].min())
        if not median > 0 or fastest < SLOW_NODE_RATIO * median:
            continue
        workers = "ranks" if "rank" in mine.columns else "cores"
        title = (f"{part} is slower on all its {len(mine)} {workers}: its fastest computes {duration(fastest)}, "
                 f"{pct(fastest / median - 1)} more than the other parts' median ({duration(median)}); "
                 f"{no_job_gain(str(part), workers == 'ranks')}")
        out.append(row("slow_node", "high", title, np.nan, start, end,
                       {"part": part, "cores": len(mine), "fastest_compute_ns": fastest,
                        "others_median_compute_ns": median, "ratio": fastest / median},
                       "A node slow on every core points at the node (clocks, thermal, a noisy neighbour, its "
                       "host), not at the model.", part))
    return out


def _unread(parts: pd.DataFrame, start: Any, end: Any) -> list[dict[str, Any]]:
    out = []
    for _, p in parts[parts["status"] == "left out"].iterrows():
        why = str(p.get("error") or "not readable")
        title = f"{p['part']} could not be read and is left out of every finding: {clip(why, 200)}"
        out.append(row("unread_part", "medium", title, np.nan, start, end, {"part": p["part"], "error": why},
                       "Copy that part again (a truncated or failed copy), or load it alone to see the error.",
                       p["part"]))
    return out
