"""Slow, obviously right versions of the Neuron analyses: loops over a profile's events, one at a time.

Each takes the rows of `Profile.events` and answers as the documented definitions say, with no
shared code from the package beyond the regular expressions that define an error's name.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import defaultdict
from typing import Any

from neuron_widgets.model.problem_rows import ERROR_NAME

Core = tuple[str, int, int]


def events(profile) -> list[dict[str, Any]]:
    out = []
    for i, r in enumerate(profile.events.to_dict("records")):
        text = r.get("extra_attributes_json")
        args = json.loads(text) if isinstance(text, str) else {}
        nc = r.get("nc_idx")
        core = None if nc is None or (isinstance(nc, float) and math.isnan(nc)) or nc is _NA else \
            (r["instance_id"], int(r["process_id"]), int(nc))
        flows = r.get("flow_id")
        out.append({"row": i, "id": int(r["id"]), "name": r["name"], "source": r["trace_event_source"],
                    "start": int(r["start_ts"]), "end": int(r["end_ts"]), "open": bool(r.get("incomplete") or False),
                    "core": core, "args": args if isinstance(args, dict) else {},
                    "thread": (r["instance_id"], r["process_id"], r["thread_id"]),
                    "flows": [str(f) for f in flows] if flows is not None else []})
    return out


try:
    import pandas as pd

    _NA = pd.NA
except ImportError:  # pragma: no cover
    _NA = object()


def _int_arg(e: dict, key: str) -> int | None:
    v = e["args"].get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _named(evs: list[dict], name: str) -> list[dict]:
    return [e for e in evs if e["name"] == name and e["core"] is not None]


# -- stragglers --------------------------------------------------------------------------------
def stragglers(profile) -> tuple[dict[Core, dict], list[dict]]:
    evs = events(profile)
    execs = _named(evs, "nc_exec_running")
    for e in execs:
        e["neff"] = e["args"].get("model_name") if isinstance(e["args"].get("model_name"), str) else None
        e["exec_id"] = _int_arg(e, "exec_id")
    for e in execs:
        if e["exec_id"] is not None:
            e["key"] = e["exec_id"]
        else:
            mine = sorted((x for x in execs if x["core"] == e["core"] and x["neff"] == e["neff"]),
                          key=lambda x: (x["start"], x["row"]))
            e["key"] = -2 - mine.index(e)
    colls = [dict(e, kind=0) for e in _named(evs, "cc_exec_barrier")] + [dict(e, kind=1) for e in _named(evs, "cc_running")]
    for c in colls:
        own = _int_arg(c, "exec_id")
        ex = None
        if own is not None:
            same = [x for x in execs if x["core"] == c["core"] and x["exec_id"] == own]
            ex = min(same, key=lambda x: (x["start"], x["row"])) if same else None
        if ex is None:
            before = [x for x in execs if x["core"] == c["core"] and x["start"] <= c["start"]]
            if before:
                last = max(before, key=lambda x: (x["start"], x["row"]))
                if last["end"] > c["start"] or last["open"]:
                    ex = last
        c["neff"] = ex["neff"] if ex else None
        c["key"] = own if own is not None else (ex["key"] if ex else None)
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for c in colls:
        groups[(c["core"], c["neff"], c["key"])].append(c)
    steps: dict[tuple, dict[Core, dict]] = defaultdict(dict)
    for (core, neff, key), items in groups.items():
        items.sort(key=lambda x: (x["start"], x["kind"], x["row"]))
        made, pending = [], None
        for it in items:  # a barrier and the cc_running right after it are one collective
            if it["kind"] == 0:
                if pending is not None:
                    made.append(pending)
                pending = it
            elif pending is not None:
                made.append(pending)
                pending = None
            else:
                made.append(it)
        if pending is not None:
            made.append(pending)
        made.sort(key=lambda x: (x["start"], x["row"]))
        for k, m in enumerate(made):
            barrier_done = m["kind"] == 0 and not m["open"]
            steps[(neff, key, k)][core] = {
                "arrive": m["start"], "length": m["end"] - m["start"] if barrier_done else 0,
                "release": m["end"] if barrier_done else (None if m["kind"] == 0 else m["start"]), "id": m["id"]}
    for (neff, key, _k), entries in steps.items():
        if neff is None:
            continue
        known = [v["release"] for v in entries.values() if v["release"] is not None]
        if not known:
            continue
        for e in execs:
            if e["neff"] == neff and e["key"] == key and not e["open"] and e["core"] not in entries:
                entries[e["core"]] = {"arrive": max(known), "length": 0, "release": max(known), "id": -1, "late": True}
    per_core: dict[Core, dict] = defaultdict(lambda: {"times_last": 0, "lags": [], "wait_caused": 0.0})
    per_step = []
    for step, entries in steps.items():
        if len(entries) < 2:
            continue
        first = min(v["arrive"] for v in entries.values())
        latest = max(v["arrive"] for v in entries.values())
        last = sorted(entries, key=lambda c: (-entries[c]["arrive"], entries[c]["length"], c))[0]
        waits = [latest - v["arrive"] for c, v in entries.items() if c != last]
        mean_wait = sum(waits) / len(waits)
        for c, v in entries.items():
            per_core[c]["lags"].append(v["arrive"] - first)
        per_core[last]["times_last"] += 1
        per_core[last]["wait_caused"] += mean_wait
        per_step.append({"step": step, "core": last, "lag": entries[last]["arrive"] - first, "mean_wait": mean_wait,
                         "devices": len(entries), "start": first, "id": entries[last]["id"]})
    result = {c: {"times_last": v["times_last"], "mean_lag": sum(v["lags"]) / len(v["lags"]), "max_lag": max(v["lags"]),
                  "steps": len(v["lags"]), "wait_caused": v["wait_caused"]} for c, v in per_core.items()}
    return result, per_step


# -- where the time goes ------------------------------------------------------------------------
def _covered(t0: int, t1: int, intervals: list[tuple[int, int]]) -> int:
    """How many intervals cover all of [t0, t1) (elementary segments lie wholly inside or outside each)."""
    return sum(1 for s, e in intervals if s <= t0 and t1 <= e)


def temporal(profile) -> dict[Core, dict]:
    evs = events(profile)
    by: dict[Core, dict[str, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
    for e in evs:
        if e["core"] is not None and e["name"] in ("nc_exec_running", "cc_exec_barrier", "cc_running"):
            by[e["core"]][e["name"]].append((e["start"], max(e["end"], e["start"])))
    out = {}
    for core, kinds in by.items():
        ex = kinds["nc_exec_running"]
        if not ex:
            continue
        bounds = sorted({t for iv in kinds.values() for s, e in iv for t in (s, e)})
        busy = barrier = collective = overlap = 0
        for a, b in itertools.pairwise(bounds):
            n_ex = _covered(a, b, ex)
            if not n_ex:
                continue
            busy += b - a
            in_bar, in_cc = _covered(a, b, kinds["cc_exec_barrier"]) > 0, _covered(a, b, kinds["cc_running"]) > 0
            barrier += (b - a) * in_bar
            collective += (b - a) * (in_cc and not in_bar)
        comm = 0
        for a, b in itertools.pairwise(bounds):
            if _covered(a, b, kinds["cc_running"]):
                comm += b - a
                overlap += (b - a) * (_covered(a, b, ex) >= 2)
        span = max(e for _, e in ex) - min(s for s, _ in ex)
        out[core] = {"executions": len(ex), "span": span, "busy": busy, "barrier": barrier, "collective": collective,
                     "compute": busy - barrier - collective, "idle": span - busy, "comm": comm, "overlap": overlap}
    return out


def by_neff(profile) -> dict[str, dict]:
    groups: dict[str, list[int]] = defaultdict(list)
    for e in events(profile):
        if e["name"] == "nc_exec_running":
            name = e["args"].get("model_name")
            groups[name if isinstance(name, str) else "(no model_name)"].append(e["end"] - e["start"])
    total = sum(sum(v) for v in groups.values())
    out = {}
    for name, d in groups.items():
        mean = sum(d) / len(d)
        std = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1)) if len(d) > 1 else 0.0
        out[name] = {"count": len(d), "sum": sum(d), "min": min(d), "max": max(d), "mean": mean, "std": std,
                     "percentage": 100.0 * sum(d) / total if total else 0.0}
    return out


def idle(profile, kernel_wait_ns: int = 30_000) -> dict[Core, dict[str, tuple[int, int]]]:
    """Per core and cause: (idle time, gaps). The launch of an execution: the nrt_execute on its core sharing a
    flow id, started no later than it (the latest), else the latest on its core started no later than it."""
    evs = events(profile)
    execs, rts = _named(evs, "nc_exec_running"), _named(evs, "nrt_execute")
    out: dict[Core, dict[str, list[int]]] = {}
    for core in sorted({e["core"] for e in execs}):
        mine = sorted((e for e in execs if e["core"] == core), key=lambda e: (e["start"], e["row"]))
        cats = {"host_wait": [0, 0], "kernel_wait": [0, 0], "other": [0, 0]}
        for prev, e in itertools.pairwise(mine):
            linked = [r for r in rts if r["core"] == core and set(r["flows"]) & set(e["flows"]) and r["start"] <= e["start"]]
            if not linked:
                linked = [r for r in rts if r["core"] == core and r["start"] <= e["start"]]
            launch = max(linked, key=lambda r: (r["start"], r["row"]))["start"] if linked else None
            gap = e["start"] - prev["end"]
            cat = "host_wait" if launch is not None and launch > prev["end"] else \
                "kernel_wait" if gap < kernel_wait_ns else "other"
            cats[cat][0] += gap
            cats[cat][1] += 1
        out[core] = {k: (v[0], v[1]) for k, v in cats.items()}
    return out


# -- errors and hangs --------------------------------------------------------------------------
CODE_KEYS = ("ret", "status", "return_code", "error_code", "rc")
ERROR_KEYS = ("error", "errors", "exception", "failure", "error_message", "error_code", "err")
NO_ERROR_WORDS = {"0", "none", "null", "nil", "false", "no", "ok", "okay", "success", "succeeded", "n/a", "na",
                  "no error", "noerror", "0x0"}


# A string that writes a number: decimal (with a fraction or an exponent), hexadecimal, NaN or infinity.
NUMBER_TEXT = re.compile(r"\s*[-+]?((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|0[xX][0-9a-fA-F]+|nan|inf|infinity)\s*", re.I)


def number(v: Any) -> float | None:
    """The number an argument holds, written as a number or as a string; None when it holds none."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str) and NUMBER_TEXT.fullmatch(v):
        t = v.strip().lower().lstrip("+")
        sign = -1.0 if t.startswith("-") else 1.0
        t = t.lstrip("-")
        return sign * (int(t, 16) if t.startswith("0x") else float(t))
    return None


def nonzero_code(v: Any) -> bool:
    x = number(v)
    return x is not None and not math.isnan(x) and x != 0


def says_error(key: str, v: Any) -> bool:
    """An argument that reports an error: a word other than a no-error one, true, a non-empty list or object;
    a number (3 or "3") only as a non-zero `error_code` (under `error` and the rest it is a count)."""
    if isinstance(v, bool):
        return v
    if number(v) is not None:
        return key == "error_code" and nonzero_code(v)
    if isinstance(v, str):
        return bool(v.strip()) and v.strip().lower() not in NO_ERROR_WORDS
    return isinstance(v, list | dict) and len(v) > 0


def problems(profile) -> dict[str, Any]:
    """Error rows, hang (unit, exec) keys, incomplete rows."""
    evs = events(profile)
    errors = set()
    for e in evs:
        neuron = e["source"] in ("neuron_rt", "neuron_hw")
        if neuron and e["name"] and ERROR_NAME.search(e["name"]):
            errors.add(e["row"])
        if neuron and any(nonzero_code(e["args"].get(k)) for k in CODE_KEYS):
            errors.add(e["row"])
        if any(says_error(k, e["args"].get(k)) for k in ERROR_KEYS):
            errors.add(e["row"])
    hangs, incomplete = set(), set()
    for e in evs:
        if not e["open"]:
            continue
        if e["source"] in ("neuron_rt", "neuron_hw", "device"):
            exec_id = e["args"].get("exec_id")
            hangs.add((e["core"] if e["core"] is not None else e["thread"],
                       exec_id if isinstance(exec_id, int) and exec_id >= 0 else -1))
        else:
            incomplete.add(e["row"])
    return {"errors": errors, "hangs": hangs, "incomplete": incomplete}
