from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

import neuron_widgets as nw

os.environ.setdefault("NEURON_WIDGETS_PROGRESS", "0")
# The parse cache of this run only: a developer's own cache neither serves nor receives test traces.
os.environ["NEURON_WIDGETS_CACHE"] = tempfile.mkdtemp(prefix="neuron-widgets-test-cache-")

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT.parent / "shared" / "data" / "traces"


def trace(rel: str) -> Path:
    path = TRACES / rel
    assert path.exists(), f"real trace {path} is missing: tests expect ../shared/ beside the project"
    return path


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nw.write_sample(tmp_path_factory.mktemp("sample") / "profile", events=20_000, seed=0)


@pytest.fixture(scope="session")
def sample(sample_dir: Path) -> nw.Profile:
    return nw.load_profile(sample_dir)
