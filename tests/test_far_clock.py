"""A trace with a few events on a far clock: times, spans, the overview strip and the Summary are
measured on the dense part, the outliers listed apart (issue 26, item 3). Compared with a slow,
obviously right reference on random traces."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import neuron_widgets as nw
from neuron_widgets.model.overview import OVERVIEW_BINS, overview


def _trace(path: Path, rng: np.random.Generator, before: int, after: int, dense: int) -> Path:
    """`dense` events over about 100 ms, `before`/`after` events a million seconds either side (µs)."""
    far = 1e12
    ev = [{"ph": "X", "name": f"work_{i % 5}", "pid": 1, "tid": 1 + i % 3, "ts": far + float(t), "dur": float(d)}
          for i, (t, d) in enumerate(zip(np.sort(rng.uniform(0, 100_000, dense)), rng.uniform(0, 300, dense),
                                         strict=True))]
    ev += [{"ph": "X", "name": "boot", "pid": 1, "tid": 9, "ts": 100.0 + 10 * i, "dur": 5.0} for i in range(before)]
    ev += [{"ph": "X", "name": "late", "pid": 1, "tid": 9, "ts": 2 * far + 10 * i, "dur": 5.0} for i in range(after)]
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def _reference_bins(starts: list[int], t0: int, t1: int, bins: int) -> list[int]:
    # One event at a time: the slice of width ceil((t1 - t0) / bins) it starts in.
    width = max(-(-(t1 - t0) // bins), 1)
    out = [0] * bins
    for s in starts:
        k = (s - t0) // width
        if 0 <= k < bins:
            out[k] += 1
    return out


@pytest.mark.parametrize("seed", range(10))
def test_overview_strip_and_spans_on_random_far_clock_traces(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    before, after = [(30, 0), (0, 25), (12, 7), (0, 0)][seed % 4]
    dense = int(rng.integers(400, 3000))
    p = nw.load_profile(_trace(tmp_path / "t.json", rng, before, after, dense), prepare=False, cache=False)
    assert p.far_clock_events == before + after
    starts = [int(v) for v in p.array("start_ts")]
    ends = [int(v) for v in p.array("end_ts")]
    far = 10**15  # ns: anything this far from 1e15 ns (the dense part's clock) is an outlier
    rest = [i for i, s in enumerate(starts) if abs(s - far) < far // 2]
    h0, h1 = min(starts[i] for i in rest), max(ends[i] for i in rest)
    assert p.home_range == (h0, h1) and p.home_duration_ns == h1 - h0
    # Relative times count from the dense part's start, never from the far clock.
    assert p.origin_ts == h0
    ov = overview(p)
    assert ov["range"] == [0.0, float(h1 - h0)]
    assert ov["bins"] == _reference_bins([starts[i] for i in rest], h0, h1, OVERVIEW_BINS)
    want = []
    for name in ("boot", "late"):
        rows = [i for i in range(len(starts)) if abs(starts[i] - far) >= far // 2 and
                (starts[i] < far) == (name == "boot")]
        if rows:
            want.append({"t0": float(min(starts[i] for i in rows) - h0), "t1": float(max(ends[i] for i in rows) - h0),
                         "events": len(rows)})
    assert ov["outliers"] == want
    assert f"{(h1 - h0) / 1e6:,.3f} ms" in repr(p)
    assert (f"{before + after:,} events on a far clock" in repr(p)) == bool(before + after)


def test_an_ordinary_profile_is_unchanged() -> None:
    p = nw.sample_profile()
    assert p.far_clock_events == 0 and p.origin_ts == int(p.metadata.get("origin_ts", p.start_ts))
    ov = overview(p)
    assert ov["outliers"] == [] and sum(ov["bins"]) == len(p)
    assert ov["range"] == [float(p.start_ts - p.origin_ts), float(p.end_ts - p.origin_ts)]


def test_summary_and_info_measure_the_dense_part(tmp_path: Path) -> None:
    from neuron_widgets.model.info import format_summary, summarise
    from neuron_widgets.widgets import Summary, Timeline

    p = nw.load_profile(_trace(tmp_path / "t.json", np.random.default_rng(3), 40, 0, 2000), prepare=False,
                        cache=False)
    tl = Timeline(p)
    assert tl.span[0] < -1e14 and tl.home[0] == 0  # the early clock reachable, to the left
    s = Summary(tl)
    assert s.done.wait(60)
    cards = {c.text.split("\n")[0]: c.text.split("\n")[1] for c in s.charts.head.children[0].children}
    assert cards["Span"].endswith("ms") and float(cards["Span"].split()[0]) < 101
    assert cards["Events"] == "2,000"
    assert "40 events on a far clock left out" in s.status.value
    text = format_summary(summarise(p))
    assert "40 events on a far clock are not in it" in text
    assert f"time span    {p.home_duration_ns / 1e6:,.3f} ms" in text
