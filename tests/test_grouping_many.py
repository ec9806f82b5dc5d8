"""Grouping by key templates (a million threads in seconds) equals grouping one combo at a time."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest

import neuron_widgets as nw
from neuron_widgets.model.grouping import COMBO_COLUMNS, GROUPINGS, tracks_by_rows, tracks_of
from neuron_widgets.model.grouping_many import tracks_at_least, tracks_by_templates
from neuron_widgets.model.track_names import TrackNames


def random_combos(rng: np.random.Generator, n: int) -> pd.DataFrame:
    def pick(values: list, size: int = n) -> list:
        return [values[i] for i in rng.integers(0, len(values), size)]

    sources = pick(["framework", "neuron_rt", "neuron_hw", "device", "summary", "cpu_op", None])
    rows = {
        "instance_id": pick(["i-a", "i-b", "node/2", None]),
        "trace_event_source": sources,
        "process_id": pick([1, 2, 70, 2**40, None]),
        "thread_id": [int(t) if t >= 0 else None for t in rng.integers(-1, 60, n)] if rng.random() < 0.7
        else [int(t) for t in rng.choice([0, 3, 2**53 + 1, 2**53, 2**62 - 1, -5], n)],
        "nc_idx": pick([0, 1, 7, None]),
        "pcore_idx": pick([0, 3, None]),
        "worker_gid": pick([None, None, 4, 9]),
        "framework_stream_id": pick([None, None, None, "7", "async:gpu", "async:cpu"]),
    }
    frame = pd.DataFrame(rows, columns=list(COMBO_COLUMNS), dtype=object)
    frame["transfer"] = pd.Series(pick([None, None, "host_to_device", "device_to_host"]), dtype=object)
    return frame.drop_duplicates(ignore_index=True)


def random_names(rng: np.random.Generator, combos: pd.DataFrame) -> TrackNames:
    names = TrackNames()
    if rng.random() < 0.3:
        return names
    for inst, pid, tid in combos[["instance_id", "process_id", "thread_id"]].itertuples(index=False):
        if pid is None or tid is None:
            continue
        key = (str(inst), int(pid), int(tid))
        r = rng.random()
        if r < 0.2:
            names.thread[key] = rng.choice(["main", "worker", "", "stream 7", "a/b"])
        elif r < 0.3:
            names.thread_sort[key] = float(rng.integers(-3, 3))
        elif r < 0.35:
            names.text_tids.add(key)
        elif r < 0.4:
            names.tid_texts[(key[0], key[2])] = "Spans"
        if rng.random() < 0.1:
            names.process[(key[0], key[1])] = f"proc {key[1]}"
        if rng.random() < 0.05:
            names.process_sort[(key[0], key[1])] = float(rng.integers(0, 3))
    return names


@pytest.mark.parametrize("seed", range(40))
def test_templates_equal_rows_on_random_combos(seed: int) -> None:
    rng = np.random.default_rng(seed)
    combos = random_combos(rng, int(rng.integers(1, 400)))
    names = random_names(rng, combos)
    for mode in GROUPINGS:
        want_track, want = tracks_by_rows(combos, mode, names)
        fast = tracks_by_templates(combos, mode, names)
        assert fast is not None, mode
        got_track, got = fast
        pd.testing.assert_frame_equal(got, want)
        assert got_track.tolist() == want_track.tolist(), mode
        assert 1 <= tracks_at_least(combos, mode, names) <= len(want), mode  # the export's cheap bound


def test_ids_that_are_not_integers_take_the_row_way() -> None:
    combos = pd.DataFrame({c: [None, None] for c in COMBO_COLUMNS}, dtype=object)
    combos["instance_id"] = ["i", "i"]
    combos["trace_event_source"] = ["framework", "framework"]
    combos["process_id"] = [1, 1]
    combos["thread_id"] = ["12", 1.5]
    combos["transfer"] = [None, None]
    assert tracks_by_templates(combos, "default", TrackNames()) is None
    track, tracks = tracks_of(combos, "default")
    assert tracks["label"].tolist() == ["i/PID:1/TID:1.5", "i/PID:1/TID:12"] and track.tolist() == [1, 0]


def test_many_threads_group_by_templates(tmp_path) -> None:
    """2*10^5 threads, a third of them named, take the template road (its speed is measured in
    bench/bench_many_threads.py, not here)."""
    n = 200_000
    events = [{"ph": "X", "name": "w", "pid": 1 + i % 4, "tid": 1000 + i, "ts": i, "dur": 1} for i in range(n)]
    events += [{"ph": "M", "name": "thread_name", "pid": 1 + i % 4, "tid": 1000 + i, "args": {"name": f"worker {i}"}}
               for i in range(0, n, 3)]
    path = tmp_path / "threads.json"
    path.write_bytes(orjson.dumps({"traceEvents": events}))
    del events
    p = nw.load_profile(path, prepare=False, cache=False)
    tracks = p.tracks()
    assert len(tracks) == n
    assert tracks["label"].iloc[:2].tolist() == ["threads/PID:1/worker 0 1000", "threads/PID:1/TID:1004"]


def test_thread_labels_match_the_pattern_reference() -> None:
    """thread_label's digit-boundary check, without a compiled pattern per id, equals the regular expression."""
    import random
    import re

    from neuron_widgets.model.track_names import thread_label

    rng = random.Random(1)
    for _ in range(20_000):
        tid = rng.choice([0, 1, 7, 12, 123, -5, 2**40, 10])
        name = "".join(rng.choice("0123456789 -a\u00b2\u0661" + str(tid)) for _ in range(rng.randint(0, 12)))
        n = name.strip()
        want = f"thread {tid}" if not n else n if re.search(rf"(?<![0-9]){tid}(?![0-9])", n) else f"{n} {tid}"
        assert thread_label(name, tid) == want, (name, tid)
