"""The Kineto critical path (launches, stream/event/device syncs, stream waits, NCCL across ranks) against the
reference, on random Kineto-like jobs, and on small traces whose path is known."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from kineto_random import write_job
from reference_critical_path import ChromeModel

import neuron_widgets as nw
from neuron_widgets import analysis as A


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["kind"] = df["kind"].astype(str)
    return df.astype(object).where(df.notna(), None).reset_index(drop=True)


def _load(files):
    return nw.load_profile(files if len(files) > 1 else files[0], cache=False, prepare=False)


@pytest.mark.parametrize("chunk", range(3))
def test_kineto_path_and_replay_match_the_reference(chunk, tmp_path):
    seen = {"rank jumps": 0, "waited for a kernel": 0, "stream waits": 0, "collectives": 0}
    for seed in range(chunk * 30, (chunk + 1) * 30):
        p = _load(write_job(tmp_path, seed))
        fast = A.critical_path(p)
        ref = ChromeModel(p)
        want = ref.path_frame()
        got = _plain(fast.drop(columns="part"))
        assert len(got) == len(want), seed
        assert (got.to_numpy() == _plain(want).to_numpy()).all(), seed
        assert int(fast["duration_ns"].sum()) == ref.replay([])[0], seed
        kinds, names, inst = fast["kind"].astype(str).tolist(), fast["name"].tolist(), fast["instance_id"].tolist()
        seen["rank jumps"] += sum(1 for i in range(1, len(kinds)) if kinds[i] == "collective" and inst[i] != inst[i - 1]
                                  and kinds[i - 1] != "gap")
        seen["waited for a kernel"] += sum(1 for i in range(1, len(kinds)) if kinds[i - 1] in ("kernel", "memcpy")
                                           and str(names[i]).endswith("Synchronize"))
        seen["stream waits"] += sum(1 for v, ps in ref.preds.items() for q in ps if q[4] == 4 and v[0] == "s"
                                    and ref.bind[v] is q)
        seen["collectives"] += sum(1 for k in ref.t if k[0] == "m")
        rng = np.random.default_rng(seed)
        changes = [({"kind": str(rng.choice(["kernel", "host", "gap", "collective", "launch"]))},
                    float(rng.choice([0.0, 0.5, 2.0])))]
        if len(fast):
            seg = fast.iloc[int(rng.integers(0, len(fast)))]
            changes.append(({"instance_id": seg["instance_id"], "thread_id": int(seg["thread_id"])}, 0.5))
        span, predicted = ref.replay(changes)
        w = A.what_if(p, changes)
        assert w.span_ns == span and abs(w.predicted_span_ns - predicted) <= 1, (seed, changes)
    # The random jobs exercise what the model adds: the path crosses ranks at collectives, goes from a kernel to
    # the call that waited for it, and kernels bound by a stream wait.
    assert seen["rank jumps"] >= 3, seen
    assert seen["waited for a kernel"] >= 5, seen
    assert seen["stream waits"] >= 3, seen
    assert seen["collectives"] >= 20, seen
