"""Chart titles and legends that fit a chart at any width (issue 35.6): titles end at the frame's right edge in
lines that fit the smallest chart, legends sit at the right in rows of a few items. The browser checks the same at
1150 px with JupyterLab's sidebar open and closed (tests/browser/test_summary_fit.py)."""

from __future__ import annotations

import pytest

import neuron_widgets as nw
from neuron_widgets.analysis.device_breakdown import device_breakdown
from neuron_widgets.summary import SummaryCharts
from neuron_widgets.summary.charts import LEGEND_COLUMNS, MIN_CHART_PX, TITLE_LINE_CHARS, title_lines
from neuron_widgets.summary.device_charts import DeviceSummaryCharts


@pytest.mark.parametrize("text,want", [
    ("Short title", "Short title"),
    ("Last to arrive at collectives (steps)", "Last to arrive at collectives (steps)"),
    ("The critical path: its time per worker and kind (% of the run)",
     "The critical path: its time per worker\nand kind (% of the run)"),
    ("Engines: active and waiting share of the execution (%)", "Engines: active and waiting share of\nthe execution (%)"),
    ("How late each core arrived at each collective (µs after the first)",
     "How late each core arrived at each\ncollective (µs after the first)"),
    ("A" * 50, "A" * 50),  # a word longer than a line keeps its line
])
def test_titles_wrap_into_lines_that_fit(text: str, want: str) -> None:
    got = title_lines(text)
    assert got == want
    assert got.replace("\n", " ") == text
    assert all(len(line) <= TITLE_LINE_CHARS for line in got.split("\n") if " " in line)


def test_a_parenthesis_goes_to_its_own_line_where_that_fits() -> None:
    assert title_lines("Busy time per thread (% of the span summarised)", 30) == \
        "Busy time per thread\n(% of the span summarised)"
    # Too long to stand alone: the words wrap instead.
    assert title_lines("Busy (% of the span summarised by every thread)", 30) == \
        "Busy (% of the span summarised\nby every thread)"


def _check(figures: list) -> None:
    assert figures
    assert TITLE_LINE_CHARS * 7.2 < MIN_CHART_PX - 20  # 13 px bold averages ~7.2 px a character
    for f in figures:
        assert f.title.align == "right", f.name
        assert all(len(line) <= TITLE_LINE_CHARS for line in f.title.text.split("\n")), f.title.text
        for legend in f.legend:
            assert legend.location in ("top_right", "bottom_right"), f.name
            if legend.orientation == "horizontal":
                assert legend.ncols == LEGEND_COLUMNS, f.name


def test_every_chart_of_a_summary_fits(sample: nw.Profile) -> None:
    c = SummaryCharts(sample, None, kind="neuron")
    _check(c.figures)


def test_every_chart_of_a_device_summary_fits(sample: nw.Profile) -> None:
    trace = sample.device_trace(sample.device_profiles.iloc[0]["device_profile_name"])
    c = DeviceSummaryCharts(trace, device_breakdown(trace))
    _check(c.figures)
    assert c.layers.title.text == "Top layers by own engine time (ms)"
    assert c.engines.title.text == "Engines: active and waiting share of\nthe execution (%)"
