"""Which NeuronCore each event ran on: a code per event and one row per core.

A core is (instance, process, nc_idx): nc_idx is process-local. Its worker_gid is the one its
events carry (unique across the job). Cores are numbered in (instance, process, nc_idx) order,
whichever way the codes were found, so every analysis lists them in the same order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

if TYPE_CHECKING:
    from ..model.grouping import Combos
    from .frame import Frame

_NULL = -1
# A core's key: (instance, process, nc_idx); a null instance is None, a null process 0.
CoreKey = tuple[str | None, int, int]
CORE_COLUMNS = ["instance_id", "process_id", "nc_idx", "worker_gid"]


class CoreCodes:
    """A core code per event (-1: not on a core), read like an array: `codes[rows]`, `codes.full()`."""

    def __init__(self, cores: pd.DataFrame) -> None:
        self.cores = cores

    def __getitem__(self, rows: Any) -> Any:
        raise NotImplementedError

    def full(self) -> np.ndarray:
        raise NotImplementedError

    def max(self) -> int:
        return len(self.cores) - 1


class ComboCores(CoreCodes):
    """Codes through the profile's combos (each event's grouping tuple): a look-up per combo, then per row."""

    def __init__(self, combos: Combos, per_combo: np.ndarray, cores: pd.DataFrame) -> None:
        super().__init__(cores)
        self.combos, self.per_combo = combos, per_combo

    def __getitem__(self, rows: Any) -> Any:
        out = self.per_combo[self.combos.codes[rows]]
        return int(out) if np.ndim(out) == 0 else out

    def full(self) -> np.ndarray:
        return self.per_combo[self.combos.codes]


class RowCores(CoreCodes):
    """Codes computed at some rows (sorted) from their own columns; other rows through the combos, once."""

    UNKNOWN = -2

    def __init__(self, frame: Frame, rows: np.ndarray, codes: np.ndarray, cores: pd.DataFrame) -> None:
        super().__init__(cores)
        self.frame = frame
        self._full: np.ndarray | None = None
        # The smallest type that holds the codes: this array spans every event.
        n = len(cores)
        small = np.int8 if n < 2**7 - 2 else np.int16 if n < 2**15 - 2 else np.int32
        self._dense = np.full(len(frame), self.UNKNOWN, small)
        self._dense[rows] = codes

    def __getitem__(self, rows: Any) -> Any:
        want = np.asarray(rows, np.int64)
        out = self._dense[want]
        if np.ndim(out) == 0:
            return int(out) if out != self.UNKNOWN else int(self.full()[want])
        out = out.astype(np.int32)
        unknown = out == self.UNKNOWN
        if unknown.any():
            out[unknown] = self._resolve(want[unknown])
        return out

    def _resolve(self, rows: np.ndarray) -> np.ndarray:
        """Codes of rows not met before, kept: from their own columns while they are a fraction of the profile
        (the transfers of 10M events are 1.3M: reading them costs a tenth of coding every event's grouping
        tuple, the combos), else through the combos."""
        if self._full is not None or rows.size > len(self.frame) // 3:
            return self.full()[rows]
        distinct = rows
        if not (rows[1:] > rows[:-1]).all():  # rows asked about are mostly sorted and distinct already (rows_named)
            distinct = np.sort(rows)  # a sort, not a hash
            distinct = distinct[np.r_[True, distinct[1:] != distinct[:-1]]]
        self._dense[distinct] = _codes_at(self.frame, distinct, _index(self.cores))
        return self._dense[rows].astype(np.int32)

    def full(self) -> np.ndarray:
        if self._full is None:
            combos = self.frame.profile._combo_codes()
            self._full = _per_combo(combos, _index(self.cores))[combos.codes]
        return self._full


def core_codes(fr: Frame, rows: np.ndarray) -> tuple[CoreCodes, pd.DataFrame]:
    """The cores of the events at `rows` (sorted), and a code for every event.

    Once a timeline has built the profile's combos, codes are a look-up per combo. Before that
    they are computed at `rows` from their own columns, rather than waiting for a join over every
    event that a timeline may be building meanwhile.
    """
    combos = fr.profile._combos
    if combos is not None:
        return _from_combos(combos, rows)
    return _from_rows(fr, rows)


def _from_combos(combos: Combos, rows: np.ndarray) -> tuple[CoreCodes, pd.DataFrame]:
    t = combos.table
    used = np.bincount(combos.codes[rows], minlength=len(t)) > 0 if rows.size else np.zeros(len(t), bool)
    inst, pid, nc, gid = (t[c].tolist() for c in CORE_COLUMNS)
    found: dict[CoreKey, Any] = {}
    for c in np.flatnonzero(used).tolist():
        if _is_null(nc[c]):
            continue
        key = _key(inst[c], pid[c], nc[c])
        if found.get(key) is None:
            found[key] = None if _is_null(gid[c]) else int(gid[c])
    cores = _table(found)
    return ComboCores(combos, _per_combo(combos, _index(cores)), cores), cores


class _RowKeys:
    """The core columns at some rows, read from the profile's own columns (no combos): instance as codes into
    its names, process and nc_idx as int64 (`has`: nc_idx is set)."""

    def __init__(self, fr: Frame, rows: np.ndarray) -> None:
        self.profile, self.rows = fr.profile, rows
        # A take from the profile's columns as they are: joining every chunk first costs more than the take.
        inst = self.profile.values_at("instance_id", rows)
        if not pa.types.is_dictionary(inst.type):
            inst = inst.dictionary_encode()
        self.inst_names = [*inst.dictionary.to_pylist(), None]
        self.inst = inst.indices.fill_null(len(self.inst_names) - 1).to_numpy(zero_copy_only=False).astype(np.int64)
        self.pid, _ = self.ints("process_id")
        self.nc, self.has = self.ints("nc_idx")

    def ints(self, c: str) -> tuple[np.ndarray, np.ndarray]:
        if c not in self.profile.column_names:
            return np.zeros(self.rows.size, np.int64), np.zeros(self.rows.size, bool)
        col = self.profile.values_at(c, self.rows)
        return col.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64), col.is_valid().to_numpy(zero_copy_only=False)

    def distinct(self) -> tuple[np.ndarray, list[CoreKey]]:
        """Per row with an nc_idx, the number of its core; per core, its key."""
        has = self.has
        inverse, n_cores = _numbered(self.inst[has], self.pid[has], self.nc[has])
        first = np.full(n_cores, -1, np.int64)
        first[inverse] = np.flatnonzero(has)  # any row of the core
        keys = [_key(self.inst_names[self.inst[r]], int(self.pid[r]), int(self.nc[r])) for r in first.tolist()]
        return inverse, keys


def _from_rows(fr: Frame, rows: np.ndarray) -> tuple[CoreCodes, pd.DataFrame]:
    at = _RowKeys(fr, rows)
    codes = np.full(rows.size, _NULL, np.int32)
    if not at.has.any():
        return RowCores(fr, rows, codes, _table({})), _table({})
    inverse, keys = at.distinct()
    gid, has_gid = at.ints("worker_gid")
    gid_of = np.full(len(keys), -1, np.int64)
    with_gid = has_gid[at.has]
    gid_of[inverse[with_gid]] = gid[at.has][with_gid]
    cores = _table({k: (int(g) if g >= 0 else None) for k, g in zip(keys, gid_of.tolist(), strict=True)})
    index = _index(cores)
    codes[at.has] = np.array([index[k] for k in keys], np.int32)[inverse]
    return RowCores(fr, rows, codes, cores), cores


def _codes_at(fr: Frame, rows: np.ndarray, index: dict[CoreKey, int]) -> np.ndarray:
    """The core codes of rows from their own columns (-1: no nc_idx, or a core none of the analysed events ran on,
    as `_per_combo` says)."""
    at = _RowKeys(fr, rows)
    codes = np.full(rows.size, _NULL, np.int32)
    if at.has.any():
        inverse, keys = at.distinct()
        codes[at.has] = np.array([index.get(k, _NULL) for k in keys], np.int32)[inverse]
    return codes


def _numbered(inst: np.ndarray, pid: np.ndarray, nc: np.ndarray) -> tuple[np.ndarray, int]:
    """A number per distinct (instance, process, core) at each row, and how many there are."""
    if inst.size and min(inst.min(), pid.min(), nc.min()) >= 0 and inst.max() < 2**20 and pid.max() < 2**27 \
            and nc.max() < 2**16:
        key = inst << 43 | pid << 16 | nc  # one int64, hashed once
    else:
        pid_code, pid_u = pd.factorize(pid)
        nc_code, nc_u = pd.factorize(nc)
        key = (inst * len(pid_u) + pid_code) * len(nc_u) + nc_code
    codes, uniq = pd.factorize(key)
    return codes, len(uniq)


def _is_null(v: Any) -> bool:
    return v is None or v != v


def _key(inst: Any, pid: Any, nc: Any) -> CoreKey:
    # A null process is process 0, as a null column reads when filled.
    return (None if _is_null(inst) else str(inst), 0 if _is_null(pid) else int(pid), int(nc))


def _order(key: CoreKey) -> tuple[bool, str, int, int]:
    return (key[0] is None, key[0] or "", key[1], key[2])


def _table(found: dict[CoreKey, Any]) -> pd.DataFrame:
    keys = sorted(found, key=_order)
    return pd.DataFrame({
        "instance_id": pd.Series([k[0] for k in keys], dtype=object),
        "process_id": pd.array([k[1] for k in keys], dtype="Int64"),
        "nc_idx": pd.array([k[2] for k in keys], dtype="Int64"),
        "worker_gid": pd.array([found[k] for k in keys], dtype="Int64"),
    })


def _index(cores: pd.DataFrame) -> dict[CoreKey, int]:
    return {_key(i, p, n): k for k, (i, p, n) in enumerate(zip(cores["instance_id"], cores["process_id"], cores["nc_idx"],
                                                                 strict=True))}


def _per_combo(combos: Combos, index: dict[CoreKey, int]) -> np.ndarray:
    """Each combo's core code (-1: no nc_idx, or a core none of the analysed events ran on)."""
    t = combos.table
    out = np.array([index.get(_key(i, p, n), _NULL) if not _is_null(n) else _NULL
                    for i, p, n in zip(t["instance_id"], t["process_id"], t["nc_idx"], strict=True)] or [_NULL], np.int32)
    return out[:len(t)]
