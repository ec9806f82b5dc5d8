"""Kineto path segments carry the ProfilerStep#N their start falls in (their rank's), and what_if's per-step frame,
its `step` filter and the breakdown's step counts read them; against a slow per-segment lookup on random traces."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from kineto_random import random_job
from reference_critical_path import ChromeModel

import neuron_widgets as nw
from neuron_widgets import analysis as A

STEP = re.compile(r"^ProfilerStep#(\d+)$")


def _with_steps(seed: int, tmp_path) -> nw.Profile:
    """A random Kineto job with ProfilerStep#N spans on each rank's host thread: a rank's own cuts, gaps between
    some steps (time in no step), numbered from a random first step."""
    rng = np.random.default_rng(seed + 1000)
    files = []
    for k, trace in enumerate(random_job(seed)):
        evs = trace["traceEvents"]
        ts = [e["ts"] for e in evs if e.get("ph") == "X"]
        ends = [e["ts"] + e["dur"] for e in evs if e.get("ph") == "X"]
        lo, hi = min(ts), max(ends)
        n = int(rng.integers(1, 6))
        cuts = np.sort(rng.integers(lo - 5, hi + 5, 2 * n))
        first = int(rng.integers(0, 20))
        pid = next(e["pid"] for e in evs if e.get("cat") == "cuda_runtime")
        for j in range(n):
            s, e = int(cuts[2 * j]), int(cuts[2 * j + 1])
            if rng.random() < .7 and j + 1 < n:  # most steps run until the next one starts
                e = int(cuts[2 * j + 2])
            if e > s:
                evs.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{first + j}", "pid": pid,
                            "tid": 1, "ts": s, "dur": e - s})
        f = tmp_path / f"s{seed}-rank{k}.json"
        f.write_text(json.dumps(trace))
        files.append(f)
    return nw.load_profile(files if len(files) > 1 else files[0], cache=False, prepare=False)


def _slow_steps(p: nw.Profile, path: pd.DataFrame) -> list[int]:
    """Per segment, one by one: its rank's ProfilerStep span that contains its start (the latest-starting one), -1."""
    ev = p.events
    spans = [(str(r["instance_id"]), int(STEP.match(r["name"]).group(1)), int(r["start_ts"]), int(r["end_ts"]))
             for r in ev.to_dict("records") if isinstance(r["name"], str) and STEP.match(r["name"])]
    out = []
    for seg in path.to_dict("records"):
        inside = [(s, n) for inst, n, s, e in spans if inst == str(seg["instance_id"]) and s <= seg["start_ts"] < e]
        out.append(max(inside)[1] if inside else -1)
    return out


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["kind"] = df["kind"].astype(str)
    return df.astype(object).where(df.notna(), None).reset_index(drop=True)


@pytest.mark.parametrize("chunk", range(2))
def test_kineto_segments_get_the_profiler_step_their_start_falls_in(chunk, tmp_path) -> None:
    seen_in, seen_out, ranks = 0, 0, 0
    for seed in range(chunk * 15, (chunk + 1) * 15):
        p = _with_steps(seed, tmp_path)
        path = A.critical_path(p)
        # The reference's path, its step column too (the span of the segment's input); and the steps looked up
        # again per segment by its rank's name.
        want = _plain(ChromeModel(p).path_frame())
        got = _plain(path.drop(columns="part"))
        assert len(got) == len(want) and (got.to_numpy() == want.to_numpy()).all(), seed
        slow = _slow_steps(p, path)
        assert path["step"].tolist() == slow, seed
        seen_in += sum(s >= 0 for s in slow)
        seen_out += sum(s < 0 for s in slow)
        ranks += path["instance_id"].nunique() > 1
        # The breakdown counts the steps the path rows name; what_if's `step` filter selects the same segments.
        b = A.critical_path_breakdown(p)
        if len(b):
            assert int(b["steps"].iloc[0]) == len({s for s in slow if s >= 0}), seed
        on = sorted({s for s in slow if s >= 0})
        if on:
            n = on[int(np.random.default_rng(seed).integers(0, len(on)))]
            ref = ChromeModel(p)
            picked = path[path["step"] == n]
            kind = str(picked["kind"].iloc[0])
            w = A.what_if(p, {"step": n, "kind": kind}, 0.0)
            assert w.selected >= int((picked["kind"].astype(str) == kind).sum()), seed  # its path segments at least
            # Per-step frame: one row per step that has top-level events, numbered as the markers are.
            steps = A.what_if(p, None, 1.0).steps
            assert set(steps["step"]) <= {int(STEP.match(nm).group(1)) for nm in p.events["name"]
                                         if isinstance(nm, str) and STEP.match(nm)}, seed
            assert (steps["model_name"] == "ProfilerStep").all() and (steps["predicted_end_ts"] == steps["end_ts"]).all()
            assert ref.replay([])[0] == w.span_ns, seed
    assert seen_in > 150 and seen_out > 20 and ranks > 1, (seen_in, seen_out, ranks)


def test_the_kineto_sample_has_its_six_steps_on_the_path() -> None:
    p = nw.sample_profile("kineto")
    path = A.critical_path(p)
    assert path["step"].tolist() == _slow_steps(p, path)
    assert set(path["step"]) - {-1} == set(range(6))
    w = A.what_if(p, {"kind": "gap"}, 0.0)
    assert w.steps["step"].tolist() == list(range(6)) and (w.steps["model_name"] == "ProfilerStep").all()
    marks = p.events[p.events["name"].str.match(r"ProfilerStep#\d+").fillna(False)]
    for r in w.steps.itertuples():  # recorded: the markers' span over the ranks, as compare(by="step") aligns them
        m = marks[marks["name"] == f"ProfilerStep#{r.step}"]
        assert (r.start_ts, r.end_ts) == (int(m["start_ts"].min()), int(m["end_ts"].max()))
    assert (w.steps["ends_earlier_ns"] >= 0).all() and int(w.steps["ends_earlier_ns"].iloc[-1]) > 0
    b = A.critical_path_breakdown(p)
    assert (b["steps"] == 6).all() and int(b["steps_on_path"].max()) == 6
    assert " is on the critical path in 6 of 6 steps; " in A.critical_path_headline(p)["sentence"]
    # A step filter selects that step's work only: removing step 2's gaps saves no more than all gaps.
    two = A.what_if(p, {"kind": "gap", "step": 2}, 0.0)
    assert 0 < two.saved_ns <= w.saved_ns
