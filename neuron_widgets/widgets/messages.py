"""Every custom message between the kernel and the browser, declared once (js/src/common/messages.ts is made from here).

Each message is a TypedDict whose `type` field is a Literal: the kernel's handlers take them by that
field, and tools/messages_ts.py writes the same declarations as TypeScript (a test fails when the
committed file differs), so neither side can rename a field the other still reads. Binary columns
travel as buffers beside the message; the message names them (`columns`, `series`).
"""

from typing import Any, Literal, Never, NotRequired, TypedDict, get_args, get_type_hints

# -- browser -> kernel ----------------------------------------------------------------------


class ViewportRequest(TypedDict):
    """The Timeline asks for the items of a window (ns from the profile's start) on some tracks."""

    type: Literal["viewport"]
    uuid: str
    grouping: str
    t0: float
    t1: float
    width: int  # pixels the window is drawn on (about two items per pixel come back)
    tracks: list[int]


class CountersRequest(TypedDict):
    """The Timeline asks for counter series cut to a window."""

    type: Literal["counters"]
    uuid: str
    keys: list[str]
    t0: float
    t1: float
    width: int


class CounterAtRequest(TypedDict):
    """The tooltip asks for a counter's value in force at a time."""

    type: Literal["counter_at"]
    uuid: str
    key: str
    t: float


class HoverRequest(TypedDict):
    """The tooltip asks for an event's arguments."""

    type: Literal["hover"]
    uuid: str
    row: int


class FindRequest(TypedDict):
    """The search box asks for the next (direction 1) or previous (-1) event named one of `codes` after `after`."""

    type: Literal["find"]
    uuid: str
    codes: list[int]
    after: float
    direction: int
    tracks: list[int] | None  # the tracks shown; None searches every track


class FocusRequest(TypedDict):
    """EventDetails asks its Timeline to select and show an event (a dependency's link)."""

    type: Literal["focus"]
    row: int


class SubmitRequest(TypedDict):
    """The device picker's Submit: the row of the device profile to open."""

    type: Literal["submit"]
    index: int


class PaintedNotice(TypedDict):
    """A view drew the first items of a generation (a trace or profile newly shown): the device viewer reads
    the rest of a drill-down's tables after it, so the two do not share the cores."""

    type: Literal["painted"]
    generation: int


class ResyncRequest(TypedDict):
    """Any widget's view asks for its whole state again (it missed updates: see js/src/common/resync.ts)."""

    type: Literal["resync"]


# -- kernel -> browser ----------------------------------------------------------------------


class ViewportReply(TypedDict):
    """The items of a window: one buffer per name in `columns`, `n` items each."""

    type: Literal["viewport"]
    uuid: str
    grouping: str
    t0: float
    t1: float
    width: int
    px_ns: int
    n: int
    columns: list[str]
    markers: int
    markers_dropped: int
    revision: int
    generation: int
    color_keys: NotRequired[list[str]]  # when events are coloured by something other than their name


class CounterSeriesMeta(TypedDict):
    """One counter series in a CountersReply: two float64 buffers (times, values) of `n` points."""

    key: str
    n: int


class CountersReply(TypedDict):
    """Counter series cut to a window, two buffers per series, in the order of `series`."""

    type: Literal["counters"]
    uuid: str
    generation: int
    series: list[CounterSeriesMeta]
    t0: float
    t1: float


class CounterAtReply(TypedDict):
    """A counter's sample in force at `at` (no `value` when none is)."""

    type: Literal["counter_at"]
    uuid: str
    key: str
    at: float
    t: NotRequired[float]  # when that sample was taken
    value: NotRequired[float]
    breakdown: NotRequired[dict[str, int]]  # bytes per kind, largest first (DMA counters)


class HoverReply(TypedDict):
    """An event's arguments, shown as text (empty when the row is out of range)."""

    type: Literal["hover"]
    uuid: str
    row: NotRequired[int]
    args: NotRequired[dict[str, str]]  # the first eight, each as text
    id: NotRequired[str]


class FindReply(TypedDict):
    """The event found (row -1: none), its place in the matches and where it is drawn (track, lane -1: not drawn)."""

    type: Literal["find"]
    uuid: str
    row: int
    total: int
    index: NotRequired[int]
    start: NotRequired[float]
    end: NotRequired[float]
    track: NotRequired[int]
    lane: NotRequired[int]
    name: NotRequired[str]


class ErrorReply(TypedDict):
    """A request failed on the kernel: the view shows the message, the widget lives on."""

    type: Literal["error"]
    uuid: str | None
    message: str


# -- synced traits --------------------------------------------------------------------------
# A traitlets List() or Dict() does not say what it holds; TRAITS says it for those traits, once: tools/messages_ts.py
# writes it into the traits' TypeScript, and tests/test_messages.py checks what the widgets really hold against it.

Range = tuple[float, float]  # a window: from and to, ns from the profile's start


class TrackInfo(TypedDict):
    """A track of the grouping shown: its label (segments joined by "/"), lanes and events."""

    label: str
    lanes: int
    events: int


class CounterInfo(TypedDict):
    """A counter series the Timeline can draw; its points come by CountersRequest."""

    key: str
    label: str
    kind: str
    unit: str
    max: float
    min: float
    breakdown: bool  # the hover reads a breakdown by kind (CounterAtReply.breakdown)


class Chip(TypedDict):
    """A chip of the summary strip above a device trace (its share of the execution drawn as a bar, null: none)."""

    label: str
    value: str
    share: float | None
    title: str


class ColorChoice(TypedDict):
    """A choice of the device viewer's colour menu: what events are coloured by, and its label."""

    value: str
    label: str


class SummaryRow(TypedDict):
    """A name's or a track's line in a RangeSummary: events overlapping the range, their time clipped to it (ns)."""

    key: str
    count: int
    total: float
    mean: float


class RangeSummary(TypedDict):
    """The brushed range's table: the `top` names and tracks with the most time in it, how many more there are."""

    start: float
    end: float
    events: int
    top: int
    by_name: list[SummaryRow]
    by_track: list[SummaryRow]
    by_name_more: int
    by_track_more: int
    note: NotRequired[str]  # a caveat about the numbers (an exported page's merged blocks)


class Outlier(TypedDict):
    """A cluster of events on a far clock, drawn apart on the overview strip."""

    t0: float
    t1: float
    events: int


class Overview(TypedDict):
    """The overview strip: events per bin over `range` (the dense part), far-clock clusters apart (model.overview)."""

    bins: list[int]
    range: Range
    outliers: list[Outlier]


TRAITS: dict[str, Any] = {
    "tracks": list[TrackInfo],
    "names": list[str],  # the name dictionary viewport replies index into
    "span": Range,
    "view": Range,
    "home": Range,
    "brush": tuple[()] | Range,  # none, or the brushed window
    "brush_summary": RangeSummary | dict[str, Never],  # {} without a brush
    "counters": list[CounterInfo],
    "overview": Overview | dict[str, Never],  # {} before a profile is shown
    "strip": list[Chip],
    "color_choices": list[ColorChoice],
    "groupings": dict[str, str],  # grouping key -> its label
    "columns": list[tuple[str, str]],  # the device picker's: key, label
    "rows": list[dict[str, str]],  # the device picker's: key -> the value as text
}


# What each side may send, in the order the TypeScript unions list them.
TO_KERNEL = [ViewportRequest, CountersRequest, CounterAtRequest, HoverRequest, FindRequest, FocusRequest,
             SubmitRequest, PaintedNotice, ResyncRequest]
TO_BROWSER = [ViewportReply, CountersReply, CounterAtReply, HoverReply, FindReply, ErrorReply]
TimelineRequest = ViewportRequest | CountersRequest | CounterAtRequest | HoverRequest | FindRequest


def kind_of(message: type) -> str:
    """The `type` a message class declares (its Literal)."""
    return str(get_args(get_type_hints(message)["type"])[0])


_BY_KIND = {kind_of(c): c for c in TO_KERNEL}


def request_class(content: Any) -> type | None:
    """The declared browser -> kernel message `content` is (by its `type`), None for anything else."""
    if not isinstance(content, dict):
        return None
    kind = content.get("type")
    return _BY_KIND.get(kind) if isinstance(kind, str) else None
