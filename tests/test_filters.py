from __future__ import annotations

import pytest

import neuron_widgets as nw
from neuron_widgets.model.filters import NamePattern, parse_cores, parse_time

NAMES = ["nc_exec_running", "cc_running", "cc_exec_barrier", "nrt_execute", "kbl_exec_pre", "numerical_err", "aten::mm"]


def allowed(spec: str) -> set[str]:
    keep = NamePattern.parse(spec).allowed(NAMES)
    return {n for n, k in zip(NAMES, keep, strict=True) if k}


def test_event_type_syntax() -> None:
    assert allowed("hardware") == {"nc_exec_running", "cc_running", "cc_exec_barrier", "numerical_err"}
    assert allowed("software") == {"nrt_execute", "kbl_exec_pre", "aten::mm"}
    assert allowed("hardware,^cc_exec_barrier") == {"nc_exec_running", "cc_running", "numerical_err"}
    assert allowed("^cc_*") == set(NAMES) - {"cc_running", "cc_exec_barrier"}
    assert allowed("nrt_execute,kbl_*") == {"nrt_execute", "kbl_exec_pre"}
    assert allowed("nrt") == set()  # names match exactly
    assert allowed("aten::*") == {"aten::mm"}


def test_core_syntax() -> None:
    assert parse_cores("0") == {0}
    assert parse_cores("0,2,4") == {0, 2, 4}
    assert parse_cores("0-3") == {0, 1, 2, 3}
    assert parse_cores(" 1, 5-6 ") == {1, 5, 6}
    assert parse_cores([3, 4]) == {3, 4}
    with pytest.raises(ValueError, match="runs backwards"):
        parse_cores("3-1")
    with pytest.raises(ValueError, match="cannot read NeuronCore filter 'x'"):
        parse_cores("0,x")
    with pytest.raises(ValueError, match="cannot read NeuronCore filter '²'"):
        parse_cores("²")


def test_time_syntax() -> None:
    assert parse_time("12.5ms", 1000) == 12_501_000
    assert parse_time("40us", 0) == 40_000
    assert parse_time("3s", 5) == 3_000_000_005
    assert parse_time(123, 10**18) == 123
    assert parse_time("1772323200000000000", 0) == 1_772_323_200_000_000_000
    with pytest.raises(ValueError, match="cannot read 'soon' as a time"):
        parse_time("soon", 0)
    with pytest.raises(ValueError, match="cannot read '²ms' as a time"):
        parse_time("²ms", 0)


def test_profile_filter(sample: nw.Profile) -> None:
    hw = sample.filter(event_types="hardware")
    assert set(hw.core.column("name").unique().to_pylist()) <= {"nc_exec_running", "cc_running", "cc_exec_barrier",
                                                                "timestamp_sync_point", "numerical_err"}
    nc1 = sample.filter(neuron_cores="1")
    cores = set(nc1.core.column("nc_idx").drop_null().unique().to_pylist())
    assert cores == {1}
    # Events with no core stay (framework ops are not on a core).
    assert "framework" in nc1.core.column("trace_event_source").unique().to_pylist()
    win = sample.filter(time_range=("10ms", "11ms"))
    t0 = sample.origin_ts + 10_000_000
    s, e = win.core.column("start_ts").to_numpy(), win.core.column("end_ts").to_numpy()
    assert ((s < t0 + 1_000_000) & ((e > t0) | (s >= t0))).all()
    assert len(win) < len(sample) / 5
    # Filtering keeps the lazy columns aligned with the surviving rows.
    attrs = win.column("extra_attributes_json").to_pylist()
    names = win.core.column("name").to_pylist()
    for n, a in zip(names, attrs, strict=True):
        if n == "nc_exec_running":
            assert '"model_name"' in a
    # Relative times of a filtered view still count from the original profile's start.
    assert win.origin_ts == sample.origin_ts
    assert len(win.filter(time_range=("10ms", "11ms"))) == len(win)
    assert len(win.hbm_usage) < len(sample.hbm_usage)


def test_instance_filter(sample: nw.Profile) -> None:
    inst = sorted(sample.core.column("instance_id").unique().to_pylist())
    one = sample.filter(instances=[inst[0]])
    assert one.core.column("instance_id").unique().to_pylist() == [inst[0]]
    assert len(sample.filter(instances=inst[1][:6] + "*")) == len(sample.filter(instances=[inst[1]]))
    assert set(one.cpu_usage["instance_id"]) == {inst[0]}
