"""Raw capture directories (with a fake neuron-explorer on PATH) and several inputs as one profile."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from conftest import trace, trace_files

import neuron_widgets as nw

FAKE_CLI = """#!{python}
import sys, pathlib
args = sys.argv[1:]
log = pathlib.Path({log!r})
log.write_text(log.read_text() + " ".join(args) + "\\n" if log.exists() else " ".join(args) + "\\n")
if {fail!r}:
    print("error: NTFF version 9 not supported", file=sys.stderr)
    sys.exit(3)
assert args[:1] == ["view"] and "--output-format" in args and "parquet" in args
out = pathlib.Path(args[args.index("--data-path") + 1]) / "profiles" / "global" / "capture@latest"
import neuron_widgets
neuron_widgets.write_sample(out, events=2000, seed=7)
"""


def capture(root: Path, *, ntff: bytes = b"\x01" * 64, neff: bool = True, trace_json: bool = True) -> Path:
    d = root / "i-0abc_pid_4242" / "20261122T101010"
    d.mkdir(parents=True)
    for name in ("ntrace.pb", "trace_info.pb", "cpu_util.pb", "host_mem.pb"):
        (d / name).write_bytes(b"\x0a\x02pb")
    (d / "profile_nc_0_session_0.ntff").write_bytes(ntff)
    if neff:
        (d / "neff_5c1f9a77.neff").write_bytes(b"NEFF")
    if trace_json:
        (d / "trace.json").write_text(json.dumps({"traceEvents": [
            {"ph": "X", "name": "forward", "pid": 4242, "tid": 1, "ts": 1.7e15, "dur": 10, "cat": "cpu_op"}]}))
    return root


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def install(fail: bool = False) -> Path:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir(exist_ok=True)
        log = tmp_path / "cli.log"
        exe = bin_dir / "neuron-explorer"
        exe.write_text(FAKE_CLI.format(python=sys.executable, log=str(log), fail=fail))
        exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("NEURON_WIDGETS_CACHE", str(tmp_path / "cache"))
        return log

    return install


def test_capture_converted_once_and_cached(tmp_path: Path, fake_cli) -> None:
    log = fake_cli()
    root = capture(tmp_path / "cap")
    p = nw.load_profile(root)
    assert log.read_text().count("view -d") == 1
    assert "--output-format parquet" in log.read_text()
    # The system profile and the framework trace are one profile, inputs kept apart.
    assert set(p.core.column("input").unique().to_pylist()) == {"system profile", "i-0abc_pid_4242/20261122T101010/trace.json"}
    assert "neuron_hw" in p.core.column("trace_event_source").unique().to_pylist()
    assert "forward" in p.core.column("name").unique().to_pylist()
    again = nw.load_profile(root)
    assert len(again) == len(p)
    assert log.read_text().count("view -d") == 1  # served from the cache
    # A changed capture is converted again.
    (next(root.rglob("ntrace.pb"))).write_bytes(b"\x0a\x03pbb")
    nw.load_profile(root)
    assert log.read_text().count("view -d") == 2


def test_capture_conversion_failure_is_reported(tmp_path: Path, fake_cli) -> None:
    fake_cli(fail=True)
    with pytest.raises(nw.ProfileError, match=r"neuron-explorer failed \(exit 3\): error: NTFF version 9 not supported"):
        nw.load_profile(capture(tmp_path / "cap"))


def test_capture_without_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    root = capture(tmp_path / "cap")
    p = nw.load_profile(root)  # the framework trace still loads
    assert p.core.column("name").to_pylist() == ["forward"]
    assert any(f"neuron-explorer view -d {root} --output-format parquet" in k for k in p.warnings)
    bare = capture(tmp_path / "bare", trace_json=False)
    with pytest.raises(nw.ProfileError, match=rf"is a raw Neuron capture \(4 \*\.pb, 1 \*\.ntff, 1 \*\.neff\) and "
                                              rf"`neuron-explorer` is not installed.*Run `neuron-explorer view -d {bare}"):
        nw.load_profile(bare)
    # Without the CLI, the signs of a failed capture are said at once, not after a conversion fails.
    zero = capture(tmp_path / "zero", ntff=b"", neff=False, trace_json=False)
    with pytest.raises(nw.ProfileError) as err:
        nw.load_profile(zero)
    text = str(err.value)
    assert "0 bytes (no execution was captured" in text and "neff_cache_dir" in text
    assert f"neuron-explorer view -d {zero} --output-format parquet" in text


def test_failed_capture_signs(tmp_path: Path, fake_cli) -> None:
    fake_cli()
    p = nw.load_profile(capture(tmp_path / "zero", ntff=b""))
    assert any("0 bytes (no execution was captured, usually a warm-up problem" in k for k in p.warnings)
    p = nw.load_profile(capture(tmp_path / "noneff", neff=False))
    assert any("without their .neff" in k and "neff_cache_dir" in k for k in p.warnings)
    only_pb = tmp_path / "pbonly" / "i-0abc_pid_1"
    only_pb.mkdir(parents=True)
    (only_pb / "ntrace.pb").write_bytes(b"pb")
    p = nw.load_profile(tmp_path / "pbonly")
    notes = [k for k in p.warnings if "system profile only" in k]
    assert len(notes) == 1 and p.warnings[notes[0]] == 1
    junk = tmp_path / "junk" / "i-0abc_pid_1"
    junk.mkdir(parents=True)
    (junk / "model.ntff").write_bytes(b"x")
    with pytest.raises(nw.ProfileError, match=r"holds no system trace \(ntrace.pb\) and no trace.json \(1 \*\.ntff\)"):
        nw.load_profile(tmp_path / "junk")


def test_directory_of_ranks_is_one_profile() -> None:
    p = nw.load_profile(trace("param-dlrm-8rank"))
    assert sorted(p.core.column("instance_id").unique().to_pylist()) == [f"rank{i}" for i in range(8)]
    assert len(p.core.column("input").unique()) == 8
    singles = [nw.load_profile(f) for f in trace_files("param-dlrm-8rank")]
    assert len(p) == sum(len(s) for s in singles)
    ranks = trace_files("param-dlrm-8rank")
    assert p.metadata["clock_alignment"] == {f.name: "wall clock" for f in ranks}
    # Ids collided across ranks: renumbered, originals kept, details still reachable per input.
    ids = p.core.column("id").to_numpy()
    assert len(set(ids.tolist())) == len(ids)
    by_name = {Path(s.source).name: s for s in singles}
    for row in (0, len(p) // 2, len(p) - 1):
        e = p.event(row=row)
        src = by_name[e["input"]].event(e["source_id"])
        assert (e["name"], e["start_ts"]) == (src["name"], src["start_ts"])
        assert e["extra_attributes_json"] == src["extra_attributes_json"]
    assert {t.split("/")[0] for t in p.tracks("instance")["label"]} == {f"rank{i}" for i in range(8)}


def test_list_of_paths_with_a_system_profile(sample_dir: Path) -> None:
    kineto = trace("hta/trace_filter_sampled_rank-0.json.gz")
    p = nw.load_profile([sample_dir, kineto], event_types="^kbl_*")
    assert p.format == "chrome-json+neuron-parquet"
    assert "kbl_exec_wait" not in p.core.column("name").unique().to_pylist()
    assert set(p.metadata["clock_alignment"].values()) == {"wall clock"}
    assert len(p.device_profiles) == 16
    assert len(p.cpu_usage) > 0
    # Lazy columns of both inputs line up with their rows.
    table = p.table
    names = table.column("name").to_pylist()
    attrs = table.column("extra_attributes_json").to_pylist()
    assert all('"model_name"' in a for n, a in zip(names, attrs, strict=True) if n == "nc_exec_running")


def test_relative_clocks_are_reported(tmp_path: Path, sample_dir: Path) -> None:
    rel = tmp_path / "relative.json"
    rel.write_text(json.dumps([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 12.5, "dur": 3}]))
    p = nw.load_profile([sample_dir, rel])
    assert p.metadata["clock_alignment"]["relative.json"] == "relative"
    assert any("relative timestamps cannot be aligned" in k and "relative.json" in k for k in p.warnings)


def test_kineto_base_time_aligns_ranks(tmp_path: Path) -> None:
    # Each rank counts ts from its own base: once based, the two launches are 2 us apart, not 10 s.
    files = []
    for rank, (base, ts) in enumerate(((1_743_521_598_000_000_000, 5_000_000.0), (1_743_521_608_000_000_000, 2.0))):
        f = tmp_path / f"rank{rank}.json"
        f.write_text(json.dumps({"baseTimeNanoseconds": base, "distributedInfo": {"rank": rank}, "traceEvents": [
            {"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": ts, "dur": 1.5},
            {"ph": "C", "name": "mem", "pid": 1, "ts": ts, "args": {"used": 1}}]}))
        files.append(f)
    p = nw.load_profile(files)
    starts = dict(zip(p.core.column("instance_id").to_pylist(), p.core.column("start_ts").to_pylist(), strict=True))
    assert starts == {"rank0": 1_743_521_603_000_000_000, "rank1": 1_743_521_608_000_002_000}
    assert set(p.metadata["clock_alignment"].values()) == {"wall clock"}
    assert sorted(p.counter("counters")["timestamp"]) == sorted(starts.values())
