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


def test_one_event_read_after_another_in_its_batch_decodes_nothing_again(tmp_path, monkeypatch) -> None:
    # A click reads its execution's arguments, then the sync point just before it: the second comes from
    # the batch the first decoded. Every read, from a kept batch or not, is the event's own (a scan agrees).
    import pyarrow.parquet as pq

    from neuron_widgets.model.schema import ROW
    from neuron_widgets.readers.neuron import parquet

    p = nw.load_profile(nw.write_sample(tmp_path / "s", events=60_000, seed=3), cache=False)
    lazy = p._lazy
    assert isinstance(lazy, parquet.ParquetLazy)
    decoded: list[int] = []
    real = pq.ParquetFile.iter_batches

    def counting(self, *args, **kwargs):
        for batch in real(self, *args, **kwargs):
            decoded.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counting)
    groups = lazy._row_groups()
    source = p._table.column(ROW).to_numpy()
    rng = np.random.default_rng(3)
    pairs = 0
    for row in rng.choice(len(p) - 1, 40, replace=False).tolist():
        first = p.event(row=int(row))
        src = int(source[row])
        k = int(np.searchsorted(groups["first"], src, side="right")) - 1
        batch_of = (src - int(groups["first"][k])) // parquet._BATCH_ROWS
        # Another event of the same decoded batch, before or after it in the file.
        others = [r for r in range(max(row - 40, 0), min(row + 40, len(p))) if r != row
                  and int(np.searchsorted(groups["first"], int(source[r]), side="right")) - 1 == k
                  and (int(source[r]) - int(groups["first"][k])) // parquet._BATCH_ROWS == batch_of]
        if not others:
            continue
        before = len(decoded)
        near = p.event(row=others[0])
        assert len(decoded) == before  # read from the kept batch: nothing decoded again
        pairs += 1
        for e in (first, near):
            assert lazy._scanned(e) == {n: lazy.value(n, e) for n in lazy.present}
    assert pairs > 10
