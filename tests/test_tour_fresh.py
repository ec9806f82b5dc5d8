"""The tour as a wheel install runs it: no tests/data/traces (nor ../shared) beside it, no NEURON_WIDGETS_TRACES.
Every section shows what its prose says (the Kineto section a Kineto trace), nothing is "not here"."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

TOUR = Path(__file__).resolve().parents[1] / "notebooks" / "tour.ipynb"
TRACKED = TOUR.read_bytes()  # as it was before any test ran it


def _text(cell: nbformat.NotebookNode) -> str:
    out = []
    for o in cell.get("outputs", []):
        out.append(o.get("text", ""))
        out.extend(str(v) for k, v in o.get("data", {}).items() if k.startswith("text/"))
    return "\n".join(out)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory, monkeypatch_module: pytest.MonkeyPatch) -> nbformat.NotebookNode:
    # Two levels down, as in a clone, but nothing beside it.
    where = tmp_path_factory.mktemp("clone") / "project" / "notebooks"
    where.mkdir(parents=True)
    shutil.copy(TOUR, where / "tour.ipynb")
    assert not (where / "../tests/data/traces").exists() and not (where / "../../shared").exists()
    monkeypatch_module.delenv("NEURON_WIDGETS_TRACES", raising=False)
    nb = nbformat.read(where / "tour.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(where)}}).execute()
    return nb


@pytest.fixture(scope="module")
def monkeypatch_module() -> pytest.MonkeyPatch:
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_every_cell_runs_and_nothing_is_missing(ran: nbformat.NotebookNode) -> None:
    code = [c for c in ran.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code)
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    text = "\n".join(_text(c) for c in code)
    assert "not here" not in text and "NEURON_WIDGETS_TRACES" not in text


def test_the_kineto_section_shows_a_kineto_trace(ran: nbformat.NotebookNode) -> None:
    cells = [c for c in ran.cells if c.cell_type == "code"]
    opened = next(c for c in cells if "tl_kineto = Timeline(kineto" in c.source)
    assert "the bundled sample" in _text(opened)
    breakdown = next(c for c in cells if c.source.strip() == "A.temporal_breakdown(kineto)")
    shown = _text(breakdown)
    # HTA's columns per rank, for the sample's two ranks: a GPU trace, not the Neuron sample again.
    assert "rank" in shown and "compute_time_ns" in shown and "nc_idx" not in shown, shown[:800]


def test_the_environment_points_the_tour_at_a_recorded_trace(tmp_path: Path) -> None:
    # The same cell with NEURON_WIDGETS_TRACES set opens the file found there (HTA's, where the tests have it).
    nb = nbformat.read(TOUR, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "tl_kineto = Timeline(kineto" in c.source)
    recorded = tmp_path / "hta" / "trace_diff_control_rank3of8.json.gz"
    recorded.parent.mkdir()
    from neuron_widgets.sample import kineto_sample_paths

    shutil.copy(kineto_sample_paths()[0], recorded)
    scope: dict = {"os": os, "Path": Path}
    exec("import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline\n", scope)
    old = os.environ.get("NEURON_WIDGETS_TRACES")
    os.environ["NEURON_WIDGETS_TRACES"] = str(tmp_path)
    try:
        exec(cell.source.replace("\ntl_kineto\n", "\n").rstrip().removesuffix("tl_kineto"), scope)
    finally:
        if old is None:
            del os.environ["NEURON_WIDGETS_TRACES"]
        else:
            os.environ["NEURON_WIDGETS_TRACES"] = old
    assert Path(scope["kineto"].source) == recorded


def test_running_the_tour_leaves_the_tracked_notebook_as_it_was(ran: nbformat.NotebookNode) -> None:
    """Issue 35 item 13: the tests run a copy; the tracked notebook keeps no outputs and is not rewritten."""
    assert TOUR.read_bytes() == TRACKED
    tracked = nbformat.reads(TRACKED.decode(), as_version=4)
    assert not any(c.get("outputs") for c in tracked.cells if c.cell_type == "code")

