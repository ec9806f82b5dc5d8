"""A slow, obviously right critical path and what-if: the graph built event by event in dicts, as the README says.

Nodes are moments: ("s", row) an event's start, ("e", row) its end, ("v", row) the arrival of a core
that recorded no barrier, ("m", step) a collective's last arrival; in Chrome and Kineto traces also
("p", row) / ("q", row) the start / end of an event inside a top-level one (where a flow leaves, a
synchronising call), ("r", row) an NCCL kernel's release (its last rank's arrival). Edges are
(source, weight, kind, row, class). Nothing here is shared with the package but
`reference_neuron.events` (the rows).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from typing import Any

import pandas as pd
from reference_neuron import events

KINDS = ("compute", "collective", "host", "launch", "gap")
OWN, CORE_ORDER, LAUNCHED, RETURNED, OTHERS_ARRIVED, HOST_ORDER = range(6)
ROLE = {"s": 0, "e": 1, "v": 2, "m": 3, "p": 0, "q": 1, "r": 2}


def _int(e: dict, key: str) -> int | None:
    v = e["args"].get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


class Model:
    def __init__(self, profile) -> None:
        self.profile = profile
        evs = events(profile)
        self.evs = evs
        on_core = [e for e in evs if e["core"] is not None]
        execs = sorted((e for e in on_core if e["name"] == "nc_exec_running"), key=lambda e: e["row"])
        calls = sorted((e for e in on_core if e["name"] == "nrt_execute"), key=lambda e: e["row"])
        colls = [e for e in on_core if e["name"] in ("cc_exec_barrier", "cc_running")]
        self.t: dict[Any, int] = {}
        self.preds: dict[Any, list[tuple]] = defaultdict(list)
        self.gap_of: dict[Any, tuple[str, int, bool, bool]] = {}  # node -> (kind, row, inside the event, on a core)
        self.step: dict[int, int] = {}
        self.neff: dict[int, str | None] = {}

        def node(key: Any, t: int, gap: tuple[str, int, bool, bool]) -> None:
            self.t[key] = t
            self.gap_of[key] = gap

        # Executions: NEFF, exec_id, ordinal among the core's runs of the NEFF.
        for e in execs:
            mn = e["args"].get("model_name")
            e["neff"] = mn if isinstance(mn, str) else None
            e["exec_id"] = _int(e, "exec_id")
        runs: dict[tuple, list[dict]] = defaultdict(list)  # a core's runs of a NEFF, in time order
        for e in sorted(execs, key=lambda x: (x["start"], x["row"])):
            runs[(e["core"], e["neff"])].append(e)
        for e in execs:
            k = runs[(e["core"], e["neff"])].index(e)
            e["key"] = e["exec_id"] if e["exec_id"] is not None else -2 - k
            self.step[e["row"]] = e["exec_id"] if e["exec_id"] is not None else k
            self.neff[e["row"]] = e["neff"]
            node(("s", e["row"]), e["start"], ("gap", e["row"], False, True))
            node(("e", e["row"]), e["end"], ("compute", e["row"], True, True))

        # Collectives: each barrier / cc_running to its execution, then barrier + the cc_running after it.
        on_this: dict[Any, list[dict]] = defaultdict(list)
        for e in execs:
            on_this[e["core"]].append(e)
        for c in colls:
            own = _int(c, "exec_id")
            ex = None
            if own is not None:
                same = [x for x in on_this[c["core"]] if x["exec_id"] == own]
                ex = min(same, key=lambda x: (x["start"], x["row"])) if same else None
            if ex is None:
                before = [x for x in on_this[c["core"]] if x["start"] <= c["start"]]
                if before:
                    last = max(before, key=lambda x: (x["start"], x["row"]))
                    if last["end"] > c["start"] or last["open"]:
                        ex = last
            c["ex"] = ex
            c["neff"] = ex["neff"] if ex else None
            c["key"] = own if own is not None else (ex["key"] if ex else None)
            c["own"] = own
            c["kind"] = 0 if c["name"] == "cc_exec_barrier" else 1
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for c in colls:
            groups[(c["core"], c["neff"], c["key"])].append(c)
        items = []
        for (_core, neff, key), cs in groups.items():
            cs.sort(key=lambda x: (x["start"], x["kind"], x["row"]))
            made, i = [], 0
            while i < len(cs):
                if cs[i]["kind"] == 0 and i + 1 < len(cs) and cs[i + 1]["kind"] == 1:
                    made.append({"bar": cs[i], "cc": cs[i + 1]})
                    i += 2
                else:
                    made.append({"bar": cs[i] if cs[i]["kind"] == 0 else None, "cc": cs[i] if cs[i]["kind"] == 1 else None})
                    i += 1
            first = lambda m: m["bar"] or m["cc"]  # noqa: E731
            made.sort(key=lambda m: (first(m)["start"], first(m)["row"]))
            for k, m in enumerate(made):
                f = first(m)
                m.update(label=(neff, key, k), ex=f["ex"], core=f["core"], first=f)
                items.append(m)
        for m in items:
            step = m["first"]["own"] if m["first"]["own"] is not None else (self.step[m["ex"]["row"]] if m["ex"] else -1)
            for x in (m["bar"], m["cc"]):
                if x is not None:
                    self.step[x["row"]] = step
                    self.neff[x["row"]] = m["ex"]["neff"] if m["ex"] else None
        first_release: dict[tuple, int] = {}
        for m in items:
            if m["bar"] is not None and not m["bar"]["open"]:
                lab = m["label"]
                first_release[lab] = min(first_release.get(lab, m["bar"]["end"]), m["bar"]["end"])
        for m in items:
            b, c = m["bar"], m["cc"]
            if b is not None:
                node(("s", b["row"]), b["start"], ("collective", b["row"], True, True))
                node(("e", b["row"]), b["end"], ("collective", b["row"], True, True))
            if c is not None:
                node(("s", c["row"]), c["start"], ("collective", c["row"], True, True))
                node(("e", c["row"]), c["end"], ("collective", c["row"], True, True))
            if b is None:
                arrive = min(c["start"], first_release.get(m["label"], c["start"]))
                node(("v", c["row"]), arrive, ("collective", c["row"], True, True))
            m["A"] = ("s", b["row"]) if b is not None else ("v", c["row"])
            m["R"] = ("e", b["row"]) if b is not None else ("s", c["row"])
            m["E"] = ("e", c["row"]) if c is not None else ("e", b["row"])
            m["M"] = ("m", m["label"])
        arrivals: dict[tuple, list[int]] = defaultdict(list)
        for m in items:
            arrivals[m["label"]].append(self.t[m["A"]])
        for m in items:
            node(m["M"], max(arrivals[m["label"]]), ("collective", -1, False, False))

        def edge(src, dst, cls, kind=None, row=-1) -> None:
            w = self.t[dst] - self.t[src] if kind is not None else 0
            self.preds[dst].append((src, w, kind, row, cls, None))

        # Inside each execution: compute from its start to its first collective's arrival, between, to its end.
        in_exec: dict[int, list[dict]] = defaultdict(list)
        for m in items:
            if m["ex"] is not None:
                in_exec[m["ex"]["row"]].append(m)
        for e in execs:
            mine = sorted(in_exec[e["row"]], key=lambda m: (self.t[m["A"]], m["first"]["row"]))
            at = ("s", e["row"])
            for m in mine:
                edge(at, m["A"], OWN, "compute", e["row"])
                at = m["E"]
            edge(at, ("e", e["row"]), OWN, "compute", e["row"])
        for m in items:
            edge(m["A"], m["R"], OWN)
            edge(m["A"], m["M"], OWN)
            edge(m["M"], m["R"], OTHERS_ARRIVED)
            if m["bar"] is not None and m["cc"] is not None:
                edge(m["R"], ("s", m["cc"]["row"]), OWN)
            if m["cc"] is not None:
                edge(("s", m["cc"]["row"]), ("e", m["cc"]["row"]), OWN, "collective", m["cc"]["row"])
        by_core: dict[Any, list[dict]] = defaultdict(list)
        for e in execs:
            by_core[e["core"]].append(e)
        for mine in by_core.values():
            mine.sort(key=lambda x: (x["start"], x["row"]))
            for a, b in itertools.pairwise(mine):
                edge(("e", a["row"]), ("s", b["row"]), CORE_ORDER)

        # Calls: each execution's launcher (a shared flow id on its core, else the latest call on its core before it).
        for r in calls:
            node(("s", r["row"]), r["start"], ("gap", r["row"], False, False))
            node(("e", r["row"]), r["end"], ("host", r["row"], True, False))
        launched: dict[int, list[dict]] = defaultdict(list)
        calls_on: dict[Any, list[dict]] = defaultdict(list)
        for r in calls:
            calls_on[r["core"]].append(r)
        for e in execs:
            best = None
            for f in e["flows"]:
                with_f = [r for r in calls_on[e["core"]] if f in r["flows"]]
                if with_f:
                    latest = max(with_f, key=lambda r: (r["start"], r["row"]))
                    if latest["start"] <= e["start"] and (best is None or (latest["start"], latest["row"]) >
                                                          (best["start"], best["row"])):
                        best = latest
            if best is None:
                before = [r for r in calls_on[e["core"]] if r["start"] <= e["start"]]
                best = max(before, key=lambda r: (r["start"], r["row"])) if before else None
            if best is not None:
                launched[best["row"]].append(e)
                edge(("s", best["row"]), ("s", e["row"]), LAUNCHED)
                edge(("e", e["row"]), ("e", best["row"]), RETURNED)
                self.gap_of[("s", e["row"])] = ("launch", best["row"], True, False)
        threads: dict[Any, list[dict]] = defaultdict(list)
        for r in calls:
            ex = launched.get(r["row"], [])
            if not any(e["end"] <= r["end"] for e in ex):
                edge(("s", r["row"]), ("e", r["row"]), OWN, "host", r["row"])
            first_ex = min(ex, key=lambda e: e["row"]) if ex else None
            self.step[r["row"]] = self.step[first_ex["row"]] if first_ex else (_int(r, "exec_id") if _int(r, "exec_id")
                                                                               is not None else -1)
            threads[r["thread"]].append(r)
        for mine in threads.values():
            mine.sort(key=lambda x: (x["start"], x["row"]))
            for a, b in itertools.pairwise(mine):
                edge(("e", a["row"]), ("s", b["row"]), HOST_ORDER)
        self.execs = execs
        self._bind()

    def _ident(self, key: Any) -> tuple[int, int]:
        return (-1, 3) if key[0] == "m" else (key[1], ROLE[key[0]])

    device = True  # compute and collective work is on a NeuronCore

    def _bind(self) -> None:
        for v in list(self.preds):
            self.preds[v] = [p for p in self.preds[v] if p[1] >= 0 and p[0] != v and self.t[p[0]] + p[1] <= self.t[v]]
        real = [k for k in self.t if k[0] != "m"]
        self.run_start = min(self.t[k] for k in real) if real else 0
        self.g: dict[Any, int] = {}
        self.bind: dict[Any, tuple | None] = {}
        for v in self.t:
            ps = self.preds.get(v, [])
            if not ps:
                self.bind[v] = None
                self.g[v] = self.t[v] - self.run_start
                self.gap_of[v] = ("gap", self.gap_of[v][1], False, self.gap_of[v][3])
                continue
            best = max(ps, key=lambda p: (self.t[p[0]] + p[1], -p[4], tuple(-x for x in self._ident(p[0]))))
            self.bind[v] = best
            self.g[v] = self.t[v] - (self.t[best[0]] + best[1])
            if best[5] is not None:  # the gap is the edge's (a flow's source launched this)
                self.gap_of[v] = (best[5], best[3], True, False)

    # -- the path ------------------------------------------------------------------------------
    def path(self) -> list[tuple[int, int, str, int, bool, bool]]:
        """(start, end, kind, row, inside the event, on a core) per segment, in time order."""
        real = [k for k in self.t if k[0] != "m"]
        if not real:
            return []
        latest = max(self.t[k] for k in real)
        v = min((k for k in real if self.t[k] == latest), key=self._ident)
        out = []
        seen = set()
        while v is not None and v not in seen:
            seen.add(v)
            kind, row, inside, core = self.gap_of[v]
            out.append((self.t[v] - self.g[v], self.t[v], kind, row, inside, core))
            b = self.bind[v]
            if b is None:
                break
            src, w, wkind, wrow, _, _ = b
            if wkind is not None:
                out.append((self.t[src], self.t[src] + w, wkind, wrow, True,
                            self.device and wkind in ("compute", "collective")))
            v = src
        return [s for s in reversed(out) if s[1] > s[0]]

    def path_frame(self) -> pd.DataFrame:
        recs = [{"start_ts": s, "end_ts": e, "duration_ns": e - s, **self.segment_attrs(kind, row, inside, core)}
                for s, e, kind, row, inside, core in self.path()]
        return pd.DataFrame(recs, columns=["start_ts", "end_ts", "duration_ns", "kind", "instance_id", "process_id",
                                           "thread_id", "nc_idx", "event_id", "name", "step"])

    # -- what-if -------------------------------------------------------------------------------
    def segment_attrs(self, kind: str, row: int, inside: bool, core: bool) -> dict[str, Any]:
        r = self.evs[row]
        inst, pid, tid = r["thread"]
        return {"kind": kind, "instance_id": inst, "process_id": _opt(pid), "thread_id": None if core else _opt(tid),
                "nc_idx": r["core"][2] if r["core"] else None, "event_id": r["id"] if inside else -1,
                "name": r["name"] if inside else None, "step": self.step.get(row, -1)}

    def replay(self, changes: list[tuple[dict, float]]) -> tuple[int, int]:
        """(span, predicted span) with each change's selected work and gaps scaled."""
        opened = {e["row"] for e in self.evs if e.get("open")}  # events that never ended: never scaled

        def factor(kind: str, row: int, inside: bool, core: bool) -> float:
            f = 1.0
            if row < 0 or (inside and row in opened):
                return f
            attrs = self.segment_attrs(kind, row, inside, core)
            for where, scale in changes:
                if all(attrs[c] in (v if isinstance(v, list) else [v]) for c, v in where.items()):
                    f *= scale
            return f

        done: dict[Any, float] = {}
        succ: dict[Any, list] = defaultdict(list)
        indeg = {v: 0 for v in self.t}
        for v, ps in self.preds.items():
            for p in ps:
                succ[p[0]].append(v)
                indeg[v] += 1
        queue = [v for v in self.t if indeg[v] == 0]
        while queue:
            v = queue.pop()
            kind, row, inside, core = self.gap_of[v]
            gap = self.g[v] * factor(kind, row, inside, core)
            ps = self.preds.get(v, [])
            if not ps:
                done[v] = gap
            else:
                done[v] = max(done[p[0]] + (p[1] * factor(p[2], p[3], True,
                                                          self.device and p[2] in ("compute", "collective"))
                                            if p[2] is not None else 0) for p in ps) + gap
            for u in succ[v]:
                indeg[u] -= 1
                if indeg[u] == 0:
                    queue.append(u)
        real = [k for k in self.t if k[0] != "m"]
        span = max(self.t[k] for k in real) - self.run_start
        # An unended event's end is where the recording stopped: it does not move, and the gain is read at the
        # last moment that did end.
        ended = [k for k in real if not (k[0] in ("e", "q") and k[1] in opened)]
        if len(ended) == len(real):
            return span, round(max(done[k] for k in real))
        if not ended:
            return span, span
        return span, span - (max(self.t[k] for k in ended) - self.run_start - round(max(done[k] for k in ended)))


def _opt(v: Any) -> int | None:
    return None if v is None or v != v or v is pd.NA else int(v)


# -- plain Chrome traces -------------------------------------------------------------------------
PROFILER_STEP = re.compile(r"^ProfilerStep\s*#\s*(\d+)")
NCCL = re.compile(r"^(nccl|hccl|rccl)|ncclKernel|ncclDevKernel")
DEVICE_CATEGORIES = {"kernel", "Kernel", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset", "mtia_ccp_events"}
MEMORY_CATEGORIES = {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"}
SYNCS = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "hipDeviceSynchronize",
         "hipStreamSynchronize", "hipEventSynchronize"}


class ChromeModel(Model):
    """Threads' top-level events in order, split where flows leave them; flows (and Kineto's correlation ids) from
    upstream start to the downstream's top-level start; synchronising calls, stream waits and NCCL kernels across
    ranks as `critical_path_kineto` describes them, each rule checked event by event."""

    device = False

    def __init__(self, profile) -> None:
        self.profile = profile
        df = profile.events
        self.evs = []
        for i, r in enumerate(df.to_dict("records")):
            flows = r.get("flow_id")
            stream = r.get("framework_stream_id")
            text = r.get("extra_attributes_json")
            args = json.loads(text) if isinstance(text, str) and text else {}
            args = args if isinstance(args, dict) else {}
            self.evs.append({"row": i, "id": int(r["id"]), "name": r["name"], "start": int(r["start_ts"]),
                             "end": int(r["end_ts"]), "category": r.get("category"), "args": args,
                             "rank": r.get("input"), "source": r.get("trace_event_source"),
                             "open": bool(r.get("incomplete") or False),
                             "thread": (r["instance_id"], _opt(r["process_id"]), _opt(r["thread_id"]),
                                        stream if isinstance(stream, str) else None),
                             "flows": [str(f) for f in flows] if flows is not None else []})
        self.t, self.preds, self.gap_of, self.step = {}, defaultdict(list), {}, {}
        for e in self.evs:
            e["modelled"] = e["category"] not in ("Trace", "gpu_user_annotation", "user_annotation", "cuda_sync") and \
                (e["thread"][1] or 0) >= 0 and e["end"] > e["start"]  # instants are markers

        def kind(e: dict) -> str:
            if e["category"] in DEVICE_CATEGORIES:
                if e["name"] and NCCL.search(e["name"]):
                    return "collective"
                return "memcpy" if e["category"] in MEMORY_CATEGORIES else "kernel"
            return "host"

        calls = [e for e in self.evs if _is_call(e)]  # runtime calls: what correlation ids lead from

        def call_with(rank: Any, corr: Any) -> dict | None:  # the last runtime call of that rank with that id
            found = [c for c in calls if c["rank"] == rank and _corr(c) is not None and _corr(c) == corr]
            return max(found, key=lambda c: c["row"]) if found and corr is not None else None

        flows: dict[str, list[dict]] = defaultdict(list)
        for e in self.evs:
            for f in e["flows"] if e["modelled"] else []:
                flows[f].append(e)
        pairs = []
        for carriers in flows.values():
            carriers.sort(key=lambda e: (e["start"], e["row"]))
            pairs += [(a, b) for a, b in itertools.pairwise(carriers) if a is not b]
        for d in self.evs:  # a device event and the runtime call with its correlation id
            if d["modelled"] and kind(d) != "host":
                c = call_with(d["rank"], _corr(d))
                if c is not None and c["modelled"] and c is not d and not any(a is c and b is d for a, b in pairs):
                    pairs.append((c, d))
        if pairs:  # only the threads flows touch
            touched = {e["thread"] for pair in pairs for e in pair}
            for e in self.evs:
                e["modelled"] = e["modelled"] and e["thread"] in touched
        threads: dict[Any, list[dict]] = defaultdict(list)
        for e in self.evs:
            if e["modelled"]:
                threads[e["thread"]].append(e)
        tops: dict[Any, list[dict]] = {}
        for key, mine in threads.items():
            mine.sort(key=lambda e: (e["start"], -e["end"], e["row"]))
            reach, last, tops[key] = None, None, []
            for e in mine:
                if reach is None or e["start"] >= reach:
                    last, reach = e, e["end"]
                    tops[key].append(e)
                else:
                    reach = max(reach, e["end"])
                e["top"] = last

        # NCCL kernels: one collective per (process group, else name; ordinal on the rank) that several ranks share.
        colls = [e for mine in tops.values() for e in mine if kind(e) == "collective"]
        by_group: dict[tuple, list[dict]] = defaultdict(list)
        for e in colls:
            pg = e["args"].get("Process Group Name")
            by_group[(e["rank"], ("pg", pg) if isinstance(pg, str) else ("name", e["name"]))].append(e)
        members: dict[tuple, list[dict]] = defaultdict(list)
        for (_, group), mine in by_group.items():
            for k, e in enumerate(sorted(mine, key=lambda e: (e["start"], e["row"]))):
                members[(group, k)].append(e)
        members = {lab: ms for lab, ms in members.items() if len({e["rank"] for e in ms}) >= 2}

        points: dict[int, list] = defaultdict(list)
        for mine in tops.values():
            for e in mine:
                self.t[("s", e["row"])] = e["start"]
                self.gap_of[("s", e["row"])] = ("gap", e["row"], False, False)
                self.t[("e", e["row"])] = e["end"]
                self.gap_of[("e", e["row"])] = (kind(e), e["row"], True, False)

        def point(e: dict, role: str) -> None:
            if (role, e["row"]) not in self.t:
                self.t[(role, e["row"])] = e["start"] if role == "p" else e["end"]
                self.gap_of[(role, e["row"])] = (kind(e["top"]), e["top"]["row"], True, False) if role == "p" else \
                    ("host", e["row"], True, False)
                points[e["top"]["row"]].append((role, e["row"]))

        for a, _ in pairs:
            if a["top"] is not a:
                point(a, "p")
        syncs = [e for e in self.evs if e.get("modelled") and e["name"] in SYNCS]
        for e in syncs:
            if e["top"] is not e:
                point(e, "p")
                point(e, "q")
        for lab, ms in members.items():
            last_in = max(e["start"] for e in ms)
            self.t[("m", lab)] = last_in
            self.gap_of[("m", lab)] = ("collective", -1, False, False)
            for e in ms:
                self.t[("r", e["row"])] = min(max(last_in, e["start"]), e["end"])
                self.gap_of[("r", e["row"])] = ("collective", e["row"], True, False)
                points[e["row"]].append(("r", e["row"]))

        def edge(src, dst, cls, k=None, row=-1, gk=None) -> None:
            w = self.t[dst] - self.t[src] if k is not None else 0
            self.preds[dst].append((src, w, k, row, cls, gk))

        for mine in tops.values():
            for e in mine:
                inside = sorted(points[e["row"]], key=lambda p: (self.t[p], p[1], ROLE[p[0]]))
                chain = [("s", e["row"]), *inside, ("e", e["row"])]
                for x, y in itertools.pairwise(chain):
                    waits = (x[1] == y[1] and self._ident(x)[1] == 0 and self._ident(y)[1] == 1 and
                             self.evs[x[1]]["name"] in SYNCS) or y[0] == "r"
                    if waits:  # a synchronising call waits, it does not work; an NCCL kernel waits for its release
                        edge(x, y, OWN)
                    else:
                        edge(x, y, OWN, kind(e), e["row"])
            ordered = sorted(mine, key=lambda e: (e["start"], e["row"]))
            for x, y in itertools.pairwise(ordered):
                edge(("e", x["row"]), ("s", y["row"]), HOST_ORDER)
        for lab, ms in members.items():
            for e in ms:
                edge(("s", e["row"]), ("m", lab), OWN)
                edge(("m", lab), ("r", e["row"]), OTHERS_ARRIVED)
        for a, b in pairs:
            src = ("s", a["row"]) if a["top"] is a else ("p", a["row"])
            edge(src, ("s", b["top"]["row"]), LAUNCHED, row=a["row"], gk="launch")

        # Synchronisation: (launching event, device event) pairs whose device event's top-level event is device work.
        launches = [(a, b) for a, b in pairs if kind(b["top"]) != "host"]
        lanes = {(b["rank"], b["thread"][1], b["thread"][2]): b["thread"] for _, b in launches}

        def latest(lane: Any, before: int, by: Any = None) -> dict | None:
            """Of the device events launched on `lane` at or before `before` (by thread `by`), the last to start."""
            got = [b for a, b in launches if b["thread"] == lane and a["start"] <= before and by in (None, a["thread"])]
            return max(got, key=lambda b: (b["start"], b["row"])) if got else None

        def end_of(e: dict) -> tuple:
            return ("e", e["row"]) if e["top"] is e else ("q", e["row"])

        records = [e for e in self.evs if e["category"] == "cuda_sync"]

        def record_of(e: dict) -> dict | None:
            found = [r for r in records if r["rank"] == e["rank"] and _corr(r) is not None and _corr(r) == _corr(e)]
            return max(found, key=lambda r: r["row"]) if found else None

        for sy in syncs:
            rec = record_of(sy)
            what = rec["name"] if rec else None
            if sy["name"] in ("cudaDeviceSynchronize", "hipDeviceSynchronize") or what == "Context Sync":
                asked = [(ln, sy["start"], None) for ln in {b["thread"] for _, b in launches if b["rank"] == sy["rank"]}]
            elif what == "Stream Sync":
                asked = [(rec["thread"], sy["start"], None)]
            else:
                asked = None
                if what == "Event Sync":
                    at = call_with(sy["rank"], _arg(rec, "wait_on_cuda_event_record_corr_id"))
                    lane = lanes.get((rec["rank"], rec["thread"][1], _arg(rec, "wait_on_stream")))
                    if at is not None and lane is not None:
                        asked = [(lane, at["start"], None)]
                if asked is None:  # the streams its thread launched to
                    asked = [(ln, sy["start"], sy["thread"]) for ln in
                             {b["thread"] for a, b in launches if a["thread"] == sy["thread"]}]
            for lane, before, by in asked:
                b = latest(lane, before, by)
                if b is not None:
                    edge(("e", b["top"]["row"]), end_of(sy), OTHERS_ARRIVED)
        for rec in records:  # cudaStreamWaitEvent: the waiting stream's next kernel after the recorded one
            if rec["name"] != "Stream Wait Event":
                continue
            call = call_with(rec["rank"], _corr(rec))
            at = call_with(rec["rank"], _arg(rec, "wait_on_cuda_event_record_corr_id"))
            lane = lanes.get((rec["rank"], rec["thread"][1], _arg(rec, "wait_on_stream")))
            if call is None or at is None or lane is None:
                continue
            src = latest(lane, at["start"])
            nxt = [(a, b) for a, b in launches if b["thread"] == rec["thread"] and a["thread"] == call["thread"]
                   and a["start"] >= call["start"]]
            dst = min(nxt, key=lambda ab: (ab[0]["start"], ab[1]["row"]))[1] if nxt else None
            if src is not None and dst is not None and src is not dst:
                edge(("e", src["top"]["row"]), ("s", dst["top"]["row"]), OTHERS_ARRIVED)
        self._bind()

    def path_frame(self) -> pd.DataFrame:
        """As a Neuron profile's, a segment's step being the ProfilerStep#N of its rank whose span holds its start."""
        df = super().path_frame()
        spans = [(e["rank"], int(m.group(1)), e["start"], e["end"]) for e in self.evs
                 if isinstance(e["name"], str) and (m := PROFILER_STEP.match(e["name"]))]
        steps = []
        for s, _, _, row, _, _ in self.path():
            inside = [(a, n) for rank, n, a, b in spans if rank == self.evs[row]["rank"] and a <= s < b]
            steps.append(max(inside)[1] if inside else -1)
        df["step"] = pd.Series(steps, dtype=object)
        return df

    def segment_attrs(self, kind: str, row: int, inside: bool, core: bool) -> dict[str, Any]:
        r = self.evs[row]
        inst, pid, tid, _ = r["thread"]
        return {"kind": kind, "instance_id": inst, "process_id": pid, "thread_id": tid, "nc_idx": None,
                "event_id": r["id"] if inside else -1, "name": r["name"] if inside else None, "step": -1}


def _corr(e: dict) -> int | None:
    return _arg(e, "correlation")


def _arg(e: dict, key: str) -> int | None:
    v = e["args"].get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _is_call(e: dict) -> bool:
    """A CUDA/HIP runtime call (not a device event): what a correlation id leads from."""
    cat = e["category"]
    return isinstance(cat, str) and (cat.endswith("_runtime") or cat == "cuda_driver") and e["source"] != "device"
