"""Flow links (model/flows.py: FlowIndex and pairs_of, behind `dependencies` and the export's arrows) against
plain-Python references on random flow_id lists: repeated ids in one row, empty and null lists, and flows
carried by more events than PAIRS_PER_FLOW_LIMIT (consecutive carriers only)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pyarrow as pa
import pytest

from neuron_widgets.model.flows import PAIRS_PER_FLOW_LIMIT, FlowIndex, pairs_of


def random_flows(seed: int) -> list[list[str] | None]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    ids = int(rng.integers(1, 60))
    out: list[list[str] | None] = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.1:
            out.append(None)
        elif kind < 0.2:
            out.append([])
        else:
            out.append([f"f{int(rng.integers(0, ids))}" for _ in range(int(rng.integers(1, 4)))])
    if seed % 4 == 0:  # one id carried by more events than the limit
        for r in rng.choice(n, min(n, PAIRS_PER_FLOW_LIMIT + int(rng.integers(1, 40))), replace=False):
            out[r] = [*(out[r] or []), "busy"]
    return out


def reference_pairs(flows: list[list[str] | None]) -> list[tuple[int, int]]:
    carriers: dict[str, list[int]] = {}
    for row, ids in enumerate(flows):
        for f in ids or []:
            carriers.setdefault(f, []).append(row)
    pairs = set()
    for rows in carriers.values():
        if len(rows) <= PAIRS_PER_FLOW_LIMIT:
            links = [(rows[i], rows[j]) for i in range(len(rows)) for j in range(i + 1, len(rows))]
        else:
            links = list(pairwise(rows))
        pairs |= {(min(a, b), max(a, b)) for a, b in links if a != b}
    return sorted(pairs)


@pytest.mark.parametrize("seed", range(30))
def test_pairs_and_links_match_the_reference(seed: int) -> None:
    flows = random_flows(seed)
    index = FlowIndex.of(pa.chunked_array([pa.array(flows, pa.list_(pa.string()))]))
    a, b = pairs_of(index)
    assert a.dtype == np.int64 and b.dtype == np.int64
    assert list(zip(a.tolist(), b.tolist(), strict=True)) == reference_pairs(flows)
    for row in range(0, len(flows), 7):
        mine = set(flows[row] or [])
        want = [r for r, ids in enumerate(flows) if r != row and mine & set(ids or [])]
        got = index.linked(row)
        assert got.dtype == np.int64 and got.tolist() == want


@pytest.mark.parametrize("n", [0, 1, 7, 512, 513, 2000])
def test_rows_of_a_table_of_several_chunks_are_those_take_gives(n: int) -> None:
    from neuron_widgets.model.event_access import rows_of, up_and_down

    rng = np.random.default_rng(n)
    parts = [pa.table({"a": rng.integers(0, 9, 700), "b": pa.array(rng.choice(["x", "y"], 700)).dictionary_encode()})
             for _ in range(5)]
    table = pa.concat_tables(parts)
    rows = rng.integers(0, table.num_rows, n)
    assert rows_of(table, rows).to_pylist() == table.take(pa.array(rows, pa.int64())).to_pylist()
    up, down = rows[: n // 3], rows[n // 3:]
    got = up_and_down(table, up, down)
    for side, want in (("upstream", up), ("downstream", down)):
        assert got[side]["row"].tolist() == want.tolist()
        assert got[side].index.tolist() == list(range(len(want)))
        assert got[side].drop(columns="row").to_dict("records") == table.take(pa.array(want, pa.int64())).to_pylist()
