from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from neuron_widgets.cli import main


def test_info_sample(capsys) -> None:
    assert main(["info", "--sample"]) == 0
    out = capsys.readouterr().out
    assert "format       neuron-parquet" in out
    # The cores the Summary counts: nc_idx is process-local, so (instance, process, nc_idx).
    from neuron_widgets import analysis, sample_profile

    cores = len(analysis.temporal_breakdown(sample_profile()))
    assert cores == 8
    assert "neuron_hw" in out and f"NeuronCores  {cores}\n" in out
    assert "events without an end time" in out


def test_info_json_with_filters(capsys) -> None:
    assert main(["info", "--sample", "--json", "--event-types", "hardware", "--neuron-cores", "0"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert set(s["events_per_source"]) == {"neuron_hw"}
    assert {c for *_, c in s["neuron_cores"]} == {0}
    assert len(s["neuron_cores"]) == 4  # core 0 of each of the 4 processes


def test_info_bad_path(capsys, tmp_path: Path) -> None:
    assert main(["info", str(tmp_path / "missing")]) == 1
    err = capsys.readouterr().err
    assert "missing: no such file or directory" in err


def test_sample_command_and_module_entry(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "neuron_widgets", "sample", str(tmp_path / "s"), "--events", "2000"],
                         capture_output=True, text=True, check=True)
    assert "wrote a sample profile" in out.stdout
    info = subprocess.run([sys.executable, "-m", "neuron_widgets", "info", str(tmp_path / "s")],
                          capture_output=True, text=True, check=True)
    assert "events       2," in info.stdout
