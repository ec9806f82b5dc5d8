"""Issue 26 item 7: on a clone without ../shared beside it, a test that needs a real trace fails at
once and names the file, instead of waiting or skipping silently."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_a_test_without_its_trace_fails_at_once_naming_it(tmp_path: Path) -> None:
    clone = tmp_path / "project" / "tests"  # no ../shared beside this project
    shutil.copytree(TESTS, clone, ignore=shutil.ignore_patterns("browser", "artifacts", "__pycache__"))
    assert not (tmp_path / "shared").exists()
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(clone),
                           str(clone / "test_chrome_fast.py"), str(clone / "test_chrome_reader.py"),
                           "-k", "kineto_traces_take_the_fast_road or every_real_trace_loads"],
                          capture_output=True, text=True, timeout=300, cwd=clone,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    took = time.monotonic() - started
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    missing = tmp_path / "shared" / "data" / "traces"
    assert f"{missing}/hta/nccl_data.json.gz is missing" in out, out[-3000:]
    assert "2 failed" in out and "skipped" not in out, out[-1500:]  # the listed traces fail too, not vanish
    assert took < 120, took
