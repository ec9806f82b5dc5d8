"""The critical-path headline never offers a saving of nothing, and a small real saving is not shown as 0%."""

from __future__ import annotations

import re
from pathlib import Path

import neuron_widgets as nw
from neuron_widgets import analysis as A

CATAPULT = Path(__file__).parent / "data" / "traces" / "catapult"


def test_a_small_saving_keeps_its_digits() -> None:
    # (flow.json's small saving was its unended RunTask's end moving: the capture's cut, no longer offered.)
    h = A.critical_path_headline(nw.load_profile(CATAPULT / "big_trace.json"), scale=0.9)
    assert 0 < h["saved_pct"] < 1, h
    shown = re.search(r"\(([\d.]+)%\)$", h["sentence"])
    assert shown is not None, h["sentence"]
    assert float(shown.group(1)) > 0 and abs(float(shown.group(1)) - h["saved_pct"]) <= 0.05 * h["saved_pct"]  # two digits


def test_no_saving_is_said_as_such() -> None:
    for name in ("main_thread_has_unclosed_slices.json", "flow.json", "simple_trace.json", "big_trace.json"):
        h = A.critical_path_headline(nw.load_profile(CATAPULT / name))
        if not h:
            continue
        if h["saved_ns"] == 0:
            assert "would not shorten the run" in h["sentence"] and "0 ns" not in h["sentence"], h
        else:
            assert "would save" in h["sentence"] and "(0%)" not in h["sentence"], h


def test_no_saving_is_offered_from_work_that_never_ended() -> None:
    """flow.json's longest host work on the path is a RunTask that never ended (drawn to the trace's end): halving it
    once "saved" time that was only where the recording stopped."""
    p = nw.load_profile(CATAPULT / "flow.json")
    h = A.critical_path_headline(p)
    assert h["saved_ns"] == 0
    assert "would not shorten the run (its host that never ended runs to where the recording stopped" in h["sentence"]
    w = A.what_if(p, {k: h[k] for k in ("instance_id", "process_id", "thread_id", "kind")}, 0.5)
    assert w.unended > 0 and any("never ended" in n for n in w.notes)


def test_a_threads_label_is_its_track_in_the_thread_grouping() -> None:
    """A host thread (or GPU stream) is named as the Timeline's Thread grouping labels its track, the chart too."""
    from neuron_widgets.summary.critical import critical_columns

    p = nw.load_profile(CATAPULT / "big_trace.json")
    h = A.critical_path_headline(p)
    assert h["thread_id"] is not None and h["track"] in set(p.track_index("thread").tracks["label"]), h
    assert h["sentence"].startswith(f"{h['track']} is on the critical path")
    b = A.critical_path_breakdown(p)
    labels = critical_columns({"breakdown": b, "headline": h})["worker"]
    assert h["track"] in labels and all(lab in set(p.track_index("thread").tracks["label"]) for lab in labels
                                        if "other workers" not in lab)


def test_the_readmes_headline_is_what_the_sample_prints() -> None:
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    m = re.search(r"critical_path_headline\(p\)\[\"sentence\"\] +# '(.*)\n +#  (.*)'\n", text)
    assert m is not None, "the README's headline example"
    assert f"{m.group(1)} {m.group(2)}" == A.critical_path_headline(nw.sample_profile())["sentence"]
