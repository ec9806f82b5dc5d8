"""A clone with nothing beside it runs the tests (issue 35 item 12): the real traces are in
tests/data/traces, not in ../shared. A trace missing from there fails at once and names the file
(issue 26 item 7), rather than waiting or skipping silently."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# Tests over real traces of each kind: Kineto (HTA's), a whole folder of them (param's 8 ranks), and
# every trace listed (catapult's and the rest).
REAL = ["test_chrome_fast.py", "test_chrome_reader.py"]
SELECT = "kineto_traces_take_the_fast_road or every_real_trace_loads"


def clone_tests(tmp_path: Path, without: str | None = None) -> Path:
    """This project's tests copied to `tmp_path/project/tests`, with no ../shared beside the project
    (and, when asked, one folder of the traces left out)."""
    clone = tmp_path / "project" / "tests"
    ignore = ["browser", "artifacts", "__pycache__"]
    shutil.copytree(TESTS, clone, ignore=shutil.ignore_patterns(*ignore))
    if without:
        shutil.rmtree(clone / "data" / "traces" / without)
    assert not (tmp_path / "shared").exists() and not (tmp_path / "project" / ".." / "shared").exists()
    return clone


def run_there(clone: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(clone),
                           *[str(clone / f) for f in REAL], *args],
                          capture_output=True, text=True, timeout=600, cwd=clone,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return done, time.monotonic() - started


def test_a_clone_with_nothing_beside_it_passes_the_real_trace_tests(tmp_path: Path) -> None:
    clone = clone_tests(tmp_path)
    done, _ = run_there(clone, "-k", SELECT)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    # Every trace of tests/data/traces was read: none is a failing "<... is missing>" placeholder.
    listed = len([p for p in (clone / "data" / "traces").glob("*/*.json*")])
    assert listed >= 20, listed
    assert f"{listed + 1} passed" in out, out[-1500:]  # and the Kineto test
    assert "skipped" not in out and "missing" not in out, out[-1500:]


def test_a_test_without_its_trace_fails_at_once_naming_it(tmp_path: Path) -> None:
    clone = clone_tests(tmp_path, without="hta")
    done, took = run_there(clone, "-k", "kineto_traces_take_the_fast_road")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    assert f"{clone}/data/traces/hta/nccl_data.json.gz is missing" in out, out[-3000:]
    assert "1 failed" in out and "skipped" not in out, out[-1500:]
    assert took < 120, took
