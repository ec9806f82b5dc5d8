"""Real traces recorded by other people, each in a Timeline in JupyterLab, with a screenshot to look at."""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Page

from .lab import open_notebook, real_trace, shot, wait_cells_done

REAL = {
    "catapult-big": "catapult/big_trace.json",
    "catapult-flow": "catapult/flow.json",
    "kineto-cpu": "kineto/after_fix_trace.json",
    "hta-sampled": "hta/trace_filter_sampled_rank-0.json.gz",
    "param-dlrm-8rank": "param-dlrm-8rank",
}


def test_each_real_trace_draws_with_its_own_names(page: Page, lab: str, lab_root: Path) -> None:
    lines = ["import neuron_widgets as nw", "from neuron_widgets.widgets import Timeline",
             "from IPython.display import display", "views = []"]
    for rel in REAL.values():
        lines.append(f"views.append(Timeline(nw.load_profile({str(real_trace(rel))!r}), height=360))")
    lines.append("display(*views)")
    nbf.write(nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell("\n".join(lines))],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}}), lab_root / "real.ipynb")
    open_notebook(page, lab, "real.ipynb")
    page.locator(".jp-CodeCell .jp-InputPrompt").first.click()
    page.keyboard.press("Control+Enter")
    wait_cells_done(page, 240_000)
    n = len(REAL)
    page.wait_for_function(f"() => document.querySelectorAll('.nw-timeline').length === {n}", timeout=120_000)
    cut_labels = 0
    for i, name in enumerate(REAL):
        tl = page.locator(".nw-timeline").nth(i)
        tl.scroll_into_view_if_needed()
        page.wait_for_function("(i) => +document.querySelectorAll('.nw-timeline')[i].dataset.drawn > 0", arg=i,
                               timeout=60_000)
        labels = page.evaluate("(i) => document.querySelectorAll('.nw-timeline')[i].__nwView.model.get('tracks')"
                               ".map(t => t.label)", i)
        assert labels and not any("PID:-" in lab for lab in labels), (name, labels[:5])
        assert tl.locator(".nw-overview").is_visible()
        # A label cut by the label column's width says all of itself on hover (its title).
        cut = page.evaluate("""(i) => [...document.querySelectorAll('.nw-timeline')[i].querySelectorAll('.nw-label-text')]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => [e.textContent, e.title])""", i)
        assert all(text and text in title for text, title in cut), (name, cut[:3])
        cut_labels += len(cut)
        shot(page, f"real-{i + 1:02d}-{name}")
    assert cut_labels > 0  # the Kineto CPU trace's long thread names are cut: the check above saw some
    assert not page.errors  # type: ignore[attr-defined]
