"""What makes `findings` cheap beside `all_analyses` (issue 38, speed): analyses kept once per profile, core codes of
rows outside the analysed events read from their own columns, a core's steps on the critical path counted from
the path's segments; each against fresh computations or a slow reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from random_neuron import random_profile

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis.findings import _steps_on_path
from neuron_widgets.analysis.frame import frame_of


def _reference_codes(p: nw.Profile, cores: pd.DataFrame) -> np.ndarray:
    """Each event's core by looking its (instance, process, nc_idx) up in the cores' table, one event at a time."""
    index = {(str(i), int(pid), int(nc)): k for k, (i, pid, nc) in
             enumerate(zip(cores["instance_id"], cores["process_id"], cores["nc_idx"], strict=True))}
    ev = p.events
    out = []
    for inst, pid, nc in zip(ev["instance_id"], ev["process_id"], ev["nc_idx"], strict=True):
        if pd.isna(nc):
            out.append(-1)
            continue
        out.append(index.get((None if pd.isna(inst) else str(inst), 0 if pd.isna(pid) else int(pid), int(nc)), -1))
    return np.array(out, np.int64)


@pytest.mark.parametrize("seed", range(8))
def test_core_codes_of_any_rows_match_a_reference_without_the_combos(seed: int, tmp_path) -> None:
    p = random_profile(seed, tmp_path / "r")
    if len(p) == 0:
        return
    fr = frame_of(p)
    codes, cores = fr.core_codes()
    want = _reference_codes(p, cores)
    rng = np.random.default_rng(seed)
    # A fifth of the events (read from their own columns), one event alone, then every event (the combos).
    some = np.sort(rng.choice(len(p), size=max(len(p) // 5, 1), replace=False))
    assert codes[some].tolist() == want[some].tolist()
    assert p._combos is None  # answered without coding every event's grouping tuple
    one = int(rng.integers(len(p)))
    assert codes[one] == want[one]
    shuffled = rng.permutation(len(p))
    assert codes[shuffled].tolist() == want[shuffled].tolist()
    assert codes.full().tolist() == want.tolist()


def test_all_analyses_and_findings_share_without_aliasing(tmp_path) -> None:
    path = tmp_path / "s"
    nw.write_sample(path, events=20_000)
    p = nw.load_profile(path, prepare=False)
    got = A.all_analyses(p)
    f = A.findings(p)
    fresh = nw.load_profile(path, prepare=False)  # nothing kept: each computed on its own
    pd.testing.assert_frame_equal(f, A.findings(fresh))
    for name, fn in (("temporal", A.temporal_breakdown), ("idle", A.idle_time_breakdown),
                     ("overlap", A.comm_comp_overlap)):
        pd.testing.assert_frame_equal(got[name], fn(fresh))
    pd.testing.assert_frame_equal(got["problems"], A.errors_and_hangs(fresh))
    # A caller that changes its frame does not change what the next caller gets.
    got["temporal"]["busy_time_ns"] = -1
    assert len(got["problems"])  # the sample has errors and hangs
    got["problems"]["name"] = "changed"
    again = A.all_analyses(p)
    pd.testing.assert_frame_equal(again["temporal"], A.temporal_breakdown(fresh))
    pd.testing.assert_frame_equal(again["problems"], A.errors_and_hangs(fresh))
    assert again["problems"].attrs["notes"] == A.errors_and_hangs(fresh).attrs["notes"]
    pd.testing.assert_frame_equal(A.findings(p), f)


@pytest.mark.parametrize("seed", range(8))
def test_steps_on_path_count_as_the_breakdown(seed: int, tmp_path) -> None:
    p = random_profile(seed, tmp_path / "r")
    if len(p) == 0:
        return
    b = A.critical_path_breakdown(p)
    cores = A.temporal_breakdown(p)[["instance_id", "process_id", "nc_idx"]]
    for core in [*cores.itertuples(index=False, name=None), ("i-none", 1, 99)]:
        if b.empty:
            assert _steps_on_path(p, core) is None
            continue
        hit = b[(b["instance_id"] == core[0]) & (b["process_id"] == core[1]) & (b["nc_idx"] == core[2])]
        want = (int(hit["steps_on_path"].max()), int(hit["steps"].max())) if len(hit) else (0, int(b["steps"].max()))
        assert _steps_on_path(p, core) == want, core
