#!/usr/bin/env python3
"""One-shot re-layout of issue 39: the device wing, readers by format, the job widgets, with every reference rewritten.

Run from the repository's root on a clean tree, after everyone has committed:

    .venv/bin/python tools/relayout.py  # moves with `git mv`, rewrites, stages it all, prints what to look at
    python tools/relayout.py --dry-run  # only the plan

What moves (decided by file names, so modules added since this was written move too):
  neuron_widgets/model/device_*.py          -> model/device/<name without device_>.py (device_colors: colours.py)
  neuron_widgets/readers/chrome.py, chrome_*  -> readers/chrome/reader.py, readers/chrome/<rest>.py
  neuron_widgets/readers/perfetto.py, perfetto_* -> readers/perfetto/reader.py, readers/perfetto/<rest>.py
  neuron_widgets/readers/parquet, neuron_json* (-> legacy_json*), runtime_json*, device, capture -> readers/neuron/
  neuron_widgets/widgets/job_*.py            -> widgets/job/<rest>.py
Each new package gets a short face (__init__.py: its names imported on first use, none of them a submodule's name).

What is rewritten, in every tracked text file (js/, test data and the built front end left alone):
  - `from ... import ...` statements, absolute and relative, at any depth (function level, TYPE_CHECKING): found
    with the ast, resolved against the old layout, written for the new one (relative stays relative, with the level
    the new place needs); a module imported by name keeps its local name (`from .neuron import legacy_json as
    neuron_json`), so the code below it is untouched;
  - dotted names `neuron_widgets.<old>` / `nw.<old>` anywhere (`import a.b.c`, monkeypatch and mock strings, docs);
  - package-relative dotted names ("model.device_trace" in tests/test_layout.py's KNOWN_CIRCLES, prose);
  - paths `[neuron_widgets/]readers/chrome_fast.py` in any text (docs, README, comments, pyproject);
  - docs/ARCHITECTURE.md: the map's lines of moved modules become a sub-folder with the same descriptions (a module
    the map missed gets its docstring's first line), and the picture of the rooms names the new rooms.
Then `ruff check --select I --fix` sorts the rewritten imports.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "neuron_widgets"
LEAF_RENAMES = {"colors": "colours"}  # model/device_colors.py -> model/device/colours.py
NEURON_READERS = ("parquet", "device", "capture", "neuron_json", "runtime_json")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".ini", ".txt", ".yml", ".yaml", ".ipynb", ".rst"}
SKIP_PREFIXES = ("js/", "tests/data/", f"{PACKAGE}/static/", f"{PACKAGE}/data/", "bench/out/", "tools/relayout.py")


@dataclass(frozen=True)
class Face:
    line: str  # its line in docs/ARCHITECTURE.md's map
    doc: str
    names: dict[str, str]  # exported name -> the submodule (new leaf) that defines it


FACES = {
    "model.device": Face("the device wing: a device profile, its events, hierarchy, colours, engine times",
                         "The device wing: a device profile's tables (DeviceTrace), its events as a Profile, hierarchy, "
                         "colours, engine times and the strip, where its files are and how they are loaded.",
                         {"DeviceTrace": "trace", "DeviceEvents": "events", "load_device_trace": "loading",
                          "set_device_loader": "loading", "engine_times": "engines", "dma_queues": "engines",
                          "engine_strip": "summary", "color_codes": "colours", "aligned_trace": "resolve"}),
    "readers.chrome": Face("Chrome trace event JSON (PyTorch / Kineto included)",
                           "Chrome trace event JSON (and Kineto): sniff and read; the fast road, the byte scan, flows "
                           "and names are its modules.", {"sniff": "reader", "read": "reader", "VERSION": "reader"}),
    "readers.perfetto": Face("Perfetto traces (protobuf), read chunk by chunk",
                             "Perfetto traces: sniff and read; the chunked stream, wire format, sequence state, clocks, "
                             "tracks and arguments are its modules.",
                             {"sniff": "reader", "read": "reader", "VERSION": "reader",
                              "device_profiles": "reader"}),
    "readers.neuron": Face("the Neuron formats: Parquet, legacy JSON, runtime JSON, device profiles, captures",
                           "The Neuron formats: Neuron Explorer Parquet, legacy JSON, the runtime's JSON, device "
                           "profiles and raw capture directories.",
                           {"load_device_trace": "device", "profile_dirs": "parquet", "is_device_json": "legacy_json",
                            "Inventory": "capture"}),
    "widgets.job": Face("a multi-node job's widgets: Timeline(job), Summary(job)",
                        "The widgets over a multi-node job: Timeline(job) and Summary(job)'s part.",
                        {"JobTimeline": "timeline", "JobSummaryMixin": "summary", "is_job": "summary"}),
}
FACE_NAMES: dict[str, list[str]] = {}  # new package -> the names its face was given (those found)
PICTURE = {  # room in the picture of the rooms -> the line added under it
    "model/": "model/device/  the device wing: DeviceTrace, its events, hierarchy, colours, engine times",
    "readers/": "readers/neuron/, chrome/, perfetto/: one package per family of formats",
    "widgets/": "widgets/job/  Timeline(job), Summary(job)",
}


def new_module(old: str) -> str | None:
    """The package-relative dotted name a module moves to, or None if it stays."""
    folder, _, leaf = old.rpartition(".")
    if folder == "model" and leaf.startswith("device_"):
        rest = leaf[len("device_"):]
        return f"model.device.{LEAF_RENAMES.get(rest, rest)}"
    if folder == "readers":
        for family in ("chrome", "perfetto"):
            if leaf == family:
                return f"readers.{family}.reader"
            if leaf.startswith(family + "_"):
                return f"readers.{family}.{leaf[len(family) + 1:]}"
        if leaf == "neuron_scan":  # the byte scanner both Neuron JSON readers share
            return "readers.neuron.scan"
        for name in NEURON_READERS:
            if leaf == name or leaf.startswith(name + "_"):
                return "readers.neuron." + leaf.replace("neuron_json", "legacy_json")
    if folder == "widgets" and leaf.startswith("job_"):
        return f"widgets.job.{leaf[len('job_'):]}"
    return None


def module_of(path: Path, root: Path) -> str:
    """Package-relative dotted name of a file under the package ("" for its own __init__)."""
    parts = list(path.relative_to(root / PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def file_of(module: str, package: bool = False) -> str:
    parts = [PACKAGE, *([p for p in module.split(".") if p])]
    return "/".join(parts) + ("/__init__.py" if package else ".py")


class Plan:
    def __init__(self, root: Path) -> None:
        self.root = root
        files = [p for p in (root / PACKAGE).rglob("*.py") if "__pycache__" not in p.parts]
        self.packages = {module_of(p, root) for p in files if p.name == "__init__.py"}
        self.modules = {module_of(p, root) for p in files}
        self.moves = {m: n for m in sorted(self.modules - self.packages) if (n := new_module(m))}
        self.new_packages = sorted({n.rpartition(".")[0] for n in self.moves.values()} - self.packages)
        # An old module whose name becomes a package (readers/chrome.py -> readers/chrome/): in its parent's
        # __init__, `from . import chrome` keeps binding the package (its face), or it would hide the package.
        self.face_owners = {m for m in self.moves if m in self.new_packages}

    def rename(self, module: str) -> str:
        """A package-relative module name in the new layout (packages and unmoved modules unchanged)."""
        if module in self.moves:
            return self.moves[module]
        for old, new in self.moves.items():  # a name below a moved module (an attribute path in a string)
            if module.startswith(old + "."):
                return new + module[len(old):]
        return module


# --- import statements ----------------------------------------------------------------------------------------

def _byte_col(line: str, col: int) -> int:
    return len(line.encode()[:col].decode(errors="replace"))


def _offsets(text: str) -> list[int]:
    starts, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def _relative(importer_package: list[str], target: list[str]) -> str:
    k = 0
    while k < min(len(importer_package), len(target)) and importer_package[k] == target[k]:
        k += 1
    return "." * (len(importer_package) - k + 1) + ".".join(target[k:])


def rewrite_imports(plan: Plan, text: str, old_module: str | None, new_module_name: str | None,
                    is_init: bool) -> tuple[str, list[tuple[int, int]]]:
    """`from` imports rewritten for the new layout; and the spans (old text) of every `from` statement."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    starts = _offsets(text)
    edits: list[tuple[int, int, str]] = []
    spans: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        a = starts[node.lineno - 1] + _byte_col(lines[node.lineno - 1], node.col_offset)
        b = starts[node.end_lineno - 1] + _byte_col(lines[node.end_lineno - 1], node.end_col_offset)
        spans.append((a, b))
        if node.level:
            if old_module is None:
                continue
            own = old_module.split(".") if old_module else []
            pkg = own if is_init else own[:-1]
            base = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
            base = [*base, *(node.module.split(".") if node.module else [])]
        elif node.module and node.module.split(".")[0] == PACKAGE:
            base = node.module.split(".")[1:]
        else:
            continue
        base_name = ".".join(base)
        new_pkg = None  # the importing file's package after the move, for relative imports
        if new_module_name is not None:
            new_pkg = [PACKAGE, *(new_module_name.split(".") if new_module_name else [])]
            new_pkg = new_pkg if is_init else new_pkg[:-1]
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            full = f"{base_name}.{alias.name}" if base_name else alias.name
            local = alias.asname or alias.name
            if full in plan.modules and full not in plan.packages and not (
                    full in plan.face_owners and is_init and new_module_name == base_name):
                source, _, leaf = plan.rename(full).rpartition(".")
                entry = leaf if leaf == local else f"{leaf} as {local}"
            else:
                source = plan.rename(base_name)
                entry = alias.name if alias.asname is None else f"{alias.name} as {alias.asname}"
            groups.setdefault(source, []).append(entry)

        def spec(source: str, relative: bool = bool(node.level), new_pkg: list[str] | None = new_pkg) -> str:
            target = [PACKAGE, *([p for p in source.split(".") if p])]
            if relative and new_pkg is not None:
                return _relative(new_pkg, target)
            return ".".join(target)

        old_text = text[a:b]
        if len(groups) == 1 and [e.split(" as ")[0] for e in next(iter(groups.values()))] == [
                al.name for al in node.names] and all(
                (e.split(" as ")[1] if " as " in e else None) == al.asname for e, al in zip(
                    next(iter(groups.values())), node.names, strict=True)):
            # Names unchanged: only the module after `from` changes (comments inside the statement kept).
            head = re.match(r"from\s+(\.*[\w.]*)\s+import", old_text)
            assert head is not None, old_text
            new_spec = spec(next(iter(groups)))
            if head.group(1) != new_spec:
                edits.append((a + head.start(1), a + head.end(1), new_spec))
            continue
        indent = " " * node.col_offset
        statements = []
        for source, entries in groups.items():
            one = f"from {spec(source)} import {', '.join(entries)}"
            if len(indent) + len(one) > 120:
                one = f"from {spec(source)} import (\n" + "".join(f"{indent}    {e},\n" for e in entries) + f"{indent})"
            statements.append(one)
        if "#" in old_text:
            print(f"  note: comments inside a split import dropped: {old_text!r}")
        edits.append((a, b, f"\n{indent}".join(statements)))
    for a, b, new in sorted(edits, reverse=True):
        text = text[:a] + new + text[b:]
    return text, spans


# --- dotted names and paths in any text -----------------------------------------------------------------------

def text_patterns(plan: Plan) -> Callable[[str], str]:
    """One pass over a text (no rewritten name is read again): `from neuron_widgets... import` lines outside the real
    import statements (code in strings run by a child process, README examples), dotted names, paths."""
    olds = sorted(plan.moves, key=len, reverse=True)
    alt = "|".join(re.escape(o) for o in olds)
    paths = "|".join(re.escape(o.replace(".", "/")) for o in olds)
    combined = re.compile(
        rf"(?P<imp>^[ \t]*from[ \t]+{PACKAGE}(?:\.\w+)*[ \t]+import[ \t]+\w+(?:[ \t]*,?[ \t]*\w+)*)"
        rf"|(?P<dot>\b(?:{PACKAGE}|nw)\.(?:{alt})(?![\w]))"
        rf"|(?P<bare>(?<![\w.])(?:{alt})(?![\w]))"  # package-relative: "model.device_trace" (KNOWN_CIRCLES), prose
        rf"|(?P<path>(?<![\w./-])(?:{PACKAGE}/)?(?:{paths})\.py(?![\w]))", re.M)

    def repl(m: re.Match[str]) -> str:
        text = m.group()
        if m.lastgroup == "imp":
            indent = text[: len(text) - len(text.lstrip())]
            try:
                new, _ = rewrite_imports(plan, text.strip(), None, None, False)
            except SyntaxError:
                return text
            return indent + new.replace("\n", "\n" + indent)
        if m.lastgroup == "dot":
            prefix, _, old = text.partition(".")
            return f"{prefix}.{plan.moves[old]}"
        if m.lastgroup == "bare":
            return plan.moves[text]
        prefix = f"{PACKAGE}/" if text.startswith(f"{PACKAGE}/") else ""
        old = text[len(prefix):-len(".py")].replace("/", ".")
        return f"{prefix}{plan.moves[old].replace('.', '/')}.py"

    return lambda chunk: combined.sub(repl, chunk)


def rewrite_text(sub: Callable[[str], str], text: str, keep: list[tuple[int, int]]) -> str:
    """The text rewritten outside the kept spans (the real `from` statements, rewritten from the ast)."""
    out, pos = [], 0
    for a, b in sorted(keep):
        out.append(sub(text[pos:a]))
        out.append(text[a:b])
        pos = b
    out.append(sub(text[pos:]))
    return "".join(out)


# --- docs/ARCHITECTURE.md ---------------------------------------------------------------------------------------

NAME = re.compile(r"^( *)([\w.-]+\.py)(\s+)(.*)$")


def rewrite_map(plan: Plan, text: str, docstrings: dict[str, str]) -> tuple[str, list[str]]:
    """The map's lines of moved modules gathered under their new folder; the picture's new rooms."""
    notes: list[str] = []
    fences = [m.start() for m in re.finditer(r"^```", text, re.M)]
    blocks = list(zip(fences[0::2], fences[1::2], strict=False))
    for a, b in reversed(blocks):
        body = text[a:b].split("\n", 1)[1] if "\n" in text[a:b] else ""
        head = text[a:a + len(text[a:b]) - len(body)]
        if body.startswith(f"{PACKAGE}/"):
            body = _map(plan, body, docstrings, notes)
        elif "──>" in body or "-->" in body:
            body = _picture(body, notes)
        text = text[:a] + head + body + text[b:]
    return text, notes


def _map(plan: Plan, body: str, docstrings: dict[str, str], notes: list[str]) -> str:
    lines = body.split("\n")
    name_at = re.compile(r"^( *)([\w.-]+/|[\w.-]+\.\w+)(?=[\s,]|$)")
    folders: list[tuple[int, str]] = []
    entries: dict[str, list[str]] = {}  # old module -> its lines (the first, then its continuation lines)
    kept: list[tuple[int, str, str]] = []  # (indent of its name or -1, path it names or "", line)
    i = 0
    while i < len(lines):
        line = lines[i]
        m = name_at.match(line)
        if not m:
            kept.append((-1, "", line))
            i += 1
            continue
        indent = len(m.group(1))
        while folders and folders[-1][0] >= indent:
            folders.pop()
        path = (folders[-1][1] if folders else "") + m.group(2)
        if m.group(2).endswith("/") and not re.match(r"^ *[\w.-]+/,", line):
            folders.append((indent, path))
        old = module_of(Path(path), Path(".")) if path.endswith(".py") and path.startswith(PACKAGE + "/") else None
        block = [line]
        while i + 1 < len(lines) and lines[i + 1].strip() and not name_at.match(lines[i + 1]) \
                and len(lines[i + 1]) - len(lines[i + 1].lstrip()) > indent:
            i += 1
            block.append(lines[i])
        if old in plan.moves:
            entries[old] = block
        else:
            kept.extend((indent if k == 0 else -1, path if k == 0 else "", b) for k, b in enumerate(block))
        i += 1
    for pkg in sorted(plan.new_packages):  # each after the last: chrome/, neuron/, perfetto/
        parent = f"{PACKAGE}/{pkg.rpartition('.')[0].replace('.', '/')}/"
        at = [k for k, (_, path, _) in enumerate(kept) if path == parent]
        if not at:
            notes.append(f"map: no folder {parent}; {pkg}'s lines not placed")
            continue
        start, pindent = at[0], kept[at[0]][0]
        end = next((k for k in range(start + 1, len(kept)) if 0 <= kept[k][0] <= pindent), len(kept))
        kept[end:end] = [(-1, "", x) for x in _folder_lines(plan, pkg, entries, docstrings, notes, pindent + 2)]
    return "\n".join(x for _, _, x in kept)


def _folder_lines(plan: Plan, pkg: str, entries: dict[str, list[str]], docstrings: dict[str, str],
                  notes: list[str], indent: int) -> list[str]:
    """A new folder's lines in the map: itself, its face, its modules with the descriptions they had."""
    col = indent + 23
    face = FACES.get(pkg)
    names = ", ".join(FACE_NAMES.get(pkg, []))
    out = [f"{' ' * indent}{(pkg.rpartition('.')[2] + '/').ljust(col - indent)}{face.line if face else ''}".rstrip()]
    wrapped = textwrap.wrap(f"the face: {names} (imported on first use)", 118 - col)
    out.append(f"{' ' * (indent + 2)}{'__init__.py'.ljust(col - indent - 2)}{wrapped[0]}")
    out.extend(" " * col + w for w in wrapped[1:])
    for old in sorted((o for o in plan.moves if plan.moves[o].rpartition(".")[0] == pkg), key=plan.moves.get):
        name = plan.moves[old].rpartition(".")[2] + ".py"
        block = entries.get(old)
        if block is None:
            desc, rest = docstrings.get(old) or "(no line in the map before the re-layout)", []
            notes.append(f"map: {file_of(old)} had no line; its docstring's first line used")
        else:
            m = NAME.match(block[0])
            desc, rest = (m.group(4) if m else block[0].strip()), block[1:]
        start = f"{' ' * (indent + 2)}{name}"
        dcol = max(col, len(start) + 1)
        out.append(start.ljust(dcol) + desc)
        out.extend(" " * dcol + r.strip() for r in rest)
    return out


def _picture(body: str, notes: list[str]) -> str:
    lines = body.split("\n")
    for room, added in PICTURE.items():
        hit = [k for k, line in enumerate(lines) if re.search(rf"(?<![\w/]){re.escape(room)}(\s|$)", line)]
        if not hit:
            notes.append(f"picture: no room {room!r} found; add '{added}' by hand")
            continue
        k = hit[0]
        col = re.search(rf"(?<![\w/]){re.escape(room)}(\s|$)", lines[k]).start()
        lines.insert(k + 1, " " * col + added)
    return "\n".join(lines)


# --- the run ----------------------------------------------------------------------------------------------------

def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def top_names(source: str) -> set[str]:
    """The names a module defines or imports at its top level."""
    out: set[str] = set()
    for n in ast.parse(source).body:
        if isinstance(n, ast.FunctionDef | ast.ClassDef):
            out.add(n.name)
        elif isinstance(n, ast.Assign | ast.AnnAssign):
            out |= {t.id for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
        elif isinstance(n, ast.ImportFrom | ast.Import):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return out


def face_text(plan: Plan, pkg: str, root: Path) -> tuple[str, list[str]]:
    face = FACES.get(pkg, Face("", f"The {pkg} package.", {}))
    subs = {n.rpartition(".")[2] for n in plan.moves.values() if n.rpartition(".")[0] == pkg}
    kept, notes = {}, []
    for name, sub in face.names.items():
        src = root / file_of(f"{pkg}.{sub}")
        defined = src.exists() and name in top_names(src.read_text())
        if name in subs or not defined:
            notes.append(f"face {pkg}: {name} left out ({'a submodule has that name' if name in subs else f'not in {sub}.py'})")
            continue
        kept[name] = sub
    FACE_NAMES[pkg] = list(kept)
    lazy = "".join(f'    "{n}": ".{s}",\n' for n, s in kept.items())
    doc = "\n".join(textwrap.wrap(face.doc, 110))
    text = f'''"""{doc}"""

from importlib import import_module
from typing import Any

# Name -> the module that defines it, imported when the name is first asked for: callers inside the package import
# the modules themselves, so the face costs nothing at start-up and makes no import circle.
_LAZY = {{
{lazy}}}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {{__name__!r}} has no attribute {{name!r}}")


def __dir__() -> list[str]:
    return sorted(__all__)
'''
    return text, notes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=Path.cwd(), help="the repository (default: here)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan only")
    args = ap.parse_args()
    root = args.root.resolve()
    if not (root / PACKAGE).is_dir():
        sys.exit(f"{root} holds no {PACKAGE}/: run from the repository's root or pass --root")
    plan = Plan(root)
    if not plan.moves:
        sys.exit("nothing to move: the re-layout is applied already")
    clash = [n for n in plan.moves.values() if (root / file_of(n)).exists()]
    if clash:
        sys.exit(f"target files exist already: {clash}")
    print(f"{len(plan.moves)} modules move into {len(plan.new_packages)} new packages:")
    for old, new in plan.moves.items():
        print(f"  {file_of(old)} -> {file_of(new)}")
    if args.dry_run:
        return 0
    dirty = git(root, "status", "--porcelain", "--untracked-files=no")
    if dirty.strip():
        sys.exit(f"the tree has uncommitted changes; commit them first:\n{dirty}")

    docstrings = {}
    for old in plan.moves:
        doc = ast.get_docstring(ast.parse((root / file_of(old)).read_text())) or ""
        docstrings[old] = doc.strip().split("\n")[0]
    # Old module name of every package file, by its path after the move (relative imports resolve against it).
    old_of: dict[str, str] = {}
    for p in (root / PACKAGE).rglob("*.py"):
        if "__pycache__" in p.parts:
            continue
        m = module_of(p, root)
        old_of[file_of(plan.moves.get(m, m), p.name == "__init__.py" and m in plan.packages)] = m

    for old, new in plan.moves.items():
        target = root / file_of(new)
        target.parent.mkdir(parents=True, exist_ok=True)
        git(root, "mv", file_of(old), file_of(new))
    notes: list[str] = []
    for pkg in plan.new_packages:
        text, face_notes = face_text(plan, pkg, root)
        (root / file_of(pkg, package=True)).write_text(text)
        git(root, "add", file_of(pkg, package=True))
        notes += face_notes

    patterns = text_patterns(plan)
    changed: list[str] = []
    tracked = git(root, "ls-files").splitlines()
    for rel in tracked:
        path = root / rel
        if rel.startswith(SKIP_PREFIXES) or path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        new = text
        if path.suffix == ".py":
            inside = rel.startswith(PACKAGE + "/")
            old_module = old_of.get(rel) if inside else None
            new_module_name = module_of(path, root) if inside else None
            try:
                new, spans = rewrite_imports(plan, text, old_module, new_module_name, path.name == "__init__.py")
            except SyntaxError as exc:
                notes.append(f"{rel}: not parsed ({exc}); only its dotted names rewritten")
                spans = []
            # The spans are of the old text; the dotted names are rewritten on the old text outside them, then the
            # import edits are applied again on that (they only touch the spans).
            rewritten = rewrite_text(patterns, text, spans)
            if spans:
                new, _ = rewrite_imports(plan, rewritten, old_module, new_module_name, path.name == "__init__.py")
            else:
                new = rewritten
        else:
            new = rewrite_text(patterns, text, [])
        if rel == "docs/ARCHITECTURE.md":
            new, map_notes = rewrite_map(plan, new, docstrings)
            notes += map_notes
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(rel)

    py = [c for c in changed if c.endswith(".py")] + [file_of(p, package=True) for p in plan.new_packages]
    beside = Path(sys.executable).parent / "ruff"  # the running venv's
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    if ruff:
        subprocess.run([ruff, "check", "--quiet", "--select", "I", "--fix", *py], cwd=root, check=False)
    else:
        notes.append("ruff not found: run `ruff check --select I --fix .` to sort the rewritten imports")

    git(root, "add", "--", *changed)  # staged with the moves and faces: `git commit` takes the whole re-layout
    print(f"{len(changed)} files rewritten, {len(plan.new_packages)} faces written: "
          + ", ".join(file_of(p, package=True) for p in plan.new_packages))
    leftovers = subprocess.run(["git", "grep", "-nE", r"\b(model\.device_|readers\.(chrome|perfetto)_|"
                                r"readers\.(neuron_json|runtime_json|parquet|capture)\b|widgets\.job_)", "--", ".",
                                ":!tools/relayout.py", ":!js", ":!bench/out"],
                               cwd=root, capture_output=True, text=True).stdout.splitlines()
    for n in notes:
        print("  note:", n)
    if leftovers:
        print(f"  old dotted names still written {len(leftovers)} time(s) (bare mentions, read them):")
        for line in leftovers[:40]:
            print("   ", line)
    print("All staged. Next: ruff check . ; pytest tests/test_layout.py tests/test_architecture_map.py tests/test_faces.py ;"
          " the suite; then git commit.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
