"""The kernel-browser messages: the TypeScript made from the Python declarations is the one committed, and what
the Timeline really sends and takes matches those declarations."""

from __future__ import annotations

import importlib.util
import re
import types
import typing
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pytest
import traitlets

import neuron_widgets as nw
from neuron_widgets.widgets import DeviceProfilePicker, DeviceTraceViewer, EventDetails, Timeline
from neuron_widgets.widgets import messages as M
from neuron_widgets.widgets.bokeh_host import ThemeProbe
from neuron_widgets.widgets.device_picker import _PickerList

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


def test_no_trait_reaches_the_page_untyped() -> None:
    gen = _generator()
    text = gen.generate()
    assert not re.search(r"\bany\b", text), "an `any` in the generated TypeScript"
    assert "  tracks: TrackInfo[];" in text and "  view: [number, number];" in text
    assert "  brush: [] | [number, number];" in text and "  columns: [string, string][];" in text
    assert "export interface RangeSummary {" in text and "  by_name: SummaryRow[];" in text
    assert gen.ts_type(tuple[()] | M.Range) == "[] | [number, number]"
    assert gen.ts_type(list[int | None]) == "(number | null)[]" and gen.ts_type(list[dict[str, int | None]]) == \
        "Record<string, number | null>[]"
    # A List or Dict trait that does not say what it holds, and that TRAITS does not declare, is refused.
    for trait in (traitlets.List(), traitlets.List(traitlets.Dict())):
        with pytest.raises(TypeError, match="declare it in"):
            gen.trait_type("undeclared_probe", trait)
    assert gen.trait_type("undeclared_probe", traitlets.List(traitlets.Unicode())) == "string[]"
    assert gen.trait_type("undeclared_probe", traitlets.Dict()) == "Record<string, unknown>"


def _widget_classes() -> list[type]:
    return [Timeline, DeviceTraceViewer, EventDetails, _PickerList, ThemeProbe]


def test_every_declared_trait_is_a_synced_trait_of_its_kind() -> None:
    synced = {name: trait for cls in _widget_classes()
              for name, trait in cls.class_traits(sync=True).items()}  # type: ignore[attr-defined]
    assert set(M.TRAITS) <= set(synced), f"TRAITS names no widget's trait: {set(M.TRAITS) - set(synced)}"
    for name, hint in M.TRAITS.items():
        arms = get_args(hint) if get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        kinds = {get_origin(a) or (dict if typing.is_typeddict(a) else a) for a in arms}
        expected = {list, tuple} if isinstance(synced[name], traitlets.List) else {dict}
        assert kinds <= expected, (name, kinds, type(synced[name]).__name__)


def _conforms(value: Any, hint: Any, where: str) -> list[str]:
    """What in `value` is not of the declared type `hint`, each with where it is (empty: all of it is)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return []
    if origin in (typing.Union, types.UnionType):
        fits = [_conforms(value, arm, where) for arm in args]
        return [] if any(not f for f in fits) else [f"{where}: {value!r:.80} is none of {hint}"]
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r:.80} is not None"]
    if hint is bool:
        return [] if isinstance(value, bool) else [f"{where}: {value!r:.80} is not a bool"]
    if hint in (int, float):
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (hint is float and isinstance(value, float))
        return [] if ok else [f"{where}: {value!r:.80} is not {hint.__name__}"]
    if hint is str:
        return [] if isinstance(value, str) else [f"{where}: {value!r:.80} is not a str"]
    if typing.is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {value!r:.80} is not a {hint.__name__}"]
        hints = get_type_hints(hint)
        missing, extra = hint.__required_keys__ - set(value), set(value) - set(hints)
        out = [f"{where}: {hint.__name__} lacks {sorted(missing)}"] if missing else []
        out += [f"{where}: {hint.__name__} has undeclared {sorted(extra)}"] if extra else []
        return out + [p for k, v in value.items() if k in hints for p in _conforms(v, hints[k], f"{where}.{k}")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {value!r:.80} is not a dict"]
        if args[1] is typing.Never:
            return [] if not value else [f"{where}: {value!r:.80} is not empty"]
        return [p for k, v in value.items() for p in (*_conforms(k, args[0], f"{where} key"),
                                                     *_conforms(v, args[1], f"{where}[{k!r}]"))]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r:.80} is not a list"]
        return [p for i, v in enumerate(value) for p in _conforms(v, args[0], f"{where}[{i}]")]
    if origin is tuple:  # on the wire a list of exactly that many
        if not isinstance(value, list | tuple) or len(value) != len(args):
            return [f"{where}: {value!r:.80} is not {len(args)} values"]
        return [p for i, (v, a) in enumerate(zip(value, args, strict=True)) for p in _conforms(v, a, f"{where}[{i}]")]
    raise TypeError(f"no check for {hint!r}")


def test_the_conformance_check_tells_a_wrong_value() -> None:
    assert _conforms([1.0, 2.5], M.Range, "v") == [] and _conforms([], tuple[()] | M.Range, "b") == []
    assert _conforms([1.0], tuple[()] | M.Range, "b") and _conforms([True, 1.0], M.Range, "v")
    assert _conforms([{"label": "a", "lanes": 1}], list[M.TrackInfo], "t") == ["t[0]: TrackInfo lacks ['events']"]
    assert _conforms([{"label": "a", "lanes": 1, "events": "2"}], list[M.TrackInfo], "t")
    assert _conforms({"key": 1}, dict[str, typing.Never], "o") and _conforms({}, dict[str, typing.Never], "o") == []
    row = {"key": "k", "count": 1, "total": 2.0, "mean": 2.0, "extra": 1}
    assert _conforms(row, M.SummaryRow, "r") == ["r: SummaryRow has undeclared ['extra']"]


@pytest.fixture(scope="module")
def device_widgets() -> tuple[DeviceTraceViewer, _PickerList]:
    profile = nw.sample_profile()
    viewer = DeviceTraceViewer()
    picker = DeviceProfilePicker(profile, viewer=viewer)
    picker.submit(profile.device_profiles["device_profile_name"].iat[1], background=False)
    return viewer, picker.list


def test_what_the_widgets_hold_is_what_traits_declares(timeline: Timeline,
                                                       device_widgets: tuple[DeviceTraceViewer, _PickerList]) -> None:
    viewer, picker = device_widgets

    def problems(label: str, widget: Any) -> list[str]:
        return [p for name, hint in M.TRAITS.items() if widget.has_trait(name)
                for p in _conforms(getattr(widget, name), hint, f"{label}.{name}")]

    timeline.brush = []
    assert timeline.counters and timeline.overview["bins"], "the sample shows counters and an overview strip"
    assert viewer.strip and viewer.color_choices and picker.rows and picker.columns
    found = problems("timeline", timeline) + problems("device", viewer) + problems("picker", picker)
    t0, t1 = timeline.span
    timeline.brush = [t0, (t0 + t1) / 2]
    assert timeline.brush_summary["events"] > 0
    found += problems("brushed", timeline)
    timeline.brush = []
    assert not found, found


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
