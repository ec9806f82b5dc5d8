"""The Summary's text tables keep their columns' widths and rows tall enough for the wrapped text; the comparison's
step chart only where there are steps, with whole-step ticks; kind colours readable on light and dark pages."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from bokeh.models import FixedTicker

import neuron_widgets as nw
from neuron_widgets.summary import compare as CMP
from neuron_widgets.summary.critical import KIND_COLORS
from neuron_widgets.summary.findings import FindingsSection

LINE_PX = 15
GLYPH_PX = 6.2  # the cells' font: its average ASCII glyph (measured on the exported page's screenshots)


def lines_at(text: str, width_px: float) -> int:
    """Lines text needs in a cell this wide, counted by characters alone (no word wrapping, so never more)."""
    return math.ceil(len(text) * GLYPH_PX / (width_px - 12))


def findings_frame(titles: list[str]) -> pd.DataFrame:
    n = len(titles)
    return pd.DataFrame({"severity": ["high"] * n, "title": titles, "gain_ns": [1e6] * n,
                         "advice": ["do less"] * n, "start_ts": [None] * n, "end_ts": [None] * n,
                         "part": [""] * n, "rule": ["r"] * n})


def check_fits(table, text_fields: list[str]) -> None:
    """The table keeps its widths (no fitting from whatever width it first had) and every text fits its row."""
    assert table.autosize_mode == "none"
    width = {c.field: c.width for c in table.columns}
    for field in text_fields:
        for v in table.source.data[field]:
            assert LINE_PX * lines_at(str(v), width[field]) <= table.row_height - 6, (field, v, table.row_height)


@pytest.fixture(scope="module")
def kineto_summary():
    return nw.Summary(nw.sample_profile("kineto"))


def test_kineto_findings_keep_a_narrow_severity_and_whole_titles(kineto_summary) -> None:
    table = kineto_summary.charts.findings.table
    width = {c.field: c.width for c in table.columns}
    assert width["severity"] <= 80 and width["severity"] <= 0.1 * sum(width.values())
    assert width["severity"] >= len("medium") * 9 + 12  # the word in bold on one line
    assert width["finding"] >= 3 * width["severity"]
    check_fits(table, ["finding", "gain", "advice"])


def test_a_very_long_title_gets_all_its_lines() -> None:
    long = " ".join(["NCCL across ranks is not in the what-if model"] * 20)  # ~940 characters
    sec = FindingsSection(findings_frame(["short", long]), 0, 10**9)
    check_fits(sec.table, ["finding"])
    sec.update(findings_frame(["short"]), 0, 10**9)  # and back to one short line: rows shrink again
    assert sec.table.row_height <= 2 * LINE_PX + 6


def matched_steps(n: int) -> pd.DataFrame:
    return pd.DataFrame({"status": ["matched"] * n, "delta_ns": [1000 * (i + 1) for i in range(n)],
                         "start_after_ts": [100 * i for i in range(n)], "duration_after_ns": [50] * n,
                         "delta_pct": [1.0] * n, "model_name": ["m"] * n, "step_before": list(range(n)),
                         "step_after": list(range(n)), "duration_before_ns": [10] * n})


def test_one_matched_step_is_a_bar_on_a_whole_step_axis() -> None:
    f = CMP.step_chart(matched_steps(1), 0)
    assert isinstance(f.xaxis[0].ticker, FixedTicker) and list(f.xaxis[0].ticker.ticks) == [0]
    assert f.x_range.end - f.x_range.start >= 5  # the bar (0.8 wide) is a bar, not the whole chart
    assert f.x_range.start < -0.4 and f.x_range.end > 0.4
    many = CMP.step_chart(matched_steps(132), 0)
    ticks = list(many.xaxis[0].ticker.ticks)
    assert all(isinstance(t, int) for t in ticks) and len(ticks) <= 20 and ticks[0] == 0


def test_plain_traces_have_no_step_chart() -> None:
    from pathlib import Path
    traces = Path(__file__).parent / "data" / "traces" / "catapult"
    fix = CMP.FixSection(nw.load_profile(traces / "flow.json"), nw.load_profile(traces / "big_trace.json"))
    # The chart is laid out hidden (a late comparison fills it): with no matched step it stays hidden.
    assert fix.chart is not None and not fix.chart.visible
    shown = {getattr(p, "name", "") for p in fix.parts if getattr(p, "visible", True)}
    assert "nw-fix-steps-fig" not in shown and fix.table is not None


def test_the_comparisons_findings_table_holds_headers_and_ids_whole() -> None:
    who = "i-0a88e4da06d80cbd2/PID:2624383/neuron_rt/NC:1"  # a core as findings and the Timeline name it
    title = "i-0a88e4da06d80cbd2/PID:2624383/neuron_rt/NC:1 arrives last at 55 of 66 collective steps, 73.4 µs late on average " \
            "(others wait 4.55 ms in all), on the critical path in 117 of 132 steps"
    table = pd.DataFrame({"status": ["gone", "same", "same", "same"], "rule": ["straggler"] * 4, "who": [who] * 4,
                          "predicted_gain_ns": [3.4e6] * 4, "run_saving_ns": [9e4] * 4,
                          "gain_after_ns": [None] * 4, "title_before": [title] * 4, "title_after": [title] * 4})
    t = CMP.findings_table(table)
    assert t.source.data["status"] == ["gone"]
    for c in t.columns:  # headers do not wrap: each is as wide as its title
        assert c.width >= len(c.title) * 6.6 + 12, c.title
    width = {c.field: c.width for c in t.columns}
    assert width["who"] >= len(who) * 6.6 + 12  # an id on one line, not broken mid-string
    check_fits(t, ["title"])
    assert CMP.same_text(table) == "3 findings unchanged (not listed)"
    assert CMP.same_text(table.iloc[:2]) == "1 finding unchanged (not listed)"
    assert CMP.same_text(table.iloc[:1]) == ""


def test_one_step_is_said_in_the_singular() -> None:
    assert CMP.singular_steps("longer; 1 steps matched (median") == "longer; 1 step matched (median"
    assert CMP.singular_steps("11 steps matched") == "11 steps matched"
    assert CMP.singular_steps("1,001 steps matched; 2.1 steps") == "1,001 steps matched; 2.1 steps"


def _luminance(hex_colour: str) -> float:
    rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("kind", ["compute", "collective", "host", "launch", "kernel", "memcpy"])
def test_critical_path_kinds_stand_out_on_light_and_dark_pages(kind: str) -> None:
    # JupyterLab's light and dark page backgrounds; 2:1 is the least a bar needs to be told from its page
    for page in ("#ffffff", "#111111"):
        assert _contrast(KIND_COLORS[kind], page) >= 2.0, (kind, page)
