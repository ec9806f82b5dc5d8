"""Who is late: per collective step, the device that arrived last and how long the others waited.

Neuron: each NeuronCore's `cc_exec_barrier` starts when the core arrives and ends when every
participant has; barriers are matched across cores by step (their `exec_id`, else their order on
each core). Kineto (several ranks): NCCL kernels matched by name and order per rank, arriving
at their start.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.profile import Profile
from .devices import BARRIER, COMMUNICATION, kind_of, kineto_kernels
from .frame import Frame, frame_of, notes_of, sorted_union


def stragglers(profile: Profile, kind: str = "auto", per_step: bool = False) -> pd.DataFrame:
    """One row per device, worst first: how often it arrived last at a collective, and how late.

    Per step, a device's lag is its arrival minus the first arrival (the time the first device
    waited for it); the last to arrive is the step's straggler (ties: the shortest barrier). A
    core with no barrier in a step where the others have one is taken to have waited 0 (it
    arrived last). Columns: the device keys, `times_last`, `mean_lag_ns`, `max_lag_ns`,
    `wait_caused_ns` (the others' mean wait in the steps where it was last, summed), `steps`.
    With `per_step=True`: one row per step: `step`, `start_ts` (first arrival), the last
    device's keys, `lag_ns` (last minus first arrival), `mean_wait_ns` (the others' mean
    wait), `devices`.
    """
    fr = frame_of(profile)
    kind = kind_of(fr, kind)
    # Both shapes come from one pass: all_analyses asks for each, the Summary widget too.
    steps, cores, notes = fr._cached(("stragglers", kind), lambda: _both(fr, kind))
    return notes_of((steps if per_step else cores).copy(), notes)


def _both(fr: Frame, kind: str) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    notes: list[str] = []
    if kind == "neuron":
        _, keys = fr.core_codes()
        rows, dev = fr.on_cores(BARRIER)
        exec_id = fr.arg(rows, "exec_id") if rows.size else np.zeros(0, np.int64)
        if rows.size and (exec_id >= 0).all():
            step = exec_id
        else:
            if rows.size:
                notes.append("barriers carry no exec_id: they are matched across cores by their order on each core")
            step = _ordinal(dev, fr.start[rows])
        if rows.size == 0:
            notes.append("no cc_exec_barrier events: no collective to find a straggler in")
        arrive, release, ids = fr.start[rows], fr.end[rows], fr.profile.array("id")[rows]
        step_key = step
    else:
        k = kineto_kernels(fr)
        notes += k.notes
        comm = k.types(fr) == COMMUNICATION
        rows, dev = k.rows[comm], k.rank[comm]
        keys = pd.DataFrame({"rank": k.ranks})
        name = fr.name[rows]
        step_key = pd.MultiIndex.from_arrays([name, _ordinal(dev * (len(fr.names) + 1) + name, fr.start[rows])]) \
            .factorize()[0] if rows.size else np.zeros(0, np.int64)
        arrive, release, ids = k.start[comm], k.end[comm], fr.profile.array("id")[rows]
        step = step_key
        if len(k.ranks) < 2:
            notes.append("one rank only: stragglers need the traces of several ranks (load_profile([...]))")
    steps, cores = _steps(np.asarray(step_key), np.asarray(step), dev, arrive, release, ids, keys, notes)
    return steps, cores, notes


def _ordinal(group: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Each event's position among its group's events in time order (0, 1, 2, ...)."""
    order = np.lexsort((start, group))
    g = group[order]
    first = np.r_[True, g[1:] != g[:-1]] if g.size else np.zeros(0, bool)
    run_start = np.maximum.accumulate(np.where(first, np.arange(g.size), 0)) if g.size else g
    out = np.empty(group.size, np.int64)
    out[order] = np.arange(g.size) - run_start
    return out


def _steps(step_key: np.ndarray, step_label: np.ndarray, dev: np.ndarray, arrive: np.ndarray, release: np.ndarray,
           ids: np.ndarray, keys: pd.DataFrame, notes: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = pd.DataFrame({"step": step_key, "label": step_label, "dev": dev, "arrive": arrive,
                       "length": release - arrive, "release": release, "id": ids})
    df = df.sort_values(["step", "arrive"]).drop_duplicates(["step", "dev"], keep="first")
    participants = sorted_union(dev)
    counts = df.groupby("step")["dev"].transform("size")
    missing = int((len(participants) - df.groupby("step")["dev"].size()).clip(lower=0).sum()) if len(df) else 0
    if missing and len(participants) > 1:
        notes.append(f"{missing} times a core had no barrier in a step where the others had one: "
                     "it is taken to have arrived last and waited 0")
        full = pd.MultiIndex.from_product([df["step"].unique(), participants], names=["step", "dev"])
        have = pd.MultiIndex.from_frame(df[["step", "dev"]])
        absent = full.difference(have).to_frame(index=False)
        rel = df.groupby("step").agg(release=("release", "max"), label=("label", "first"))
        absent = absent.join(rel, on="step")
        absent["arrive"], absent["length"], absent["id"] = absent["release"], 0, -1
        df = pd.concat([df, absent[df.columns]], ignore_index=True)
        counts = df.groupby("step")["dev"].transform("size")
    df = df[counts > 1] if len(participants) > 1 else df.iloc[0:0]
    if df.empty:
        return _empty_steps(keys), _empty_cores(keys)
    first = df.groupby("step")["arrive"].transform("min")
    df["lag"] = df["arrive"] - first
    # The last to arrive; ties go to the shortest barrier (it waited least).
    df = df.sort_values(["step", "arrive", "length"], ascending=[True, False, True])
    last = df.drop_duplicates("step", keep="first").set_index("step")
    df["is_last"] = (df["dev"].to_numpy() == last.loc[df["step"], "dev"].to_numpy())
    waits = (df["arrive"].groupby(df["step"]).transform("max") - df["arrive"])
    others = df.assign(w=waits)[~df["is_last"]].groupby("step")["w"].mean()
    per_step = pd.DataFrame({"step": last["label"].to_numpy(), "start_ts": df.groupby("step")["arrive"].min()
                             .reindex(last.index).to_numpy(), "lag_ns": last["lag"].to_numpy(),
                             "mean_wait_ns": others.reindex(last.index).fillna(0).to_numpy(),
                             "devices": df.groupby("step").size().reindex(last.index).to_numpy(),
                             "id": last["id"].to_numpy()})
    per_step = pd.concat([keys.iloc[last["dev"].to_numpy()].reset_index(drop=True), per_step], axis=1)
    per_step = per_step.sort_values("start_ts", ignore_index=True)
    caused = others.reindex(last.index).fillna(0).groupby(last["dev"].to_numpy()).sum()
    g = df.groupby("dev")
    cores = pd.DataFrame({"times_last": g["is_last"].sum(), "mean_lag_ns": g["lag"].mean(), "max_lag_ns": g["lag"].max(),
                          "steps": g.size()})
    cores["wait_caused_ns"] = caused.reindex(cores.index).fillna(0).astype(np.int64)
    cores = pd.concat([keys.iloc[cores.index.to_numpy()].reset_index(drop=True), cores.reset_index(drop=True)], axis=1)
    cores = cores.sort_values(["times_last", "mean_lag_ns"], ascending=False, ignore_index=True)
    return per_step, cores


def _empty_steps(keys: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(columns=[*keys.columns, "step", "start_ts", "lag_ns", "mean_wait_ns", "devices", "id"])


def _empty_cores(keys: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(columns=[*keys.columns, "times_last", "mean_lag_ns", "max_lag_ns", "steps", "wait_caused_ns"])
