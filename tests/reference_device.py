"""Slow, obviously right device analyses: loops over instructions and packets (tests only)."""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from neuron_widgets.model.device.hierarchy import NO_LAYER

# Spelled out again here, not imported: the references say what the rules are.
ENGINE_ORDER = ("Tensor", "TensorMatrix", "Vector", "Scalar", "GpSimd", "Pool", "Act", "Sync")
WAIT_WORDS = ("SEMAPHORE", "SEM_WAIT", "WAIT_EVENT")
UNKNOWN = {"", "unknown", "none", "null", "nan", "n/a"}


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


def spellings(ins: pd.DataFrame) -> dict[str, str]:
    """engine (lower case) -> the track a row without a timeline track is drawn on."""
    labels = {e.lower(): e for e in ENGINE_ORDER}
    tracks: dict[str, list[str]] = {}
    for row in ins.to_dict("records"):
        e, t = text(row.get("engine")), text(row.get("timeline_track"))
        if e and t and t not in tracks.setdefault(e, []):
            tracks[e].append(t)
    for e, ts in tracks.items():
        own = [t for t in ts if t.lower() == e.lower()]
        labels[e.lower()] = own[0] if own else ts[0] if len(ts) == 1 else labels.get(e.lower(), e)
    return labels


def engine_of(row: dict, labels: dict[str, str] | None = None) -> str:
    """The engine an instruction counts for: the track it is drawn on."""
    engine = text(row.get("engine"))
    spelled = (labels or {}).get(engine.lower(), engine) if engine else ""
    return text(row.get("timeline_track")) or spelled or "engine"


def is_wait(row: dict) -> bool:
    op = text(row.get("opcode")).upper()
    return any(w in op for w in WAIT_WORDS)


def layer_of(row: dict) -> str:
    """An instruction's layer path: its layer under its subgraph unless the layer already starts with it."""
    layer, sub = text(row.get("layer")), text(row.get("fully_qualified_subgraph"))
    sub_segs = [s for s in sub.split("/") if s.strip()]
    if not sub_segs:
        return layer
    segs = [s for s in layer.split("/") if s.strip()]
    if segs[: len(sub_segs)] != sub_segs:
        segs = sub_segs + segs
    return "/" + "/".join(segs)


def active_wait(intervals: list[tuple[int, int, bool]]) -> tuple[int, int, int]:
    """(active, waits, busy) of one engine's instructions given as (start, end, is_wait)."""
    busy = union([(s, e) for s, e, _ in intervals])
    active = union([(s, e) for s, e, w in intervals if not w])
    return active, busy - active, busy


def ref_engines(ins: pd.DataFrame) -> dict[str, dict]:
    labels = spellings(ins)
    out: dict[str, dict] = {}
    for row in ins.to_dict("records"):
        d = out.setdefault(engine_of(row, labels), {"instructions": 0, "waits": 0, "intervals": []})
        d["instructions"] += 1
        d["waits"] += is_wait(row)
        d["intervals"].append((row["start_ts"], row["end_ts"], is_wait(row)))
    for d in out.values():
        d["active"], d["wait"], d["busy"] = active_wait(d["intervals"])
    return out


def ref_hierarchy(ins: pd.DataFrame) -> dict[str, dict]:
    nodes: dict[str, dict] = {}
    labels = spellings(ins)
    for row in ins.to_dict("records"):
        layer = layer_of(row)
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
            n["by_engine"][engine_of(row, labels)].append((row["start_ts"], row["end_ts"], is_wait(row)))
            n["flops"] += float(row.get("adjusted_flops", 0) or 0)
    for n in nodes.values():
        times = {e: active_wait(v) for e, v in n["by_engine"].items()}
        n["active"] = {e: t[0] for e, t in times.items()}
        n["wait"] = {e: t[1] for e, t in times.items()}
    return nodes


def ref_top(ins: pd.DataFrame, column: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    labels = spellings(ins)
    for row in ins.to_dict("records"):
        key = (layer_of(row) if column == "layer" else text(row.get(column))) or "(none)"
        d = out.setdefault(key, {"instructions": 0, "engine_ns": 0, "intervals": [], "per": defaultdict(int)})
        d["instructions"] += 1
        d["engine_ns"] += max(row["end_ts"] - row["start_ts"], 0)
        d["intervals"].append((row["start_ts"], row["end_ts"]))
        d["per"][engine_of(row, labels)] += max(row["end_ts"] - row["start_ts"], 0)
    for d in out.values():
        d["busy_ns"] = union(d["intervals"])
    return out


def ref_layers(ins: pd.DataFrame) -> dict[str, dict]:
    """top_operators(by="layer") the slow way: per layer path as the hierarchy writes it (`/sg00/_dot.3`; instructions
    with no layer: "(no layer)"), its own instructions, engine time and per-engine time, and the same with every
    layer under it (inclusive: as the hierarchy counts), with the time any engine ran one of those."""
    out: dict[str, dict] = {}
    labels = spellings(ins)
    for row in ins.to_dict("records"):
        segs = [s for s in layer_of(row).split("/") if s.strip()]
        chain = ["/" + "/".join(segs[:k + 1]) for k in range(len(segs))] or [NO_LAYER]
        dur = max(row["end_ts"] - row["start_ts"], 0)
        for path in chain:
            d = out.setdefault(path, {"own_instructions": 0, "own_engine_ns": 0, "instructions": 0, "engine_ns": 0,
                                      "intervals": [], "own_per": defaultdict(int)})
            d["instructions"] += 1
            d["engine_ns"] += dur
            d["intervals"].append((row["start_ts"], row["end_ts"]))
            if path == chain[-1]:
                d["own_instructions"] += 1
                d["own_engine_ns"] += dur
                d["own_per"][engine_of(row, labels)] += dur
    for d in out.values():
        d["busy_ns"] = union(d["intervals"])
    return out


def ref_dma(dma: pd.DataFrame) -> dict[tuple[str, str], dict]:
    def places(v) -> str:
        out: list[str] = []

        def walk(x) -> None:
            if isinstance(x, list | tuple):
                for y in x:
                    walk(y)
            elif text(x).strip() and text(x).strip().lower() not in UNKNOWN and text(x).strip() not in out:
                out.append(text(x).strip())
        walk(v)
        return "+".join(out)

    def num(v) -> str:
        t = text(v)
        return t[:-2] if t.endswith(".0") else t

    out: dict[tuple[str, str], dict] = {}
    for row in dma.to_dict("records"):
        kind = text(row.get("queue_type"))
        kind = "" if kind.strip().lower() in UNKNOWN else kind
        s, d = places(row.get("source")), places(row.get("dest"))
        direction = f"{s or '?'} → {d or '?'}" if s or d else kind
        name = text(row.get("queue_name")).strip()
        q, e = num(row.get("queue_idx")), num(row.get("engine_idx"))
        numbered = " ".join(x for x in (f"queue {q}" if q else "", f"E{e}" if e else "") if x) or "queue"
        d = out.setdefault((text(row.get("queue_name")) if name else numbered, direction),
                           {"packets": 0, "bytes": 0, "intervals": []})
        d["packets"] += 1
        d["bytes"] += int(row.get("transfer_bytes", 0))
        d["intervals"].append((row["start_ts"], row["end_ts"]))
    for d in out.values():
        d["busy_ns"] = union(d["intervals"])
    return out


def ref_waits(ins: pd.DataFrame) -> dict[str, dict]:
    engines = ref_engines(ins)
    labels = spellings(ins)
    out: dict[str, dict] = {}
    for row in ins.to_dict("records"):
        e = engine_of(row, labels)
        d = out.setdefault(e, {"waits": engines[e]["waits"], "wait_ns": engines[e]["wait"], "event_wait": 0})
        d["event_wait"] += int(row.get("evt_wait_time_ns", 0) or 0)
    return out
