"""A folder of inputs: every file a reader takes is loaded, whatever its name; what is left out is named."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import neuron_widgets as nw


def _chrome(prefix: str, n: int) -> str:
    return json.dumps({"traceEvents": [{"ph": "X", "name": f"{prefix}{i}", "ts": i * 10, "dur": 5, "pid": 1, "tid": 1}
                                       for i in range(n)]})


def _load(path: Path) -> nw.Profile:
    return nw.load_profile(path, cache=False, prepare=False)


@pytest.fixture()
def pftrace(tmp_path: Path) -> Path:
    src = tmp_path / "src.json"
    src.write_text(_chrome("p", 7))
    out = tmp_path / "made" / "trace.pftrace"
    out.parent.mkdir()
    nw.export_perfetto(_load(src), out)
    return out


def test_folder_of_one_pftrace_loads_it(tmp_path: Path, pftrace: Path) -> None:
    folder = tmp_path / "one"
    folder.mkdir()
    pftrace.rename(folder / "trace.pftrace")
    p = _load(folder)
    assert len(p) == 7 and p.format == "perfetto" and not p.warnings


def test_folder_of_several_inputs_loads_pftrace_too(tmp_path: Path, pftrace: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "rank0.json").write_text(_chrome("a", 3))
    (folder / "rank1.json.gz").write_bytes(gzip.compress(_chrome("b", 4).encode()))
    pftrace.rename(folder / "trace.pftrace")
    (pftrace.parent / "trace.pftrace").write_bytes((folder / "trace.pftrace").read_bytes())
    (pftrace.parent / "trace.pftrace").rename(folder / "renamed.trace")  # a trace is known by its content
    p = _load(folder)
    assert len(p) == 3 + 4 + 7 + 7
    assert sorted(set(p.events["input"])) == ["rank0.json", "rank1.json.gz", "renamed.trace", "trace.pftrace"]
    assert not p.warnings


def test_folder_names_what_it_left_out(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(_chrome("a", 2))
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "cut.json").write_text('{"traceEvents": [{"ph": "X", "na')
    (tmp_path / "device.json").write_text(json.dumps({"instruction": [], "summary": {}}))
    (tmp_path / "device_profile_model_1.json").write_text("{}")  # a system profile's device profile: not an input
    p = _load(tmp_path)
    assert list(p.events["name"]) == ["a0", "a1"]
    lines = "\n".join(p.warnings.lines())
    assert "files no reader takes, left out (not a trace format neuron-widgets reads): 1 (e.g. notes.txt)" in lines
    assert "inputs that could not be read, left out: 1 (e.g. cut.json: is not valid JSON" in lines
    assert "left out (a device profile: open it with load_device_trace): 1 (e.g. device.json)" in lines
    assert "device_profile_model_1" not in lines


def test_folder_whose_inputs_all_fail_says_why(tmp_path: Path) -> None:
    (tmp_path / "cut.json").write_text('{"traceEvents": [{"ph": "X", "na')
    with pytest.raises(nw.ProfileError, match=r"cut\.json: is not valid JSON"):
        _load(tmp_path)


def test_a_list_of_one_pftrace_loads(tmp_path: Path, pftrace: Path) -> None:
    assert len(nw.load_profile([pftrace], cache=False, prepare=False)) == 7  # was a TypeError


def test_folder_of_one_pftrace_takes_no_device_files_from_its_parent(tmp_path: Path, pftrace: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    pftrace.rename(folder / "trace.pftrace")
    (tmp_path / "device_profile_model_1.pftrace").write_bytes(b"")  # beside the folder, not in it
    assert len(_load(folder).device_profiles) == 0
