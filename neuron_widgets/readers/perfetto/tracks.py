"""What a Perfetto track says about its events: instance, process, thread, NeuronCore, worker.

Three sources, most exact first:
- the `description` neuron-widgets writes on its tracks (`neuron-widgets: key=value; ...`),
  which carries every grouping column so a round trip is exact;
- the names neuron-explorer gives its processes (primary grouping, default
  `instance_id,process_id`) and thread rows (secondary grouping, default
  `worker_gid,lnc_idx,thread_id`). Their exact strings are not documented, so fields are
  found by name anywhere in the text (`instance_id=i-0ab`, `PID:12`, `lnc 3`, `worker_gid: 5`)
  and names that carry none are kept as they are;
- Perfetto's own process and thread descriptors (pid, tid).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the state module imports Perfetto's compiled proto: only when a trace is read
    from .state import State

MARK = "neuron-widgets:"
_FIELDS: dict[str, re.Pattern[str]] = {
    "instance_id": re.compile(r"\binstance(?:[_ ]?id)?\s*[=:]\s*([^\s,;/|()]+)", re.I),
    "process_id": re.compile(r"\b(?:process[_ ]?id|pid)\s*[=: ]\s*(-?\d+)\b", re.I),
    "thread_id": re.compile(r"\b(?:thread[_ ]?id|tid)\s*[=: ]\s*(-?\d+)\b", re.I),
    "nc_idx": re.compile(r"\b(?:l?nc[_ ]?idx|lnc|nc|neuron[_ ]?core)\s*[=: ]\s*(\d+)\b", re.I),
    "worker_gid": re.compile(r"\bworker(?:[_ ]?gid)?\s*[=: ]\s*(\d+)\b", re.I),
}
# Our own labels start with the instance: "i-0abc/PID:12/...".
_LEADING_INSTANCE = re.compile(r"^([^/\s]+)/PID:")


@dataclass
class Track:
    uuid: int
    name: str = ""
    parent: int | None = None
    pid: int | None = None
    tid: int | None = None
    counter: bool = False
    description: str = ""
    process_name: str = ""


@dataclass
class Identity:
    instance_id: str | None = None
    process_id: int | None = None
    thread_id: int | None = None
    nc_idx: int | None = None
    pcore_idx: int | None = None
    worker_gid: int | None = None
    stream: str | None = None  # a named track that is neither a process nor a thread
    source: str | None = None  # trace_event_source when the track says it
    label: str = ""
    described: bool = False  # from our own description (exact columns): its names are grouping labels already


def describe(identity: Identity) -> str:
    """The description our writer puts on a track (parsed back by `identity_of`)."""
    parts = [f"{k}={v}" for k, v in (("instance_id", identity.instance_id), ("process_id", identity.process_id),
                                      ("thread_id", identity.thread_id), ("nc_idx", identity.nc_idx),
                                      ("pcore_idx", identity.pcore_idx), ("worker_gid", identity.worker_gid),
                                      ("source", identity.source), ("stream", identity.stream)) if v is not None]
    return MARK + " " + "; ".join(parts)


def _from_description(text: str) -> Identity | None:
    if not text.startswith(MARK):
        return None
    ident = Identity()
    for part in text[len(MARK):].split("; "):
        key, _, value = part.strip().partition("=")
        if key in ("instance_id", "stream", "source"):
            setattr(ident, key, value)
        elif key in ("process_id", "thread_id", "nc_idx", "pcore_idx", "worker_gid"):
            with contextlib.suppress(ValueError):
                setattr(ident, key, int(value))
    return ident


def fields_in(name: str) -> dict[str, str | int]:
    """Grouping fields named in a track or process name; nothing for names that carry none."""
    out: dict[str, str | int] = {}
    lead = _LEADING_INSTANCE.match(name)
    if lead:
        out["instance_id"] = lead.group(1)
    for key, pattern in _FIELDS.items():
        m = pattern.search(name)
        if m and key not in out:
            out[key] = m.group(1) if key == "instance_id" else int(m.group(1))
    return out


def identity_of(uuid: int, state: State, default_instance: str) -> Identity:
    """The grouping columns of events on track `uuid`."""
    chain: list[Track] = []
    seen: set[int] = set()
    t = state.tracks.get(uuid)
    while t is not None and t.uuid not in seen:
        seen.add(t.uuid)
        chain.append(t)
        t = state.tracks.get(t.parent) if t.parent is not None else None
    if chain and chain[-1].tid is not None and chain[-1].pid is not None:
        # A thread track belongs to its process by pid, not by parent_uuid.
        proc = state.process_tracks.get(chain[-1].pid)
        if proc is not None and proc.uuid not in seen:
            chain.append(proc)
        elif chain[-1].pid in state.process_names:
            chain.append(Track(uuid=-1, pid=chain[-1].pid, name=state.process_names[chain[-1].pid]))
    for t in chain:
        own = _from_description(t.description)
        if own is not None:
            own.label = chain[0].name
            own.described = True
            own.instance_id = own.instance_id or default_instance
            return own
    ident = Identity(label=chain[0].name if chain else "")
    # Outermost first, so a thread row's fields override its process's.
    for t in reversed(chain):
        if t.pid is not None:
            ident.process_id = t.pid
        if t.tid is not None:
            ident.thread_id = t.tid
        for key, value in fields_in(t.name or t.process_name).items():
            setattr(ident, key, value)
    if chain and chain[0].pid is None and chain[0].tid is None and chain[0].name:
        named = fields_in(chain[0].name)
        if not ({"thread_id", "nc_idx", "worker_gid"} & named.keys()):
            ident.stream = chain[0].name  # a plain named track: its own row, by its name
    ident.instance_id = ident.instance_id or default_instance
    if ident.process_id is None:
        ident.process_id = 0
    if ident.thread_id is None:
        ident.thread_id = ident.process_id if ident.stream is None else 0
    return ident


def sequence_identity(pid: int, tid: int, default_instance: str) -> Identity:
    """Events of the older SDKs, on a sequence that described its thread instead of a track."""
    return Identity(instance_id=default_instance, process_id=pid, thread_id=tid)
