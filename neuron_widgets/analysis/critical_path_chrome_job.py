"""A job of Kineto (or plain Chrome) traces part by part: each part a rank, joined at its NCCL collectives.

First pass (`chrome_arrivals`: what the path's first task ships for such a part, kept in the job's
result store): the part's NCCL kernels (their collective's key: the process group, else the
kernel's name; their ordinal in it on their rank; start, end, row), whether it has flows, and its
first moment. The caller (`chrome_facts`) matches collectives across parts as loading the ranks as
one profile does: one is a collective where two or more ranks have it, and its last arrival is the
latest start (ties: the merged profile's row order: longest first, then part, then row). With those
facts each part builds its graph as it is in the job's (`chrome_job_graph`). For the path, a second
task (`part_chrome_path`) ships the stretches the path can take in the part: walked back from its
latest moment and from each of its kernels that is a collective's last arrival, down to a moment
bound to a collective's last arrival (a release that waited) or to the run's start, each stretch as
its segments' rows. The caller picks the job's latest moment and walks across parts (`chrome_job_path`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..model.track_names import TrackNames
from .across import INTERNAL
from .critical_path import COLUMNS, _empty, worker_columns
from .critical_path_chrome import JobCollectives, chrome_pieces, tops_of
from .critical_path_graph import COLLECTIVE, COMPUTE, DEPENDENCY, KINDS, LAST_ARRIVAL, START, Graph, visit
from .critical_path_kineto import nccl_keys
from .critical_path_parts import gathered, pack, part_name, unpacked
from .critical_path_workers import track_labels
from .frame import Frame, frame_of, notes_of

TASK_PATH = "critical_chrome_path:1"  # the second pass's part task for the path (the number: what it ships)


def chrome_arrivals(fr: Frame) -> dict[str, Any]:
    """A Kineto or Chrome part's first pass: its NCCL kernels, whether it has flows, its first moment."""
    if len(fr) == 0:
        return {"empty": True, "graph": "chrome", "notes": ["the profile has no events"]}
    tp = tops_of(fr)
    coll = tp.tops[tp.kind_top == COLLECTIVE]
    if coll.size:
        rank, group, keys, nth = nccl_keys(fr, coll)
        used, group = np.unique(group, return_inverse=True)
        keys = [keys[int(i)] for i in used]
    else:
        rank, group, keys, nth = (np.zeros(0, np.int64),) * 2 + ([],) + (np.zeros(0, np.int64),)
    return {"empty": tp.tops.size == 0, "graph": "chrome", "notes": [], "has_flows": bool(tp.src_rows.size),
            "track_names": TrackNames.of(fr.profile.metadata),
            "run_start": int(fr.start[tp.tops].min()) if tp.tops.size else None, "rank": np.asarray(rank, np.int64),
            "group": np.asarray(group, np.int64), "keys": keys, "nth": np.asarray(nth, np.int64),
            "start": fr.start[coll], "end": fr.end[coll], "row": coll}


def chrome_facts(pieces: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The job's collectives from its parts' first pass: matched as one profile of the ranks matches them."""
    has_flows = any(p["has_flows"] for _, p in pieces)
    # With flows anywhere, a part without any has no thread a flow touches: none of its events is modelled.
    live = [(i, p) for i, (_, p) in enumerate(pieces) if p["has_flows"] or not has_flows]
    starts = [int(p["run_start"]) for _, p in live if p["run_start"] is not None]
    frames = [pd.DataFrame({"part": i, "rank": p["rank"], "key": np.array(p["keys"], dtype=object)[p["group"]]
                            if len(p["keys"]) else np.zeros(0, object), "nth": p["nth"], "start": p["start"],
                            "end": p["end"], "row": p["row"]}) for i, p in live]
    k = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["part", "rank", "key", "nth", "start", "end", "row"])
    label, uniq = pd.MultiIndex.from_arrays([k["key"].astype(object), k["nth"].astype(np.int64)]).factorize()
    k["label"] = np.asarray(label, np.int64)
    ranks = k.groupby("label")[["part", "rank"]].apply(lambda d: len(d.drop_duplicates())) if len(k) else pd.Series(
        dtype=np.int64)
    shared = ranks.index[ranks.to_numpy() >= 2].to_numpy(np.int64) if len(ranks) else np.zeros(0, np.int64)
    k = k[k["label"].isin(shared)]
    # A collective's last arrival: the latest start; ties as the merged profile's rows (longest first, part, row).
    last = k.assign(neg_end=-k["end"]).sort_values(["label", "start", "neg_end", "part", "row"],
                                                  ascending=[True, False, True, True, True], kind="stable")
    last = last.drop_duplicates("label")
    names = [name for name, _ in pieces]
    return {"kind": "chrome", "run_start": min(starts) if starts else 0, "has_flows": has_flows,
            "keys": [str(uniq[int(x)][0]) for x in last["label"]], "nth": last["nth"].to_numpy(np.int64),
            "m_t": last["start"].to_numpy(np.int64), "last_part": [names[int(i)] for i in last["part"]],
            "last_row": last["row"].to_numpy(np.int64)}


def _label_of(facts: dict[str, Any]) -> Any:
    want = pd.MultiIndex.from_arrays([np.array(facts["keys"], dtype=object), np.asarray(facts["nth"], np.int64)])

    def label_of(fr: Frame, rows: np.ndarray) -> np.ndarray:
        if rows.size == 0 or len(want) == 0:
            return np.full(rows.size, -1, np.int64)
        _, group, keys, nth = nccl_keys(fr, rows)
        return np.asarray(want.get_indexer(pd.MultiIndex.from_arrays(
            [np.array(keys, dtype=object)[group], np.asarray(nth, np.int64)])), np.int64)

    return label_of


def chrome_job_graph(fr: Frame, facts: dict[str, Any]) -> tuple[Graph, np.ndarray, list[str]]:
    """A part's graph as it is in its job's (NCCL collectives and their last starts job-wide, the job's flows and
    run start), bound; the job-wide label of each of its last-arrival moments; its notes."""
    job = JobCollectives(bool(facts["has_flows"]), _label_of(facts), np.asarray(facts["m_t"], np.int64))
    g, m_label = chrome_pieces(fr, job)
    return g.bind(int(facts["run_start"])), np.asarray(m_label, np.int64), list(g.notes)


def part_chrome_path(profile: Any, packed: bytes | None = None) -> dict[str, Any]:
    """(A part task.) The part's stretches of the job's path, as segments' rows, and where each one leads;
    `packed`: the job's `facts`."""
    facts = unpacked(packed).get("facts")
    fr = frame_of(profile)
    if facts is None or len(fr) == 0:
        return {"empty": True, "notes": []}
    g, m_label, notes = chrome_job_graph(fr, facts)
    n = len(g)
    if n == 0 or not (g.role != LAST_ARRIVAL).any():
        return {"empty": True, "notes": notes}
    name = part_name(profile)
    boundary = g.role == LAST_ARRIVAL
    m_pos = np.cumsum(boundary) - 1
    sink = g.sink()
    mine = np.flatnonzero(np.array([p == name for p in facts["last_part"]], bool))
    start_of = pd.Series(np.flatnonzero(g.role == START))
    start_of.index = g.row[start_of.to_numpy()]
    start_of = start_of[~start_of.index.duplicated()]
    entry = start_of.reindex(np.asarray(facts["last_row"], np.int64)[mine]).to_numpy()
    ok = ~np.isnan(entry.astype(np.float64))
    mine, entry = mine[ok], entry[ok].astype(np.int64)
    _, gap, binding = g.bound()
    nodes, local = visit(np.r_[sink, entry].astype(np.int64), binding, g.src, boundary, n)
    nodes = nodes.astype(np.int64)
    # Per walked moment: its gap, then the work on its binding edge (as the path's segments read them).
    e = binding[nodes]
    has = e >= 0
    e0 = np.maximum(e, 0)
    u = np.where(has, g.src[e0], -1)
    work = has & (g.wkind[e0] != DEPENDENCY)
    gap_s, gap_e = g.t[nodes] - gap[nodes], g.t[nodes]
    w_s = g.t[np.maximum(u, 0)]
    w_e = w_s + g.w[e0]
    start = np.stack([gap_s, w_s], 1).ravel()
    end = np.stack([gap_e, w_e], 1).ravel()
    kind = np.stack([g.gkind[nodes], g.wkind[e0]], 1).ravel().astype(np.int64)
    row = np.stack([g.grow[nodes], g.wrow[e0]], 1).ravel()
    event = np.stack([g.gevent[nodes], np.ones(nodes.size, bool)], 1).ravel()
    on_core = np.stack([g.lane_core[nodes] >= 0, np.isin(g.wkind[e0], (COMPUTE, COLLECTIVE)) & g.device_lanes], 1).ravel()
    keep = (end > start) & np.stack([np.ones(nodes.size, bool), work], 1).ravel()
    seg_node = np.repeat(np.arange(nodes.size), 2)[keep]
    start, end, kind, row, event, on_core = (a[keep] for a in (start, end, kind, row, event, on_core))
    frame = _segments(fr, g, start, end, kind, row, event, on_core, name)
    first = np.searchsorted(seg_node, np.arange(nodes.size))
    count = np.bincount(seg_node, minlength=nodes.size)
    u0 = np.maximum(u, 0)
    nxt = np.where(~has, -1, np.where(boundary[u0], -2 - m_label[m_pos[u0]], local[u0]))
    rw = int(g.row[sink])
    return {"empty": False, "notes": notes, "frame": frame, "first": first, "count": count, "nxt": nxt.astype(np.int64),
            "sink": (int(g.t[sink]), int(fr.start[rw]), int(fr.end[rw]), rw, int(g.role[sink])),
            "entry": dict(zip((int(x) for x in mine), (int(local[x]) for x in entry), strict=True))}


INTERNAL[TASK_PATH] = part_chrome_path  # a building block `across` runs in its part tasks


def _segments(fr: Frame, g: Graph, start: np.ndarray, end: np.ndarray, kind: np.ndarray, row: np.ndarray,
              event: np.ndarray, on_core: np.ndarray, part: str | None) -> pd.DataFrame:
    """Segments as the path's frame, in walk order (latest first), read in the part."""
    cols = worker_columns(fr, np.maximum(row, 0), on_core)
    ids = fr.profile.array("id")
    names = np.array([*fr.names, None], dtype=object)
    r = np.maximum(row, 0)
    return pd.DataFrame({
        "start_ts": start.astype(np.int64), "end_ts": end.astype(np.int64), "duration_ns": (end - start).astype(np.int64),
        "kind": pd.Categorical.from_codes(kind, KINDS), **cols,
        "event_id": np.where(event, ids[r], -1).astype(np.int64),
        "name": np.where(event, names[fr.name[r]], None),
        "step": g.step_at(row, start) if row.size else np.zeros(0, np.int64),
        "part": pd.Series([part] * row.size, dtype=object),
    })


def chrome_job_path(job: Any, pieces: list[tuple[str, dict[str, Any]]], notes: list[str], client: Any = None,
                    **kw: Any) -> pd.DataFrame:
    """The path of a job of Kineto or Chrome parts (`pieces`: their first pass), walked over each part's stretches."""
    facts = chrome_facts(pieces)
    got, more = gathered(job, TASK_PATH, client, named=True, packed=pack(facts=facts), **kw)
    notes = [*notes, *(n for n in more if n not in notes)]
    if not got:
        return notes_of(_empty(), notes)
    order = {s.name: i for i, s in enumerate(job.specs)}
    by_name = dict(got)
    sinks = [(-t, s, -e, order[name], rw, role, name) for name, p in got for (t, s, e, rw, role) in [p["sink"]]]
    name = min(sinks)[-1]
    node = 0
    walked: list[pd.DataFrame] = []
    for _ in range(sum(len(p["nxt"]) for _, p in got) + 1):
        p = by_name[name]
        f, c = int(p["first"][node]), int(p["count"][node])
        if c:
            walked.append(p["frame"].iloc[f:f + c])
        nxt = int(p["nxt"][node])
        if nxt == -1:
            break
        if nxt >= 0:
            node = nxt
            continue
        label = -2 - nxt  # a release that waited: on to its collective's last arrival, in its part
        name = facts["last_part"][label]
        if name not in by_name or label not in by_name[name]["entry"]:
            notes.append(f"the path stops at a collective whose last arrival is in {name}, which was left out")
            break
        node = by_name[name]["entry"][label]
    if not walked:
        return notes_of(_empty(), notes)
    df = pd.concat(walked, ignore_index=True).iloc[::-1].reset_index(drop=True)[COLUMNS]  # walked latest first
    df.attrs["tracks"] = job_tracks(df, pieces)
    return notes_of(df, notes)


def job_tracks(df: pd.DataFrame, pieces: list[tuple[str, dict[str, Any]]]) -> dict[Any, str]:
    """A job's path's workers as the job's Timeline labels their tracks once their part is open, by `worker_key`
    (each part's names from its first pass)."""
    out: dict[Any, str] = {}
    names = {name: p.get("track_names") or TrackNames() for name, p in pieces}
    for part, mine in df.groupby("part", sort=False):
        out.update(track_labels(mine, names.get(str(part), TrackNames()), part=part))
    return out
