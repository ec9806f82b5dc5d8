"""Chrome trace events decoded into typed structs, and the pairing of begin/end phases.

msgspec decodes straight into slotted structs, skips fields no view uses and keeps `args`
as raw JSON bytes: they are `extra_attributes_json` as they stand, parsed only for the few
events whose arguments a reader needs (metadata, counters, merged B/E pairs).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from ...errors import LoadWarnings

NO_ARGS = msgspec.Raw(b"")


class Ev(msgspec.Struct, omit_defaults=True, gc=False):
    """One trace event. Untracked by the garbage collector: it holds JSON values, never cycles."""

    ph: Any = None
    name: Any = None
    cat: Any = None
    ts: Any = None
    dur: Any = None
    pid: Any = None
    tid: Any = None
    id: Any = None
    id2: Any = None
    bp: Any = None
    s: Any = None
    # Raw JSON bytes (b"" when absent): typed Raw, msgspec skips decoding them entirely.
    # Merged B/E pairs and the slow decoding path put Python values here instead.
    args: Any = msgspec.field(default_factory=lambda: NO_ARGS)


class _RawEv(Ev, gc=False):
    args: msgspec.Raw = msgspec.field(default_factory=lambda: NO_ARGS)


EVENTS = msgspec.json.Decoder(list[_RawEv])
TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
ANY = msgspec.json.Decoder()


def parse_args(args: Any) -> Any:
    """Arguments as Python values (raw JSON is parsed here, once, when someone needs it)."""
    if isinstance(args, msgspec.Raw):
        data = bytes(args)
        try:
            return orjson.loads(data) if data else None
        except orjson.JSONDecodeError:
            return ANY.decode(data)  # integers past 64 bits, which orjson refuses
    return args


def as_dict(args: Any) -> dict[str, Any]:
    """Arguments as a dict; a trace's non-object `args` is kept under "args"."""
    value = parse_args(args)
    if isinstance(value, dict):
        return value
    return {} if value is None else {"args": value}


def has_args(args: Any) -> bool:
    if isinstance(args, msgspec.Raw):
        return bytes(args) not in (b"", b"null")
    return args is not None


def h(v: Any) -> Any:
    """A value usable as a dict key (traces put lists where ids belong)."""
    return v if v is None or type(v) in (str, int, float, bool) else repr(v)


def num(v: Any) -> float:
    if isinstance(v, bool):
        return float("nan")
    if isinstance(v, int | float):
        try:
            return float(v)
        except OverflowError:  # an integer past float's range: out of range like an infinity
            return float("inf") if v > 0 else float("-inf")
    try:
        return float(v) if v is not None else float("nan")
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def async_id(e: Ev) -> Any:
    """Async ids are global, except `id2: {"local": ...}`, which is scoped to the process."""
    if isinstance(e.id2, dict):
        if "global" in e.id2:
            return ("g", str(e.id2["global"]))
        return ("l", h(e.pid), str(e.id2.get("local")))
    return ("g", str(e.id))


BEGIN_END = {"B": "E", "b": "e", "S": "F"}
PAIR_OF = {"B": "B", "E": "B", "b": "b", "e": "b", "S": "S", "F": "S"}
_KEYS: dict[str, Callable[[Ev], tuple[Any, ...]]] = {
    "B": lambda e: ("t", h(e.pid), h(e.tid)),
    "b": lambda e: ("a", h(e.cat), async_id(e)),
    "S": lambda e: ("s", h(e.cat), h(e.name), async_id(e)),
}


def pair(paired: dict[str, list[Ev]], warnings: LoadWarnings, origin: str) -> tuple[list[Ev], list[bool], list[bool]]:
    """B/E per thread, b/e and S/F per async id, matched in time order (file order on ties).

    Returns slices (dur set; unclosed ones with dur 0), incomplete flags, async flags.
    """
    out: list[Ev] = []
    incomplete: list[bool] = []
    is_async: list[bool] = []
    for begin, end in BEGIN_END.items():
        seq = sorted(paired.get(begin, []), key=lambda e: _ts_key(e.ts))
        if not seq:
            continue
        key_of = _KEYS[begin]
        stacks: dict[Any, list[Ev]] = defaultdict(list)
        unmatched = 0
        for e in seq:
            key = key_of(e)
            if e.ph == begin:
                stacks[key].append(e)
                continue
            stack = stacks.get(key)
            if not stack:
                unmatched += 1
                continue
            b = stack.pop()
            args = b.args
            if has_args(e.args) or begin != "B":
                args = {**as_dict(b.args), **as_dict(e.args)}
                if begin != "B":
                    args["async_id"] = key[-1][-1]
            out.append(msgspec.structs.replace(b, dur=num(e.ts) - num(b.ts), args=args))
            incomplete.append(False)
            is_async.append(begin != "B")
        where = "thread" if begin == "B" else "async id"
        warnings.add(f"{origin}: '{end}' events with no open '{begin}' on their {where}, ignored", unmatched)
        unclosed = [b for stack in stacks.values() for b in stack]
        for b in unclosed:
            # The end becomes the trace's last time once all columns are known.
            out.append(msgspec.structs.replace(b, dur=0))
            incomplete.append(True)
            is_async.append(begin != "B")
        shown = ("shown open to the trace end" if begin == "B" else
                 "shown as open-ended markers at their start, so they do not each take a row to the trace end")
        warnings.add(f"{origin}: '{begin}' events never ended ({shown}, marked incomplete)", len(unclosed))
    return out, incomplete, is_async


def _ts_key(ts: Any) -> float:
    t = num(ts)
    return t if t == t else float("inf")
