"""A device JSON in neuron-profile 2.27's layout in a real JupyterLab: the strip, the hierarchy panel and the
device Summary give each engine the same numbers, and the Summary's notes read as sentences (issue 35.1, 35.2, 35.8)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat as nbf
import numpy as np
from playwright.sync_api import Page

from neuron_widgets.sample import device_json

from .lab import DEEP_TEXT, open_notebook, run_all, shot, wait_cells_done

CELLS = ["import neuron_widgets as nw\nfrom neuron_widgets.widgets import Summary, DeviceTraceViewer\n"
         "viewer = DeviceTraceViewer(nw.load_device_trace('device_profile_model_1.json'), height=380)\nviewer",
         "Summary(viewer)"]
CHIPS = """() => [...document.querySelectorAll('.nw-timeline .nw-chip')].map(c =>
  [c.querySelector('.nw-chip-label').textContent, c.querySelector('.nw-chip-value').textContent])"""
TREE_ROW = """(p) => { const r = document.querySelector(`.nw-tree-row[data-path='${p}']`);
  return r ? [...r.querySelectorAll('td')].map(t => t.textContent) : null; }"""
# Each engine's running and waiting share as the Summary's engines chart holds them.
ENGINE_BARS = """() => { for (const v of Bokeh.index.all_views()) {
    if (v.model.name !== 'nw-device-engines-fig') continue;
    const d = v.model.renderers[0].data_source.data;
    return Object.fromEntries(d.engine.map((e, i) => [e, [d.running[i], d.waiting[i]]])); }
  return null; }"""


def test_strip_tree_and_summary_agree_on_a_real_layout(page: Page, lab: str, lab_root: Path) -> None:
    device_json.write(lab_root / "device_profile_model_1.json", np.random.default_rng(11), instructions=133, dma=356)
    nb = nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(c) for c in CELLS],
                             metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      "language": "python"}})
    nbf.write(nb, lab_root / "device_real.ipynb")
    open_notebook(page, lab, "device_real.ipynb")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function("() => document.querySelectorAll('.nw-timeline .nw-chip').length > 3 && "
                           "document.querySelector(\".nw-tree-row[data-path='/sg00']\")", timeout=90_000)
    chips = dict(page.evaluate(CHIPS))
    engines = {k: v for k, v in chips.items() if k in ("Tensor", "TensorMatrix", "Vector", "Scalar", "GpSimd", "Sync")}
    assert len(engines) == 6, chips
    waited = {k: int(re.search(r"waits (\d+)%", v).group(1)) for k, v in engines.items() if "waits" in v}
    assert waited, engines  # the generated Vector and Sync engines sit in long semaphore waits

    # The tree: the subgraph is the root and holds every instruction; its busiest engine is the strip's.
    root = page.evaluate(TREE_ROW, "/sg00")
    assert root[4] == "133", root
    active = {k: v.split(" · ")[0] for k, v in engines.items()}
    busiest = root[5]
    assert any(busiest == f"{k} {a}" for k, a in active.items()), (busiest, active)
    layer = page.evaluate(TREE_ROW, "/sg00/_dot.0")
    assert layer is not None and int(layer[4]) > 0 and layer[-1].endswith("%"), layer  # instructions and MFU

    # The Summary: its sentence names the engine that waits most with the strip's share; its chart agrees.
    summary = ".nw-summary-widget"
    page.locator(summary).scroll_into_view_if_needed()
    page.wait_for_function(f"() => ({DEEP_TEXT})('{summary}').includes('Instructions') && "
                           f"({DEEP_TEXT})('{summary}').includes('layer_summary')", timeout=90_000)
    text = page.evaluate(DEEP_TEXT, summary)
    hit = re.search(r"(\w+) sits in semaphore waits (\d+)%", text)
    assert hit, text[:600]
    assert int(hit.group(2)) == waited[hit.group(1)] == max(waited.values()), (hit.group(0), waited)
    bars = page.evaluate(ENGINE_BARS)
    assert set(bars) == set(engines)
    assert round(bars[hit.group(1)][1]) == waited[hit.group(1)] and bars[hit.group(1)][0] > 0
    for k, v in engines.items():
        assert f"{bars[k][0]:.0f}%" == v.split(" · ")[1], (k, v, bars[k])
    # Its notes: separate sentences, FLOPs and MFU spelt as such.
    assert re.search(r"instructions\. Span, FLOPs and MFU of 2 layer\(s\) taken from the profile's layer_summary\.",
                     text), text[-600:]
    shot(page, "device-real-layout-summary")
    page.locator(".nw-timeline").first.scroll_into_view_if_needed()
    shot(page, "device-real-layout-viewer")
    assert not page.errors, page.errors  # type: ignore[attr-defined]
