"""The public API, and imports pointing one way between the package's layers."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "neuron_widgets"

# Layer -> the layers it must never import (at module level or inside a function).
FORBIDDEN = {
    "model": {"readers", "widgets", "export", "summary", "analysis", "sample", "job"},
    "analysis": {"readers", "widgets", "export", "summary", "job"},
    "job": {"widgets", "export", "summary"},
    "summary": {"readers", "widgets", "export"},
    "readers": {"widgets", "export", "summary", "analysis", "job"},
    "export": {"widgets"},
}


def imported_layers(path: Path) -> set[str]:
    """The package's top-level sub-packages a module imports, relative or absolute."""
    tree = ast.parse(path.read_text())
    rel = path.relative_to(PACKAGE).parts
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[:-1])[: len(rel) - node.level]
                target = [*base, *(node.module.split(".") if node.module else [])]
                if not target and node.module is None:
                    target = [a.name for a in node.names]
            elif node.module and node.module.startswith("neuron_widgets."):
                target = node.module.split(".")[1:]
            else:
                continue
            if target:
                out.add(target[0])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("neuron_widgets."):
                    out.add(a.name.split(".")[1])
    return out


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_point_one_way(layer: str) -> None:
    bad = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        hit = imported_layers(path) & FORBIDDEN[layer]
        if hit:
            bad.append(f"{path.relative_to(PACKAGE)} imports {', '.join(sorted(hit))}")
    assert not bad, "\n".join(bad)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    # The test above must be able to fail: a model module importing the readers is caught.
    probe = PACKAGE / "model" / "_probe_for_test.py"
    probe.write_text("def f():\n    from ..readers.neuron.device_trace import load_device_trace\n")
    try:
        assert "readers" in imported_layers(probe)
    finally:
        probe.unlink()


def test_public_names_users_type_first() -> None:
    code = ("import sys; import neuron_widgets as nw; assert 'anywidget' not in sys.modules, 'widgets imported eagerly'; "
            "from neuron_widgets import Timeline, EventDetails, GroupingSelector, DeviceTraceViewer, "
            "DeviceProfilePicker, Summary, link, export_html, export_perfetto, export_parquet; "
            "from neuron_widgets.widgets import Timeline as T; assert T is Timeline; "
            "assert callable(link) and callable(export_html); print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    import neuron_widgets as nw

    with pytest.raises(AttributeError, match="no attribute 'Timelne'"):
        nw.Timelne  # noqa: B018
    assert "Timeline" in dir(nw)


# --- Import circles between files -------------------------------------------------------------
#
# What counts: every import of one of the package's modules by another, at module level or inside
# a function (deferring an import to a call does not remove the dependency: the two files still need
# each other, and a change in one breaks the other at a call instead of at import). Imports under
# `if TYPE_CHECKING:` do not count (never executed; annotations only). An import names the module it
# imports (`from .a import b` is a.py, or a/b.py when b is a module), not the packages above it: Python
# runs a package's __init__ first, but a partly run __init__ is what packages are for.


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path) -> dict[str, dict[str, str]]:
    """Module -> {imported module: "module" or "function"} for the modules of the package at `root`
    (names relative to it; the package's own __init__ is "")."""
    files = {_module_name(root, p): p for p in root.rglob("*.py") if "__pycache__" not in p.parts}
    graph: dict[str, dict[str, str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out: dict[str, str] = {}

        def add(target: str, where: str, out: dict[str, str] = out, name: str = name) -> None:
            if target in files and target != name and out.get(target) != "module":
                out[target] = where

        def visit(node: ast.AST, in_function: bool, out: dict[str, str] = out, package: str = package) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    for orelse in child.orelse:
                        visit(orelse, in_function)
                    continue
                inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                where = "function" if inner else "module"
                if isinstance(child, ast.ImportFrom):
                    if child.level:
                        parts = package.split(".") if package else []
                        parts = parts[: len(parts) - (child.level - 1)] if child.level > 1 else parts
                        target = ".".join([*parts, *([child.module] if child.module else [])])
                    elif child.module and child.module.split(".")[0] == root.name:
                        target = ".".join(child.module.split(".")[1:])
                    else:
                        continue
                    for alias in child.names:
                        sub = f"{target}.{alias.name}" if target else alias.name
                        add(sub if sub in files else target, where)
                elif isinstance(child, ast.Import):
                    for alias in child.names:
                        if alias.name.split(".")[0] == root.name:
                            add(".".join(alias.name.split(".")[1:]), where)
                visit(child, inner)

        visit(ast.parse(path.read_text(encoding="utf-8")), False)
        graph[name] = out
    return graph


def circles(graph: dict[str, dict[str, str]], kinds: set[str]) -> list[set[str]]:
    """The groups of modules that import each other, directly or around a circle (strongly connected
    components of more than one module), following only imports of the given kinds."""
    edges = {m: sorted(t for t, k in out.items() if k in kinds) for m, out in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        # Tarjan's algorithm without recursion: (module, its next edge to follow).
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                group = set()
                while True:
                    w = stack.pop()
                    group.add(w)
                    if w == v:
                        break
                if len(group) > 1:
                    found.append(group)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return found


def test_no_import_circle_between_files() -> None:
    at_module_level = circles(import_graph(PACKAGE), {"module"})
    assert not at_module_level, f"import circle(s) at module level: {[sorted(c) for c in at_module_level]}"
    found = circles(import_graph(PACKAGE), {"module", "function"})
    assert not found, f"import circle(s) between files, through function-level imports: {[sorted(c) for c in found]}"


def test_the_circle_finder_sees_circles(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import x\n")
    (pkg / "a.py").write_text("from .sub import b\nx = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import y\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import z\n"
                              "import pkg.a\n")
    (pkg / "d.py").write_text("from . import c\n")
    graph = import_graph(pkg)
    assert graph["a"] == {"sub.b": "module"} and graph["sub.b"] == {"c": "function"}
    assert graph["c"] == {"a": "module"} and graph["d"] == {"c": "module"}  # the TYPE_CHECKING one left out
    assert circles(graph, {"module"}) == []
    assert circles(graph, {"module", "function"}) == [{"a", "sub.b", "c"}]


# --- Function-level imports say why --------------------------------------------------------------
#
# An import inside a function is there to keep something off the start-up path (a heavy library, the
# export stack, Perfetto's protos, numba kernels loaded in a warm-up thread): a comment on the import,
# or on the comment lines right above it (or above the run of imports it belongs to), says which and
# what that saves. An import without one belongs at the top of its module.
_NOT_A_REASON = ("# noqa", "# type:", "# pragma")


def function_level_imports(root: Path) -> list[tuple[str, int, str, bool]]:
    """Every import inside a function of the package at `root` (not under `if TYPE_CHECKING:`): its file (relative
    to `root`), line, statement and whether a comment gives a reason for it."""
    found: list[tuple[str, int, str, bool]] = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        comments = {t.start[0] for t in tokenize.generate_tokens(io.StringIO(source).readline)
                    if t.type == tokenize.COMMENT and not t.string.startswith(_NOT_A_REASON)}

        def said(node: ast.stmt, first: int, comments: set[int] = comments, lines: list[str] = lines) -> bool:
            on_it = any(n in comments for n in range(node.lineno, (node.end_lineno or node.lineno) + 1))
            return on_it or (first - 1 in comments and lines[first - 2].lstrip().startswith("#"))

        def visit(node: ast.AST, in_function: bool, path: Path = path, said: Any = said) -> None:
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(node, field, None)
                if not isinstance(block, list):
                    continue
                first = 0  # the first line of the run of imports a statement belongs to
                for child in block:
                    if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                        first = 0
                        continue
                    if isinstance(child, ast.Import | ast.ImportFrom):
                        first = first or child.lineno
                        if in_function:
                            found.append((path.relative_to(root).as_posix(), child.lineno, ast.unparse(child),
                                          said(child, first)))
                    else:
                        first = 0
                    visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

        visit(ast.parse(source), False)
    return found


def test_every_function_level_import_says_why() -> None:
    unexplained = sorted((f, line, statement) for f, line, statement, reason in function_level_imports(PACKAGE)
                         if not reason)
    assert not unexplained, ("function-level import(s) without a comment saying why (what it keeps off the start-up "
                             f"path); move them to the top of their module, or say why: {unexplained}")


def test_the_import_reader_tells_a_reason_from_none(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text(
        "import json\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .b import B\n"
        "def f():\n    import csv\n"
        "def g():\n    # the export stack (~0.1 s): only when a page is written\n    import csv\n    import gzip\n"
        "def h():\n    import csv  # heavy: only for h\n"
        "def i():\n    import csv  # noqa: F401\n"
        "class C:\n    def m(self):\n        if True:\n            from . import b\n")
    got = {(line, statement): reason for _, line, statement, reason in function_level_imports(pkg)}
    assert got == {(6, "import csv"): False, (9, "import csv"): True, (10, "import gzip"): True,
                   (12, "import csv"): True, (14, "import csv"): False, (18, "from . import b"): False}
