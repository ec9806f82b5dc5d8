"""The arrays of the runtime's `nrt_sys_trace_fetch_events()` JSON from a byte scan of its events (`scan.py`).

A batch whose values are all of the common kinds (integer times and ids, plain strings, `data` an
object of integers and strings) becomes the arrays `runtime_json_rows` makes from decoded events,
computed on whole columns; any other batch is decoded by msgspec and read by `runtime_json_rows`.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from ..columns import Codes, batches, valued_ints
from . import runtime_json_rows as rows
from .scan import Batch, Spec
from .scan_kernels import ABSENT, ESC, FALSE, INT, NULL, OBJ, STR, TRUE

KEYS = ("event_type", "phase", "tracking_id", "nc_idx", "timestamp_ns", "data")
DATA = ("instance_id", "pid", "tid", "device_core_idx")
SPEC = Spec(KEYS, sub="data", subkeys=DATA, keep=frozenset({"tracking_id", "data"}))
TYPE, PHASE, TRACKING, NC, TS, DATA_ = range(len(KEYS))
INSTANCE, PID, TID, PCORE = range(len(KEYS), len(KEYS) + len(DATA))


def _kinds(*kinds: int) -> np.ndarray:
    out = np.zeros(16, bool)
    out[list(kinds)] = True
    return out


_INT_OR_NONE = _kinds(INT, ABSENT, NULL)
# The kinds of each value read here as msgspec's decoding would be read (others: the batch is decoded).
ALLOWED = {TYPE: _kinds(STR, ABSENT, NULL), PHASE: ~_kinds(ESC), TRACKING: _kinds(INT, STR, ABSENT, NULL, TRUE, FALSE),
           NC: _INT_OR_NONE, TS: _INT_OR_NONE, DATA_: _kinds(OBJ, ABSENT, NULL),
           INSTANCE: _kinds(STR, ABSENT, NULL, FALSE), PID: _INT_OR_NONE, TID: _INT_OR_NONE, PCORE: _INT_OR_NONE}


class Reader:
    """The scan's batches as `runtime_json_rows` arrays (`parts`), with the codes they share."""

    def __init__(self) -> None:
        self.names, self.keys, self.instances = Codes(), (Codes(), Codes()), Codes()
        self.phases = Codes()
        self.parts: list[dict[str, np.ndarray]] = []
        self.pid_unset: list[np.ndarray] = []  # per part, the rows whose pid is the document's
        self.entries = 0
        self.objects = 0
        self.empty_name = int(self.names.add([""])[0])
        self.empty_instance = int(self.instances.add([""])[0])
        self.none_type = int(self.keys[0].add(["None"])[0])
        self.none_text = int(self.keys[1].add(["None"])[0])

    def __call__(self, b: Batch) -> None:
        self.entries += b.kinds.shape[0]
        part = self.fast(b)
        if part is None:
            for _, events in batches(b.elements(), rows._EVENTS, rows._one, b.kinds.shape[0]):
                self.objects += len(events)
                part = rows._arrays(events, 0, self.names, self.keys, self.instances)
                unset = np.array([e.data is None or e.data.pid is msgspec.UNSET for e in events], bool)
                self._add(part, unset)
        else:
            self._add(part, part.pop("pid_unset"))

    def _add(self, part: dict[str, np.ndarray], unset: np.ndarray) -> None:
        self.pid_unset.append(unset[part["phase"] != rows.STOP])
        self.parts.append(rows.compact(part))

    def result(self, doc_pid: Any) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
        """The arrays as whole columns (events without a pid of their own on the document's, known
        only once the whole file is read), and the names and instances their codes stand for."""
        if not self.parts:
            self._add(rows._arrays([], 0, self.names, self.keys, self.instances), np.zeros(0, bool))
        pid = valued_ints([doc_pid])[0][0]
        for part, unset in zip(self.parts, self.pid_unset, strict=True):
            part["pid"] = np.where(unset, pid, part["pid"])
        self.pid_unset = []
        return rows.joined(self.parts), list(self.names.index), list(self.instances.index)

    def fast(self, b: Batch) -> dict[str, np.ndarray] | None:
        """The batch's arrays computed on columns, or None if a value needs msgspec's reading."""
        if not b.plain():
            return None
        objects = b.objects
        if not objects.all():
            b = Batch(b.buf, b.kinds[objects], b.spans[objects], b.ivals[objects], b.flags[objects], b.objs[objects])
        kinds = b.kinds
        for col, allowed in ALLOWED.items():
            if not allowed[kinds[:, col]].all():
                return None
        self.objects += kinds.shape[0]
        ts, ok_ts = b.ints(TS)
        phase_code = b.texts(PHASE, self.phases)
        phase_of = np.array([rows.START if p == "start" else rows.STOP if p == "stop" else rows.OTHER
                             for p in self.phases.index] + [rows.OTHER], np.int8)
        types, name = b.texts(TYPE, self.keys[0], self.names)
        tk = kinds[:, TRACKING]
        text = b.texts(TRACKING, self.keys[1])
        tracking, _ = b.ints(TRACKING)
        small = (tk == INT) | (tk == TRUE) | (tk == FALSE)
        value = np.where(tk == INT, tracking, (tk == TRUE).astype(np.int64))
        key = np.column_stack([np.where(types < 0, self.none_type, types).astype(np.int64),
                               np.where(small, 0, 1).astype(np.int64),
                               np.where(small, value, np.where(text < 0, self.none_text, text))])
        instance = b.texts(INSTANCE, self.instances)
        pid, _ = b.ints(PID)
        tid, _ = b.ints(TID)
        nc, ok_nc = b.ints(NC)
        pcore, ok_pcore = b.ints(PCORE)
        out = {"ts": ts, "ok_ts": ok_ts, "phase": phase_of[phase_code], "key": key,
               "name": np.where(name < 0, self.empty_name, name).astype(np.int32),
               "instance": np.where(instance < 0, self.empty_instance, instance).astype(np.int32),
               "pid": pid, "pid_unset": kinds[:, PID] == ABSENT, "tid": tid,
               "nc": nc, "ok_nc": ok_nc, "pcore": pcore, "ok_pcore": ok_pcore}
        return out
