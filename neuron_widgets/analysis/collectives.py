"""Each NeuronCore's arrival at each collective, matched across cores by step.

A collective on a core is a `cc_exec_barrier` with the `cc_running` that follows it in the same
execution, or a `cc_running` alone (a core that arrived last waits 0 and may record no barrier).
It belongs to the execution of its core with its `exec_id` (else the one running at its start),
and is matched across cores by (NEFF, execution, its ordinal among that execution's
collectives). The participants of a step are the cores with a collective in it, and the cores
whose execution of that NEFF completed without one: they are taken to have arrived at the release
(they waited 0). A core's arrival is its barrier's start, else its `cc_running`'s start.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .devices import BARRIER, COLLECTIVE, EXECUTION
from .frame import Frame

NO_KEY = -1


@dataclass
class Arrivals:
    """One row per (step, core): `step` (a code), `dev`, `arrive`, `length` (time it waited), `release`, `id`
    (-1: no event of its own in the step); and per step code its label columns."""

    table: pd.DataFrame
    labels: pd.DataFrame  # index: step code; model_name, step, collective (and the matching key)
    notes: list[str]
    # Completed executions (dev, model_name, key): the cores that ran a step's execution without a
    # collective of their own are found from these (`absent_of`), over a profile or a whole job.
    runs: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["dev", "model_name", "key"]))


def ordinal(group: np.ndarray, start: np.ndarray, tie: np.ndarray | None = None) -> np.ndarray:
    """Each item's position among its group's items in (start, tie) order (0, 1, 2, ...)."""
    keys = (start, group) if tie is None else (tie, start, group)
    order = np.lexsort(keys)
    g = np.asarray(group)[order]
    first = np.r_[True, g[1:] != g[:-1]] if g.size else np.zeros(0, bool)
    run_start = np.maximum.accumulate(np.where(first, np.arange(g.size), 0)) if g.size else np.zeros(0, np.int64)
    out = np.empty(g.size, np.int64)
    out[order] = np.arange(g.size) - run_start
    return out


def neuron_arrivals(fr: Frame) -> Arrivals:
    notes: list[str] = []
    ids = fr.profile.array("id")
    bars, bar_core = fr.on_cores(BARRIER)
    ccs, cc_core = fr.on_cores(COLLECTIVE)
    exs, ex_core = fr.on_cores(EXECUTION)
    empty = Arrivals(pd.DataFrame(columns=["step", "dev", "arrive", "length", "release", "id"]),
                     pd.DataFrame(columns=["model_name", "step", "collective", "key"]), notes)
    if bars.size + ccs.size == 0:
        notes.append("no cc_exec_barrier or cc_running events: no collective to find a straggler in")
        return empty
    if bars.size == 0:
        notes.append("no cc_exec_barrier events: each core's arrival is the start of its cc_running")

    # Executions: a NEFF code and an execution key (exec_id, else -2 - its ordinal among its core's runs of that NEFF).
    neff_code, neffs = fr.arg_codes(exs, "model_name") if exs.size else (np.zeros(0, np.int32), [])
    neff_code = np.asarray(neff_code, np.int64)
    ex_id = fr.arg(exs, "exec_id") if exs.size else np.zeros(0, np.int64)
    ex_ord = ordinal(ex_core.astype(np.int64) * (len(neffs) + 1) + neff_code + 1, fr.start[exs], exs)
    ex_key = np.where(ex_id >= 0, ex_id, -2 - ex_ord)
    ex_done = ~fr.incomplete[exs]

    rows = np.concatenate([bars, ccs])
    core = np.concatenate([bar_core, cc_core]).astype(np.int64)
    kind = np.r_[np.zeros(bars.size, np.int64), np.ones(ccs.size, np.int64)]  # 0: barrier, 1: cc_running
    own = fr.arg(rows, "exec_id")
    match = _execution_of(core, own, fr.start[rows], ex_core.astype(np.int64), ex_id, fr.start[exs], fr.end[exs],
                          fr.incomplete[exs], exs)
    found = match >= 0
    neff = np.where(found, neff_code[np.maximum(match, 0)] if exs.size else NO_KEY, NO_KEY)
    key = np.where(own >= 0, own, np.where(found, ex_key[np.maximum(match, 0)] if exs.size else NO_KEY, NO_KEY))

    # Sorted and paired as NumPy columns: a frame of every barrier and cc_running, sorted and filtered,
    # was three copies of it at once (a part's peak memory; issue 35.11). `row` is unique: the order is total.
    start, end, is_open = fr.start[rows], fr.end[rows], fr.incomplete[rows]
    order = np.lexsort((rows, kind, start, key, neff, core))
    rows, core, kind, neff, key, start, end, is_open = (a[order] for a in (rows, core, kind, neff, key, start, end, is_open))
    del order
    same = (core[1:] == core[:-1]) & (neff[1:] == neff[:-1]) & (key[1:] == key[:-1])
    # A barrier and the cc_running right after it in its execution are one collective.
    paired_next = np.r_[same & (kind[:-1] == 0) & (kind[1:] == 1), False]
    keep = ~np.r_[False, paired_next[:-1]]
    group = np.cumsum(np.r_[True, ~same])[keep]  # (core, neff, key) runs are contiguous: a code per run
    del same, paired_next
    rows, core, kind, neff, key, start, end, is_open = (a[keep] for a in (rows, core, kind, neff, key, start, end, is_open))
    is_bar = kind == 0
    # A barrier releases at its end; a cc_running alone waited 0 (released on arrival).
    release = np.where(is_bar & ~is_open, end, np.where(is_bar, -1, start))
    length = np.where(is_bar & ~is_open, end - start, 0)
    k = ordinal(group, start, rows)
    step_code, steps = pd.MultiIndex.from_arrays([neff, key, k]).factorize()
    # One arrival per core and step: a core's collectives in one execution differ by their ordinal.
    table = pd.DataFrame({"step": step_code, "dev": core, "arrive": start, "length": length, "release": release,
                          "id": ids[rows]})

    labels = pd.DataFrame({"neff": [s[0] for s in steps], "key": [s[1] for s in steps], "collective": [s[2] for s in steps]})
    names = np.array([*neffs, None], dtype=object)
    labels["model_name"] = names[labels["neff"].to_numpy()] if len(labels) else pd.Series(dtype=object)
    labels["step"] = np.where(labels["key"] >= 0, labels["key"], np.where(labels["key"] <= -2, -2 - labels["key"],
                                                                          labels["collective"]))
    labels["key"] = labels["key"].astype(np.int64)
    runs = pd.DataFrame({"dev": ex_core.astype(np.int64), "model_name": names[neff_code] if exs.size else [],
                         "key": ex_key})[ex_done].drop_duplicates(ignore_index=True)
    return Arrivals(table.reset_index(drop=True), labels[["model_name", "step", "collective", "key"]], notes, runs)


def with_absent(arr: Arrivals) -> Arrivals:
    """Cores that completed a step's execution with no collective of their own (`absent_of` its runs)
    added to the table, arriving at their step's release (the latest barrier end)."""
    absent = absent_of(arr.labels, arr.table, arr.runs) if len(arr.runs) and len(arr.labels) else \
        pd.DataFrame(columns=["step", "dev"])
    table, notes = arr.table, list(arr.notes)
    if len(absent):
        release = table[table["release"] >= 0].groupby("step")["release"].max()
        absent = absent.join(release, on="step", how="inner")
        if len(absent):
            absent = absent.assign(arrive=absent["release"], length=0, id=-1)
            table = pd.concat([table, absent[table.columns]], ignore_index=True)
            notes.append(f"{len(absent)} times a core ran the step's NEFF but recorded no barrier or cc_running for its "
                         "collective: it is taken to have arrived at the release (it waited 0)")
    return Arrivals(table, arr.labels, notes, arr.runs.iloc[:0])


def _execution_of(core: np.ndarray, own: np.ndarray, start: np.ndarray, ex_core: np.ndarray, ex_id: np.ndarray,
                  ex_start: np.ndarray, ex_end: np.ndarray, ex_open: np.ndarray, ex_rows: np.ndarray) -> np.ndarray:
    """Per collective, the index of its execution (-1: none): the one on its core with its exec_id (the
    earliest), else the latest started at or before it, if still running then."""
    out = np.full(core.size, -1, np.int64)
    if ex_core.size == 0 or core.size == 0:
        return out
    ex = pd.DataFrame({"core": ex_core, "id": ex_id, "start": ex_start, "row": ex_rows, "i": np.arange(ex_core.size)})
    by_id = ex[ex["id"] >= 0].sort_values(["start", "row"]).drop_duplicates(["core", "id"], keep="first")
    hit = pd.DataFrame({"core": core, "id": own}).merge(by_id[["core", "id", "i"]], on=["core", "id"], how="left")["i"]
    out[:] = hit.fillna(-1).to_numpy(np.int64)
    rest = np.flatnonzero(out < 0)
    if rest.size:
        left = pd.DataFrame({"start": start[rest], "core": core[rest], "j": rest}).sort_values("start", kind="stable")
        right = ex.sort_values(["start", "row"], kind="stable")
        got = pd.merge_asof(left, right[["start", "core", "i"]], on="start", by="core", direction="backward")
        i = got["i"].fillna(-1).to_numpy(np.int64)
        j = got["j"].to_numpy()
        running = (i >= 0) & ((ex_end[np.maximum(i, 0)] > start[j]) | ex_open[np.maximum(i, 0)])
        out[j[running]] = i[running]
    return out


def absent_of(labels: pd.DataFrame, table: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """(step, dev) of cores that completed a step's execution (model_name, key) with no arrival in it."""
    codes, _ = pd.factorize(pd.concat([labels["model_name"], runs["model_name"]], ignore_index=True),
                                use_na_sentinel=True)
    step_neff, run_neff = codes[: len(labels)], codes[len(labels):]
    steps = pd.MultiIndex.from_arrays([step_neff, labels["key"].to_numpy(np.int64), labels["collective"].to_numpy(np.int64)])
    return _absent(steps, table, runs["dev"].to_numpy(np.int64), run_neff.astype(np.int64), runs["key"].to_numpy(np.int64),
                   np.ones(len(runs), bool))


def _absent(steps: pd.MultiIndex, table: pd.DataFrame, ex_core: np.ndarray, neff_code: np.ndarray, ex_key: np.ndarray,
            ex_done: np.ndarray) -> pd.DataFrame:
    """(step, dev) pairs of cores with a completed execution of a step's (NEFF, execution) and no arrival in it."""
    if len(steps) == 0 or ex_core.size == 0:
        return pd.DataFrame(columns=["step", "dev"])
    st = pd.DataFrame({"neff": steps.get_level_values(0), "key": steps.get_level_values(1), "step": np.arange(len(steps))})
    st = st[st["neff"] >= 0]
    runs = pd.DataFrame({"dev": ex_core.astype(np.int64), "neff": neff_code, "key": ex_key})[ex_done]
    runs = runs.drop_duplicates()
    pairs = st.merge(runs, on=["neff", "key"])[["step", "dev"]]
    have = pd.MultiIndex.from_frame(table[["step", "dev"]].astype(np.int64))
    mine = pd.MultiIndex.from_frame(pairs.astype(np.int64))
    return pairs[~mine.isin(have)].reset_index(drop=True)
