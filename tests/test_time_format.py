"""One way to write a duration: model/timefmt.py and js/src/common/time.ts give the same string for
the same number (the Summary, details panel and warnings in Python; the timeline, tooltips and export
in the browser)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from test_frontend_units import JS, _npx

from neuron_widgets.model.timefmt import duration, offset

# node reads the table as text so NaN and the infinities survive (JSON has no words for them).
_RUN = """
import { readFileSync } from "node:fs";
const m = await import(process.argv[1]);
const values = JSON.parse(readFileSync(0, "utf8")).map(Number);
process.stdout.write(JSON.stringify(values.map((v) => [m.formatDuration(v), m.formatTime(v)])));
"""


def _text(v: float) -> str:
    return "NaN" if v != v else "Infinity" if v == float("inf") else "-Infinity" if v == -float("inf") else repr(v)


def table() -> list[float]:
    """Every magnitude from sub-nanosecond to past float's hours, with the values that round across
    a unit's edge, exact halves (where Python's and JavaScript's default rounding part ways), the
    sixty-second and sixty-minute edges, and random numbers."""
    edges = [0.0, -0.0, 0.3, -0.3, 0.5, 1.5, 2.5, -2.5, 999.0, 999.4, 999.5, 999.95, 1000.0, 1125.0, 1005.0,
             9995.0, 99950.0, 999500.0, 999950.0, 999999.5, 59.94e9, 59.95e9, 59.996e9, 60e9, 90e9, 3599.9e9,
             3600e9, 36e12, 3600e9 * 999999.5, 3600e9 * 1e6, 1e20, 1e21, 5e304, 1.7976931348623157e308,
             5e-324, -1e15, float("nan"), float("inf"), -float("inf")]
    nice = [m * 10.0**e for e in range(-1, 19) for m in (1, 1.005, 1.125, 2.5, 9.995, 9.9995, 99.95, 99.995, 999.5,
                                                          999.95, 999.995)]
    rng = random.Random(39)
    rand = [rng.choice((1, -1)) * 10 ** rng.uniform(-2, 22) for _ in range(3000)]
    halves = [rng.randrange(1, 10**7) / 8 * 10.0 ** rng.randrange(0, 10) for _ in range(1000)]
    return edges + nice + [-v for v in nice] + rand + halves


@pytest.fixture(scope="module")
def time_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("timefmt") / "time.mjs"
    built = _npx("esbuild", str(JS / "src" / "common" / "time.ts"), "--bundle", "--format=esm", f"--outfile={out}")
    assert built.returncode == 0, built.stderr
    return out


def _node() -> str:
    node = shutil.which("node")
    if node is None:  # the build's Node: the wheel's (see build_frontend.node_tools)
        import importlib.util

        spec = importlib.util.spec_from_file_location("build_frontend", ROOT / "build_frontend.py")
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        node = mod.wheel_node()[0]
    return str(node)


def test_python_and_typescript_write_every_duration_alike(time_module: Path) -> None:
    values = table()
    out = subprocess.run([_node(), "--input-type=module", "-e", _RUN, time_module.as_uri()],
                         input=json.dumps([_text(v) for v in values]), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    ts = json.loads(out.stdout)
    differ = [(v, [duration(v), offset(v)], got) for v, got in zip(values, ts, strict=True)
              if [duration(v), offset(v)] != got]
    assert not differ, f"{len(differ)} of {len(values)} differ, e.g. (value, python, typescript): {differ[:5]}"


@pytest.mark.parametrize(("ns", "text"), [
    (0, "0 ns"), (-0.3, "0 ns"), (2.5, "3 ns"), (-2.5, "-3 ns"), (830, "830 ns"), (999.4, "999 ns"),
    (999.95, "1 µs"), (1125, "1.13 µs"), (1250, "1.25 µs"), (99_950, "100 µs"), (999_950, "1 ms"),
    (1_250_000, "1.25 ms"), (-1_500_000, "-1.5 ms"), (2.5e9, "2.5 s"), (59.996e9, "1 min"), (90e9, "1.5 min"),
    (3600e9, "1 h"), (1e15, "278 h"), (1e20, "2.78e7 h"), (float("nan"), "—"), (float("-inf"), "—"),
])
def test_duration_reads_in_the_unit_it_rounds_to(ns: float, text: str) -> None:
    assert duration(ns) == text


@pytest.mark.parametrize(("ns", "text"), [
    (430, "430 ns"), (392_268, "392.27 µs"), (29_812_345, "29.812 ms"), (2.5e9, "2.5 s"), (999_999.996, "1 ms"),
    (59.99996e9, "1 min"), (1e15, "277.78 h"),
])
def test_offset_has_five_significant_digits(ns: float, text: str) -> None:
    assert offset(ns) == text
