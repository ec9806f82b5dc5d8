"""The job-wide stragglers as they were computed before the parts' arrivals were narrowed (issue 35.11):
each part's full arrival table, concatenated into one job-wide table. Kept as the reference the
narrow, a-part-at-a-time join (neuron_widgets.analysis.stragglers_job) is compared with."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from neuron_widgets.analysis.collectives import Arrivals, with_absent
from neuron_widgets.analysis.devices import kind_of
from neuron_widgets.analysis.frame import frame_of, notes_of
from neuron_widgets.analysis.stragglers import _arrivals
from neuron_widgets.model.profile import Profile

NEURON_LABELS = ["model_name", "step", "collective"]
_MATCH = {"neuron": ["model_name", "key", "collective"], "kineto": ["name", "ordinal"]}
_DEVICE = {"neuron": ["instance_id", "process_id", "nc_idx", "worker_gid"], "kineto": ["rank"]}
_NONE = "\0none"


def part_arrivals(profile: Profile, kind: str = "auto") -> dict[str, Any]:
    """One part's arrivals, what a job's stragglers are computed from: `arrivals` (step, dev codes and
    times), `labels` (per step code: its matching labels), `devices` (per dev code: its keys) and, for
    Neuron, `runs` (completed executions: dev, model_name, key), with `kind` and `notes`."""
    fr = frame_of(profile)
    kind = kind_of(fr, kind)
    arr, keys, _ = _arrivals(fr, kind)
    t = arr.table
    arrivals = pd.DataFrame({c: t[c].to_numpy(np.int64) for c in ("step", "dev", "arrive", "length", "release", "id")})
    labels = arr.labels[_MATCH[kind] + (["step"] if kind == "neuron" else [])].reset_index(drop=True)
    return {"kind": kind, "notes": arr.notes, "arrivals": arrivals, "labels": labels,
            "devices": keys[_DEVICE[kind]].reset_index(drop=True),
            "runs": arr.runs.reset_index(drop=True).astype({"model_name": "category"}) if kind == "neuron" else None}


def job_stragglers(parts: list[tuple[str, dict[str, Any]]]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Stragglers of a whole job from its parts' `part_arrivals`: (per device, per step, lag per device and step).

    Collectives are matched across every core of the job by their step labels (Neuron: NEFF, execution,
    collective ordinal; Kineto: kernel name and ordinal), so a core that holds back another node is
    found; a core that completed a step's execution without a collective of its own arrives at that
    step's release over the whole job. Only the parts' small label and device tables are matched;
    the arrivals themselves are renumbered by array look-ups."""
    kinds = {got["kind"] for _, got in parts if len(got["arrivals"])} or {"neuron"}
    kind = "neuron" if "neuron" in kinds else "kineto"
    notes = [f"{name}: {n}" for name, got in parts for n in got["notes"]]
    if len(kinds) > 1:
        notes.append("parts of different kinds (Neuron and Kineto): only the Neuron parts' collectives are matched")
    mine = [(name, got) for name, got in parts if got["kind"] == kind and len(got["arrivals"])]
    dev_cols, match = ["part", *_DEVICE[kind]], _MATCH[kind]
    out_labels = NEURON_LABELS if kind == "neuron" else ["step"]
    if not mine:
        keys = pd.DataFrame(columns=dev_cols)
        labels = pd.DataFrame(columns=out_labels)
        return (notes_of(_empty_cores(keys), notes), notes_of(_empty_steps(keys, labels), notes),
                pd.DataFrame(columns=[*dev_cols, *out_labels, "start_ts", "lag_ns", "id"]))
    # Devices in the order a merged profile numbers them (instance, process, core), then by part.
    devs = pd.concat([got["devices"].assign(part=name, local=np.arange(len(got["devices"])), p=k)
                      for k, (name, got) in enumerate(mine)], ignore_index=True)
    order = _DEVICE[kind][:3] if kind == "neuron" else ["rank"]
    devs = devs.sort_values([*order, "part"], kind="stable", ignore_index=True)
    keys = devs[dev_cols]
    dev_maps = [np.empty(len(got["devices"]), np.int64) for _, got in mine]
    for g, (p, local) in enumerate(zip(devs["p"].to_numpy(), devs["local"].to_numpy(), strict=True)):
        dev_maps[p][local] = g
    # Steps: the parts' label tables matched by value.
    labs = pd.concat([got["labels"].assign(p=k) for k, (_, got) in enumerate(mine)], ignore_index=True)
    step_all, uniq = pd.MultiIndex.from_frame(labs[match].astype(object).fillna(_NONE)).factorize()
    labels = uniq.to_frame(index=False, name=match)
    labels = labels.mask(labels == _NONE, None)
    bounds = np.cumsum([0] + [len(got["labels"]) for _, got in mine])
    step_maps = [step_all[bounds[k]:bounds[k + 1]] for k in range(len(mine))]
    arrs = [got["arrivals"] for _, got in mine]
    step = np.concatenate([step_maps[k][a["step"].to_numpy()] for k, a in enumerate(arrs)])
    dev = np.concatenate([dev_maps[k][a["dev"].to_numpy()] for k, a in enumerate(arrs)])
    cols = {c: np.concatenate([a[c].to_numpy(np.int64) for a in arrs]) for c in ("arrive", "length", "release", "id")}
    if kind == "neuron":
        labels["step"] = labs.groupby(step_all)["step"].first().to_numpy()
        labels = labels.astype({"key": np.int64, "collective": np.int64, "step": np.int64})
    else:  # steps numbered by their first arrival
        first = pd.Series(cols["arrive"]).groupby(step).min().reindex(range(len(labels))).to_numpy()
        labels["step"] = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    table = pd.DataFrame({"step": step, "dev": dev, **cols})
    has_runs = [got["runs"] is not None and len(got["runs"]) for _, got in mine]
    may_be_absent = _may_leave_absent(table, labels) if any(has_runs) else None
    runs = []
    for k, (_, got) in enumerate(mine):
        r = got["runs"]
        if may_be_absent is not None and has_runs[k]:
            d, name, key = dev_maps[k][r["dev"].to_numpy(np.int64)], r["model_name"].to_numpy(object), r["key"].to_numpy(np.int64)
            keep = may_be_absent(d, name, key)
            runs.append((d[keep], name[keep], key[keep]))
    job_runs = pd.DataFrame({"dev": np.concatenate([d for d, _, _ in runs]),
                             "model_name": np.concatenate([n for _, n, _ in runs]),
                             "key": np.concatenate([k for _, _, k in runs])}) if runs else \
        pd.DataFrame(columns=["dev", "model_name", "key"])
    arr = with_absent(Arrivals(table, labels, notes, job_runs))
    steps, cores = _steps(arr.table, arr.labels[out_labels], keys)
    lag = arr.table
    code = lag["step"].to_numpy(np.int64)  # per step by array look-ups: a job has millions of rows
    n_codes = int(code.max()) + 1 if code.size else 0
    earliest = np.full(n_codes, np.iinfo(np.int64).max)
    np.minimum.at(earliest, code, lag["arrive"].to_numpy(np.int64))
    first = earliest[code]
    many = np.bincount(code, minlength=n_codes)[code] > 1
    lag, first = lag[many], first[many]
    # A row per core and step (millions in a job): its names as categories, not a string per row.
    lag_frame = pd.concat([_as_categories(keys).iloc[lag["dev"].to_numpy()].reset_index(drop=True),
                           _as_categories(arr.labels[out_labels]).iloc[lag["step"].to_numpy()].reset_index(drop=True),
                           pd.DataFrame({"start_ts": first, "lag_ns": lag["arrive"].to_numpy(np.int64) - first,
                                         "id": lag["id"].to_numpy(np.int64)})], axis=1)
    return notes_of(cores, arr.notes), notes_of(steps, arr.notes), notes_of(lag_frame, arr.notes)


def _as_categories(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with its text columns as categories (sorted: they order as the text does)."""
    text = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]
    return df.astype({c: "category" for c in text}) if text else df


def _may_leave_absent(table: pd.DataFrame, labels: pd.DataFrame) -> Any:
    """A test of runs (core, NEFF, key): may the run leave its core absent from a step? A core arrives
    at most once per step, so a run whose core arrived at as many steps of its execution (NEFF, key)
    as the job has is never absent, nor is a run of an execution with no step. A job has a run per
    core and step; most are set aside here, a part at a time, before the absent cores are looked for."""
    name, names = pd.factorize(labels["model_name"], use_na_sentinel=True)
    execs, uniq = pd.MultiIndex.from_arrays([name, labels["key"].to_numpy(np.int64)]).factorize() if len(labels) else \
        (np.zeros(0, np.int64), None)
    steps_of = np.bincount(execs, minlength=len(uniq) if uniq is not None else 0)
    n = max(steps_of.size, 1)
    arrived = table["dev"].to_numpy(np.int64) * n + execs[table["step"].to_numpy(np.int64)] if len(table) else \
        np.zeros(0, np.int64)
    seen, times = np.unique(arrived, return_counts=True)
    index = pd.Index(names)

    def test(dev: np.ndarray, model_name: np.ndarray, key: np.ndarray) -> np.ndarray:
        if uniq is None or dev.size == 0:
            return np.zeros(dev.size, bool)
        run_name = index.get_indexer(model_name) if len(index) else np.full(dev.size, -1, np.int64)
        run_exec = uniq.get_indexer(pd.MultiIndex.from_arrays([run_name, key]))
        at = dev * n + np.maximum(run_exec, 0)
        where = np.minimum(np.searchsorted(seen, at), max(seen.size - 1, 0))
        got = np.where(seen[where] == at, times[where], 0) if seen.size else np.zeros(dev.size, np.int64)
        return (run_exec >= 0) & (got < steps_of[np.maximum(run_exec, 0)])

    return test


def _steps(df: pd.DataFrame, labels: pd.DataFrame, keys: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per step with two or more arrivals: the first arrival, the last device, its lag and the others' wait.

    Row-sized work is array look-ups by step code (a job has a row per core and step: millions),
    so no frame of the arrivals is copied, sorted or grouped; step- and core-sized results are frames.
    """
    step_all = df["step"].to_numpy(np.int64)
    n_codes = int(step_all.max()) + 1 if step_all.size else 0
    count = np.bincount(step_all, minlength=n_codes)
    keep = count[step_all] > 1
    if not keep.any():
        return _empty_steps(keys, labels), _empty_cores(keys)
    step = step_all[keep]
    dev, arrive, length, ids = (df[c].to_numpy(np.int64)[keep] for c in ("dev", "arrive", "length", "id"))
    first = np.full(n_codes, np.iinfo(np.int64).max)
    np.minimum.at(first, step, arrive)
    latest = np.full(n_codes, np.iinfo(np.int64).min)
    np.maximum.at(latest, step, arrive)
    lag = arrive - first[step]
    # The last to arrive; ties go to the shortest barrier (it waited least), then the lowest device.
    tied = np.flatnonzero(arrive == latest[step])
    tied = tied[np.lexsort((dev[tied], length[tied], step[tied]))]
    head = np.r_[True, step[tied][1:] != step[tied][:-1]]
    last_row = tied[head]  # one row per kept step, in step order
    kept = step[last_row]
    last_dev = np.full(n_codes, -1, np.int64)
    last_dev[kept] = dev[last_row]
    is_last = dev == last_dev[step]
    waits = (latest[step] - arrive)[~is_last]
    n_others = np.bincount(step[~is_last], minlength=n_codes)[kept]
    wait_sum = np.bincount(step[~is_last], weights=waits.astype(np.float64), minlength=n_codes)[kept]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_wait = np.where(n_others > 0, wait_sum / np.maximum(n_others, 1), 0.0)
    lab = labels.loc[kept].reset_index(drop=True)
    per_step = pd.DataFrame({"start_ts": first[kept], "lag_ns": lag[last_row], "mean_wait_ns": mean_wait,
                             "devices": count[kept].astype(np.int64), "id": ids[last_row]})
    per_step = pd.concat([keys.iloc[dev[last_row]].reset_index(drop=True), lab, per_step], axis=1)
    per_step = per_step.sort_values(["start_ts", *labels.columns], ignore_index=True)
    caused = pd.Series(mean_wait).groupby(dev[last_row]).sum()
    # Per device: exact integer sums (sorted by device), as a grouping by device would give.
    by_dev = np.argsort(dev, kind="stable")
    d_sorted = dev[by_dev]
    starts = np.flatnonzero(np.r_[True, d_sorted[1:] != d_sorted[:-1]])
    devs = d_sorted[starts]
    n = np.diff(np.r_[starts, d_sorted.size])
    lag_sorted = lag[by_dev]
    cores = pd.DataFrame({"times_last": np.add.reduceat(is_last[by_dev].astype(np.int64), starts),
                          "mean_lag_ns": np.add.reduceat(lag_sorted, starts) / n,
                          "max_lag_ns": np.maximum.reduceat(lag_sorted, starts), "steps": n.astype(np.int64)},
                         index=devs)
    cores["wait_caused_ns"] = caused.reindex(cores.index).fillna(0).round().astype(np.int64)
    cores = pd.concat([keys.iloc[cores.index.to_numpy()].reset_index(drop=True), cores.reset_index(drop=True)], axis=1)
    cores = cores.sort_values(["times_last", "mean_lag_ns", "wait_caused_ns"], ascending=False, kind="stable",
                              ignore_index=True)
    return per_step, cores


def _empty_steps(keys: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(columns=[*keys.columns, *labels.columns, "start_ts", "lag_ns", "mean_wait_ns", "devices", "id"])


def _empty_cores(keys: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(columns=[*keys.columns, "times_last", "mean_lag_ns", "max_lag_ns", "steps", "wait_caused_ns"])
