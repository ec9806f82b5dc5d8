"""Issue 35.10: `import neuron_widgets as nw; nw.analysis.across(...)` raised AttributeError in a fresh process
(the README writes `nw.analysis.device_breakdown`). Every subpackage is an attribute of the package, imported when first
asked for, so a bare `import neuron_widgets` costs no more than before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = sorted(p.parent.name for p in (ROOT / "neuron_widgets").glob("*/__init__.py"))


def fresh(code: str) -> dict:
    """Run `code` in a new interpreter (nothing imported before it) and return the JSON it prints last."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_subpackages_are_found() -> None:
    assert {"analysis", "export", "job", "summary", "widgets"} <= set(SUBPACKAGES)


def test_each_subpackage_is_an_attribute_in_a_fresh_process() -> None:
    got = fresh(
        "import json, sys, types\n"
        "import neuron_widgets as nw\n"
        f"names = {SUBPACKAGES!r}\n"
        "before = sorted(n for n in names if 'neuron_widgets.' + n in sys.modules)\n"
        "ok = {n: isinstance(getattr(nw, n), types.ModuleType) and getattr(nw, n).__name__ == 'neuron_widgets.' + n"
        " for n in names}\n"
        "print(json.dumps({'before': before, 'ok': ok, 'dir': sorted(set(names) & set(dir(nw)))}))\n")
    assert all(got["ok"].values()), got["ok"]
    assert got["dir"] == SUBPACKAGES
    # No start-up cost: the heavy subpackages are not imported by `import neuron_widgets` itself.
    assert not {"analysis", "export", "job", "summary", "widgets"} & set(got["before"])


def test_the_readmes_nw_analysis_calls_work_in_a_fresh_process(tmp_path: Path) -> None:
    sample = tmp_path / "trace.json"
    sample.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": 50, "args": {"error": "boom"}},
        {"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 10, "dur": 20}]}))
    got = fresh(
        "import json\n"
        "import neuron_widgets as nw\n"
        f"p = nw.load_profile({str(sample)!r}, cache=False)\n"
        "eh = nw.analysis.errors_and_hangs(p)\n"
        "print(json.dumps({'across': callable(nw.analysis.across), 'device': nw.analysis.device_breakdown.__name__,"
        " 'rows': len(eh)}))\n")
    assert got["across"] and got["device"] == "neuron_widgets.analysis.device_breakdown" and got["rows"] == 1


def test_an_unknown_name_still_says_so() -> None:
    got = fresh(
        "import json\n"
        "import neuron_widgets as nw\n"
        "try:\n"
        "    nw.no_such_thing\n"
        "    msg = ''\n"
        "except AttributeError as e:\n"
        "    msg = str(e)\n"
        "print(json.dumps({'msg': msg}))\n")
    assert "no_such_thing" in got["msg"]
