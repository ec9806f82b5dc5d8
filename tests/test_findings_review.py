"""User-tester defects in the Chrome critical path and the findings rules, each pinned by a test."""

from pathlib import Path

import neuron_widgets as nw
from neuron_widgets import analysis as A

TRACES = Path(__file__).parent / "data" / "traces"


def test_simple_trace_path_runs_through_the_last_thread_not_a_global_instant():
    p = nw.load_profile(TRACES / "catapult" / "simple_trace.json")
    path = A.critical_path(p)
    # A global instant (pid 0, tid 0) at 880 µs used to end the run: one 62 µs gap, no event on the path.
    assert (path.event_id >= 0).any()
    assert set(path.thread_id.dropna()) == {22630}
    assert path.end_ts.max() == 870_000 and path.start_ts.min() == 818_000
    assert path.loc[path.kind == "gap", "duration_ns"].sum() == 13_000
    assert A.critical_path_headline(p)["thread_id"] == 22630
