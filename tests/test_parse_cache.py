"""The parse cache: second loads from columns, damaged entries parsed again, the cap, the CLI."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import trace

import neuron_widgets as nw
from neuron_widgets.cli import main
from neuron_widgets.readers import cache


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEURON_WIDGETS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "traces"


def same(a: nw.Profile, b: nw.Profile) -> None:
    assert len(a) == len(b) and a.format == b.format
    cols = ["id", "name", "start_ts", "end_ts", "trace_event_source", "instance_id", "process_id", "thread_id",
            "extra_attributes_json", "flow_id", "incomplete"]
    assert a.events[cols].astype(str).equals(b.events[cols].astype(str))
    assert a.warnings.counts == b.warnings.counts
    assert a.tracks("default")["label"].tolist() == b.tracks("default")["label"].tolist()


@pytest.mark.parametrize("rel", ["hta/trace_filter_sampled_rank-0.json.gz", "catapult/flow.json",
                                 "catapult/main_thread_has_unclosed_slices.json"])
def test_second_load_comes_from_the_cache(own_cache: Path, rel: str, tmp_path: Path) -> None:
    src = tmp_path / Path(rel).name
    shutil.copy(trace(rel), src)
    first = nw.load_profile(src, prepare=False)
    cache.flush()
    assert "cached" not in first.extra and len(cache.entries()) == 1
    second = nw.load_profile(src, prepare=False)
    assert second.extra["cached"].startswith(str(own_cache))
    same(first, second)
    assert second.counters.names() == first.counters.names()


def test_perfetto_entries_keep_lazy_annotations(own_cache: Path, sample: nw.Profile, tmp_path: Path) -> None:
    out = tmp_path / "s.pftrace"
    nw.export_perfetto(sample, out)
    first = nw.load_profile(out, prepare=False)
    cache.flush()
    second = nw.load_profile(out, prepare=False)
    assert "cached" in second.extra
    same(first, second)


def test_cache_false_and_a_changed_file(own_cache: Path, tmp_path: Path) -> None:
    src = tmp_path / "t.json"
    src.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]}))
    nw.load_profile(src, prepare=False)
    cache.flush()
    assert "cached" not in nw.load_profile(src, prepare=False, cache=False).extra
    time.sleep(0.01)
    src.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]}))
    changed = nw.load_profile(src, prepare=False)
    assert "cached" not in changed.extra and changed.column("name").to_pylist() == ["b"]


@pytest.mark.parametrize("damage", ["truncate_events", "drop_meta", "bad_meta", "wrong_rows"])
def test_a_damaged_entry_is_parsed_again(own_cache: Path, tmp_path: Path, damage: str) -> None:
    src = tmp_path / Path("flow.json")
    shutil.copy(trace("catapult/flow.json"), src)
    first = nw.load_profile(src, prepare=False)
    cache.flush()
    (entry,) = [Path(e["path"]) for e in cache.entries()]
    if damage == "truncate_events":
        data = (entry / "events.arrow").read_bytes()
        (entry / "events.arrow").write_bytes(data[: len(data) // 2])
    elif damage == "drop_meta":
        (entry / "meta.json").unlink()
    elif damage == "bad_meta":
        (entry / "meta.json").write_text("{not json")
    else:
        meta = json.loads((entry / "meta.json").read_text())
        meta["rows"] += 1
        (entry / "meta.json").write_text(json.dumps(meta))
    again = nw.load_profile(src, prepare=False)
    assert "cached" not in again.extra
    same(first, again)
    cache.flush()
    assert "cached" in nw.load_profile(src, prepare=False).extra  # written anew


def test_an_interrupted_write_leaves_no_entry(own_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "flow.json"
    shutil.copy(trace("catapult/flow.json"), src)

    def crash(path: Path, table: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(cache, "_ipc", crash)
    with pytest.warns(RuntimeWarning, match="could not keep"):
        nw.load_profile(src, prepare=False)
        cache.flush()
    assert cache.entries() == [] and not list(own_cache.glob(".writing-*"))
    monkeypatch.undo()


def test_size_cap_evicts_least_recently_used(own_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = []
    for k in range(3):
        src = tmp_path / f"t{k}.json"
        src.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": f"e{i}", "pid": k, "tid": 1, "ts": i, "dur": 1,
                                                    "args": {"pad": "x" * 200}} for i in range(2000)]}))
        paths.append(src)
    nw.load_profile(paths[0], prepare=False)
    cache.flush()
    one = cache.entries()[0]["bytes"]
    monkeypatch.setenv("NEURON_WIDGETS_CACHE_MB", str(2.5 * one / 1e6))
    nw.load_profile(paths[1], prepare=False)
    cache.flush()
    time.sleep(0.01)
    assert "cached" in nw.load_profile(paths[0], prepare=False).extra  # t0 is now the most recently used
    nw.load_profile(paths[2], prepare=False)
    cache.flush()
    assert len(cache.entries()) == 2
    assert "cached" in nw.load_profile(paths[0], prepare=False).extra
    assert "cached" not in nw.load_profile(paths[1], prepare=False, cache=False).extra


def test_cli_shows_and_clears(own_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "flow.json"
    shutil.copy(trace("catapult/flow.json"), src)
    nw.load_profile(src, prepare=False)
    cache.flush()
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert "1 parsed traces" in out and "chrome-json" in out
    assert main(["cache", "--clear"]) == 0
    assert "freed" in capsys.readouterr().out
    assert cache.entries() == [] and not own_cache.exists()
    assert os.environ["NEURON_WIDGETS_CACHE"].endswith("cache")


def test_several_inputs_follow_the_callers_cache_switch(own_cache: Path, tmp_path: Path) -> None:
    files = []
    for rel in ("hta/trace_filter_sampled_rank-0.json.gz", "hta/trace_filter_sampled_rank-1.json.gz"):
        files.append(tmp_path / Path(rel).name)
        shutil.copy(trace(rel), files[-1])
    nw.load_profile(files, cache=False, prepare=False)
    nw.load_profile(tmp_path, cache=False, prepare=False)  # a directory of inputs
    cache.flush()
    assert not own_cache.exists() or not any(own_cache.rglob("*.arrow*")), "cache=False wrote entries"
    nw.load_profile(files, prepare=False)
    cache.flush()
    assert any(own_cache.iterdir())


def _events(names: list[str]) -> bytes:
    """A Chrome trace whose size does not depend on its names' letters (same-size edits)."""
    return json.dumps({"traceEvents": [{"ph": "X", "name": n, "pid": 1, "tid": 1, "ts": i, "dur": 1}
                                       for i, n in enumerate(names)]}).encode()


def _names(p: nw.Profile) -> list[str]:
    return [str(n) for n in p.column("name").to_pylist()]


def _same_size_edit_with_mtime_put_back(path: Path, data: bytes) -> None:
    st = path.stat()
    assert len(data) == st.st_size
    time.sleep(0.05)  # past the coarse clock's tick, so ctime moves (as it does for any real later edit)
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_size == st.st_size


@pytest.mark.parametrize("trust_stat", [True, False], ids=["stat-trusted", "file-just-written"])
def test_a_same_size_edit_with_the_mtime_put_back_is_parsed_again(own_cache: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  trust_stat: bool) -> None:
    if trust_stat:  # the stat index is used at once, as it is for any file older than a few seconds
        monkeypatch.setattr(cache, "RACY_NS", 0, raising=False)
    src = tmp_path / "t.json"
    src.write_bytes(_events(["aaaa", "bbbb"]))
    assert _names(nw.load_profile(src, prepare=False)) == ["aaaa", "bbbb"]
    cache.flush()
    assert _names(nw.load_profile(src, prepare=False)) == ["aaaa", "bbbb"]
    _same_size_edit_with_mtime_put_back(src, _events(["cccc", "dddd"]))
    assert _names(nw.load_profile(src, prepare=False)) == ["cccc", "dddd"]
    cache.flush()
    assert _names(nw.load_profile(src, prepare=False)) == ["cccc", "dddd"]


def test_an_evicted_entry_is_never_refilled_with_other_bytes(own_cache: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The old entry evicted, the edited file parsed: its events must not land under the old bytes' key,
    where a second file holding the old bytes would find them."""
    monkeypatch.setattr(cache, "RACY_NS", 0, raising=False)
    original = _events(["keep", "mine"])
    src = tmp_path / "edited.json"
    src.write_bytes(original)
    nw.load_profile(src, prepare=False)
    cache.flush()
    for e in cache.entries():
        shutil.rmtree(e["path"])  # evicted; the stat index still knows the file
    _same_size_edit_with_mtime_put_back(src, _events(["evil", "data"]))
    assert _names(nw.load_profile(src, prepare=False)) == ["evil", "data"]
    cache.flush()
    twin = tmp_path / "twin.json"
    twin.write_bytes(original)
    assert _names(nw.load_profile(twin, prepare=False)) == ["keep", "mine"]
    cache.flush()
    assert _names(nw.load_profile(twin, prepare=False)) == ["keep", "mine"]


def test_a_file_edited_during_its_parse_is_not_kept(own_cache: Path, tmp_path: Path) -> None:
    original = _events(["keep", "mine"])
    src = tmp_path / "t.json"
    src.write_bytes(original)
    version = next(r.cache_version for r in nw.readers.READERS if r.name == "chrome-json")

    def parse_while_edited() -> nw.Profile:
        _same_size_edit_with_mtime_put_back(src, _events(["evil", "data"]))
        return nw.load_profile(src, prepare=False, cache=False)

    got = cache.load_or_parse(src, "chrome-json", version, parse_while_edited)
    cache.flush()
    assert _names(got) == ["evil", "data"]
    assert cache.entries() == [], "an entry was kept under a key of bytes other than those parsed"
    twin = tmp_path / "twin.json"
    twin.write_bytes(original)
    assert _names(nw.load_profile(twin, prepare=False)) == ["keep", "mine"]


def test_a_replaced_file_with_the_same_size_and_mtime_is_parsed_again(own_cache: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "RACY_NS", 0, raising=False)
    src = tmp_path / "t.json"
    src.write_bytes(_events(["aaaa"]))
    nw.load_profile(src, prepare=False)
    cache.flush()
    st = src.stat()
    other = tmp_path / "other.json"
    other.write_bytes(_events(["zzzz"]))
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, src)  # another inode, same size and mtime
    assert _names(nw.load_profile(src, prepare=False)) == ["zzzz"]


def test_a_read_only_cache_still_serves_hits(own_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "flow.json"
    shutil.copy(trace("catapult/flow.json"), src)
    first = nw.load_profile(src, prepare=False)
    cache.flush()
    (entry,) = cache.entries()
    before = sorted(p.name for p in own_cache.rglob("*"))

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    # As root, chmod cannot make a folder read-only: a read-only mount is what utime says it is.
    monkeypatch.setattr(cache.os, "utime", read_only)
    for _ in range(2):
        again = nw.load_profile(src, prepare=False)
        assert again.extra.get("cached") == entry["path"]
        same(first, again)
    assert sorted(p.name for p in own_cache.rglob("*")) == before
