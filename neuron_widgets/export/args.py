"""The exported events' arguments as the page's JSON texts: read as one column, normalised once per distinct text."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ..model.event_access import EventAccess, _parse_args
from ..model.profile import Profile

COLUMN = "extra_attributes_json"
_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
NOT_READ = -2  # a row's code before its arguments are read; -1: it has none


def page_text(args: dict[str, Any]) -> str:
    """One event's arguments as the page reads them ("" for none)."""
    return orjson.dumps(args, option=_OPTS, default=str).decode() if args else ""


def _from_column(p: Profile) -> bool:
    """The profile's arguments are its JSON text column, as `EventAccess.args_of_rows` reads them (a device
    trace's are not)."""
    return getattr(type(p), "details_of_rows", None) is EventAccess.details_of_rows and COLUMN in p.column_names


class ArgTexts:
    """Each row's argument text, remembered across the budget search's builds as a code per row into the
    distinct texts (an int32 per event, not a Python string per event read)."""

    def __init__(self, p: Profile) -> None:
        self.p = p
        self.code = np.full(len(p), NOT_READ, np.int32)
        self.texts: list[str] = []
        self._index: dict[str, int] = {}
        self._wanted = np.zeros(len(p), bool)

    def want(self, rows: np.ndarray) -> None:
        """Rows likely asked for later, read with the next read: each read decodes the column's row groups
        that hold its rows, so rows read together cost one pass over the file, not one each."""
        if _from_column(self.p):  # a read per event (a device trace's) gains nothing from reading more
            self._wanted[rows] = True

    def _codes_of(self, texts: list[str]) -> np.ndarray:
        index, out = self._index, np.empty(len(texts), np.int32)
        for i, t in enumerate(texts):
            if not t:
                out[i] = -1
                continue
            c = index.get(t)
            if c is None:
                c = index[t] = len(self.texts)
                self.texts.append(t)
            out[i] = c
        return out

    def _read(self, rows: np.ndarray) -> np.ndarray:
        """Codes of `rows` (sorted): the column taken at those rows only, each distinct text parsed and written once."""
        p = self.p
        raw = p.values_at(COLUMN, rows) if _from_column(p) else None
        if raw is not None and (pa.types.is_string(raw.type) or pa.types.is_large_string(raw.type)):
            enc = pc.dictionary_encode(raw)
            local = self._codes_of([page_text(_parse_args(t)) for t in enc.dictionary.to_pylist()])
            nulls = enc.indices.is_null().to_numpy(zero_copy_only=False)
            if not local.size:
                return np.full(len(raw), -1, np.int32)
            idx = enc.indices.fill_null(0).to_numpy(zero_copy_only=False)
            out = np.where(nulls, -1, local[idx]).astype(np.int32)
            del raw, enc
            pa.default_memory_pool().release_unused()  # the taken texts and their dictionary, back to the system
            return out
        return self._codes_of([page_text(a) for a in p.details_of_rows(rows)])

    def of(self, rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Per row (sorted) its code into the returned texts (-1: no arguments), the texts in order of first use."""
        need = rows[self.code[rows] == NOT_READ]
        if need.size:
            wanted = self._wanted
            wanted[need] = True
            need = np.flatnonzero(wanted & (self.code == NOT_READ))  # sorted, as the read wants them
            wanted[:] = False
            self.code[need] = self._read(need)
        c = self.code[rows]
        used = c >= 0
        out = np.full(rows.size, -1, np.int64)
        if not used.any():
            return out, []
        c = c[used]
        # Renumbered in order of first use, by marks per text (np.unique hashes: slow at 900k rows).
        first = np.full(len(self.texts), c.size, np.int64)
        np.minimum.at(first, c, np.arange(c.size))
        u = np.flatnonzero(first < c.size)
        u = u[np.argsort(first[u], kind="stable")]
        renum = np.empty(len(self.texts), np.int64)
        renum[u] = np.arange(u.size)
        out[used] = renum[c]
        return out, [self.texts[int(i)] for i in u]
