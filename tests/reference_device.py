"""Slow, obviously right device analyses: loops over instructions and packets (tests only)."""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from neuron_widgets.model.device_hierarchy import NO_LAYER


def union(intervals: list[tuple[int, int]]) -> int:
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        e = max(e, s)
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def text(v) -> str:
    return "" if v is None or (isinstance(v, float) and v != v) else str(v)


def engine_of(row: dict) -> str:
    return text(row.get("timeline_track")) or text(row.get("engine")) or "engine"


def ref_hierarchy(ins: pd.DataFrame) -> dict[str, dict]:
    nodes: dict[str, dict] = {}
    for row in ins.to_dict("records"):
        layer = text(row.get("layer"))
        hlo, nki = text(row.get("hlo_name")), text(row.get("nki_source_location"))
        names = [s for s in layer.split("/") if s.strip()]
        kinds = ["layer"] * len(names)
        if not names and not hlo and not nki:
            names, kinds = [NO_LAYER], ["layer"]
        for t, k in ((hlo, "hlo"), (nki, "nki")):
            if t:
                names.append(t)
                kinds.append(k)
        for depth in range(len(names)):
            path = "/" + "/".join(names[:depth + 1])
            n = nodes.setdefault(path, {"name": names[depth], "kind": kinds[depth], "level": depth,
                                        "parent": ("/" + "/".join(names[:depth])) if depth else "",
                                        "start": row["start_ts"], "end": row["end_ts"], "count": 0,
                                        "by_engine": defaultdict(list), "flops": 0.0})
            n["start"] = min(n["start"], row["start_ts"])
            n["end"] = max(n["end"], row["end_ts"])
            n["count"] += 1
            n["by_engine"][engine_of(row)].append((row["start_ts"], row["end_ts"]))
            n["flops"] += float(row.get("adjusted_flops", 0) or 0)
    for n in nodes.values():
        n["active"] = {e: union(v) for e, v in n["by_engine"].items()}
    return nodes


def ref_top(ins: pd.DataFrame, column: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for row in ins.to_dict("records"):
        key = text(row.get(column)) or "(none)"
        d = out.setdefault(key, {"instructions": 0, "engine_ns": 0, "intervals": [], "per": defaultdict(int)})
        d["instructions"] += 1
        d["engine_ns"] += max(row["end_ts"] - row["start_ts"], 0)
        d["intervals"].append((row["start_ts"], row["end_ts"]))
        d["per"][engine_of(row)] += max(row["end_ts"] - row["start_ts"], 0)
    for d in out.values():
        d["busy_ns"] = union(d["intervals"])
    return out


def ref_dma(dma: pd.DataFrame) -> dict[tuple[str, str], dict]:
    def flat(v) -> str:
        while isinstance(v, list) and len(v) == 1:
            v = v[0]
        return "+".join(flat(x) for x in v) if isinstance(v, list) else text(v)

    out: dict[tuple[str, str], dict] = {}
    for row in dma.to_dict("records"):
        direction = f"{flat(row['source'])} → {flat(row['dest'])}" if "source" in row else text(row.get("queue_type"))
        d = out.setdefault((text(row.get("queue_name")), direction), {"packets": 0, "bytes": 0, "intervals": []})
        d["packets"] += 1
        d["bytes"] += int(row.get("transfer_bytes", 0))
        d["intervals"].append((row["start_ts"], row["end_ts"]))
    for d in out.values():
        d["busy_ns"] = union(d["intervals"])
    return out


def ref_waits(ins: pd.DataFrame) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for row in ins.to_dict("records"):
        d = out.setdefault(engine_of(row), {"waits": 0, "intervals": [], "event_wait": 0})
        op = text(row.get("opcode")).upper()
        if "SEMAPHORE" in op or "SEM_WAIT" in op or "WAIT_EVENT" in op:
            d["waits"] += 1
            d["intervals"].append((row["start_ts"], row["end_ts"]))
        d["event_wait"] += int(row.get("evt_wait_time_ns", 0) or 0)
    for d in out.values():
        d["wait_ns"] = union(d["intervals"])
    return out
