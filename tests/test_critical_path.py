"""The critical path and what-if against a slow reference (tests/reference_critical_path.py) on random profiles.

Random profiles come from two generators: tests/random_neuron.py (1-64 cores, overlapping and unended
executions, barriers absent or zero-length, cc_running missing, exec_id on some events, launches
after their execution, filtered profiles) and tests/schedule_neuron.py (1-16 cores, 1-30 steps,
random compute, host gaps, late submits, cores without barriers, hung cores, several NEFFs).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from random_neuron import random_profile, write_profile
from reference_critical_path import Model
from schedule_neuron import draw, simulate

from neuron_widgets import analysis as A
from neuron_widgets.analysis.critical_path import COLUMNS

CHUNKS = 5
PER_CHUNK = 30  # 150 profiles


def _profile(seed: int, tmp_path):
    if seed % 2:
        return write_profile(tmp_path / f"job{seed}", simulate(draw(seed)))
    return random_profile(seed, tmp_path / f"rand{seed}")


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["kind"] = df["kind"].astype(str)
    return df.astype(object).where(df.notna(), None).reset_index(drop=True)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_path_and_replay_match_the_reference(chunk, tmp_path):
    seen = 0
    for seed in range(chunk * PER_CHUNK, (chunk + 1) * PER_CHUNK):
        p = _profile(seed, tmp_path)
        fast = A.critical_path(p)
        assert list(fast.columns) == COLUMNS
        ref = Model(p)
        want = ref.path_frame()
        got = _plain(fast.drop(columns="part"))
        assert len(got) == len(want), seed
        assert (got.to_numpy() == _plain(want).to_numpy()).all(), seed
        seen += len(got)
        if len(got):
            # The path covers the run end to end, without overlaps or holes.
            assert int(fast["duration_ns"].sum()) == ref.replay([])[0], seed
            assert (fast["start_ts"].to_numpy()[1:] == fast["end_ts"].to_numpy()[:-1]).all(), seed
            assert (fast["duration_ns"] > 0).all()
        # What-if: a random change or two, replayed by both.
        rng = np.random.default_rng(seed)
        if len(fast):
            changes = []
            for _ in range(int(rng.integers(1, 3))):
                seg = fast.iloc[int(rng.integers(0, len(fast)))]
                col = str(rng.choice(["nc_idx", "kind", "step", "event_id", "thread_id"]))
                where = {"kind": seg["kind"], col: None if pd.isna(seg[col]) else seg[col]}
                where = {k: (v.item() if hasattr(v, "item") else v) for k, v in where.items()}
                changes.append((where, float(rng.choice([0.0, 0.5, 2.0]))))
            span, predicted = ref.replay(changes)
            got_w = A.what_if(p, changes)
            assert got_w.span_ns == span, seed
            assert abs(got_w.predicted_span_ns - predicted) <= 1, (seed, changes)
            assert got_w.saved_ns == span - got_w.predicted_span_ns
    assert seen > 100  # the chunk had real paths to compare


def test_unchanged_replay_gives_back_the_recorded_times(tmp_path):
    for seed in (1, 3, 4, 7):
        p = _profile(seed, tmp_path)
        w = A.what_if(p, {"kind": "compute"}, 1.0)
        assert w.predicted_span_ns == w.span_ns and w.saved_ns == 0
        assert len(w.steps)
        assert (w.steps["predicted_start_ts"] == w.steps["start_ts"]).all()
        assert (w.steps["predicted_end_ts"] == w.steps["end_ts"]).all()


def test_a_mask_over_events_is_the_same_change_as_its_filter(tmp_path):
    job = draw(11, hangs=False, mixed_ids=False)
    p = write_profile(tmp_path / "j", simulate(job))
    inst, pid, nc = job.cores[0]
    ev = p.events
    mask = ((ev["name"] == "nc_exec_running") & (ev["instance_id"] == inst) & (ev["process_id"] == pid)
            & (ev["nc_idx"] == nc)).to_numpy(bool)
    by_mask = A.what_if(p, mask, 0.5)
    by_filter = A.what_if(p, {"instance_id": inst, "process_id": pid, "nc_idx": nc, "kind": "compute"}, 0.5)
    assert by_mask.selected == by_filter.selected > 0
    assert by_mask.predicted_span_ns == by_filter.predicted_span_ns
    # Halving everyone's compute saves something, and several changes compose.
    both = A.what_if(p, [({"kind": "compute"}, 0.5), ({"kind": "gap"}, 0.0)])
    alone = A.what_if(p, {"kind": "compute"}, 0.5)
    assert both.predicted_span_ns < alone.predicted_span_ns < alone.span_ns


def test_breakdown_adds_up_to_the_path(tmp_path):
    p = write_profile(tmp_path / "j", simulate(draw(5)))
    path = A.critical_path(p)
    b = A.critical_path_breakdown(p)
    assert int(b["duration_ns"].sum()) == int(path["duration_ns"].sum())
    assert abs(b["share_pct"].sum() - 100) < 1e-6
    assert (b["steps_on_path"] <= b["steps"]).all() and (b["steps_on_path"] > 0).any()
    # A NeuronCore's compute on the path, counted by hand.
    top = b[b["kind"] == "compute"].iloc[0]
    mine = path[(path["kind"] == "compute") & (path["nc_idx"] == top["nc_idx"])
                & (path["instance_id"] == top["instance_id"]) & (path["process_id"] == top["process_id"])]
    assert int(mine["duration_ns"].sum()) == int(top["duration_ns"])
    assert int(top["steps_on_path"]) >= mine["step"].nunique()


def test_the_sample_profile(tmp_path):
    import neuron_widgets as nw

    nw.write_sample(tmp_path / "s", events=20_000)
    p = nw.load_profile(tmp_path / "s", cache=False, prepare=False)
    path = A.critical_path(p)
    kinds = set(path["kind"].astype(str))
    assert {"compute", "collective", "launch", "host", "gap"} <= kinds
    # Launches go from a host thread to a core: a call's segments are on its thread, compute on its core.
    assert path.loc[path["kind"] == "compute", "thread_id"].isna().all()
    assert path.loc[path["kind"].isin(["launch", "host"]), "thread_id"].notna().all()
    assert any("never completed" in n for n in path.attrs["notes"])
    w = A.what_if(p, {"kind": "gap"}, 0.0)
    assert 0 < w.predicted_span_ns < w.span_ns


def test_bad_changes_say_what_is_wrong(tmp_path):
    p = write_profile(tmp_path / "j", simulate(draw(3)))
    with pytest.raises(ValueError, match="columns are"):
        A.what_if(p, {"core": 1}, 0.5)
    with pytest.raises(ValueError, match="kinds are"):
        A.what_if(p, {"kind": "kernels"}, 0.5)
    with pytest.raises(ValueError, match=">= 0"):
        A.what_if(p, {"kind": "compute"}, -1)
    with pytest.raises(ValueError, match="one per event"):
        A.what_if(p, np.ones(3, bool), 0.5)
    with pytest.raises(ValueError, match="needs a scale"):
        A.what_if(p, {"kind": "compute"})
    w = A.what_if(p, {"nc_idx": 999}, 0.5)
    assert w.saved_ns == 0 and any("select no" in n for n in w.notes)


def test_a_plain_trace_has_a_thread_path_and_an_empty_profile_says_why(tmp_path):
    import neuron_widgets as nw

    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": [{"name": "a", "ph": "X", "ts": 1, "dur": 5, "pid": 1, "tid": 1}]}))
    p = nw.load_profile(f, cache=False)
    path = A.critical_path(p)
    assert path[["duration_ns", "name", "thread_id"]].values.tolist() == [[5000, "a", 1]]
    assert path["kind"].astype(str).tolist() == ["host"]
    empty = p.filter(time_range=(p.end_ts + 10**9, p.end_ts + 2 * 10**9))
    assert len(empty) == 0
    got = A.critical_path(empty)
    assert got.empty and list(got.columns) == COLUMNS
    assert any("no events" in n for n in got.attrs["notes"])
    assert A.critical_path_breakdown(empty).empty
    assert A.what_if(empty, {"kind": "compute"}, 0.5).saved_ns == 0


def test_the_headline_names_the_worker_and_what_halving_its_work_saves(tmp_path):
    p = write_profile(tmp_path / "j", simulate(draw(5)))
    h = A.critical_path_headline(p)
    b = A.critical_path_breakdown(p)
    top = b[b["kind"] == "compute"].sort_values("duration_ns", ascending=False).iloc[0]
    assert (h["instance_id"], h["process_id"], h["nc_idx"], h["kind"]) == \
        (top["instance_id"], int(top["process_id"]), int(top["nc_idx"]), "compute")
    w = A.what_if(p, {"instance_id": h["instance_id"], "process_id": h["process_id"], "nc_idx": h["nc_idx"],
                      "kind": "compute"}, 0.5)
    assert h["saved_ns"] == w.saved_ns > 0
    # The worker as the Timeline labels its core's track (what the track filter finds).
    assert h["track"] == f"{h['instance_id']}/PID:{h['process_id']}/neuron_rt/NC:{h['nc_idx']}"
    assert h["track"] in set(p.track_index("default").tracks["label"])
    assert h["sentence"].startswith(f"{h['track']} is on the critical path "
                                    f"in {h['steps_on_path']:,} of {h['steps']:,} steps; halving its compute would save ")
    # A change that makes the run longer says so.
    slower = A.critical_path_headline(p, scale=2.0)
    assert slower["saved_ns"] < 0 and "doubling its compute would lengthen the run by " in slower["sentence"]
    assert A.critical_path_headline(p.filter(time_range=(p.end_ts + 10**9, p.end_ts + 2 * 10**9))) == {}


def test_a_job_is_computed_part_by_part(tmp_path):
    """A Job used to be refused; now its path is its parts' (more in tests/test_critical_path_job.py)."""
    from neuron_widgets.job import Job

    write_profile(tmp_path / "a", simulate(draw(3)))
    job = Job([tmp_path / "a"], results=tmp_path / "results")
    got = A.critical_path(job, scheduler="sync")
    assert set(got["part"]) == {"a"}
    pd.testing.assert_frame_equal(got.drop(columns="part"), A.critical_path(job.load("a")).drop(columns="part"))
    assert A.what_if(job, {"kind": "compute"}, 0.5, scheduler="sync").predicted_span_ns == \
        A.what_if(job.load("a"), {"kind": "compute"}, 0.5).predicted_span_ns
