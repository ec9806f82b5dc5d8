"""What critical_path and what_if say when asked what they cannot answer: a filter that selects nothing warns
(naming it), a device trace is refused with what to call instead."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from random_device import random_device_trace
from random_neuron import random_events, write_profile

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis import device_breakdown as device
from neuron_widgets.sample.job import write_job


def _profile(tmp_path: Path) -> nw.Profile:
    seed = next(s for s in range(100) if sum(r["name"] == "nc_exec_running" for r in random_events(s)) > 10)
    return write_profile(tmp_path / "p", random_events(seed))


def test_a_filter_that_selects_nothing_warns_and_names_it(tmp_path: Path) -> None:
    p = _profile(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a filter that selects something: no warning
        assert A.what_if(p, {"kind": "compute"}, 0.5).selected > 0
        A.what_if(p, None, 0.5)
    with pytest.warns(UserWarning, match=r"where=\{'instance_id': 'i-no-such-node', 'kind': 'compute'\} selects no work") as got:
        w = A.what_if(p, {"instance_id": "i-no-such-node", "kind": "compute"}, 0.5)
    assert len(got) == 1 and got[0].filename == __file__  # pointed at the caller
    assert w.saved_ns == 0 and any("nothing changes" in n for n in w.notes)
    # Several changes: only the empty one is named; the other still counts.
    with pytest.warns(UserWarning, match="nrt_exeute") as got:
        w = A.what_if(p, [({"kind": "compute"}, 0.5), ({"name": "nrt_exeute"}, 0.0)])
    assert len(got) == 1 and w.selected > 0
    with pytest.warns(UserWarning, match="a mask selecting 0 events"):
        A.what_if(p, np.zeros(len(p), bool), 0.5)


def test_a_jobs_filter_that_selects_nothing_warns(tmp_path: Path) -> None:
    job = nw.load_job(write_job(tmp_path / "run", nodes=2, events=4_000, processes=1, cores=2, seed=3),
                      results=tmp_path / "results")
    with pytest.warns(UserWarning, match="'part': 'node-99'") as got:
        A.what_if(job, {"part": "node-99"}, 0.5, scheduler="sync")
    assert got[0].filename == __file__


@pytest.mark.parametrize("call", ["critical_path", "critical_path_breakdown", "critical_path_headline", "what_if"])
def test_a_device_trace_is_refused_with_what_to_call_instead(call: str) -> None:
    trace = random_device_trace(1)
    args = ({"kind": "compute"}, 0.5) if call == "what_if" else ()
    with pytest.raises(TypeError, match=r"one execution's instructions.*findings\(trace\).*engine_time"):
        getattr(A, call)(trace, *args)
    # What it points to answers.
    assert len(device.engine_time(trace)) and isinstance(A.findings(trace), type(device.engine_time(trace)))
