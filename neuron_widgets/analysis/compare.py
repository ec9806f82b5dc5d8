"""Two profiles side by side: what got slower, what ran more often (HTA's trace diff), and step by step (did the fix work)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from .across import across
from .frame import notes_of
from .temporal import temporal_breakdown
from .totals import totals

BY = ("name", "neff", "core", "step")
# by="step" is compare_steps' (it needs findings, which reach this module through across): it registers itself.
STEP_COMPARE: dict[str, Callable[..., Any]] = {}


def compare(a: Any, b: Any, by: str = "name", client: Any = None, **job_kw: Any) -> Any:
    """Per event name (`by="name"`), NEFF (`"neff"`) or device (`"core"`), a's numbers beside b's;
    `by="step"`: did the fix work, a (before) against b (after) step by step (a `Comparison`).

    name / neff: `count_a`, `count_b`, `total_ns_a`, `total_ns_b`, `delta_total_ns` (b - a),
    `mean_ns_a`, `mean_ns_b`, `delta_mean_ns`, largest absolute `delta_total_ns` first; a name
    in one profile only has zeros for the other. core: the temporal breakdown of each, devices
    matched by `worker_gid` (Neuron, else by position) or `rank` (Kineto), with `delta_*_pctg`.
    `a` and `b` may be Profiles or jobs (`nw.load_job`): a job's totals are summed over its parts,
    each part analysed as a Dask task (on `client` when given), its devices are every part's.

    step: a `Comparison` with `.steps` (each NEFF's k-th step of a beside its k-th of b: durations,
    `delta_ns` = b - a, `delta_pct`, `status` matched / before only / after only), `.findings` (every
    finding of either, `gone` / `new` / `changed` / `same`, a's predicted `gain_ns` beside the measured
    saving; matched on the rule and the worker's role, not its ids: `key` and `matched_by` say which;
    `figures_changed` the evidence that moved), `.headline`, `.saved_ns` (a's span less b's) and
    `.predicted_ns`; shown as HTML in a notebook.
    Two Jobs are compared on their joined what-if graphs; `job_kw` (e.g. `scheduler="sync"`) go to
    their analyses.
    """
    if job_kw and by != "step":
        raise TypeError(f"compare(by={by!r}) takes no {', '.join(job_kw)}")
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}, not {by!r}")
    if by == "step":  # registered when the package is imported (neuron_widgets.analysis imports compare_steps)
        return STEP_COMPARE["step"](a, b, client, **job_kw)
    if by == "core":
        return _cores(*(_cores_of(x, client) for x in (a, b)))
    ta, tb = (_totals_of(x, by, client) for x in (a, b))
    key = ta.columns[0]
    df = ta.merge(tb, on=key, how="outer", suffixes=("_a", "_b"))
    for c in ("count", "total_ns"):
        for s in ("_a", "_b"):
            df[c + s] = df[c + s].fillna(0).astype(np.int64)
    for s in ("_a", "_b"):
        df["mean_ns" + s] = df["mean_ns" + s].fillna(0.0)
    df["delta_total_ns"] = df["total_ns_b"] - df["total_ns_a"]
    df["delta_mean_ns"] = df["mean_ns_b"] - df["mean_ns_a"]
    df = df[[key, "count_a", "count_b", "total_ns_a", "total_ns_b", "delta_total_ns", "mean_ns_a", "mean_ns_b",
             "delta_mean_ns"]]
    df = df.iloc[np.argsort(-df["delta_total_ns"].abs().to_numpy(), kind="stable")].reset_index(drop=True)
    return notes_of(df, ta.attrs.get("notes", []) + tb.attrs.get("notes", []))


def _is_job(x: Any) -> bool:
    return not isinstance(x, Profile) and hasattr(x, "specs")


def _totals_of(x: Any, by: str, client: Any) -> pd.DataFrame:
    if not _is_job(x):
        return totals(x, by)

    got = across(x, [f"totals:{by}"], client)
    left = got["parts"].attrs.get("notes", [])
    frames = [df for _, df in got[f"totals:{by}"] if len(df)]
    notes = left + [f"{part}: {n}" for part, df in got[f"totals:{by}"] for n in df.attrs.get("notes", [])]
    key = "model_name" if by == "neff" else "name"
    if not frames:
        return notes_of(pd.DataFrame(columns=[key, "count", "total_ns", "mean_ns"]), notes)
    st = pd.concat(frames).groupby(key, as_index=False).agg(count=("count", "sum"), total_ns=("total_ns", "sum"))
    st["mean_ns"] = st["total_ns"] / st["count"]
    return notes_of(st, notes)


def _cores_of(x: Any, client: Any) -> pd.DataFrame:
    if not _is_job(x):
        return temporal_breakdown(x)

    got = across(x, ["temporal_breakdown"], client)
    return got["temporal_breakdown"]


def _cores(ta: pd.DataFrame, tb: pd.DataFrame) -> pd.DataFrame:
    notes = ta.attrs.get("notes", []) + tb.attrs.get("notes", [])
    if "rank" in ta and "rank" in tb and set(ta["rank"]) & set(tb["rank"]):
        key = ["rank"]
    elif "worker_gid" in ta and "worker_gid" in tb and ta["worker_gid"].notna().all() and tb["worker_gid"].notna().all():
        key = ["worker_gid"]
    else:
        ta, tb = ta.assign(device=np.arange(len(ta))), tb.assign(device=np.arange(len(tb)))
        key = ["device"]
        notes.append("devices matched by position (no rank or worker_gid common to both profiles)")
    pctg = [c for c in ta.columns if c.endswith("_pctg") and c in tb.columns]
    label = [c for c in ("part", "rank", "instance_id", "nc_idx") if c in ta.columns and c not in key]
    df = ta[key + label + pctg].merge(tb[key + pctg], on=key, how="outer", suffixes=("_a", "_b"))
    for c in pctg:
        df[f"delta_{c}"] = df[f"{c}_b"] - df[f"{c}_a"]
    return notes_of(df, notes)
