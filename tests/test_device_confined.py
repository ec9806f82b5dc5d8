"""Device files are read from inside the profile's folders only, and loading errors echo no file content."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import neuron_widgets as nw
from neuron_widgets.readers.neuron.device_trace import load_device_trace

SECRET = {"aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG", "aws_access_key_id": "AKIAIOSFODNN7EXAMPLE"}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nw.write_sample(tmp_path_factory.mktemp("confined") / "profile", events=2000, seed=3)


@pytest.fixture
def prof(base: Path, tmp_path: Path) -> Path:
    """A fresh copy of the sample (its own folder) and, beside it, a folder `outside` it must not read."""
    copy = tmp_path / "profile"
    shutil.copytree(base, copy)
    shutil.copytree(base / "device_profiles" / "neuron_profile_001", tmp_path / "outside")
    (tmp_path / "secret.json").write_text(json.dumps(SECRET))
    (tmp_path / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    return copy


def rewrite_list(prof: Path, **changes: object) -> None:
    """DeviceProfileList with its first row's columns changed (a new column added where asked)."""
    df = pq.read_table(prof / "DeviceProfileList.parquet").to_pandas()
    for col, value in changes.items():
        if col not in df:
            df[col] = pd.Series([None] * len(df), dtype=object)
        df.loc[0, col] = value
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), prof / "DeviceProfileList.parquet")


def first_listed_event(p: nw.Profile) -> int:
    """The id of a hardware event that resolves to the first DeviceProfileList row."""
    from neuron_widgets.model.device.resolve import profile_for

    row = p.device_profiles.iloc[0]
    ev = p.core.to_pandas()
    hw = ev[(ev["name"] == "nc_exec_running") & (ev["instance_id"] == row["instance_id"])
            & (ev["process_id"] == row["process_id"]) & (ev["nc_idx"] == row["nc_id"])]
    for i in hw["id"]:
        if profile_for(p, p.event(int(i))) == str(row["device_profile_name"]):
            return int(i)
    raise AssertionError("no event resolves to the first listed device profile")


def refused(p: nw.Profile, key: int | str) -> str:
    with pytest.raises(nw.ProfileError) as got:
        p.device_trace(key)
    text = str(got.value)
    for secret in (*SECRET, *SECRET.values(), "root:x:0:0"):
        assert secret not in text
    return text


@pytest.mark.parametrize("name", ["../outside", "..", "device_profiles/../../outside", "a\\..\\..\\outside", ""])
def test_names_that_are_paths_are_refused(prof: Path, name: str) -> None:
    rewrite_list(prof, device_profile_name=name)
    p = nw.load_profile(prof, cache=False)
    assert "not a plain name" in refused(p, first_listed_event(p))
    assert "not a plain name" in refused(p, name)


def test_an_absolute_name_is_refused(prof: Path) -> None:
    outside = prof.parent / "outside"
    rewrite_list(prof, device_profile_name=str(outside))
    p = nw.load_profile(prof, cache=False)
    assert "not a plain name" in refused(p, first_listed_event(p))


@pytest.mark.parametrize("target", ["secret.json", "passwd", "outside", "/etc/passwd"])
def test_a_path_column_outside_the_folder_is_refused(prof: Path, target: str) -> None:
    path = target if target.startswith("/") else str(prof.parent / target)
    rewrite_list(prof, path=path)
    p = nw.load_profile(prof, cache=False)
    text = refused(p, first_listed_event(p))
    assert "outside the profile's folder" in text and "was not read" in text


def test_a_relative_path_column_cannot_climb_out(prof: Path) -> None:
    rewrite_list(prof, path="../secret.json")
    p = nw.load_profile(prof, cache=False)
    assert "outside the profile's folder" in refused(p, "neuron_profile_001")


def test_a_link_inside_that_points_outside_is_refused(prof: Path) -> None:
    inside = prof / "device_profiles" / "neuron_profile_001"
    shutil.rmtree(inside)
    os.symlink(prof.parent / "outside", inside)
    p = nw.load_profile(prof, cache=False)
    assert "outside the profile's folder" in refused(p, first_listed_event(p))


def test_a_linked_table_file_that_points_outside_is_refused(prof: Path) -> None:
    table = prof / "device_profiles" / "neuron_profile_001" / "Instruction.parquet"
    table.unlink()
    os.symlink(prof.parent / "outside" / "Instruction.parquet", table)
    p = nw.load_profile(prof, cache=False)
    assert "outside the profile's folder" in refused(p, "neuron_profile_001")


def test_links_that_stay_inside_and_the_path_column_inside_are_followed(prof: Path) -> None:
    store = prof / "kept" / "np1"
    store.parent.mkdir()
    shutil.move(prof / "device_profiles" / "neuron_profile_001", store)
    os.symlink(store, prof / "device_profiles" / "neuron_profile_001")
    p = nw.load_profile(prof, cache=False)
    d = p.device_trace(first_listed_event(p))
    assert len(d) > 0 and Path(d.source) == store.resolve()
    # A path column naming a folder inside the profile's folder is used as given.
    shutil.copytree(store, prof / "elsewhere")
    rewrite_list(prof, path=str(prof / "elsewhere"))
    q = nw.load_profile(prof, cache=False)
    assert Path(q.device_trace("neuron_profile_001").source) == (prof / "elsewhere").resolve()


def test_several_inputs_find_device_profiles_in_their_subfolders(prof: Path) -> None:
    """Several inputs as one profile (a processed profile in a subfolder, a rank's trace elsewhere): the
    device profiles live in the processed profile's folder, which is one of the inputs' folders."""
    folder = prof.parent / "job"
    folder.mkdir()
    shutil.move(prof, folder / "system")
    (folder / "rank0.json").write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "forward", "pid": 1, "tid": 1, "ts": 1.7e15, "dur": 10, "cat": "cpu_op"}]}))
    p = nw.load_profile([folder / "system", folder / "rank0.json"], cache=False)
    assert p.metadata.get("inputs") and len(p.device_profiles)
    d = p.device_trace(first_listed_event(p))
    assert len(d) > 0 and Path(d.source).is_relative_to((folder / "system").resolve())
    # The folder one level up (where `outside` is) is still out of reach.
    with pytest.raises(nw.ProfileError, match="not found"):
        p.device_trace("outside")


def test_device_loading_errors_echo_no_content(tmp_path: Path) -> None:
    secret = tmp_path / "device_profile_model_1.json"
    secret.write_text(json.dumps(SECRET))
    text = tmp_path / "device_profile_model_2.json"
    text.write_text("root:x:0:0:root:/root:/bin/bash\naws_secret_access_key=wJalrXUtnFEMI\n")
    listed = tmp_path / "device_profile_model_3.json"
    listed.write_text(json.dumps([SECRET]))
    for path in (secret, text, listed):
        with pytest.raises(nw.ProfileError) as got:
            load_device_trace(path)
        message = str(got.value)
        assert str(path) in message
        for leak in (*SECRET, *SECRET.values(), "root:x", "wJalrXUtnFEMI"):
            assert leak not in message
    with pytest.raises(nw.ProfileError, match="expected an object with an 'instruction' list"):
        load_device_trace(secret)
