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
from .collectives import Arrivals, neuron_arrivals, ordinal, with_absent
from .devices import COMMUNICATION, kind_of, kineto_kernels
from .frame import Frame, frame_of, notes_of
from .straggler_steps import Chunk, results


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
    arr, keys, out_labels = _arrivals(fr, kind)
    arr = with_absent(arr)
    steps, cores = _steps(arr.table, arr.labels[out_labels], keys)
    return steps, cores, arr.notes


def _arrivals(fr: Frame, kind: str) -> tuple[Arrivals, pd.DataFrame, list[str]]:
    """The arrivals (absent cores not yet added), the device keys, and the step labels shown."""
    if kind == "neuron":
        _, keys = fr.core_codes()
        return neuron_arrivals(fr), keys, NEURON_LABELS
    k = kineto_kernels(fr)
    notes = list(k.notes)
    comm = k.types(fr) == COMMUNICATION
    rows, dev = k.rows[comm], k.rank[comm]
    keys = pd.DataFrame({"rank": k.ranks})
    name = fr.name[rows]
    nth = ordinal(dev * (len(fr.names) + 1) + name, fr.start[rows])
    step, uniq = pd.MultiIndex.from_arrays([name, nth]).factorize() if rows.size else (np.zeros(0, np.int64), None)
    table = pd.DataFrame({"step": step, "dev": dev, "arrive": k.start[comm], "length": k.end[comm] - k.start[comm],
                          "release": k.end[comm], "id": fr.profile.array("id")[rows]})
    table = table.sort_values(["step", "arrive"]).drop_duplicates(["step", "dev"], keep="first")
    n = len(uniq) if uniq is not None else 0
    labels = pd.DataFrame({"step": np.arange(n),
                           "name": [fr.names[c] for c in uniq.get_level_values(0)] if uniq is not None else [],
                           "ordinal": np.asarray(uniq.get_level_values(1), np.int64) if uniq is not None
                           else np.zeros(0, np.int64)})
    if len(k.ranks) < 2:
        notes.append("one rank only: stragglers need the traces of several ranks (load_profile([...]))")
    return Arrivals(table, labels, notes), keys, ["step"]


NEURON_LABELS = ["model_name", "step", "collective"]


def _steps(df: pd.DataFrame, labels: pd.DataFrame, keys: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per step with two or more arrivals: the first arrival, the last device, its lag and the others' wait;
    per device: how often it was last (straggler_steps.results, on the table as one chunk)."""
    step = df["step"].to_numpy(np.int64)
    chunk = Chunk(step, *(df[c].to_numpy(np.int64) for c in ("dev", "arrive", "length", "id")))
    per_step, cores, _ = results(lambda: [chunk], int(step.max()) + 1 if step.size else 0, labels, keys)
    return per_step, cores
