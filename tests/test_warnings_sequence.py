"""Issue 35 item 13: `p.warnings[:6]` raised TypeError (unhashable slice). A profile's warnings are a
sequence of their kinds in the order found, sliceable, and still give a kind's count by name."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import trace

import neuron_widgets as nw
from neuron_widgets.errors import LoadWarnings


def random_warnings(rng: random.Random) -> tuple[LoadWarnings, list[tuple[str, int, list[str]]]]:
    """Warnings added in a random order (kinds repeated), and the plain record of what was added."""
    w = LoadWarnings(max_examples=3)
    record: dict[str, tuple[int, list[str]]] = {}
    for _ in range(rng.randrange(0, 40)):
        kind = f"file.json: problem {rng.randrange(12)}"
        n = rng.randrange(1, 5)
        ex = f"event {rng.randrange(1000)}" if rng.random() < 0.7 else None
        w.add(kind, n, ex)
        count, exs = record.get(kind, (0, []))
        record[kind] = (count + n, exs + ([ex] if ex is not None and len(exs) < 3 else []))
    return w, [(k, c, e) for k, (c, e) in record.items()]


@pytest.mark.parametrize("seed", range(60))
def test_warnings_slice_and_index_like_the_list_of_kinds(seed: int) -> None:
    rng = random.Random(seed)
    w, ref = random_warnings(rng)
    kinds = [k for k, _, _ in ref]
    assert isinstance(w, Sequence) and list(w) == kinds and len(w) == len(kinds)
    for _ in range(20):
        a, b = rng.randrange(-15, 15), rng.randrange(-15, 15)
        step = rng.choice([None, 1, 2, -1])
        part = w[a:b:step]
        assert isinstance(part, LoadWarnings)
        assert list(part) == kinds[a:b:step]
        for k, c, e in ref:
            if k in part:
                assert part[k] == c and part.examples.get(k, []) == e
    for i in range(-len(kinds), len(kinds)):
        assert w[i] == kinds[i]
    with pytest.raises(IndexError):
        w[len(kinds)]
    # By kind: its count, as before (0 for a kind never seen).
    for k, c, _ in ref:
        assert w[k] == c and k in w
    assert w["never seen"] == 0


def test_a_profiles_warnings_slice() -> None:
    p = nw.load_profile(trace("catapult/main_thread_has_unclosed_slices.json"))
    first = p.warnings[:6]
    assert list(first) == list(p.warnings)[:6] and len(first) >= 1
    kind = p.warnings[0]
    assert "never ended" in kind and first[kind] == p.warnings[kind] > 0
    assert "never ended" in repr(first)
    with pytest.raises(TypeError, match="by kind"):
        p.warnings[1.5]  # type: ignore[index]


@pytest.mark.parametrize("seed", range(20))
def test_the_lines_and_the_repr_follow_the_sequence(seed: int) -> None:
    """Issue 35.13: the repr was sorted while `w[0]` was the first kind found, shown anywhere in it."""
    w, ref = random_warnings(random.Random(seed))
    kinds = [k for k, _, _ in ref]
    assert [line.split(": ", 2)[0] + ": " + line.split(": ", 2)[1] for line in w.lines()] == kinds
    shown = repr(w).splitlines()[1:-1] if kinds else []
    assert [line.strip() for line in shown] == w.lines()


def test_a_profiles_warnings_show_in_the_order_they_index(tmp_path: Path) -> None:
    path = tmp_path / "warn.json"
    path.write_text('{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": -5},'
                    ' {"ph": "Q", "name": "b", "pid": 1, "tid": 1, "ts": 2},'
                    ' {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": "abc", "dur": 1},'
                    ' {"ph": "O", "name": "o", "pid": 1, "ts": 3, "id": "0x1"}]}')
    w = nw.load_profile(path, cache=False).warnings
    assert len(w) >= 2
    shown = [line.strip() for line in repr(w).splitlines()[1:-1]]
    assert [next(k for k in w if line.startswith(f"{k}: ")) for line in shown] == list(w)
    assert shown[0].startswith(f"{w[0]}: ") and shown[-1].startswith(f"{w[-1]}: ")
