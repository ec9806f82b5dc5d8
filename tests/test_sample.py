from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

import neuron_widgets as nw
from neuron_widgets.sample import sample_path


def test_deterministic(tmp_path: Path) -> None:
    a = nw.write_sample(tmp_path / "a", events=5000, seed=3)
    b = nw.write_sample(tmp_path / "b", events=5000, seed=3)
    c = nw.write_sample(tmp_path / "c", events=5000, seed=4)
    for f in sorted(p.name for p in a.glob("*.parquet")):
        assert pq.read_table(a / f).equals(pq.read_table(b / f)), f
    assert not pq.read_table(a / "SystemProfileEvents.parquet").equals(pq.read_table(c / "SystemProfileEvents.parquet"))


def test_bundled_sample_is_current(tmp_path: Path) -> None:
    fresh = nw.write_sample(tmp_path / "fresh")
    bundled = sample_path()
    devices = sorted(str(p.relative_to(fresh)) for p in (fresh / "device_profiles").glob("*/*.parquet"))
    assert devices
    for f in ("SystemProfileEvents.parquet", "DeviceProfileList.parquet", "CpuUsage.parquet", *devices):
        assert pq.read_table(bundled / f).equals(pq.read_table(fresh / f)), f"{f}: regenerate with " \
            "`neuron-widgets sample neuron_widgets/data/sample`"
    assert len(nw.sample_profile()) == len(nw.load_profile(fresh))


def test_size_scales(tmp_path: Path) -> None:
    for n in (3000, 60_000):
        p = nw.load_profile(nw.write_sample(tmp_path / str(n), events=n))
        assert 0.8 * n < len(p) < 1.2 * n


def test_what_the_sample_holds(sample: nw.Profile, sample_dir: Path) -> None:
    t = sample.table.to_pandas()
    assert t["instance_id"].nunique() == 2
    assert t[["instance_id", "process_id"]].drop_duplicates().shape[0] == 4
    assert set(t["trace_event_source"]) == {"framework", "neuron_rt", "neuron_hw"}
    for name in ("nc_exec_running", "nrt_execute", "cc_running", "cc_exec_barrier", "timestamp_sync_point",
                 "kbl_exec_wait", "dmem_buf_copyin", "dmem_buf_copyout"):
        assert (t["name"] == name).any(), name
    assert (t["name"] == "numerical_err").sum() == 1
    assert t["incomplete"].sum() == 3
    # A framework op's flow ids reach nrt_execute and nc_exec_running on every core.
    fw = t[(t["name"] == "forward") & t["flow_id"].notna()].iloc[0]
    linked = t[t["flow_id"].apply(lambda ids: ids is not None and bool(set(ids) & set(fw["flow_id"])))]
    assert set(linked["name"]) == {"forward", "nrt_execute", "nc_exec_running"}
    assert linked[linked["name"] == "nc_exec_running"]["nc_idx"].nunique() == 2
    # Sync points carry both clocks.
    sync = sample.event(int(t[t["name"] == "timestamp_sync_point"]["id"].iloc[0]))["args"]
    assert sync["cpu_timestamp_ns"] - sync["nc_timestamp_ns"] == 3600 * 10**9
    # Device profiles exist on disk for every DeviceProfileList row.
    for name in sample.device_profiles["device_profile_name"]:
        d = sample_dir / "device_profiles" / name
        assert pq.read_table(d / "Instruction.parquet").num_rows > 100
        assert pq.read_table(d / "ExecutionInfo.parquet").num_rows == 1
    assert np.isin(["0", "average"], sample.cpu_usage["cpu_id"].unique()).all()


def test_write_kineto_takes_a_str_path_as_the_other_writers_do(tmp_path) -> None:
    from neuron_widgets.sample.kineto import write_kineto

    paths = write_kineto(str(tmp_path / "kin"), ranks=2, steps=2)
    assert [p.name for p in paths] == ["rank-0.pt.trace.json.gz", "rank-1.pt.trace.json.gz"]
    assert all(p.stat().st_size > 0 for p in paths)
