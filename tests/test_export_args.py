"""The export's arguments (export/args.ArgTexts: one column read, each distinct text normalised once, codes
in order of first use) against the per-event road (`details_of_rows`, each written as the page reads it), on
random Neuron profiles whose argument texts include odd ones: not JSON, JSON that is no object, empty objects,
the same object spelled two ways. Across several reads, as the budget search makes them, with rows wanted ahead."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from random_neuron import random_events, write_profile

from neuron_widgets.export.args import ArgTexts, page_text

ODD = ["not json", "[1, 2]", "3", "{}", "", '{"a": 1}', '{"a":1}', '{"k": "<script>x</script>"}', None]


def reference(p, rows: np.ndarray) -> list[str]:  # type: ignore[no-untyped-def]
    return [page_text(a) for a in p.details_of_rows(rows)]


@pytest.mark.parametrize("seed", range(12))
def test_codes_and_texts_match_the_per_event_road(seed: int, tmp_path: Path) -> None:
    rng = np.random.default_rng(seed)
    rows = random_events(seed)
    for r in rows:
        if rng.random() < 0.3:
            r["extra_attributes_json"] = ODD[int(rng.integers(len(ODD)))]
        elif rng.random() < 0.2:
            r["extra_attributes_json"] = json.dumps({"x": int(rng.integers(3))})  # repeated texts
    p = write_profile(tmp_path / "p", rows)
    if not len(p):
        return
    got = ArgTexts(p)
    for _ in range(3):
        pick = np.sort(rng.choice(len(p), int(rng.integers(1, len(p) + 1)), replace=False))
        got.want(rng.choice(len(p), int(rng.integers(0, len(p) + 1))))
        codes, texts = got.of(pick)
        want = reference(p, pick)
        assert [texts[c] if c >= 0 else "" for c in codes] == want
        assert all(texts) and len(set(texts)) == len(texts)
        first_use = [t for i, t in enumerate(want) if t and t not in want[:i]]
        assert texts == first_use
