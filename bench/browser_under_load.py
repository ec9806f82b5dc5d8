"""The browser suite twice back to back while two busy processes load both cores (issue 26 item 7).

Browser tests must wait on the state they need, never on a guessed delay: under load a guessed
delay is too short. Run: python bench/browser_under_load.py [pytest args]; the result goes to stdout
(recorded in bench/RESULTS.md).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _spin(stop: float) -> None:
    x = 0
    while time.time() < stop:
        x = (x * 31 + 7) % 1_000_003


def main() -> int:
    cores = os.cpu_count() or 2
    results = []
    for run in (1, 2):
        stop = time.time() + 3 * 3600
        load = [mp.Process(target=_spin, args=(stop,), daemon=True) for _ in range(cores)]
        for p in load:
            p.start()
        started = time.time()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/browser",
                               *sys.argv[1:]], cwd=ROOT, capture_output=True, text=True)
        took = time.time() - started
        for p in load:
            p.terminate()
        tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
        results.append((run, done.returncode, took, tail))
        print(f"run {run}: exit {done.returncode} in {took:.0f} s under {cores} busy processes: {tail}", flush=True)
        if done.returncode:
            print(done.stdout[-6000:])
    print(f"machine: {platform.platform()}, {cores} cores, Python {platform.python_version()}")
    return max(r[1] for r in results)


if __name__ == "__main__":
    sys.exit(main())
