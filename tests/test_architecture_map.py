"""docs/ARCHITECTURE.md's map cannot drift: every module of the package and of the front end has its
line there, and every file or folder the map names exists.

The map is the page's fenced block that starts with `neuron_widgets/`, a tree: a name ending in `/` opens a folder, the names
indented under it are its entries (`a.py, b.py` names several on one line), deeper-indented lines
that do not start with a name go on describing the line above.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

DOC = ROOT / "docs" / "ARCHITECTURE.md"
# A line's leading names: files with an extension or folders ending in "/", separated by commas.
NAMES = re.compile(r"^( *)((?:[\w.-]+/)+|[\w.-]+\.\w+)((?:, (?:[\w.-]+\.\w+|(?:[\w.-]+/)+))*)(?=\s|$)")
BUILT = {"neuron_widgets/static/"}  # made by the front-end build, not in git


def map_block(text: str) -> list[str]:
    """The fenced block that starts with `neuron_widgets/` (the page's picture is another block)."""
    blocks = [b.splitlines()[1:] for b in text.split("```")[1::2]]
    maps = [b for b in blocks if b and b[0].startswith("neuron_widgets/")]
    assert len(maps) == 1, "docs/ARCHITECTURE.md needs one fenced map starting with neuron_widgets/"
    return maps[0]


def listed(lines: list[str]) -> set[str]:
    """Every path the map names, relative to the repository (folders end in "/")."""
    out: set[str] = set()
    folders: list[tuple[int, str]] = []  # (indent, path) of the open folders, outermost first
    for line in lines:
        m = NAMES.match(line)
        if not m:
            continue
        indent = len(m.group(1))
        while folders and folders[-1][0] >= indent:
            folders.pop()
        base = folders[-1][1] if folders else ""
        names = [m.group(2)] + [n for n in m.group(3).split(", ") if n]
        for name in names:
            out.add(base + name)
        if len(names) == 1 and names[0].endswith("/"):
            folders.append((indent, base + names[0]))
    return out


def modules() -> set[str]:
    """The package's Python modules and the front end's TypeScript and CSS sources."""
    py = {p.relative_to(ROOT).as_posix() for p in (ROOT / "neuron_widgets").rglob("*.py")
          if not {"static", "data", "__pycache__"} & set(p.relative_to(ROOT).parts)}
    js = {p.relative_to(ROOT).as_posix() for p in (ROOT / "js" / "src").rglob("*") if p.suffix in (".ts", ".css")}
    return py | js


def test_the_map_reads_names_under_their_folders() -> None:
    lines = ["pkg/", "  a.py         what a holds", "  sub/", "    b.py, c.py  two", "                 more about them",
             "  d.py", "top.py"]
    assert listed(lines) == {"pkg/", "pkg/a.py", "pkg/sub/", "pkg/sub/b.py", "pkg/sub/c.py", "pkg/d.py", "top.py"}


def test_every_module_has_its_line() -> None:
    missing = sorted(modules() - listed(map_block(DOC.read_text(encoding="utf-8"))))
    assert not missing, f"docs/ARCHITECTURE.md's map misses {len(missing)} module(s): {missing}"


def test_every_name_in_the_map_exists() -> None:
    gone = sorted(p for p in listed(map_block(DOC.read_text(encoding="utf-8")))
                  if p not in BUILT and not (ROOT / p).exists())
    assert not gone, f"docs/ARCHITECTURE.md's map names what is not there: {gone}"


def test_the_page_points_inside_the_repository() -> None:
    """Links and paths out of the repository (../shared, a sibling checkout) are dead for a reader of a clone."""
    text = DOC.read_text(encoding="utf-8")
    outside = re.findall(r"(?:\.\./[\w./-]+|/work/[\w./-]+)", text)
    assert not outside, outside


def test_the_map_is_checked_on_real_paths() -> None:
    # The checks above would pass vacuously if the map or the module walk came back empty.
    assert len(modules()) > 100 and "neuron_widgets/model/profile.py" in modules()
    assert isinstance(DOC, Path) and "neuron_widgets/model/profile.py" in listed(map_block(DOC.read_text("utf-8")))
