"""What the Device Trace Viewer colours instructions by, and which hierarchy node each event belongs to.

Instructions take the colour of their layer, HLO operator, NKI kernel or opcode; DMA packets,
CC ops and semaphore values are not instructions and take one colour per table ("DMA"...), so
the legend reads as the choice made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .codes import TABLE_LABELS, encode
from .hierarchy import instruction_nodes, layer_column

if TYPE_CHECKING:
    from .events import DeviceEvents

# color_by value -> what the viewer's menu calls it
COLOR_BY = {"name": "opcode", "layer": "layer", "hlo": "HLO operator", "nki": "NKI kernel"}
ALIASES = {"opcode": "name", "hlo_name": "hlo", "operator": "hlo", "nki_source_location": "nki"}
MISSING = {"layer": "(no layer)", "hlo": "(no HLO operator)", "nki": "(no NKI kernel)"}


def canonical(key: str) -> str:
    return ALIASES.get(key, key)


def choices(events: DeviceEvents) -> list[dict[str, str]]:
    """The colourings this trace can show: opcode always, the others where its instructions carry them."""
    ins = events.trace.instructions
    have = {"name": True, "layer": layer_column(ins) is not None,
            "hlo": _filled(ins, "hlo_name"), "nki": _filled(ins, "nki_source_location")}
    return [{"value": k, "label": label} for k, label in COLOR_BY.items() if have[k]]


def _filled(df: pd.DataFrame, column: str) -> bool:
    return column in df and bool(df[column].notna().any())


def _instruction_rows(events: DeviceEvents) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Which events are instructions, each event's row in its own table, its table's code and the tables."""
    if not len(events):
        z = np.zeros(0, np.int64)
        return z.astype(bool), z, z, []
    table = events._joined("table").chunk(0)
    tables = [str(v) for v in table.dictionary.to_pylist()]
    codes = table.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    is_ins = codes == tables.index("instructions") if "instructions" in tables else np.zeros(codes.size, bool)
    return is_ins, events.array("source_row").astype(np.int64), codes, tables


def color_codes(events: DeviceEvents, key: str) -> tuple[np.ndarray, list[str]] | None:
    """Per event a code into the keys it is coloured by; None for a key this module does not know."""
    key = canonical(key)
    if key not in MISSING:
        return None
    ins = events.trace.instructions
    column = layer_column(ins) if key == "layer" else ins.get({"hlo": "hlo_name", "nki": "nki_source_location"}[key])
    if column is None or ins.empty:
        codes, keys = np.zeros(len(ins), np.int32), [MISSING[key]]
    else:
        codes, keys = encode(column)
        keys = [k if k.strip() else MISSING[key] for k in keys]
    is_ins, src, table, tables = _instruction_rows(events)
    out = np.empty(len(events), np.int32)
    out[is_ins] = codes[src[is_ins]]
    out[~is_ins] = len(keys) + table[~is_ins]
    return out, [*keys, *(TABLE_LABELS.get(t, t) for t in tables)]


def node_codes(events: DeviceEvents, paths: pd.Series) -> np.ndarray:
    """Per event the position in `paths` of its instruction's deepest hierarchy node; -1 for other events."""
    out = np.full(len(events), -1, np.int32)
    is_ins, src, _, _ = _instruction_rows(events)
    if is_ins.any():
        out[is_ins] = instruction_nodes(events.trace, paths)[src[is_ins]]
    return out
