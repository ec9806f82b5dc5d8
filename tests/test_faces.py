"""Every package face (an __init__.py whose names are imported on first use, `_LAZY`) hands back what its
modules define: a face that names a function since renamed or moved fails here, not in a user's cell."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "neuron_widgets"


def lazy_faces(root: Path = PACKAGE) -> dict[str, list[str]]:
    """Package (dotted) -> the names of its `_LAZY` table, read from the source (nothing imported)."""
    out: dict[str, list[str]] = {}
    for init in sorted(root.rglob("__init__.py")):
        if "__pycache__" in init.parts:
            continue
        for node in ast.parse(init.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets) \
                    and isinstance(node.value, ast.Dict):
                parts = [root.name, *init.parent.relative_to(root).parts]
                out[".".join(parts)] = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    return out


FACES = lazy_faces()


def test_the_faces_are_found() -> None:
    # The check below would pass vacuously without faces; the package's own face is one.
    assert "neuron_widgets" in FACES and "Timeline" in FACES["neuron_widgets"]


def check_face(package: str, names: list[str]) -> None:
    face = importlib.import_module(package)
    for name in names:
        value = getattr(face, name)
        # A submodule of the same name would shadow the function once imported: a face never names one.
        assert not isinstance(value, ModuleType), f"{package}.{name} is a module"
        assert name in dir(face), f"{package}.{name} missing from dir()"


@pytest.mark.parametrize("package", sorted(FACES))
def test_every_name_of_a_face_resolves(package: str) -> None:
    check_face(package, FACES[package])


def test_a_broken_face_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "facepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from importlib import import_module\n"
        "_LAZY = {'kept': '.mod', 'gone': '.mod', 'mod': '.mod'}\n"
        "def __getattr__(name):\n"
        "    if name in _LAZY:\n"
        "        return getattr(import_module(_LAZY[name], __name__), name)\n"
        "    raise AttributeError(name)\n"
        "def __dir__():\n"
        "    return sorted(_LAZY)\n")
    (pkg / "mod.py").write_text("kept = 1\nimport sys\nmod = sys.modules[__name__]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert lazy_faces(pkg) == {"facepkg": ["kept", "gone", "mod"]}
    check_face("facepkg", ["kept"])
    with pytest.raises(AttributeError, match="gone"):
        check_face("facepkg", ["gone"])
    with pytest.raises(AssertionError, match="is a module"):
        check_face("facepkg", ["mod"])
