"""The public API, and imports pointing one way between the package's layers."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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
    probe.write_text("def f():\n    from ..readers.device import load_device_trace\n")
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
