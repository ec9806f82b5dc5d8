"""A device trace's hierarchy: framework layer -> HLO operator -> NKI kernel, with each node's time.

Layers nest by their path segments (`model/layers.3/mlp` is mlp under layers.3 under model), an
HLO operator sits under the layer of its instructions, an NKI source location under its operator.
Numbers come from the instructions; a layer the device JSON's `layer_summary` describes takes its
span, FLOPs and MFU from there, and the `source` column says which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numba
import numpy as np
import pandas as pd

from ..interval_union import close, step
from ..kernel_args import read_only
from .codes import combine, encode, engine_key
from .engines import engine_codes as _engine_codes
from .engines import grouped_busy, waiting
from .strip import execution_span

if TYPE_CHECKING:
    from .trace import DeviceTrace

NO_LAYER = "(no layer)"
SUBGRAPH = "fully_qualified_subgraph"
COLUMNS = ["path", "name", "parent", "level", "kind", "start_ts", "end_ts", "duration_ns", "share", "instructions",
           "flops", "mfu", "source"]
FLOP_COLUMNS = ("adjusted_flops", "raw_flops", "flops")


def layer_column(ins: pd.DataFrame) -> pd.Series | None:
    """Each instruction's layer path, decided per row: `fully_qualified_subgraph` + "/" + `layer` where the
    layer is relative to its subgraph (neuron-profile's JSON: `_dot.3` under `/sg00`), the subgraph itself
    where `layer` is empty, and `layer` as it is where it already starts with its subgraph or has none
    (Parquet Instruction tables, older exports). None when the instructions carry neither."""
    layer = ins["layer"] if "layer" in ins and ins["layer"].notna().any() else None
    sub = ins[SUBGRAPH] if SUBGRAPH in ins and ins[SUBGRAPH].notna().any() else None
    if sub is None:
        return layer
    lc = encode(layer) if layer is not None else (np.zeros(len(ins), np.int32), [""])
    codes, texts = combine(encode(sub), lc, layer_path)
    # Two pairs may name one path (`/sg00` + `_dot.3` and `/sg00` + `/sg00/_dot.3`): one category each.
    cats = list(dict.fromkeys(t for t in texts if t))
    pos = {t: i for i, t in enumerate(cats)}
    remap = np.array([pos.get(t, -1) for t in texts] or [0], dtype=np.int32)
    return pd.Series(pd.Categorical.from_codes(remap[codes], categories=cats), index=ins.index, name="layer")


def layer_path(subgraph: str, layer: str) -> str:
    """One instruction's layer path from its subgraph and its layer (see layer_column); "" for neither."""
    sub = [s for s in subgraph.split("/") if s.strip()]
    segs = [s for s in layer.split("/") if s.strip()]
    if not sub:
        return layer
    if segs[: len(sub)] != sub:  # relative to the subgraph (or empty: the subgraph's own instruction)
        segs = sub + segs
    return "/" + "/".join(segs)


def engine_codes(ins: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Each instruction's engine, as engines.py defines it (the track it is drawn on)."""
    return _engine_codes(ins)


def _codes(ins: pd.DataFrame, column: pd.Series | str | None) -> tuple[np.ndarray, list[str]]:
    col = ins[column] if isinstance(column, str) and column in ins else column if isinstance(column, pd.Series) else None
    if col is None:
        return np.zeros(len(ins), dtype=np.int32), [""]
    return encode(col)


def _chain(layer: str, hlo: str, nki: str) -> list[tuple[str, str, str]]:
    """(path, name, kind) from the outermost layer down to the instruction's own node."""
    out: list[tuple[str, str, str]] = []
    path = ""
    segments = [s for s in layer.split("/") if s.strip()]
    if not segments and not hlo and not nki:
        segments = [NO_LAYER]
    for s in segments:
        path = f"{path}/{s}"
        out.append((path, s, "layer"))
    for text, kind in ((hlo, "hlo"), (nki, "nki")):
        if text:
            path = f"{path}/{text}"
            out.append((path, text, kind))
    return out


def _combos(trace: DeviceTrace) -> tuple[np.ndarray, list[tuple[str, str, str]]]:
    """Per instruction a code of its (layer, HLO operator, NKI location), and those triples.

    Kept with the trace: the hierarchy and the viewer's per-event nodes both start from them.
    """
    cached = trace.__dict__.get("_combos")
    if cached is None:
        cached = trace.__dict__["_combos"] = _combos_of(trace.instructions)
    return cached


def _combos_of(ins: pd.DataFrame) -> tuple[np.ndarray, list[tuple[str, str, str]]]:
    lc, lt = _codes(ins, layer_column(ins))
    hc, ht = _codes(ins, "hlo_name")
    kc, kt = _codes(ins, "nki_source_location")
    combo = (lc.astype(np.int64) * len(ht) + hc) * len(kt) + kc
    uniq, inv = np.unique(combo, return_inverse=True)
    triples = []
    for u in uniq.tolist():
        rest, k = divmod(u, len(kt))
        lay, h = divmod(rest, len(ht))
        triples.append((lt[lay], ht[h], kt[k]))
    return inv.reshape(-1), triples


def instruction_nodes(trace: DeviceTrace, paths: pd.Series) -> np.ndarray:
    """Per instruction the position in `paths` (a hierarchy's `path` column) of its deepest node; -1 if absent.

    The viewer highlights a node's instructions with these: those whose deepest node is the node
    or lies under it.
    """
    ins = trace.instructions
    if ins.empty:
        return np.zeros(0, np.int32)
    inv, triples = _combos(trace)
    where = {p: i for i, p in enumerate(paths.tolist())}
    leaf = np.array([where.get(_chain(*t)[-1][0], -1) for t in triples], dtype=np.int32)
    return leaf[inv]


def subtree(paths: list[str], path: str) -> np.ndarray:
    """Which of `paths` are `path` or under it (a node's path is its parent's, a slash, its name)."""
    return np.array([p == path or p.startswith(path + "/") for p in paths], dtype=bool)


def hierarchy(trace: DeviceTrace) -> pd.DataFrame:
    """One row per layer, HLO operator and NKI kernel, in tree order (children by start time).

    Columns: path, name, parent, level, kind (layer / hlo / nki), start_ts, end_ts, duration_ns,
    share (of the execution), instructions, `<engine>_active_ns` and `<engine>_wait_ns` per engine
    (the engine's active time and semaphore waits over the node's instructions, as engines.py
    defines them), flops (where the instructions carry them),
    mfu (percent, from `layer_summary`), source ("instructions" or "layer_summary").
    `attrs["notes"]` says where the numbers come from.
    """
    ins = trace.instructions
    if ins.empty or not {"start_ts", "end_ts"} <= set(ins.columns):
        out = pd.DataFrame(columns=COLUMNS)
        out.attrs["notes"] = ["the device trace has no instructions"]
        return out
    inv, triples = _combos(trace)
    nodes: dict[str, int] = {}
    info: list[tuple[str, str, str, int, str]] = []  # path, name, parent, level, kind
    chains: list[list[int]] = []
    for triple in triples:
        links: list[int] = []
        parent = ""
        for level, (path, name, kind) in enumerate(_chain(*triple)):
            if path not in nodes:
                nodes[path] = len(info)
                info.append((path, name, parent, level, kind))
            links.append(nodes[path])
            parent = path
        chains.append(links)
    n = len(info)
    start = ins["start_ts"].to_numpy(np.int64)
    end = ins["end_ts"].to_numpy(np.int64)
    ec, engines = engine_codes(ins)
    wait = waiting(ins)
    flops_col = next((c for c in FLOP_COLUMNS if c in ins), None)
    flops = pd.to_numeric(ins[flops_col], errors="coerce").fillna(0).to_numpy(np.float64) if flops_col else None
    depth = max(len(c) for c in chains)
    chain = np.full((len(chains), depth), -1, dtype=np.int64)
    for i, c in enumerate(chains):
        chain[i, :len(c)] = c
    order = np.argsort(start, kind="stable") if start.size > 1 and np.any(start[1:] < start[:-1]) else None

    def pick(a: np.ndarray) -> np.ndarray:
        return read_only(a[order] if order is not None else a, a.dtype)

    first, last, count, flop_sum, active, busy = _tree_stats(
        pick(start), pick(end), pick(ec.astype(np.int64)), pick(inv.astype(np.int64)), chain, n, len(engines),
        pick(flops if flops is not None else np.zeros(len(start))), pick(wait))
    out = pd.DataFrame(info, columns=["path", "name", "parent", "level", "kind"])
    out["start_ts"], out["end_ts"] = first, last
    out["duration_ns"] = last - first
    out["instructions"] = count
    per_engine = active.reshape(n, len(engines))
    per_wait = (busy - active).reshape(n, len(engines))
    order_e = sorted(range(len(engines)), key=lambda j: engine_key(engines[j]))
    for j in order_e:
        out[f"{engines[j]}_active_ns"] = per_engine[:, j]
    for j in order_e:
        out[f"{engines[j]}_wait_ns"] = per_wait[:, j]
    out["flops"] = flop_sum if flops is not None else np.nan
    out["mfu"] = np.nan
    out["source"] = "instructions"
    notes = [f"spans, instruction counts and engine times computed from {len(ins):,} instructions"
             + (f"; FLOPs from their {flops_col}" if flops_col else "")]
    out, used, dropped = _with_layer_summary(out, getattr(trace, "layers", pd.DataFrame()))
    if used:
        notes.append(f"span, FLOPs and MFU of {used} layer(s) taken from the profile's layer_summary")
    if dropped:
        notes.append(f"{dropped} layer_summary time(s) outside the int64 ns range were ignored")
    a, b = execution_span(trace)
    out["share"] = out["duration_ns"] / max(b - a, 1)
    out = _tree_order(out)
    out.attrs["notes"] = notes
    return out[[*COLUMNS[:-1], *[c for c in out.columns if c.endswith("_active_ns")],
                *[c for c in out.columns if c.endswith("_wait_ns")], "source"]]


@numba.njit(cache=True, nogil=True)
def _tree_stats(start: np.ndarray, end: np.ndarray, engine: np.ndarray, combo: np.ndarray, chain: np.ndarray, n: int,
                n_eng: int, flops: np.ndarray, wait: np.ndarray,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """One pass over the instructions in start order: each node's first start, last end, count, FLOPs,
    and per engine the length of the union of its instructions that are not semaphore waits (active)
    and of all of them (busy); runs kept open per node and engine."""
    first = np.full(n, np.iinfo(np.int64).max)
    last = np.full(n, np.iinfo(np.int64).min)
    count = np.zeros(n, np.int64)
    flop_sum = np.zeros(n)
    active = np.zeros(n * n_eng, np.int64)
    run_start = np.zeros(n * n_eng, np.int64)
    run_end = np.full(n * n_eng, np.iinfo(np.int64).min)
    busy = np.zeros(n * n_eng, np.int64)
    all_start = np.zeros(n * n_eng, np.int64)
    all_end = np.full(n * n_eng, np.iinfo(np.int64).min)
    for i in range(start.size):
        s, e = start[i], max(end[i], start[i])
        for level in range(chain.shape[1]):
            node = chain[combo[i], level]
            if node < 0:
                break
            first[node] = min(first[node], s)
            last[node] = max(last[node], end[i])
            count[node] += 1
            flop_sum[node] += flops[i]
            g = node * n_eng + engine[i]
            all_start[g], all_end[g], closed = step(all_start[g], all_end[g], s, e)
            busy[g] += closed
            if not wait[i]:
                run_start[g], run_end[g], closed = step(run_start[g], run_end[g], s, e)
                active[g] += closed
    close(run_start, run_end, active)
    close(all_start, all_end, busy)
    return first, last, count, flop_sum, active, busy


def warm() -> None:
    """Compile (or load the cached) passes now, not on a user's first call."""
    grouped_busy(np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1, np.int64), 1)
    z = read_only(np.zeros(1), np.int64)
    _tree_stats(z, z, z, z, np.zeros((1, 1), np.int64), 1, 1, read_only(np.zeros(1), np.float64),
                read_only(np.zeros(1), np.bool_))


# Times past this are no nanoseconds a profile holds (2^62 ns is 146 years): ignored, not wrapped.
TIME_LIMIT = 2**62


def _with_layer_summary(out: pd.DataFrame, layers: pd.DataFrame) -> tuple[pd.DataFrame, int, int]:
    """Layers described by `layer_summary` take its span, FLOPs and MFU; layers only it knows are added
    under their nearest ancestor in the tree. Returns the tree, the rows used and the times ignored."""
    if layers is None or layers.empty or "name" not in layers:
        return out, 0, 0
    index = {p: i for i, p in enumerate(out["path"])}
    levels = dict(zip(out["path"], out["level"], strict=True))
    spans = {p: (int(a), int(b)) for p, a, b in zip(out["path"], out["start_ts"], out["end_ts"], strict=True)}
    whole = (min((a for a, _ in spans.values()), default=0), max((b for _, b in spans.values()), default=0))
    extra: list[dict[str, Any]] = []
    added: dict[str, dict[str, Any]] = {}
    used = dropped = 0
    rows = [r for r in layers.to_dict("records") if str(r.get("name") or "").strip()]
    # Shallow names first, so a layer only the summary knows finds its (also new) parent.
    rows.sort(key=lambda r: len([s for s in str(r["name"]).split("/") if s.strip()]))
    for row in rows:
        segs = [s for s in str(row["name"]).split("/") if s.strip()]
        if not segs:
            continue
        path = "/" + "/".join(segs)
        values: dict[str, Any] = {}
        times = {}
        for k in ("start", "end", "duration"):
            v = finite(row.get(k))
            if v is not None and abs(v) >= TIME_LIMIT:
                dropped += 1
                v = None
            times[k] = v
        start, end, dur = times["start"], times["end"], times["duration"]
        if start is not None:
            values["start_ts"] = int(start)
        if end is not None:
            values["end_ts"] = int(end)
        if dur is not None:
            values["duration_ns"] = int(dur)
        elif start is not None and end is not None:
            values["duration_ns"] = int(end - start)
        mfu = finite(row.get("tensor_engine_mfu"))
        if mfu is not None:
            values["mfu"] = 100.0 * mfu  # a fraction in the JSON, as the summary's `_percent` metrics are
        flops = next((finite(row.get(k)) for k in ("flops", "total_flops", "adjusted_flops") if finite(row.get(k)) is not None),
                     None)
        if flops is not None:
            values["flops"] = flops
        values["source"] = "layer_summary"
        used += 1
        i = index.get(path)
        if i is not None:
            for k, v in values.items():
                out.at[i, k] = v
            continue
        if path in added:  # the summary names it twice: the later row's numbers win, as for a known node
            added[path].update(values)
            continue
        parent = next(("/" + "/".join(segs[:k]) for k in range(len(segs) - 1, 0, -1)
                       if "/" + "/".join(segs[:k]) in levels), "")
        level = levels[parent] + 1 if parent else 0
        levels[path] = level
        if "start_ts" not in values or "end_ts" not in values:
            # No usable times: the parent's span stands in (times stay int64 ns, exact past 2^53).
            a, b = spans.get(parent, whole)
            values.setdefault("start_ts", a)
            values.setdefault("end_ts", max(b, values["start_ts"]))
            values["duration_ns"] = values["end_ts"] - values["start_ts"]
        spans[path] = (values["start_ts"], values["end_ts"])
        added[path] = {"path": path, "name": segs[-1], "parent": parent, "level": level, "kind": "layer",
                       "instructions": 0, **values}
        extra.append(added[path])
    if extra:
        # Every int column filled before the concat: a hole would make it float, rounding ns past 2^53.
        engines = {c: 0 for c in out.columns if c.endswith(("_active_ns", "_wait_ns"))}
        add = pd.DataFrame([{**engines, **e} for e in extra])
        for c in ("start_ts", "end_ts", "duration_ns", "instructions", *engines):
            add[c] = add[c].astype("int64")
        out = pd.concat([out, add], ignore_index=True)
    return out, used, dropped


def finite(v: Any) -> float | None:
    """A value as a float, or None where it is no finite number (None, words, NaN, infinities: JSON and tables hold them all)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


def _tree_order(df: pd.DataFrame) -> pd.DataFrame:
    """Parents before children, siblings by start time (then name)."""
    # Plain lists read once: a frame lookup per node cost seconds on a wide tree.
    parents, paths = df["parent"].tolist(), df["path"].tolist()
    starts, names = df["start_ts"].tolist(), [str(n) for n in df["name"].tolist()]
    children: dict[str, list[int]] = {}
    for i, parent in enumerate(parents):
        children.setdefault(parent, []).append(i)
    for kids in children.values():
        kids.sort(key=lambda i: (starts[i], names[i]))
    order: list[int] = []
    stack = list(reversed(children.get("", [])))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children.get(paths[i], [])))
    return df.iloc[order].reset_index(drop=True)
