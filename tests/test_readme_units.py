"""Issue 35 item 13: the README said the analyses' "shares in percent" while the device analyses'
`share` columns are fractions of 1. What the README says each column holds is what it holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from random_device import random_device_trace

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis import device_breakdown as D

README = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())


@pytest.mark.parametrize("seed", range(6))
def test_device_shares_are_fractions_and_the_readme_says_so(seed: int) -> None:
    trace = random_device_trace(seed)
    et = D.engine_time(trace)
    shares = et[["share", "wait_share"]].to_numpy().ravel()
    assert ((shares >= 0) & (shares <= 1 + 1e-9)).all(), et
    assert re.search(r"device analyses' `share`, `wait_share` and `_util` columns are fractions of 1", README)
    assert "`share`s are fractions of 1, not percent" in README


def test_profile_shares_are_percent_as_the_readme_says() -> None:
    tb = A.temporal_breakdown(nw.sample_profile())
    pct = tb.filter(regex="_pctg$")
    assert not pct.empty and abs(pct[["compute_time_pctg", "collective_time_pctg", "barrier_time_pctg",
                                      "idle_time_pctg"]].sum(axis=1) - 100).max() < 1e-6
    assert "shares in percent (the `_pctg` and `percentage` columns" in README
