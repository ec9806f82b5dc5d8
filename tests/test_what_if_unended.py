"""what_if never scales an event that never ended (its length is where the recording stopped), and says so."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from random_neuron import random_profile, write_profile
from schedule_neuron import draw, simulate

import neuron_widgets as nw
from neuron_widgets import analysis as A

HUNG = {"instance_id": "i-0da8440102dae89fb", "process_id": 1267860, "nc_idx": 0, "kind": "compute"}


def _unended(p: nw.Profile) -> np.ndarray:
    return p.events["incomplete"].fillna(False).to_numpy(bool) if "incomplete" in p.events else np.zeros(len(p), bool)


def test_the_samples_hung_core_saves_nothing_from_its_hang() -> None:
    p = nw.sample_profile()
    assert _unended(p).any()  # the sample's hang: core 0's last execution (and its call, ...)
    w = A.what_if(p, HUNG, 0.5)
    assert w.saved_ns == 0 and w.predicted_span_ns == w.span_ns
    assert w.unended == 1 and w.selected > 0  # its other executions are scaled, the hang is not
    assert any("never ended" in n and "left unscaled" in n for n in w.notes)
    # The hung step ends as recorded: the hang's end is the recording's cut (before the fix it moved 337 us).
    hung = w.steps[w.steps["step"] == 132]
    assert len(hung) == 1 and int(hung["ends_earlier_ns"].iloc[0]) == 0
    with pytest.warns(UserWarning, match="but the work of events that never ended"):
        only = A.what_if(p, {**HUNG, "step": 132}, 0.5)
    assert only.saved_ns == 0 and only.selected == 0 and only.unended == 1
    # Another core's compute still saves time: the gain is read at the last moment that ended.
    nc1 = A.what_if(p, {"instance_id": "i-0a88e4da06d80cbd2", "process_id": 2624383, "nc_idx": 1, "kind": "compute"}, .5)
    assert nc1.saved_ns > 0 and nc1.unended == 0


@pytest.mark.parametrize("seed", [14, 27, 30, 34, 48, 52, 101, 102, 103, 104])
def test_scaling_only_unended_segments_changes_nothing(seed: int, tmp_path) -> None:
    """Random profiles with hangs or unended executions: a change over some events and the same change with the
    unended ones added predict the same; the unended ones alone predict nothing."""
    p = write_profile(tmp_path / "p", simulate(draw(seed))) if seed < 100 else random_profile(seed, tmp_path / "p")
    cut = _unended(p)
    rng = np.random.default_rng(seed)
    some = rng.random(len(p)) < .3
    for scale in (0.0, 0.5, 3.0):
        base = A.what_if(p, some & ~cut, scale)
        with_cut = A.what_if(p, some | cut, scale)
        assert with_cut.predicted_span_ns == base.predicted_span_ns, (seed, scale)
        assert (with_cut.steps["predicted_end_ts"].to_numpy() == base.steps["predicted_end_ts"].to_numpy()).all()
        if cut.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                alone = A.what_if(p, cut, scale)
            assert alone.saved_ns == 0 and alone.selected == 0, (seed, scale)
            assert (alone.steps["predicted_end_ts"] == alone.steps["end_ts"]).all()


def test_some_random_profiles_had_unended_work(tmp_path) -> None:
    """The cases above are not vacuous: most have unended executions the change would have touched."""
    hit = 0
    for seed in (14, 27, 30, 34, 48, 52, 101, 102, 103, 104):
        p = write_profile(tmp_path / f"p{seed}", simulate(draw(seed))) if seed < 100 else \
            random_profile(seed, tmp_path / f"r{seed}")
        cut = _unended(p)
        if cut.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                hit += A.what_if(p, cut, 0.5).unended > 0
    assert hit >= 5
