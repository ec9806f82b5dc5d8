"""A job's stragglers: each part's arrivals at collectives, in narrow columns, joined over every core of the job.

A part ships only what the join reads: per arrival its step and device codes, its offset from
its step's first arrival in the part, its barrier's length and its event id, each in the
smallest integer type that holds it exactly; per step its labels, first arrival and latest
release. The job's calling process holds these (a few MB per part for 256k arrivals) and reads
them a part at a time in each pass (straggler_steps); no job-wide table of arrivals is made.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from .collectives import absent_of
from .devices import kind_of
from .frame import frame_of, notes_of
from .straggler_steps import Chunk, bounds, results
from .stragglers import NEURON_LABELS, _arrivals

_MATCH = {"neuron": ["model_name", "key", "collective"], "kineto": ["name", "ordinal"]}
_DEVICE = {"neuron": ["instance_id", "process_id", "nc_idx", "worker_gid"], "kineto": ["rank"]}
_NONE = "\0none"
_MAX, _MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min
_ABSENT_NOTE = ("times a core ran the step's NEFF but recorded no barrier or cc_running for its collective: it is "
                "taken to have arrived at the release (it waited 0)")


def part_arrivals(profile: Profile, kind: str = "auto") -> dict[str, Any]:
    """One part's arrivals, what a job's stragglers are computed from: `arrivals` (step and dev codes,
    `arrive` as the offset from `step_first[step]`, `length`, `id`), `labels` (per step code: its matching
    labels), `step_first`, `step_last`, `step_count` and `step_release` (per step code: first arrival, last
    arrival as an offset from the first, arrivals, latest release, -1: none),
    `devices` (per dev code: its keys) and, for Neuron, `runs` (completed executions: dev, model_name,
    key), with `kind` and `notes`."""
    fr = frame_of(profile)
    kind = kind_of(fr, kind)
    arr, keys, _ = _arrivals(fr, kind)
    labels = arr.labels[_MATCH[kind] + (["step"] if kind == "neuron" else [])].reset_index(drop=True)
    return narrow_part(kind, arr.notes, arr.table, labels, keys[_DEVICE[kind]].reset_index(drop=True),
                       arr.runs.reset_index(drop=True) if kind == "neuron" else None)


def narrow_part(kind: str, notes: list[str], table: pd.DataFrame, labels: pd.DataFrame, devices: pd.DataFrame,
                runs: pd.DataFrame | None) -> dict[str, Any]:
    """`part_arrivals` from a part's arrival table (step, dev, arrive, length, release, id), its labels and
    devices by code, and its runs."""
    step, arrive, release = (table[c].to_numpy(np.int64) for c in ("step", "arrive", "release"))
    n = len(labels)
    first = np.full(n, _MAX)
    np.minimum.at(first, step, arrive)
    first[first == _MAX] = 0  # a step with no arrival here (none is made so)
    last = np.full(n, _MIN)
    np.maximum.at(last, step, arrive)
    latest = np.full(n, -1, np.int64)  # releases below 0 are not releases (an open barrier's is -1)
    np.maximum.at(latest, step, release)
    count = np.bincount(step, minlength=n)
    arrivals = pd.DataFrame({"step": narrow(step), "dev": narrow(table["dev"].to_numpy(np.int64)),
                             "arrive": narrow(arrive - first[step]), "length": narrow(table["length"].to_numpy(np.int64)),
                             "id": narrow(table["id"].to_numpy(np.int64))})
    if runs is not None:
        # A row per core and execution (thousands per core): the NEFF by category, not a string per row.
        runs = pd.DataFrame({"dev": narrow(runs["dev"].to_numpy(np.int64)),
                             "model_name": runs["model_name"].astype("category"),
                             "key": narrow(runs["key"].to_numpy(np.int64))})
    return {"kind": kind, "notes": notes, "arrivals": arrivals, "labels": labels, "step_first": first,
            "step_last": narrow(np.where(count > 0, last - first, 0)), "step_count": narrow(count),
            "step_release": latest, "devices": devices, "runs": runs}


def narrow(a: np.ndarray) -> np.ndarray:
    """The integers in the smallest type that holds each of them exactly."""
    a = np.asarray(a)
    if a.size == 0:
        return a.astype(np.int8)
    lo, hi = int(a.min()), int(a.max())
    for t in (np.int8, np.int16, np.int32):
        if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
            return a.astype(t)
    return a.astype(np.int64)


def job_stragglers(parts: list[tuple[str, dict[str, Any]]]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Stragglers of a whole job from its parts' `part_arrivals`: (per device, per step, lag per device and step).

    Collectives are matched across every core of the job by their step labels (Neuron: NEFF, execution,
    collective ordinal; Kineto: kernel name and ordinal), so a core that holds back another node is
    found; a core that completed a step's execution without a collective of its own arrives at that
    step's release over the whole job. Only the parts' small label and device tables are matched;
    the arrivals themselves are renumbered by array look-ups, a part at a time."""
    kinds = {got["kind"] for _, got in parts if len(got["arrivals"])} or {"neuron"}
    kind = "neuron" if "neuron" in kinds else "kineto"
    notes = [f"{name}: {n}" for name, got in parts for n in got["notes"]]
    if len(kinds) > 1:
        notes.append("parts of different kinds (Neuron and Kineto): only the Neuron parts' collectives are matched")
    mine = [got for _, got in parts if got["kind"] == kind and len(got["arrivals"])]
    names = [name for name, got in parts if got["kind"] == kind and len(got["arrivals"])]
    dev_cols, match = ["part", *_DEVICE[kind]], _MATCH[kind]
    out_labels = NEURON_LABELS if kind == "neuron" else ["step"]
    if not mine:
        keys = pd.DataFrame(columns=dev_cols)
        labels = pd.DataFrame(columns=out_labels)
        no_steps, no_cores, _ = results(list, 0, labels, keys)
        return (notes_of(no_cores, notes), notes_of(no_steps, notes),
                pd.DataFrame(columns=[*dev_cols, *out_labels, "start_ts", "lag_ns", "id"]))
    # Devices in the order a merged profile numbers them (instance, process, core), then by part.
    devs = pd.concat([got["devices"].assign(part=name, local=np.arange(len(got["devices"])), p=k)
                      for k, (name, got) in enumerate(zip(names, mine, strict=True))], ignore_index=True)
    order = _DEVICE[kind][:3] if kind == "neuron" else ["rank"]
    devs = devs.sort_values([*order, "part"], kind="stable", ignore_index=True)
    keys = devs[dev_cols]
    dev_maps = [np.empty(len(got["devices"]), np.int64) for got in mine]
    for g, (p, local) in enumerate(zip(devs["p"].to_numpy(), devs["local"].to_numpy(), strict=True)):
        dev_maps[p][local] = g
    # Steps: the parts' label tables matched by value.
    labs = pd.concat([got["labels"] for got in mine], ignore_index=True)
    step_all, uniq = pd.MultiIndex.from_frame(labs[match].astype(object).fillna(_NONE)).factorize()
    labels = uniq.to_frame(index=False, name=match)
    labels = labels.mask(labels == _NONE, None)
    n_steps = len(labels)
    edges = np.cumsum([0] + [len(got["labels"]) for got in mine])
    step_maps = [np.asarray(step_all[edges[k]:edges[k + 1]], np.int64) for k in range(len(mine))]
    first_of = [got["step_first"] for got in mine]

    def part_chunk(k: int) -> Chunk:
        a = mine[k]["arrivals"]
        local = a["step"].to_numpy(np.int64)
        return Chunk(step_maps[k][local], dev_maps[k][a["dev"].to_numpy(np.int64)],
                     first_of[k][local] + a["arrive"].to_numpy(np.int64), a["length"].to_numpy(np.int64),
                     a["id"].to_numpy(np.int64))

    def part_chunks() -> Iterator[Chunk]:
        return (part_chunk(k) for k in range(len(mine)))

    if kind == "neuron":
        labels["step"] = labs.groupby(step_all)["step"].first().to_numpy()
        labels = labels.astype({"key": np.int64, "collective": np.int64, "step": np.int64})
    # Per step over the job: arrivals, first and last arrival, from the parts' own per step.
    count, first, last = np.zeros(n_steps, np.int64), np.full(n_steps, _MAX), np.full(n_steps, _MIN)
    for k, got in enumerate(mine):
        np.add.at(count, step_maps[k], got["step_count"].astype(np.int64))
        here = got["step_count"] > 0
        np.minimum.at(first, step_maps[k][here], got["step_first"][here])
        np.maximum.at(last, step_maps[k][here], got["step_first"][here] + got["step_last"][here].astype(np.int64))
    if kind == "kineto":  # steps numbered by their first arrival
        labels["step"] = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    absent = _absent_chunk(mine, part_chunk, dev_maps, step_maps, labels, n_steps)
    if absent is not None:
        notes.append(f"{absent.step.size} {_ABSENT_NOTE}")
        a_count, a_first, a_last = bounds(lambda: [absent], n_steps)
        count, first, last = count + a_count, np.minimum(first, a_first), np.maximum(last, a_last)

    def chunks() -> Iterator[Chunk]:
        yield from part_chunks()
        if absent is not None:
            yield absent

    steps, cores, lag_frame = results(chunks, n_steps, labels[out_labels], keys, lag_rows=True,
                                      known=(count, first, last))
    return notes_of(cores, notes), notes_of(steps, notes), notes_of(lag_frame, notes)


def _absent_chunk(mine: list[dict[str, Any]], part_chunk: Any, dev_maps: list[np.ndarray], step_maps: list[np.ndarray],
                  labels: pd.DataFrame, n_steps: int) -> Chunk | None:
    """Cores that completed a step's execution (a run) with no collective of their own in it, arriving at the
    step's latest release over the job (with_absent, over the whole job); None when there are none."""
    has_runs = [got["runs"] is not None and len(got["runs"]) > 0 for got in mine]
    if not any(has_runs) or n_steps == 0:
        return None
    test = _may_leave_absent(labels)
    runs, devs_of_runs = [], []
    for k, got in enumerate(mine):
        if not has_runs[k]:
            continue
        r, c = got["runs"], part_chunk(k)
        d = dev_maps[k][r["dev"].to_numpy(np.int64)]
        key = r["key"].to_numpy(np.int64)
        keep = test(c.step, c.dev, d, pd.Categorical(r["model_name"]), key)
        if keep.any():
            runs.append((d[keep], r["model_name"].to_numpy(object)[keep], key[keep]))
            devs_of_runs.append(k)
    if not runs:
        return None
    job_runs = pd.DataFrame({"dev": np.concatenate([d for d, _, _ in runs]),
                             "model_name": np.concatenate([n for _, n, _ in runs]),
                             "key": np.concatenate([k for _, _, k in runs])})
    # Whether a core arrived at a step is asked of its own part's arrivals only (a core is in one part).
    have = [part_chunk(k) for k in devs_of_runs]
    table = pd.DataFrame({"step": np.concatenate([c.step for c in have]), "dev": np.concatenate([c.dev for c in have])})
    absent = absent_of(labels, table, job_runs)
    if not len(absent):
        return None
    release = np.full(n_steps, -1, np.int64)
    for k, got in enumerate(mine):
        np.maximum.at(release, step_maps[k], got["step_release"])
    step = absent["step"].to_numpy(np.int64)
    step = step[release[step] >= 0]
    dev = absent["dev"].to_numpy(np.int64)[release[absent["step"].to_numpy(np.int64)] >= 0]
    if not step.size:
        return None
    return Chunk(step, dev, release[step], np.zeros(step.size, np.int64), np.full(step.size, -1, np.int64))


def _may_leave_absent(labels: pd.DataFrame) -> Any:
    """A test of a part's runs (core, NEFF, key), given the part's arrivals (step, dev): may the run leave its
    core absent from a step? A core arrives at most once per step, so a run whose core arrived at as many
    steps of its execution (NEFF, key) as the job has is never absent, nor is a run of an execution with no
    step. A job has a run per core and step; most are set aside here, a part at a time."""
    name, names = pd.factorize(labels["model_name"], use_na_sentinel=True)
    execs, uniq = pd.MultiIndex.from_arrays([name, labels["key"].to_numpy(np.int64)]).factorize()
    steps_of = np.bincount(execs, minlength=len(uniq))
    n = max(steps_of.size, 1)
    index = pd.Index(names)
    u_name, u_key = np.asarray(uniq.get_level_values(0), np.int64), np.asarray(uniq.get_level_values(1), np.int64)

    def test(step: np.ndarray, dev: np.ndarray, run_dev: np.ndarray, model_name: pd.Categorical,
             key: np.ndarray) -> np.ndarray:
        if run_dev.size == 0:
            return np.zeros(0, bool)
        seen, times = np.unique(dev * n + execs[step], return_counts=True)
        # Executions looked up by numbers: the NEFF's code among the labels' (by its few categories) and
        # the key's code among the labels' and the runs' keys, as one integer.
        of_cat = index.get_indexer(model_name.categories) if len(index) else np.full(len(model_name.categories), -1)
        codes = np.asarray(model_name.codes, np.int64)
        run_name = np.where(codes >= 0, np.asarray(of_cat, np.int64)[np.maximum(codes, 0)], -1) if of_cat.size else \
            np.full(codes.size, -1, np.int64)
        key_code, key_values = pd.factorize(np.concatenate([u_key, key]))
        width = len(key_values)
        wanted = pd.Index((u_name + 1) * width + key_code[:u_key.size])
        run_exec = wanted.get_indexer((run_name + 1) * width + key_code[u_key.size:])
        at = run_dev * n + np.maximum(run_exec, 0)
        where = np.minimum(np.searchsorted(seen, at), max(seen.size - 1, 0))
        got = np.where(seen[where] == at, times[where], 0) if seen.size else np.zeros(run_dev.size, np.int64)
        return (run_exec >= 0) & (got < steps_of[np.maximum(run_exec, 0)])

    return test
