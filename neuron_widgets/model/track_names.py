"""Process and thread names a trace carries, and the order it asks for, as the grouping labels use them.

Readers of formats that name their processes and threads (Chrome `M` events, Kineto's
`process_labels`, Fuchsia's `systemTraceEvents`, Perfetto descriptors) put records in
`metadata["track_names"]`: `process` rows `[instance, pid, label, sort]` and `thread` rows
`[instance, pid, tid, label, sort]` (sort None when not given). Neuron profiles carry none and
keep Neuron Explorer's exact labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TrackNames:
    process: dict[tuple[str, int], str] = field(default_factory=dict)
    thread: dict[tuple[str, int, int], str] = field(default_factory=dict)
    process_sort: dict[tuple[str, int], float] = field(default_factory=dict)
    thread_sort: dict[tuple[str, int, int], float] = field(default_factory=dict)
    text_pids: set[tuple[str, int]] = field(default_factory=set)  # ids that were text ("Spans"): after the rest
    text_tids: set[tuple[str, int, int]] = field(default_factory=set)
    tid_texts: dict[tuple[str, int], str] = field(default_factory=dict)  # (instance, tid code) -> its text

    def __bool__(self) -> bool:
        return bool(self.process or self.thread or self.process_sort or self.thread_sort or self.tid_texts)

    @classmethod
    def of(cls, metadata: Mapping[str, Any]) -> TrackNames:
        out = cls()
        for meta in [metadata, *(metadata.get("per_input") or {}).values()]:
            names = meta.get("track_names") if isinstance(meta, Mapping) else None
            if not isinstance(names, Mapping):
                continue
            for inst, pid, label, sort, *rest in names.get("process", []):
                key = (str(inst), int(pid))
                if label:
                    out.process[key] = str(label)
                if sort is not None:
                    out.process_sort[key] = float(sort)
                if rest and rest[0]:
                    out.text_pids.add(key)
            for inst, pid, tid, label, sort, *rest in names.get("thread", []):
                tkey = (str(inst), int(pid), int(tid))
                if label:
                    out.thread[tkey] = str(label)
                if sort is not None:
                    out.thread_sort[tkey] = float(sort)
                if rest and rest[0]:
                    out.text_tids.add(tkey)
            for inst, tid, text in names.get("thread_texts", []):
                out.tid_texts[(str(inst), int(tid))] = str(text)
        return out

    def process_label(self, inst: Any, pid: Any) -> str | None:
        return self.process.get((str(inst), _int(pid)))

    def thread_label(self, inst: Any, pid: Any, tid: Any) -> str | None:
        return self.thread.get((str(inst), _int(pid), _int(tid))) or self.tid_texts.get((str(inst), _int(tid)))

    def process_key(self, inst: Any, pid: Any) -> tuple[Any, ...]:
        """Sort key: processes with a sort index by it, then the others by id, text ids last."""
        key = (str(inst), _int(pid))
        if key in self.process_sort:
            return (0, self.process_sort[key])
        return (2, 0) if key in self.text_pids else (1, key[1])

    def thread_key(self, inst: Any, pid: Any, tid: Any) -> tuple[Any, ...]:
        key = (str(inst), _int(pid), _int(tid))
        if key in self.thread_sort:
            return (0, self.thread_sort[key])
        return (2, 0) if key in self.text_tids or (key[0], key[2]) in self.tid_texts else (1, key[2])


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return -(2**62)


def thread_label(name: str, tid: int) -> str:
    """A thread's label: its name, with its id when the name does not already say it ("stream 7")."""
    return _with_id(name, tid, "thread")


def _with_id(name: str, number: int, kind: str) -> str:
    """`name` with `number` after it unless the name already says it on its own; `kind number` for no name."""
    name = name.strip()
    if not name:
        return f"{kind} {number}"
    return name if _says(name, str(number)) else f"{name} {number}"


def _says(name: str, number: str) -> bool:
    """Whether `number` stands in `name` on its own (no ASCII digit either side).

    A loop over str.find, not a regular expression per id: a million threads would compile a
    million patterns (Python's pattern cache holds 512), 15 s for 300k names.
    """
    at = name.find(number)
    while at >= 0:
        before = name[at - 1] if at else ""
        after = name[at + len(number):at + len(number) + 1]
        if not (before and before in _DIGITS) and not (after and after in _DIGITS):
            return True
        at = name.find(number, at + 1)
    return False


_DIGITS = "0123456789"


def process_label(name: str, pid: int, labels: str = "") -> str:
    """A process's label: Kineto's device label ("GPU 0") when it has one, else its name and id (the id once:
    an MTIA trace's device process "MTIA 0" of pid 0 is "MTIA 0", not "MTIA 0 0")."""
    labels = labels.strip()
    if labels and labels.upper() != "CPU":
        return labels
    return _with_id(name, pid, "process")
