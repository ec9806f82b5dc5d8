"""The Device Trace Viewer's hierarchy panel: what the browser gets of `DeviceTrace.hierarchy()`.

Rows go as JSON (a tree of layers and operators is thousands of nodes, not millions), times in ns
from the viewer's origin. Past MAX_NODES the longest nodes are kept with their ancestors, and an
instruction whose own node was left out counts under its nearest ancestor that was kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.device.colours import node_codes
from ..model.device.events import DeviceEvents
from ..model.device.hierarchy import finite

MAX_NODES = 20_000


def tree_payload(events: DeviceEvents, max_nodes: int = MAX_NODES) -> tuple[dict[str, Any], np.ndarray | None]:
    """({rows, notes, engines}, per event its row in `rows` or -1), or ({}, None) for a trace with no instructions.

    A row's `engines` are each engine's active time, its `waits` the engine's semaphore waits
    (model.device.engines), so the busiest engine the panel names is the strip's."""
    tree = events.trace.hierarchy()
    if tree.empty:
        return {}, None
    notes = list(tree.attrs.get("notes", []))
    keep = np.ones(len(tree), bool)
    if len(tree) > max_nodes:
        keep[:] = False
        index = {p: i for i, p in enumerate(tree["path"])}
        for i in np.argsort(-tree["duration_ns"].to_numpy(), kind="stable")[:max_nodes]:
            while i is not None and not keep[i]:
                keep[i] = True
                i = index.get(tree["parent"].iat[i])
        notes.append(f"the {int(keep.sum()):,} longest of {len(tree):,} nodes (and their ancestors) are listed; "
                     "the instructions of the others count under their nearest listed ancestor")
    # Each node's row in the rows sent: its own, else its nearest kept ancestor's (parents come first).
    sent = np.full(len(tree), -1, np.int32)
    row_of: dict[str, int] = {}
    kept = 0
    for i, (path, parent) in enumerate(zip(tree["path"], tree["parent"], strict=True)):
        if keep[i]:
            sent[i] = kept
            kept += 1
        else:
            sent[i] = row_of.get(parent, -1)
        row_of[path] = int(sent[i])
    codes = node_codes(events, tree["path"])
    codes = np.where(codes >= 0, sent[np.maximum(codes, 0)], -1).astype(np.int32)
    origin = events.origin_ts
    engines = [c for c in tree.columns if c.endswith("_active_ns")]
    waits = [c for c in tree.columns if c.endswith("_wait_ns")]
    rows = []
    for r in tree[keep].to_dict("records"):
        rows.append({
            "path": str(r["path"]), "name": str(r["name"]), "parent": str(r["parent"]), "level": int(r["level"]),
            "kind": str(r["kind"]), "start": _rel(r["start_ts"], origin), "end": _rel(r["end_ts"], origin),
            "duration": finite(r["duration_ns"]), "share": finite(r["share"]), "instructions": int(r["instructions"]),
            "engines": {c[: -len("_active_ns")]: int(r[c]) for c in engines if finite(r[c])},
            "waits": {c[: -len("_wait_ns")]: int(r[c]) for c in waits if finite(r[c])},
            "flops": finite(r["flops"]), "mfu": finite(r["mfu"]), "source": str(r["source"]),
        })
    return {"rows": rows, "notes": notes, "engines": [c[: -len("_active_ns")] for c in engines]}, codes


def _rel(ts: Any, origin: int) -> float | None:
    if isinstance(ts, int | np.integer):
        return float(int(ts) - origin)  # exact: an epoch in ns does not survive a float
    v = finite(ts)
    return None if v is None else v - origin
