"""The rows of a legacy system_profile.json from a byte scan of its event list (`scan.py`).

A batch whose values are all of the common kinds (integers, plain strings, null, absent) becomes
the same arrays `legacy_json_rows` makes from decoded events, computed on whole columns; a batch
with anything else (numbers as text, floats, escapes, a repeated key) is decoded by msgspec and
read by `legacy_json_rows`, so both roads give one result. Arguments are the scan's `Packed` bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model.schema import HARDWARE_EVENTS
from ..columns import Codes, LeftoverArgs, batches, json_text, valued_ints
from . import legacy_json_rows as json_rows
from .scan import Batch, ListScan, Packed, Spec
from .scan_kernels import ABSENT, ESC, FALSE, FLOAT, INT, NULL, STR

KEYS = ("id", "name", "timestamp", "duration", "timestamp_unit", "type", "group", "instance_id", "process_id",
        "thread_id", "nc_idx", "lnc_idx", "parent_id", "device_core_idx")
SPEC = Spec(KEYS, keep=frozenset(KEYS) - json_rows.MAPPED, keep_unknown=True)
(ID, NAME, TS, DUR, UNIT_, TYPE, GROUP, INSTANCE, PID, TID, NC, LNC, PARENT, PCORE) = range(len(KEYS))
INTEGERS = (ID, TS, DUR, TYPE, PID, TID, NC, LNC, PARENT, PCORE)


def _kinds(*kinds: int) -> np.ndarray:
    out = np.zeros(16, bool)
    out[list(kinds)] = True
    return out


_ALL = np.ones(16, bool)
_INT_OR_NONE = _kinds(INT, ABSENT, NULL)  # an integer past int64 (BIG) is read by Python
# The kinds of each key's value this module reads as msgspec's decoding would be read (others: the batch is decoded).
ALLOWED = {ID: _INT_OR_NONE, NAME: _kinds(STR, ABSENT, NULL), TS: _INT_OR_NONE, DUR: _INT_OR_NONE,
           UNIT_: ~_kinds(ESC), TYPE: ~_kinds(FLOAT), GROUP: ~_kinds(ESC), INSTANCE: _kinds(STR, ABSENT, NULL, FALSE),
           PID: _INT_OR_NONE, TID: _INT_OR_NONE, NC: _INT_OR_NONE, LNC: _INT_OR_NONE, PARENT: _INT_OR_NONE,
           PCORE: _INT_OR_NONE}


class _Groups:
    """Each distinct group's reading, once: framework or not, the thread and core its number gives."""

    def __init__(self) -> None:
        self.codes = Codes()
        self.framework: list[bool] = []
        self.tid: list[int | None] = []
        self.nc: list[int | None] = []

    def arrays(self) -> dict[str, np.ndarray]:
        for g in list(self.codes.index)[len(self.framework):]:
            self.framework.append(g.startswith("framework-"))
            self.tid.append(json_rows._group_number(json_rows._FW_GROUP, g))
            self.nc.append(json_rows._group_number(json_rows._NC_GROUP, g))
        tid_val, _ = valued_ints(self.tid)
        nc_val, nc_ok = valued_ints(self.nc)
        return {"framework": np.array(self.framework, bool), "tid": tid_val,
                "tid_blank": np.array([v is None or v == 0 for v in self.tid], bool),
                "tid_set": np.array([bool(v) for v in self.tid], bool),
                "nc": nc_val, "ok_nc": nc_ok, "nc_none": np.array([v is None for v in self.nc], bool)}


class Reader:
    """The scan's batches as `legacy_json_rows` arrays (`parts`), with the codes they share."""

    def __init__(self) -> None:
        self.names, self.sources, self.instances = Codes(), Codes(), Codes()
        self.groups, self.units = _Groups(), Codes()
        self.parts: list[dict[str, np.ndarray]] = []
        self.entries = 0
        self.objects = 0
        self.empty_name = int(self.names.add([""])[0])
        self.empty_group = int(self.groups.codes.add([""])[0])
        self.empty_instance = int(self.instances.add([""])[0])
        self.source = dict(zip(("framework", "neuron_hw", "neuron_rt"),
                               self.sources.add(["framework", "neuron_hw", "neuron_rt"]).tolist(), strict=True))

    def __call__(self, b: Batch) -> None:
        self.entries += b.kinds.shape[0]
        part = self.fast(b)
        if part is None:
            for _, events in batches(b.elements(), json_rows._EVENTS, json_rows._one, b.kinds.shape[0]):
                self.objects += len(events)
                self.parts.append(json_rows._arrays(events, self.names, self.sources, self.instances))
        else:
            self.parts.append(part)

    def result(self) -> tuple[list[dict[str, np.ndarray]], list[str], list[str], list[str]]:
        """The batches' arrays and the names, sources and instances their codes stand for."""
        if not self.parts:
            self.parts.append(json_rows._arrays([], self.names, self.sources, self.instances))
        return self.parts, list(self.names.index), list(self.sources.index), list(self.instances.index)

    def read(self, buf: np.ndarray, batch: int = json_rows.BATCH) -> Packed:
        """The events of the list at the start of `buf` (already checked as JSON)."""
        scan = ListScan(buf, 0, SPEC, batch)
        for b in scan:
            self(b)
        return scan.packed()

    def fast(self, b: Batch) -> dict[str, np.ndarray] | None:
        """The batch's arrays computed on columns, or None if a value needs msgspec's reading."""
        if not b.plain():
            return None
        objects = b.objects
        kinds, b = (b.kinds, b) if objects.all() else (b.kinds[objects], _subset(b, objects))
        for col, allowed in ALLOWED.items():
            if not allowed[kinds[:, col]].all():
                return None
        values = {}
        for col in INTEGERS:
            values[col] = b.ints(col)
        self.objects += kinds.shape[0]
        unit = b.texts(UNIT_, self.units)
        scale = np.array([json_rows.UNIT.get(u, 1) for u in self.units.index] + [1], np.int64)[unit]
        start, ok_ts = values[TS]
        dur, ok_dur = values[DUR]
        ok_dur = ok_dur | (kinds[:, DUR] == ABSENT)  # the default duration, 0
        name = b.texts(NAME, self.names)
        name = np.where(name < 0, self.empty_name, name)
        group = b.texts(GROUP, self.groups.codes)
        group = np.where(group < 0, self.empty_group, group)
        g = self.groups.arrays()
        hardware = np.array([n in HARDWARE_EVENTS for n in self.names.index], bool)[name]
        typed, typed_ok = values[TYPE]
        framework = (typed_ok & (typed == json_rows.FRAMEWORK_TYPE)) | g["framework"][group]
        src = np.where(framework, self.source["framework"], np.where(hardware, self.source["neuron_hw"],
                                                                      self.source["neuron_rt"])).astype(np.int32)
        instance = b.texts(INSTANCE, self.instances)
        tid, has_tid = values[TID]
        nc, has_nc = values[NC]
        lnc, has_lnc = values[LNC]
        nc = np.where(has_nc, nc, np.where(has_lnc, lnc, g["nc"][group]))
        has_core = has_nc | has_lnc
        pcore, has_pcore = values[PCORE]
        on_hw = src == self.source["neuron_hw"]
        out = {**json_rows._times(scale, start, ok_ts, dur, ok_dur),
               "name": name.astype(np.int32), "source": src,
               "instance": np.where(instance < 0, self.empty_instance, instance).astype(np.int32),
               "id": values[ID][0], "ok_id": values[ID][1], "pid": values[PID][0],
               "tid_blank": np.where(has_tid, tid == 0, g["tid_blank"][group]),
               "tid_set": np.where(has_tid, tid != 0, g["tid_set"][group]),
               "nc_none": ~has_core & g["nc_none"][group],
               "tid": np.where(has_tid, tid, g["tid"][group]),
               "nc": nc, "ok_nc": has_core | g["ok_nc"][group],
               "parent": values[PARENT][0], "ok_parent": values[PARENT][1],
               "pcore": np.where(on_hw, pcore, 0), "ok_pcore": on_hw & has_pcore}
        return out


def _subset(b: Batch, rows: np.ndarray) -> Batch:
    return Batch(b.buf, b.kinds[rows], b.spans[rows], b.ivals[rows], b.flags[rows], b.objs[rows])


class PackedLeftover(LeftoverArgs):
    """`LeftoverArgs` over the scan's packed members (an event with none has no arguments)."""

    def __init__(self, packed: Packed, used: frozenset[str]) -> None:
        super().__init__(packed, used)  # type: ignore[arg-type]

    def text(self, row: int) -> str | None:
        data: Any = self.args[row]
        return super().text(row) if data else json_text(None)
