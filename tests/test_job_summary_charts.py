"""Summary(job)'s charts: the parts' errors and hangs shown and said, no code compiled in the page, and titles
that fit two charts to a row."""

from __future__ import annotations

from pathlib import Path

import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource, HoverTool

import neuron_widgets as nw
from neuron_widgets.analysis.across import across
from neuron_widgets.sample.job import write_job
from neuron_widgets.summary.job import JobSummaryCharts


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    where = tmp_path_factory.mktemp("job")
    job = nw.load_job(write_job(where / "job", nodes=3, events=30_000, processes=1, cores=3, seed=4),
                      results=where / "results")
    return across(job, ["temporal_breakdown", "stragglers", "errors_and_hangs"], scheduler="sync")


def test_the_parts_errors_and_hangs_are_shown_and_said(results: dict) -> None:
    problems = results["errors_and_hangs"]
    assert set(zip(problems["part"], problems["kind"], strict=True)) == {("node-02", "error"), ("node-00", "hang")}
    c = JobSummaryCharts(results)
    rows = c.problems.source.data
    # A core as the job's Timeline labels its track under the part: `<part>/<instance>/PID:<pid>/neuron_rt/NC:<n>`.
    inst = dict(zip(problems["part"], problems["instance_id"], strict=True))
    assert sorted(zip(rows["kind"], rows["device"], rows["code"], strict=True)) == [
        ("error", f"node-02/{inst['node-02']}/PID:2495392/neuron_rt/NC:2", "1003"),
        ("error", f"node-02/{inst['node-02']}/PID:2495392/neuron_rt/NC:2", "1003"),
        ("hang", f"node-00/{inst['node-00']}/PID:2563698/neuron_rt/NC:0", "")]
    assert all(0 <= t < 1000 for t in rows["t_ms"])  # ms from the job's start
    assert "Found 2 errors (node-02) and 1 hang (node-00)" in c.sentence.text
    assert c.problems in c.layout.children


def test_no_errors_say_so(results: dict) -> None:
    quiet = {**results, "errors_and_hangs": results["errors_and_hangs"].iloc[:0]}
    c = JobSummaryCharts(quiet)
    assert c.problems.source.data["kind"] == ["none found"] and "No error or hang in any part." in c.sentence.text


def test_no_chart_compiles_code_in_the_page(results: dict) -> None:
    """An exported page's content security policy forbids eval: no CustomJS or CustomJSHover anywhere; hover
    reads the row's label and the step from columns."""
    c = JobSummaryCharts(results)
    doc = Document()
    doc.add_root(c.layout)
    kinds = {type(m).__name__ for m in doc.models}
    assert not {k for k in kinds if k.startswith("CustomJS")}, kinds
    data = c.cells.data
    assert len(data["image"]) == len(c.matrix.rows) == len(data["row_label"])
    assert data["row_label"] == c.matrix.rows and list(data["step"][0].ravel()) == c.matrix.col_step


def test_two_charts_to_a_row_with_titles_and_legends_that_fit(results: dict) -> None:
    """Titles end at the frame's right edge, the chart's width before them (issue 35.6: aligned left they ran past
    it beside long axis labels): each line fits the chart at its smallest; legends at the right, three to a row."""
    from neuron_widgets.summary.charts import LEGEND_COLUMNS, MIN_CHART_PX, TITLE_LINE_CHARS

    c = JobSummaryCharts(results)
    for f in (c.nodes, c.stragglers, c.cores):
        assert f.min_width >= 460
    for f in c.figures:
        assert f.title.align == "right"
        # ~7.2 px a character of 13 px bold text, a few px of border: every line fits the smallest chart.
        assert all(len(line) <= TITLE_LINE_CHARS for line in f.title.text.split("\n")), f.title.text
        assert TITLE_LINE_CHARS * 7.2 < MIN_CHART_PX - 20
        for legend in f.legend:
            assert legend.location in ("top_right", "bottom_right")
            assert legend.orientation != "horizontal" or legend.ncols == LEGEND_COLUMNS


def test_the_widget_opens_a_problems_part_at_its_event(tmp_path: Path, results: dict) -> None:
    from neuron_widgets.widgets import Summary

    job = nw.load_job(write_job(tmp_path / "job", nodes=3, events=30_000, processes=1, cores=3, seed=4),
                      results=tmp_path / "results")
    s = Summary(job)
    assert s.done.wait(120), s.status.value
    kinds = s.charts.problems.source.data["kind"]
    s.charts.problems.source.selected.indices = [kinds.index("hang")]
    assert s.part_shown == "node-00" and s.part_timeline.selection["name"] == "nc_exec_running"


def test_a_cores_bar_reads_its_track_short_with_the_whole_label_on_hover(results: dict) -> None:
    """The job's straggler and core bars: `<part>/…/PID:<pid>/neuron_rt/NC:<n>` on the axis (the track's own text
    after the …), the track label whole (`<part>/<instance>/...`, what findings name) on hover."""
    from neuron_widgets.summary.job import short_cores

    c = JobSummaryCharts(results)
    s = results["stragglers"].iloc[0]
    for fig in (c.stragglers, c.cores):
        data = fig.select_one({"type": ColumnDataSource}).data
        for short, full in zip(data["device"], data["full"], strict=True):
            part, _inst, rest = full.split("/", 2)
            assert short == f"{part}/…/{rest}" and rest in full and rest.startswith("PID:")
    top = c.stragglers.select_one({"type": ColumnDataSource}).data
    assert top["full"][0] == f"{s['part']}/{s['instance_id']}/PID:{s['process_id']}/neuron_rt/NC:{s['nc_idx']}"
    hover = next(t for t in c.stragglers.tools if isinstance(t, HoverTool))
    assert ("device", "@full") in hover.tooltips
    # Two instances of one part whose cores would read alike keep their whole labels.
    twins = ["n/i-1/PID:1/neuron_rt/NC:0", "n/i-2/PID:1/neuron_rt/NC:0"]
    assert short_cores(twins) == twins and short_cores(twins[:1]) == ["n/…/PID:1/neuron_rt/NC:0"]
