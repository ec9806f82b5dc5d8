"""The TypeScript side's own checks, run from pytest so the README's one test command covers them."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import ROOT

JS = ROOT / "js"


def _npx(*args: str) -> subprocess.CompletedProcess[str]:
    npx = shutil.which("npx")
    assert npx, "Node.js (npx) is needed to test the front end"
    assert (JS / "node_modules").exists(), "js/node_modules is missing: run `npm ci` in js/ (.ci/run does)"
    return subprocess.run([npx, *args], cwd=JS, capture_output=True, text=True, timeout=300)


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
