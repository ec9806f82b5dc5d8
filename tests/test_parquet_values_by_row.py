"""ParquetLazy.values by source row (the export's and the details' bulk read of arguments) gives each event
what reading it alone gives (`event(row=...)`, which checks its id and start), unfiltered and filtered, for
rows in any order and repeated."""

from __future__ import annotations

import numpy as np
import pytest

import neuron_widgets as nw


@pytest.mark.parametrize("filtered", [False, True])
def test_bulk_arguments_match_one_by_one(sample: nw.Profile, filtered: bool) -> None:
    p = sample.filter(time_range=("2ms", "30ms")) if filtered else sample
    assert p._lazy is not None and len(p) > 100
    rng = np.random.default_rng(7)
    rows = rng.choice(len(p), 60, replace=True)  # unsorted, with repeats
    bulk = p.args_of_rows(rows)
    one = [p.event(row=int(r))["args"] for r in rows]
    assert bulk == one
    assert any(bulk)  # the sample's events carry arguments: the comparison is not of empties
