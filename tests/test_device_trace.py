"""Device traces: readers, resolution from a hardware event, alignment to the host clock, cache."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import neuron_widgets as nw


def hw_events(p: nw.Profile):
    ev = p.core.to_pandas()
    return ev, ev[ev["name"] == "nc_exec_running"]


def test_drill_down_from_an_execution(sample: nw.Profile) -> None:
    _, hw = hw_events(sample)
    first = hw.iloc[0]
    d = sample.device_trace(int(first["id"]))
    assert len(d) > 100 and len(d.dma) > 0 and not d.execution_info.empty
    assert d.alignment == "timestamp_sync_point" and d.residual_ns == 0
    lo, hi = d.span
    assert first["start_ts"] <= lo and hi <= first["end_ts"]
    assert set(d.instructions["timeline_track"]) <= {"TensorMatrix", "Tensor", "Vector", "Scalar", "GpSimd", "Sync"}
    # Read once: the second drill-down is served from the cache.
    again = sample.device_trace(int(first["id"]))
    assert len(sample._device_cache) >= 1 and again.span == d.span


def test_other_execution_is_said_not_hidden(sample: nw.Profile) -> None:
    _, hw = hw_events(sample)
    later = hw.iloc[60]
    d = sample.device_trace(int(later["id"]))
    assert any("holds execution" in n and "not the selected execution" in n for n in d.notes)
    assert d.alignment == "timestamp_sync_point"


def test_by_name_and_unknown_events(sample: nw.Profile) -> None:
    d = sample.device_trace("neuron_profile_001")
    assert d.alignment.startswith("device clock") and d.span[0] < sample.start_ts
    ev, _ = hw_events(sample)
    fw = ev[ev["name"] == "forward"].iloc[0]
    with pytest.raises(nw.ProfileError, match="ran on no NeuronCore, so it has no device trace"):
        sample.device_trace(int(fw["id"]))


def test_without_sync_points(sample_dir: Path) -> None:
    p = nw.load_profile(sample_dir, event_types="^timestamp_sync_point")
    _, hw = hw_events(p)
    d = p.device_trace(int(hw.iloc[0]["id"]))
    assert d.alignment == "execution start laid on nc_exec_running"
    assert any("no timestamp_sync_point" in n for n in d.notes)
    assert d.span[0] >= hw.iloc[0]["start_ts"]


def test_device_profiles_elsewhere(sample_dir: Path, tmp_path: Path) -> None:
    system = tmp_path / "system"
    shutil.copytree(sample_dir, system, ignore=shutil.ignore_patterns("device_profiles"))
    p = nw.load_profile(system)
    _, hw = hw_events(p)
    with pytest.raises(nw.ProfileError, match=r"neuron_profile_\d+: the device profile's data was not found.*"
                                              r"device_profiles_dir"):
        p.device_trace(int(hw.iloc[0]["id"]))
    shutil.copytree(sample_dir / "device_profiles", tmp_path / "elsewhere")
    q = nw.load_profile(system, device_profiles_dir=tmp_path / "elsewhere")
    assert len(q.device_trace(int(hw.iloc[0]["id"]))) > 100


def test_device_json_and_legacy_listing(tmp_path: Path) -> None:
    doc = {"instruction": [{"timestamp": 10, "duration": 5, "label": "TensorMatrix", "opcode": "MATMUL",
                            "hlo_name": "dot.1", "id": 2**60 + 1},
                           {"timestamp": 20, "duration": 3, "label": "Vector", "opcode": "TENSOR_TENSOR"}],
           "dma": [{"timestamp": 12, "duration": 4, "subgroup": "qSyncSpillReload0-Q1-E0", "transfer_size": 64}],
           "summary": [{"total_time": 30, "event_count": 3}], "metadata": [{"ntff_version": 4}]}
    (tmp_path / "device_profile_model_7.json").write_text(json.dumps(doc))
    d = nw.load_device_trace(tmp_path / "device_profile_model_7.json")
    assert d.instructions["end_ts"].tolist() == [15, 23]
    assert d.instructions["id"].iloc[0] == 2**60 + 1
    assert d.dma["queue_name"].tolist() == ["qSyncSpillReload0-Q1-E0"] and d.metadata["ntff_version"] == 4
    (tmp_path / "system_profile.json").write_text(json.dumps({"trace_event": [
        {"id": 1, "name": "nc_exec_running", "timestamp": 1, "duration": 40, "nc_idx": 0, "process_id": 3,
         "model_id": 7, "exec_id": 1}]}))
    p = nw.load_profile(tmp_path / "system_profile.json")
    assert len(p.device_trace("device_profile_model_7")) == 2
    (tmp_path / "bad.json").write_text('{"summary": []}')
    with pytest.raises(nw.ProfileError, match=r"bad\.json: is not a device profile JSON"):
        nw.load_device_trace(tmp_path / "bad.json")


def test_ntff_messages(tmp_path: Path) -> None:
    (tmp_path / "a.ntff").write_bytes(b"")
    with pytest.raises(nw.ProfileError, match=r"0 bytes: no execution was captured.*warm-up"):
        nw.load_device_trace(tmp_path / "a.ntff")
    (tmp_path / "a.ntff").write_bytes(b"NTFF")
    with pytest.raises(nw.ProfileError, match=r"no \.neff beside it.*neff_cache_dir"):
        nw.load_device_trace(tmp_path / "a.ntff")
    (tmp_path / "m.neff").write_bytes(b"NEFF")
    with pytest.raises(nw.ProfileError, match="neuron-explorer view -d"):
        nw.load_device_trace(tmp_path / "a.ntff")
    with pytest.raises(nw.ProfileError, match="no such file"):
        nw.load_device_trace(tmp_path / "missing")


def test_parquet_text_columns_kept_coded(sample_dir: Path, tmp_path: Path) -> None:
    """Text columns stay coded (categoricals) as read; parts coded and plain, and missing tracks, still agree."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from neuron_widgets.model.device.events import DeviceEvents

    src = next((sample_dir / "device_profiles").iterdir())
    whole = nw.load_device_trace(src)
    assert str(whole.instructions["opcode"].dtype) == "category"
    raw = pq.read_table(src / "Instruction.parquet")
    assert whole.instructions["opcode"].astype(str).tolist() == raw.column("opcode").to_pylist()

    split = tmp_path / "split"
    shutil.copytree(src, split)
    (split / "Instruction.parquet").unlink()
    half = raw.num_rows // 2
    pq.write_table(raw.slice(0, half), split / "Instruction_0.parquet")  # dictionary pages
    rest = raw.slice(half)
    # The second part is written plain, and some of its rows name no track (the engine stands in).
    hole = pa.array(np.arange(rest.num_rows) % 7 == 0)
    i = rest.schema.get_field_index("timeline_track")
    rest = rest.set_column(i, "timeline_track", pc.if_else(hole, pa.nulls(rest.num_rows, pa.string()),
                                                             rest.column(i)))
    pq.write_table(rest, split / "Instruction_1.parquet", use_dictionary=False)
    parts = nw.load_device_trace(split)
    assert len(parts) == raw.num_rows
    assert parts.instructions["opcode"].astype(str).tolist() == raw.column("opcode").to_pylist()
    tracks = DeviceEvents(parts).tracks("engines")
    engines = raw.column("engine").to_pylist()
    named = raw.column("timeline_track").to_pylist()
    # A row without a track joins its engine's track: the one the file names for that engine, the
    # engine's own name where it has several (tensor: Tensor, not TensorMatrix).
    of_engine = {e: sorted({t for e2, t in zip(engines, named, strict=True) if e2 == e}) for e in set(engines)}
    label = {e: ts[0] if len(ts) == 1 else next(t for t in ts if t.lower() == e) for e, ts in of_engine.items()}
    want = Counter(named[:half] + [label[engines[half + k]] if k % 7 == 0 else named[half + k]
                                   for k in range(rest.num_rows)])
    got = {str(r.label).rsplit("/", 1)[-1]: int(r.events) for r in tracks.itertuples() if "Engines" in str(r.label)}
    assert got == dict(want)


def _sync_points_by_hand(p: nw.Profile, event: dict, nearest: bool) -> list[tuple]:
    """Every event's row tested one by one: a sync point, on the event's instance, process and core."""
    ev = p.core.to_pandas()
    core = event["nc_idx"] if event["nc_idx"] is not None else -1
    def on_core(r: int) -> bool:
        nc = ev["nc_idx"].iat[r]
        return (-1 if nc is None or nc != nc else nc) == core

    rows = [r for r in range(len(ev)) if ev["name"].iat[r] == "timestamp_sync_point"
            and ev["instance_id"].iat[r] == event["instance_id"] and ev["process_id"].iat[r] == event["process_id"]
            and on_core(r)]
    if nearest:
        rows = [r for r in rows if ev["start_ts"].iat[r] <= event["start_ts"]][-1:]
    out = []
    for r in rows:
        a = p.event(row=r)["args"]
        if "cpu_timestamp_ns" in a and "nc_timestamp_ns" in a:
            out.append((a.get("exec_id"), int(a["cpu_timestamp_ns"]), int(a["nc_timestamp_ns"])))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sync_points_of_each_core_against_a_row_by_row_search(tmp_path: Path, seed: int) -> None:
    from neuron_widgets.model.device import resolve as dr

    p = nw.load_profile(nw.write_sample(tmp_path / "s", events=4000, seed=seed, instances=2, processes=2, cores=2),
                        cache=False)
    _, hw = hw_events(p)
    assert hw["instance_id"].nunique() == 2 and hw["nc_idx"].nunique() == 2
    found = 0
    for row in np.random.default_rng(seed).choice(hw.index.to_numpy(), 12, replace=False):
        event = p.event(row=int(row))
        for nearest in (False, True):
            got = dr.sync_points(p, event, nearest)
            assert list(got.itertuples(index=False, name=None)) == _sync_points_by_hand(p, event, nearest)
            found += len(got)
    assert found > 12  # each core's own sync points were found, not none
