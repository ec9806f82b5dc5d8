"""What a user installs: the wheel carries the built front end and the sample, and works on a machine
without Node.js (nothing is built at install or at run time)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STATIC = ["timeline.js", "details.js", "picker.js", "export.js", "theme.js", "timeline.css"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
                           "-q", "-w", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (whl,) = out.glob("neuron_widgets-*.whl")
    return whl


def test_the_wheel_carries_the_front_end_and_the_sample(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for f in STATIC:
        assert f"neuron_widgets/static/{f}" in names, f
    assert any(n.startswith("neuron_widgets/data/") and n.endswith(".parquet") for n in names)
    # Neither the TypeScript sources nor the front end's toolchain.
    assert not any(n.startswith(("js/", "tests/")) or "node_modules" in n for n in names)


def test_the_wheel_runs_without_node(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    # A PATH with this Python and nothing else: no node, no npm.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(bin_dir), "PYTHONPATH": str(site), "NEURON_WIDGETS_PROGRESS": "0"}
    assert shutil.which("node", path=env["PATH"]) is None
    script = (
        "import neuron_widgets as nw, pathlib\n"
        "from neuron_widgets.widgets import Timeline\n"
        f"assert pathlib.Path(nw.__file__).is_relative_to({str(site)!r}), nw.__file__\n"
        "p = nw.sample_profile()\n"
        "tl = Timeline(p)\n"
        "assert 'nw-timeline' in str(tl._esm), 'the front end bundle is not in the wheel'\n"
        f"nw.export_html({str(tmp_path / 'out.html')!r}, tl)\n"
        "print(len(p))\n")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) > 1000
    page = (tmp_path / "out.html").read_text()
    assert "nw-export" in page and len(page) > 100_000
