from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import neuron_widgets as nw
from neuron_widgets.model.schema import EVENT_COLUMNS


def _events(sample_dir: Path) -> pa.Table:
    return pq.read_table(sample_dir / "SystemProfileEvents.parquet")


def _copy_without_events(sample_dir: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for f in sample_dir.glob("*.parquet"):
        if not f.name.startswith("SystemProfileEvents"):
            shutil.copy(f, dest / f.name)
    return dest


def test_columns_types_and_counts(sample: nw.Profile, sample_dir: Path) -> None:
    raw = _events(sample_dir)
    assert len(sample) == raw.num_rows
    core = sample.core
    for col, (typ, _) in EVENT_COLUMNS.items():
        assert core.schema.field(col).type == typ, col
    assert pa.types.is_dictionary(core.schema.field("name").type)
    # Lazy columns are not held until asked for, then come back exactly as stored.
    assert "extra_attributes_json" not in core.column_names
    assert "flow_id" not in core.column_names
    full = sample.table
    assert full.column_names[: len(EVENT_COLUMNS)] == list(EVENT_COLUMNS)
    by_id = dict(zip(raw.column("id").to_pylist(), raw.column("extra_attributes_json").to_pylist(), strict=True))
    got = dict(zip(full.column("id").to_pylist(), full.column("extra_attributes_json").to_pylist(), strict=True))
    assert got == by_id


def test_time_order_and_sources(sample: nw.Profile) -> None:
    start = sample.core.column("start_ts").to_numpy()
    assert (np.diff(start) >= 0).all()
    assert set(sample.core.column("trace_event_source").unique().to_pylist()) == {"framework", "neuron_rt", "neuron_hw"}


def test_incomplete_and_error_events(sample: nw.Profile) -> None:
    ev = sample.events
    incomplete = ev[ev["incomplete"]]
    assert set(incomplete["name"]) == {"nrt_execute", "kbl_exec_wait", "nc_exec_running"}
    assert (incomplete["end_ts"] == sample.end_ts).all()
    assert "events without an end time" in " ".join(sample.warnings.lines())
    err = ev[ev["name"] == "numerical_err"]
    assert len(err) == 1
    args = sample.event(int(err["id"].iloc[0]))["args"]
    assert args["ret"] == 1003


def test_event_details_read_lazily(sample: nw.Profile) -> None:
    fresh = nw.load_profile(sample.source)
    row = int(np.flatnonzero(fresh.core.column("name").to_numpy(zero_copy_only=False) == "nc_exec_running")[0])
    e = fresh.event(row=row)
    assert e["args"]["model_name"].startswith("neff_")
    assert e["flow_id"] and all(isinstance(f, str) for f in e["flow_id"])
    assert fresh.nbytes()["lazy"] == 0  # one event did not read whole columns


def test_one_event_read_from_its_row_group(sample_dir: Path, tmp_path: Path) -> None:
    """Lazy values of single events come from the event's own row group, in files split in parts."""
    raw = _events(sample_dir)
    d = _copy_without_events(sample_dir, tmp_path / "groups")
    half = raw.num_rows // 2
    pq.write_table(raw.slice(0, half), d / "SystemProfileEvents_0.parquet", row_group_size=997)
    pq.write_table(raw.slice(half), d / "SystemProfileEvents_1.parquet", row_group_size=1500)
    p = nw.load_profile(d, prepare=False)
    truth = {(i, s): (a, f) for i, s, a, f in zip(*(raw.column(c).to_pylist() for c in
             ("id", "start_ts", "extra_attributes_json", "flow_id")), strict=True)}
    rows = np.random.default_rng(3).choice(len(p), 40, replace=False)
    for row in [0, len(p) - 1, *rows.tolist()]:
        e = p.event(row=int(row))
        assert (e["extra_attributes_json"], e["flow_id"]) == truth[(e["id"], e["start_ts"])]
    assert p._lazy is not None and p._lazy._groups is not None  # found by row, not by a scan
    assert len(p._lazy._groups["first"]) == -(-half // 997) + -(-(raw.num_rows - half) // 1500)
    # A filtered load has no row-to-file mapping: it scans, with the same answers.
    f = nw.load_profile(d, prepare=False, event_types="hardware")
    e = f.event(row=5)
    assert (e["extra_attributes_json"], e["flow_id"]) == truth[(e["id"], e["start_ts"])]
    assert f._lazy is not None and f._lazy._groups is None


def test_time_order_matches_a_full_sort() -> None:
    from neuron_widgets.model.order import time_order

    rng = np.random.default_rng(7)
    for n, spread in ((50, 5), (10_000, 300), (10_000, 10**9), (3_000, 1)):
        start = rng.integers(0, spread, n)
        end = start + rng.integers(0, 4, n)
        got = time_order(start, end)
        want = np.lexsort((-end, start))
        assert got is not None and (got == want).all()  # same rows, same order among equal ones
    run = np.arange(100)
    assert time_order(run, run + 1) is None


def test_side_tables(sample: nw.Profile) -> None:
    assert set(sample.cpu_usage["cpu_id"]) >= {"0", "average"}
    assert "used_bytes" in sample.host_memory
    assert "weights_bytes" in sample.hbm_usage
    dp = sample.device_profiles
    assert list(dp.columns[:4]) == ["device_profile_name", "instance_id", "process_id", "nc_id"]
    assert len(dp) == 16
    assert sample.metadata["profile_schema_version"] == "7.4.0"
    assert int(sample.metadata["first_ts_ns"]) <= sample.start_ts


def test_split_tables_read_as_one(sample_dir: Path, tmp_path: Path) -> None:
    raw = _events(sample_dir)
    d = _copy_without_events(sample_dir, tmp_path / "split")
    half = raw.num_rows // 2
    pq.write_table(raw.slice(0, half), d / "SystemProfileEvents_0.parquet")
    pq.write_table(raw.slice(half), d / "SystemProfileEvents_1.parquet")
    p = nw.load_profile(d)
    assert len(p) == raw.num_rows
    assert sorted(p.core.column("id").to_pylist()) == sorted(raw.column("id").to_pylist())


def test_data_path_layout(sample_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "data" / "profiles" / "global" / "run1@latest"
    shutil.copytree(sample_dir, target)
    for start in (tmp_path / "data", tmp_path / "data" / "profiles", target, target / "SystemProfileEvents.parquet"):
        assert len(nw.load_profile(start)) == len(nw.load_profile(sample_dir))
    shutil.copytree(sample_dir, tmp_path / "data" / "profiles" / "global" / "run2@latest")
    with pytest.raises(nw.ProfileError, match=r"holds 2 processed profiles \(run1@latest, run2@latest\)"):
        nw.load_profile(tmp_path / "data")


def test_unknown_columns_kept_and_optional_absent(sample_dir: Path, tmp_path: Path) -> None:
    raw = _events(sample_dir)
    d = _copy_without_events(sample_dir, tmp_path / "extra")
    t = raw.drop_columns(["pcore_idx", "worker_gid", "flow_id", "framework_stream_id", "extra_attributes_json"])
    t = t.append_column("future_column", pa.array(np.arange(t.num_rows) % 7))
    pq.write_table(t, d / "SystemProfileEvents.parquet")
    p = nw.load_profile(d)
    kept = dict(zip(p.core.column("id").to_pylist(), p.core.column("future_column").to_pylist(), strict=True))
    assert kept == dict(zip(t.column("id").to_pylist(), t.column("future_column").to_pylist(), strict=True))
    assert "future_column" in p.table.column_names
    assert p.core.column("pcore_idx").null_count == len(p)
    assert set(p.tracks("default")["label"].str.rsplit("/", n=1).str[-1]) >= {"NC:0", "NC:1"}


def test_pushdown_matches_filter_after_load(sample_dir: Path, sample: nw.Profile) -> None:
    cases = [
        {"neuron_cores": "1"},
        {"event_types": "hardware,^cc_exec_barrier"},
        {"event_types": "^kbl_*,^dmem_*"},
        {"instances": [sample.core.column("instance_id").unique().to_pylist()[0]]},
        {"time_range": ("10ms", "20ms")},
        {"neuron_cores": "0-1", "event_types": "software", "time_range": ("5ms", "7.5ms")},
    ]
    for kw in cases:
        pushed = nw.load_profile(sample_dir, **kw)
        after = sample.filter(**kw)
        assert 0 < len(pushed) < len(sample), kw
        assert sorted(pushed.core.column("id").to_pylist()) == sorted(after.core.column("id").to_pylist()), kw
    # A lazy column of a pushed-down load lines up with its own rows.
    pushed = nw.load_profile(sample_dir, event_types="nc_exec_running")
    attrs = pushed.column("extra_attributes_json").to_pylist()
    assert all(a is not None and '"exec_id"' in a for a in attrs)


def test_pushdown_reads_fewer_row_groups(sample_dir: Path, tmp_path: Path) -> None:
    raw = _events(sample_dir)
    d = _copy_without_events(sample_dir, tmp_path / "rg")
    pq.write_table(raw, d / "SystemProfileEvents.parquet", row_group_size=1000)
    p = nw.load_profile(d, time_range=("0ms", "2ms"))
    assert 0 < len(p) < 2000
    assert p.core.column("start_ts").to_numpy().max() < p.start_ts + 2_000_000


@pytest.mark.parametrize("column", ["start_ts", "name", "instance_id"])
def test_missing_required_column(sample_dir: Path, tmp_path: Path, column: str) -> None:
    d = _copy_without_events(sample_dir, tmp_path / "missing")
    pq.write_table(_events(sample_dir).drop_columns([column]), d / "SystemProfileEvents.parquet")
    with pytest.raises(nw.ProfileError, match=rf"SystemProfileEvents.parquet: SystemProfileEvents has no column '{column}'"):
        nw.load_profile(d)


def test_wrong_column_type(sample_dir: Path, tmp_path: Path) -> None:
    d = _copy_without_events(sample_dir, tmp_path / "wrongtype")
    raw = _events(sample_dir)
    t = raw.set_column(raw.schema.get_field_index("start_ts"), "start_ts",
                       raw.column("start_ts").cast(pa.string()))
    pq.write_table(t, d / "SystemProfileEvents.parquet")
    with pytest.raises(nw.ProfileError, match=r"column 'start_ts' has type string, expected int64"):
        nw.load_profile(d)


def test_truncated_parquet(sample_dir: Path, tmp_path: Path) -> None:
    d = _copy_without_events(sample_dir, tmp_path / "trunc")
    data = (sample_dir / "SystemProfileEvents.parquet").read_bytes()
    (d / "SystemProfileEvents.parquet").write_bytes(data[: len(data) // 2])
    msg = r"SystemProfileEvents.parquet: SystemProfileEvents is not a readable Parquet file.*truncated"
    with pytest.raises(nw.ProfileError, match=msg):
        nw.load_profile(d)


def test_empty_parquet_file(sample_dir: Path, tmp_path: Path) -> None:
    d = _copy_without_events(sample_dir, tmp_path / "empty")
    (d / "SystemProfileEvents.parquet").write_bytes(b"")
    with pytest.raises(nw.ProfileError, match="SystemProfileEvents is empty"):
        nw.load_profile(d)


def test_repairs_are_counted(sample_dir: Path, tmp_path: Path) -> None:
    d = _copy_without_events(sample_dir, tmp_path / "repairs")
    raw = _events(sample_dir).slice(0, 100)
    start = raw.column("start_ts").to_numpy().copy()
    end = raw.column("end_ts").to_numpy(zero_copy_only=False).copy()
    end[3] = start[3] - 50  # ends before it starts
    ids = raw.column("id").to_numpy().copy()
    ids[5] = ids[6]  # duplicate id
    ids[7] = 2**60  # above 2^53: must survive exactly
    t = raw.set_column(raw.schema.get_field_index("end_ts"), "end_ts", pa.array(end))
    t = t.set_column(t.schema.get_field_index("id"), "id", pa.array(ids))
    pq.write_table(t, d / "SystemProfileEvents.parquet")
    p = nw.load_profile(d)
    assert len(p) == 100
    text = " ".join(p.warnings.lines())
    assert "ending before they start" in text and "duplicate event ids" in text
    assert 2**60 in p.core.column("id").to_pylist()
    assert (p.core.column("end_ts").to_numpy() >= p.core.column("start_ts").to_numpy()).all()
