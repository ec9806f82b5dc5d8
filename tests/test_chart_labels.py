"""Bar charts' factor labels (summary.charts.unique_labels, which the device and critical path charts share): every
label kept where it is the first of its text, repeats told apart, none equal, on random lists with clashes made on
purpose."""

from __future__ import annotations

import random

from neuron_widgets.summary.charts import unique_labels


def test_repeats_get_a_counter() -> None:
    assert unique_labels(["a", "b", "a", "a"]) == ["a", "b", "a (2)", "a (3)"]
    assert unique_labels([]) == []


def test_a_counter_never_repeats_a_label_already_there() -> None:
    assert unique_labels(["a", "a", "a (2)"]) == ["a", "a (3)", "a (2)"]
    assert unique_labels(["a (2)", "a", "a"]) == ["a (2)", "a", "a (3)"]


def test_random_lists_come_out_distinct_and_in_place() -> None:
    rng = random.Random(39)
    for _ in range(300):
        base = [rng.choice("abc") for _ in range(rng.randint(0, 12))]
        # Labels that look like counters the helper would make: the clash it must step over.
        labels = [x if rng.random() < 0.7 else f"{x} ({rng.randint(2, 4)})" for x in base]
        out = unique_labels(labels)
        assert len(out) == len(labels) and len(set(out)) == len(out), (labels, out)
        firsts = {}
        for i, x in enumerate(labels):
            firsts.setdefault(x, i)
        assert all(out[i] == x for x, i in firsts.items()), (labels, out)  # the first of each text stays as it was
        for x, y in zip(labels, out, strict=True):
            assert y == x or (y.startswith(f"{x} (") and y.endswith(")")), (labels, out)
