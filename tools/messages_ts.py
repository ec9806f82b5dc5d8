"""Write js/src/common/messages.ts from neuron_widgets/widgets/messages.py and the widgets' synced traits.

`python tools/messages_ts.py` rewrites the file; tests/test_messages.py fails when the committed
file differs from what this makes, so the TypeScript cannot drift from the Python declarations.
"""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "js" / "src" / "common" / "messages.ts"


def ts_type(hint: Any) -> str:
    """A Python type hint as TypeScript (only the shapes the messages use)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return "unknown"
    if hint is str:
        return "string"
    if hint in (int, float):
        return "number"
    if hint is bool:
        return "boolean"
    if hint is type(None):
        return "null"
    if hint is typing.Never:  # dict[str, Never]: an empty object
        return "never"
    if origin is Literal:
        return " | ".join(f'"{a}"' for a in args)
    if origin in (Union, types.UnionType):
        return " | ".join(ts_type(a) for a in args)
    if origin is list:
        inner = ts_type(args[0])
        return f"({inner})[]" if _top_level_union(inner) else f"{inner}[]"
    if origin is tuple:  # a fixed pair as a TypeScript tuple; tuple[()] is the empty one
        return f"[{', '.join(ts_type(a) for a in args)}]"
    if origin is dict:
        return f"Record<{ts_type(args[0])}, {ts_type(args[1])}>"
    if typing.is_typeddict(hint):
        return str(hint.__name__)
    raise TypeError(f"no TypeScript for {hint!r}: add it to tools/messages_ts.py")


def _top_level_union(ts: str) -> bool:
    """Whether a TypeScript type is a union at its top (`A | B`, not `Record<K, A | B>`): `[]` binds tighter than `|`."""
    depth = 0
    for ch in ts:
        depth += ch in "<[({"
        depth -= ch in ">])}"
        if ch == "|" and depth == 0:
            return True
    return False


def interface(cls: type) -> list[str]:
    hints = get_type_hints(cls, include_extras=True)
    lines = [f"/** {' '.join((cls.__doc__ or '').split())} */", f"export interface {cls.__name__} {{"]
    for name, hint in hints.items():
        optional = get_origin(hint) is NotRequired or name in getattr(cls, "__optional_keys__", ())
        if get_origin(hint) is NotRequired:
            hint = get_args(hint)[0]
        lines.append(f"  {name}{'?' if optional else ''}: {ts_type(hint)};")
    return [*lines, "}", ""]


def trait_type(name: str, trait: Any) -> str:
    """A synced trait as TypeScript: what messages.TRAITS declares it holds, else what the traitlet says."""
    import traitlets as t

    from neuron_widgets.widgets.messages import TRAITS

    if name in TRAITS:
        return ts_type(TRAITS[name])
    if isinstance(trait, t.Unicode):
        return "string"
    if isinstance(trait, (t.Int, t.Float)):
        return "number"
    if isinstance(trait, t.Bool):
        return "boolean"
    if isinstance(trait, t.Bytes):
        return "DataView"  # anywidget hands bytes to the browser as a DataView
    if isinstance(trait, t.List):
        inner = getattr(trait, "_trait", None)
        if inner is not None and not isinstance(inner, t.Dict | t.List):
            return f"{trait_type(name, inner)}[]"
    if isinstance(trait, t.Dict) and getattr(trait, "_value_trait", None) is None:
        # Fields the kernel fills as it learns them (a selection's detail, an analysis's info): the view narrows each.
        return "Record<string, unknown>"
    raise TypeError(f"the trait {name!r} ({type(trait).__name__}) does not say what it holds: declare it in "
                    "neuron_widgets/widgets/messages.py TRAITS")


def traits(name: str, cls: type) -> list[str]:
    import anywidget

    base = set(anywidget.AnyWidget.class_traits(sync=True))
    own = {k: v for k, v in cls.class_traits(sync=True).items() if k not in base}  # type: ignore[attr-defined]
    lines = [f"/** The synced traits of {cls.__module__}.{cls.__name__}. */", f"export interface {name} {{"]
    lines += [f"  {k}: {trait_type(k, v)};" for k, v in sorted(own.items())]
    return [*lines, "}", ""]


def typeddicts(hint: Any) -> list[type]:
    """The TypedDicts a hint names, at any depth (list[TrackInfo], a TypedDict's fields), each after those it uses."""
    if typing.is_typeddict(hint):
        return [*(cls for field in get_type_hints(hint).values() for cls in typeddicts(field)), hint]
    return [cls for arg in get_args(hint) for cls in typeddicts(arg)]


def union(name: str, classes: list[type]) -> list[str]:
    """`export type name = A | B;` on one line when it fits Biome's 120 columns, else one member a line (as Biome
    writes it, so `biome check --write` leaves the file as generated)."""
    line = f"export type {name} = {' | '.join(c.__name__ for c in classes)};"
    if len(line) <= 120:
        return [line]
    return [f"export type {name} =", *(f"  | {c.__name__}" for c in classes[:-1]), f"  | {classes[-1].__name__};"]


def generate() -> str:
    sys.path.insert(0, str(ROOT))
    from neuron_widgets.widgets import messages as M
    from neuron_widgets.widgets.bokeh_host import ThemeProbe
    from neuron_widgets.widgets.details import EventDetails
    from neuron_widgets.widgets.device_picker import _PickerList
    from neuron_widgets.widgets.device_viewer import DeviceTraceViewer
    from neuron_widgets.widgets.timeline import Timeline

    out = ["// Generated by tools/messages_ts.py from neuron_widgets/widgets/messages.py and the widgets' traits:",
           "// do not edit (tests/test_messages.py fails when this file differs from what the script writes).", "",
           'import type { AnyModel } from "@anywidget/types";', ""]
    seen: set[str] = set()

    def declare(hint: Any) -> list[str]:
        """The interfaces of the TypedDicts `hint` names not declared yet, each after those it uses."""
        lines = []
        for cls in typeddicts(hint):
            if cls.__name__ not in seen:
                seen.add(cls.__name__)
                lines += interface(cls)
        return lines

    for cls in [*M.TO_KERNEL, *M.TO_BROWSER]:
        out += declare(cls)
    out += ["/** What the browser sends the kernel. */", *union("ToKernel", M.TO_KERNEL), "",
            "/** What the kernel sends the browser. */", *union("ToBrowser", M.TO_BROWSER), ""]
    for hint in M.TRAITS.values():
        out += declare(hint)
    for name, cls in (("TimelineTraits", Timeline), ("DeviceViewerTraits", DeviceTraceViewer),
                      ("DetailsTraits", EventDetails), ("PickerTraits", _PickerList),
                      ("ThemeTraits", ThemeProbe)):
        out += traits(name, cls)
    out += ["/** What anywidget's models may hold: their traits by name (the constraint of AnyModel's own parameter). */",
            "export type ModelTraits = AnyModel extends AnyModel<infer T> ? T : never;", "",
            "/** A kernel's reply as the views take it: the message and its binary buffers (a model's \"msg:custom\"). */",
            "export type ReplyListener = (msg: ToBrowser, buffers: DataView[]) => void;", "",
            "/** Listening to a model as the views do: its custom messages are the kernel's replies, other events changes. */",
            "export interface Listen {",
            '  (event: "msg:custom", f: ReplyListener): void;',
            "  (event: string, f: () => void): void;",
            "}", "",
            "/** The surface of a model the views use: anywidget's, or an exported page's LocalModel; what it sends is"
            " declared. */",
            'export type ViewModel<T extends ModelTraits> = Pick<AnyModel<T>, "get" | "set" | "on" | "off" | "save_changes"> & {',
            "  send(content: ToKernel, callbacks?: unknown, buffers?: ArrayBuffer[] | ArrayBufferView[]): void;",
            "};",
            "",
            "/** The Timeline's model; a DeviceTraceViewer's has the device traits too. */",
            "export type TimelineModel = ViewModel<TimelineTraits & Partial<DeviceViewerTraits>>;", ""]
    return "\n".join(out)


if __name__ == "__main__":
    OUT.write_text(generate(), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
