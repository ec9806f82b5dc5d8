"""The kernel-browser messages: the TypeScript made from the Python declarations is the one committed, and what
the Timeline really sends and takes matches those declarations."""

from __future__ import annotations

import importlib.util
import typing
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pytest

import neuron_widgets as nw
from neuron_widgets.widgets import EventDetails, Timeline
from neuron_widgets.widgets import messages as M

ROOT = Path(__file__).resolve().parents[1]


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("messages_ts", ROOT / "tools" / "messages_ts.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_committed_typescript_is_what_the_declarations_make() -> None:
    gen = _generator()
    committed = gen.OUT.read_text(encoding="utf-8")
    assert committed == gen.generate(), "js/src/common/messages.ts is stale: run `python tools/messages_ts.py`"


def test_the_typescript_follows_a_changed_declaration() -> None:
    gen = _generator()
    text = gen.generate()
    assert "export interface FindRequest {" in text and "  tracks: number[] | null;" in text
    assert "  color_keys?: string[];" in text  # NotRequired becomes optional
    assert "export interface TimelineTraits {" in text and "  generation: number;" in text

    class Probe(typing.TypedDict):
        """A probe."""

        type: typing.Literal["probe"]
        at: float

    assert gen.interface(Probe) == ["/** A probe. */", "export interface Probe {", '  type: "probe";',
                                    "  at: number;", "}", ""]


def _check(message: dict[str, Any], declared: type) -> None:
    """`message` has every required key of `declared`, no key it lacks, and values of the declared kinds."""
    hints = get_type_hints(declared)
    assert set(message) <= set(hints), f"{declared.__name__}: undeclared {set(message) - set(hints)}"
    missing = declared.__required_keys__ - set(message)  # type: ignore[attr-defined]
    assert not missing, f"{declared.__name__}: missing {missing}"
    for key, value in message.items():
        hint = hints[key]
        if get_origin(hint) is typing.Literal:
            assert value in get_args(hint), (declared.__name__, key, value)
        elif hint is str:
            assert isinstance(value, str), (declared.__name__, key, value)
        elif hint in (int, float):
            assert isinstance(value, int | float) and not isinstance(value, bool), (declared.__name__, key, value)
        elif get_origin(hint) is list:
            assert isinstance(value, list), (declared.__name__, key, value)


@pytest.fixture(scope="module")
def timeline() -> Timeline:
    tl = Timeline(nw.sample_profile())
    sent: list[tuple[dict[str, Any], list[Any]]] = []
    tl.send = lambda content, buffers=None: sent.append((content, buffers or []))  # type: ignore[method-assign]
    tl.sent = sent  # type: ignore[attr-defined]
    return tl


def _ask(tl: Timeline, request: dict[str, Any]) -> dict[str, Any]:
    tl.sent.clear()  # type: ignore[attr-defined]
    tl._on_msg(tl, request, [])
    (reply, _buffers), = tl.sent  # type: ignore[attr-defined]
    return reply


def test_every_request_the_page_makes_gets_its_declared_reply(timeline: Timeline) -> None:
    tl = timeline
    t0, t1 = tl.span
    viewport: M.ViewportRequest = {"type": "viewport", "uuid": "v", "grouping": tl.grouping, "t0": t0, "t1": t1,
                                   "width": 300, "tracks": list(range(len(tl.tracks)))}
    reply = _ask(tl, dict(viewport))
    _check(reply, M.ViewportReply)
    assert reply["uuid"] == "v" and reply["n"] > 0 and len(tl.sent[0][1]) == len(reply["columns"])  # type: ignore[attr-defined]
    hover: M.HoverRequest = {"type": "hover", "uuid": "h", "row": 0}
    reply = _ask(tl, dict(hover))
    _check(reply, M.HoverReply)
    assert reply["row"] == 0 and isinstance(reply["args"], dict)
    code = int(tl.profile.name_codes()[0])
    find: M.FindRequest = {"type": "find", "uuid": "f", "codes": [code], "after": -1.0, "direction": 1, "tracks": None}
    reply = _ask(tl, dict(find))
    _check(reply, M.FindReply)
    assert reply["total"] >= 1 and reply["row"] >= 0
    none: M.FindRequest = {"type": "find", "uuid": "n", "codes": [], "after": -1.0, "direction": 1, "tracks": None}
    assert _ask(tl, dict(none)) == {"type": "find", "uuid": "n", "row": -1, "total": 0}
    counters: M.CountersRequest = {"type": "counters", "uuid": "c", "keys": [], "t0": t0, "t1": t1, "width": 300}
    _check(_ask(tl, dict(counters)), M.CountersReply)
    at: M.CounterAtRequest = {"type": "counter_at", "uuid": "a", "key": "nothing", "t": 5.0}
    reply = _ask(tl, dict(at))
    _check(reply, M.CounterAtReply)
    assert "value" not in reply  # no such series: no sample
    bad = _ask(tl, {"type": "viewport", "uuid": "b"})  # no window: said, the widget lives on
    _check(bad, M.ErrorReply)
    assert bad["uuid"] == "b" and "KeyError" in bad["message"]
    tl.error = ""


def test_undeclared_messages_are_ignored(timeline: Timeline) -> None:
    timeline.sent.clear()  # type: ignore[attr-defined]
    for content in ({"type": "nonsense", "uuid": "x"}, {"uuid": "x"}, ["viewport"]):
        timeline._on_msg(timeline, content, [])  # type: ignore[arg-type]
    assert timeline.sent == []  # type: ignore[attr-defined]
    assert M.request_class({"type": "submit", "index": 1}) is M.SubmitRequest
    assert M.request_class("viewport") is None


def test_a_focus_message_selects_in_the_timeline(timeline: Timeline) -> None:
    details = EventDetails(timeline)
    focus: M.FocusRequest = {"type": "focus", "row": 3}
    details._on_msg(details, dict(focus), [])
    assert timeline.selected_row == 3


def test_every_declared_kind_is_unique_per_direction() -> None:
    for side in (M.TO_KERNEL, M.TO_BROWSER):
        kinds = [M.kind_of(c) for c in side]
        assert len(kinds) == len(set(kinds))
