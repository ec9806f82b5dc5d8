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
# Real traces recorded by other tools, copied into the project with their licences (see the README
# there), so a clone with nothing beside it runs every test.
TRACES = Path(__file__).resolve().parent / "data" / "traces"


MISSING = "is missing: the tests read real traces from tests/data/traces (see its README)"


def trace(rel: str) -> Path:
    """A real trace (or a folder of them) from tests/data/traces; a test without it fails at once, naming it."""
    path = TRACES / rel
    if not path.exists():
        pytest.fail(f"{path} {MISSING}", pytrace=False)
    return path


def trace_files(rel: str, pattern: str = "*.json.gz") -> list[Path]:
    """The files of a real multi-file trace, in order; fails at once when there are none."""
    found = sorted(trace(rel).glob(pattern))
    if not found:
        pytest.fail(f"{TRACES / rel}/{pattern} matches no file: {MISSING}", pytrace=False)
    return found


def traces_listed(pattern: str) -> list[str]:
    """Real traces to parametrize over; where tests/data/traces is absent, one entry that fails saying so
    (an empty list would skip silently)."""
    found = sorted(p.relative_to(TRACES).as_posix() for p in TRACES.glob(pattern))
    return found or [f"<{TRACES} is missing>"]


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nw.write_sample(tmp_path_factory.mktemp("sample") / "profile", events=20_000, seed=0)


@pytest.fixture(scope="session")
def sample(sample_dir: Path) -> nw.Profile:
    return nw.load_profile(sample_dir)
