"""mypy over the scope `[tool.mypy]` configures (pyproject.toml), so the README's test command checks types too."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_passes() -> None:
    # From the root, so mypy reads [tool.mypy] and checks its `files`; its cache keeps a rerun quick.
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"mypy found type errors:\n{done.stdout}{done.stderr}"
    # A scope that names nothing would pass vacuously: the configured files must have been checked.
    checked = re.search(r"Success: no issues found in (\d+) source files", done.stdout)
    assert checked and int(checked[1]) > 0, done.stdout


def test_the_core_folders_are_checked_whole() -> None:
    # Issue 39: strict types for the model, the job, the readers and the analyses, every module of them.
    config = (ROOT / "pyproject.toml").read_text()
    mypy = config[config.index("[tool.mypy]"):]
    files = mypy[mypy.index("files = ["):].split("]", 1)[0]
    for folder in ("model", "job", "readers", "analysis"):
        assert f'"neuron_widgets/{folder}"' in files, folder
