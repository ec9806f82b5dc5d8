"""Who is late: per collective step, the device that arrived last and how long the others waited.

Neuron: a core arrives at a collective when its `cc_exec_barrier` starts, or, with no barrier of
its own (it arrived last and waited 0), when its `cc_running` starts; see `collectives` for how
collectives are matched across cores and who takes part. Kineto (several ranks): NCCL kernels
matched by name and order per rank, arriving at their start.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.profile import Profile
from .collectives import neuron_arrivals, ordinal
from .devices import COMMUNICATION, kind_of, kineto_kernels
from .frame import Frame, frame_of, notes_of


def stragglers(profile: Profile, kind: str = "auto", per_step: bool = False) -> pd.DataFrame:
    """One row per device, worst first: how often it arrived last at a collective, and how late.

    Per step, a device's lag is its arrival minus the first arrival (the time the first device
    waited for it); the last to arrive is the step's straggler (ties: the shortest barrier, then
    the first device). Participants of a Neuron collective are the cores with a barrier or a
    `cc_running` in it, and the cores whose execution of that NEFF completed without either (taken
    to arrive at the release, waiting 0). Columns: the device keys, `times_last`, `mean_lag_ns`,
    `max_lag_ns`, `wait_caused_ns` (the others' mean wait in the steps where it was last, summed),
    `steps`. With `per_step=True`: one row per step: the last device's keys, Neuron's
    `model_name`, `step` (the exec_id, else the execution's ordinal) and `collective` (its
    ordinal in the execution), `start_ts` (first arrival), `lag_ns` (last minus first arrival),
    `mean_wait_ns` (the others' mean wait), `devices`, `id` (the last device's event, -1 when
    its arrival was taken from the release).
    """
    fr = frame_of(profile)
    kind = kind_of(fr, kind)
    # Both shapes come from one pass: all_analyses asks for each, the Summary widget too.
    steps, cores, notes = fr._cached(("stragglers", kind), lambda: _both(fr, kind))
    return notes_of((steps if per_step else cores).copy(), notes)


def _both(fr: Frame, kind: str) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    if kind == "neuron":
        _, keys = fr.core_codes()
        got = neuron_arrivals(fr)
        notes = list(got.notes)
        labels = got.labels
        table = got.table
    else:
        notes = []
        k = kineto_kernels(fr)
        notes += k.notes
        comm = k.types(fr) == COMMUNICATION
        rows, dev = k.rows[comm], k.rank[comm]
        keys = pd.DataFrame({"rank": k.ranks})
        name = fr.name[rows]
        step = pd.MultiIndex.from_arrays([name, ordinal(dev * (len(fr.names) + 1) + name, fr.start[rows])]) \
            .factorize()[0] if rows.size else np.zeros(0, np.int64)
        table = pd.DataFrame({"step": step, "dev": dev, "arrive": k.start[comm], "length": k.end[comm] - k.start[comm],
                              "release": k.end[comm], "id": fr.profile.array("id")[rows]})
        table = table.sort_values(["step", "arrive"]).drop_duplicates(["step", "dev"], keep="first")
        labels = pd.DataFrame({"step": np.arange(int(step.max()) + 1 if step.size else 0)})
        if len(k.ranks) < 2:
            notes.append("one rank only: stragglers need the traces of several ranks (load_profile([...]))")
    steps, cores = _steps(table, labels, keys)
    return steps, cores, notes


def _steps(df: pd.DataFrame, labels: pd.DataFrame, keys: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per step with two or more arrivals: the first arrival, the last device, its lag and the others' wait."""
    df = df.copy()
    counts = df.groupby("step")["dev"].transform("size")
    df = df[counts > 1]
    if df.empty:
        return _empty_steps(keys, labels), _empty_cores(keys)
    first = df.groupby("step")["arrive"].transform("min")
    last_arrival = df.groupby("step")["arrive"].transform("max")
    df["lag"] = df["arrive"] - first
    # The last to arrive; ties go to the shortest barrier (it waited least), then the lowest device.
    df = df.sort_values(["step", "arrive", "length", "dev"], ascending=[True, False, True, True])
    last = df.drop_duplicates("step", keep="first").set_index("step")
    df["is_last"] = df["dev"].to_numpy() == last.loc[df["step"], "dev"].to_numpy()
    waits = last_arrival - df["arrive"]
    others = df.assign(w=waits)[~df["is_last"]].groupby("step")["w"].mean()
    lab = labels.loc[last.index].reset_index(drop=True)
    per_step = pd.DataFrame({"start_ts": df.groupby("step")["arrive"].min().reindex(last.index).to_numpy(),
                             "lag_ns": last["lag"].to_numpy(),
                             "mean_wait_ns": others.reindex(last.index).fillna(0).to_numpy(),
                             "devices": df.groupby("step").size().reindex(last.index).to_numpy(),
                             "id": last["id"].to_numpy()})
    per_step = pd.concat([keys.iloc[last["dev"].to_numpy()].reset_index(drop=True), lab, per_step], axis=1)
    per_step = per_step.sort_values(["start_ts", *labels.columns], ignore_index=True)
    caused = others.reindex(last.index).fillna(0).groupby(last["dev"].to_numpy()).sum()
    g = df.groupby("dev")
    cores = pd.DataFrame({"times_last": g["is_last"].sum(), "mean_lag_ns": g["lag"].mean(), "max_lag_ns": g["lag"].max(),
                          "steps": g.size()})
    cores["wait_caused_ns"] = caused.reindex(cores.index).fillna(0).round().astype(np.int64)
    cores = pd.concat([keys.iloc[cores.index.to_numpy()].reset_index(drop=True), cores.reset_index(drop=True)], axis=1)
    cores = cores.sort_values(["times_last", "mean_lag_ns", "wait_caused_ns"], ascending=False, kind="stable",
                              ignore_index=True)
    return per_step, cores


def _empty_steps(keys: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(columns=[*keys.columns, *labels.columns, "start_ts", "lag_ns", "mean_wait_ns", "devices", "id"])


def _empty_cores(keys: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(columns=[*keys.columns, "times_last", "mean_lag_ns", "max_lag_ns", "steps", "wait_caused_ns"])
