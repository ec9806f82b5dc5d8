"""The Chrome reader's two roads (the byte scan and msgspec's objects) give the same profile."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from conftest import trace, traces_listed

from neuron_widgets.model.filters import Filters
from neuron_widgets.model.schema import ROW
from neuron_widgets.readers.chrome import fast as chrome_fast
from neuron_widgets.readers.chrome import reader as chrome
from neuron_widgets.readers.chrome.fast import SpanArgs

REAL = traces_listed("*/*.json*")


def read_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    fast = chrome.read(path, Filters())
    with monkeypatch.context() as m:
        m.setattr(chrome_fast, "gather", lambda buf, builder: None)
        slow = chrome.read(path, Filters())
    return fast, slow


def assert_same(fast, slow) -> None:
    assert fast._table.to_pydict() == slow._table.to_pydict()
    names = slow._lazy.names()
    assert fast._lazy.names() == names
    for name in names:
        assert fast._lazy.column(name).to_pylist() == slow._lazy.column(name).to_pylist()
    picked = np.sort(fast._table[ROW].to_numpy())[::-1].copy()
    for name in names:
        assert fast._lazy.take(name, picked).to_pylist() == slow._lazy.take(name, picked).to_pylist()
        # One event's value, as the details panel and tooltips ask for it.
        for row in picked[:5].tolist():
            assert fast._lazy.value(name, {ROW: row}) == slow._lazy.value(name, {ROW: row})
    assert {k: fast.counters.get(k).to_dict("list") for k in fast.counters.names()} == \
        {k: slow.counters.get(k).to_dict("list") for k in slow.counters.names()}
    assert fast.warnings.counts == slow.warnings.counts
    assert json.dumps(fast.metadata, sort_keys=True, default=str) == json.dumps(slow.metadata, sort_keys=True, default=str)


@pytest.mark.parametrize("rel", REAL)
def test_both_roads_agree_on_real_traces(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = read_both(trace(rel), monkeypatch)
    assert_same(fast, slow)


def test_kineto_traces_take_the_fast_road(monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = read_both(trace("hta/nccl_data.json.gz"), monkeypatch)
    assert isinstance(fast._lazy, SpanArgs) and not isinstance(slow._lazy, SpanArgs)
    # Begin/end pairs are matched on the other road.
    other, _ = read_both(trace("catapult/main_thread_has_unclosed_slices.json"), monkeypatch)
    assert not isinstance(other._lazy, SpanArgs)


NAMES = ["k", "aten::mm", "caf\u00e9", 'say "hi"', "tab\tname", "", "ncclKernel_AllReduce", "Memcpy HtoD", "\u2603"]
# Values only the other road reads: the fast one must hand the whole file over, from a clean start.
POISON = [("ts", "12"), ("pid", 5.5), ("pid", 2**70), ("id", None), ("id2", {"global": 1}), ("name", 3),
          ("cat", 4), ("tid", True), ("dur", "7"), ("id", 1.5), ("ph", "B"), ("ts", 10**400)]


def number(r: random.Random):
    return r.choice([r.randint(0, 5000), r.random() * 5000, round(r.random() * 5000, 3), 1e3, -0.0, 12345678901234.567,
                     1694128201545123.456, 9007199254740993, 123456789012345678901, 1.5e-7, 2.5e2, 0])


def plain_trace(seed: int) -> dict:
    r = random.Random(seed)
    events = []
    for _ in range(r.randint(1, 200)):
        ph = r.choice(["X"] * 8 + ["i", "I", "s", "t", "f", "M", "C", "n", "R"])
        e: dict = {"ph": ph}
        if r.random() < 0.95:
            e["name"] = r.choice(NAMES) if r.random() < 0.97 else None
        if r.random() < 0.8:
            e["cat"] = r.choice(["kernel", "cuda_runtime", "ac2g", "gpu_memcpy", "cpu_op", None])
        if r.random() < 0.97:
            e["ts"] = number(r)
        if ph == "X" and r.random() < 0.95:
            e["dur"] = number(r) if r.random() < 0.9 else r.choice([None, -5, True])
        if ph in "iI" and r.random() < 0.3:
            e["dur"] = 7
        for key, values in (("pid", [1, 2, 2910249, "Spans", "7", "caf\u00e9", 0, None]),
                            ("tid", [1, 2, 7, "PyTorch Profiler", "w", None, -3])):
            if r.random() < 0.95:
                e[key] = r.choice(values)
        if ph in "stf":
            e["id"] = r.choice([1, 2, 3, "3", "abc", 2**40, "x\u00e9"])
        if ph == "f" and r.random() < 0.5:
            e["bp"] = r.choice(["e", "s"])
        if ph == "M":
            e["name"] = r.choice(["process_name", "thread_name", "process_sort_index", "thread_sort_index"])
            e["args"] = r.choice([{"name": "proc"}, {"sort_index": 3}, {"name": "caf\u00e9"}])
        elif ph == "C":
            e["args"] = r.choice([{"a": 1, "b": 2.5}, {"x": "nan"}, {"v": 3}])
        elif r.random() < 0.7:
            e["args"] = r.choice([{"correlation": r.randint(0, 50)}, {}, None, [1, 2], "str",
                                  {"s": 'q"uote', "n": {"deep": [1, {"x": "}"}]}}])
        if seed % 3 == 0 and r.random() < 0.02:
            key, value = r.choice(POISON)
            e[key] = value
        events.append(e)
    top: dict = {"traceEvents": events}
    if r.random() < 0.3:
        top["baseTimeNanoseconds"] = r.choice([0, 1694128201545000000])
    return top


@pytest.mark.parametrize("seed", range(60))
def test_both_roads_agree_on_generated_traces(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.json"
    # Half written with raw UTF-8, half with \u escapes; JSON's own escapes in names and arguments.
    path.write_text(json.dumps(plain_trace(seed), ensure_ascii=bool(seed % 2)), encoding="utf-8")
    fast, slow = read_both(path, monkeypatch)
    assert_same(fast, slow)
    if seed % 3:
        assert isinstance(fast._lazy, SpanArgs), "a plain trace went the slow way"
