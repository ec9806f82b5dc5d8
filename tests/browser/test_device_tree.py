"""The Device Trace Viewer's hierarchy panel and colours in a real JupyterLab and in an export opened offline."""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf
from playwright.sync_api import Page

import neuron_widgets as nw
from neuron_widgets.export import export_html
from neuron_widgets.widgets import DeviceTraceViewer

from .lab import find_item, open_notebook, shot, theme

VIEW = "document.querySelector('.nw-timeline').__nwView"
CODE = ("import neuron_widgets as nw\nfrom neuron_widgets.widgets import DeviceTraceViewer\n"
        "p = nw.sample_profile()\ndev = DeviceTraceViewer(p.device_trace(p.device_profiles.iloc[0, 0]))\ndev")
ASK = "print('picked', dev.picked_node, len(dev.node_instructions()), dev.color_by)"
JSON_227 = "DeviceTraceViewer(nw.load_device_trace('device_profile_model_1.json'), height=520)"
# The tree's rows as shown: path, the classes that mark the picked and the selected node.
ROWS = """() => [...document.querySelectorAll('.nw-tree-row')].map(r => ({path: r.dataset.path,
  on: r.classList.contains('nw-on'), selected: r.classList.contains('nw-tree-selected')}))"""


def notebook(root: Path, name: str, cells: list[str]) -> None:
    nb = nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(c) for c in cells],
                             metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbf.write(nb, root / name)


def run_cell(page: Page, n: int) -> None:
    page.locator(".jp-CodeCell .jp-InputPrompt").nth(n).click()
    page.keyboard.press("Control+Enter")


def pick_row(page: Page, path: str) -> None:
    page.locator(f".nw-tree-row[data-path='{path}']").click()
    page.wait_for_function(f"(p) => {VIEW}.model.get('picked_node') === p", arg=path, timeout=20_000)


def check_pick(page: Page, row: dict) -> None:
    """The picked node's instructions stand out (the rest dim) and the view fits its span."""
    page.wait_for_function(f"() => +{VIEW}.root.dataset.dimmed > 0 && {VIEW}.view.t0 < {row['start']} && "
                           f"{VIEW}.view.t1 > {row['end']} && {VIEW}.view.t1 - {VIEW}.view.t0 < "
                           f"1.2 * ({row['end']} - {row['start']}) + 300", timeout=20_000)
    shown = page.evaluate(ROWS)
    assert [r["path"] for r in shown if r["on"]] == [row["path"]]


def test_hierarchy_panel_pick_select_sort_colours_and_dark_theme(page: Page, lab: str, lab_root: Path) -> None:
    import json

    import numpy as np

    from neuron_widgets.sample import device_json

    # A device JSON laid out as neuron-profile 2.27 writes it (layers relative to their subgraph).
    path = device_json.write(lab_root / "device_profile_model_1.json", np.random.default_rng(7))
    layers = json.loads(path.read_text())["layer_summary"]
    notebook(lab_root, "device_tree.ipynb", [CODE, ASK, JSON_227])
    open_notebook(page, lab, "device_tree.ipynb")
    run_cell(page, 0)
    page.wait_for_function(f"() => document.querySelectorAll('.nw-tree-row').length > 0 && +{VIEW}.root.dataset.drawn > 0",
                           timeout=90_000)
    rows = page.evaluate(f"() => {VIEW}.model.get('hierarchy').rows")
    shown = page.evaluate(ROWS)
    # A small tree opens down to its operators.
    assert [r["path"] for r in shown] == [r["path"] for r in rows]
    hlo = next(r for r in rows if r["kind"] == "hlo")
    pick_row(page, hlo["path"])
    check_pick(page, hlo)
    shot(page, "device-tree-01-picked-operator")

    # The kernel heard it: node_instructions() gives that operator's instructions.
    run_cell(page, 1)
    page.wait_for_function("() => document.querySelectorAll('.jp-CodeCell')[1].querySelector('.jp-OutputArea-output')",
                           timeout=60_000)
    out = page.locator(".jp-CodeCell").nth(1).locator(".jp-OutputArea-output").inner_text()
    assert f"picked {hlo['path']} {hlo['instructions']} name" in out, out

    # A layer: every instruction under it, the view on its span; a second click clears.
    layer = next(r for r in rows if r["kind"] == "layer" and r["level"] == 1)
    pick_row(page, layer["path"])
    check_pick(page, layer)
    page.locator(f".nw-tree-row[data-path='{layer['path']}']").click()
    page.wait_for_function(f"() => {VIEW}.model.get('picked_node') === '' && {VIEW}.root.dataset.dimmed === '0'",
                           timeout=20_000)

    # An instruction clicked on the timeline: the tree opens to its node, marks it and names its path.
    page.locator(".nw-tree-title").click()  # fold the panel, then unfold it after the selection
    item = None
    for _ in range(20):
        item = find_item(page, 0, 6, plain=True, instruction=True)
        if item:
            break
        page.evaluate(f"() => {VIEW}.setView({{t0: {VIEW}.view.t0, t1: {VIEW}.view.t0 + ({VIEW}.view.t1 - {VIEW}.view.t0) / 2}})")
        page.wait_for_function(f"() => {VIEW}.items && !{VIEW}.viewport.busy", timeout=20_000)
    assert item, "no instruction wide enough to click"
    page.mouse.click(item["x"], item["y"])
    page.wait_for_function(f"() => {VIEW}.model.get('selection_detail').node_path", timeout=20_000)
    node_path = page.evaluate(f"() => {VIEW}.model.get('selection_detail').node_path")
    page.locator(".nw-tree-title").click()
    page.wait_for_function("(p) => document.querySelector('.nw-tree-selected')?.dataset.path === p", arg=node_path,
                           timeout=20_000)
    assert f"Selected instruction: {node_path}" in page.locator(".nw-tree-head").inner_text()
    shot(page, "device-tree-02-selected-instruction")

    # Sort by duration: siblings longest first; collapse the root: one row left.
    page.locator(".nw-tree-table th", has_text="Duration").click()
    page.wait_for_function("() => document.querySelector('.nw-tree-table th:nth-child(3)').textContent.includes('▼')",
                           timeout=10_000)
    by_path = {r["path"]: r for r in rows}
    order = [r["path"] for r in page.evaluate(ROWS)]
    for parent in {r["parent"] for r in rows}:
        kids = [p for p in order if by_path[p]["parent"] == parent]
        assert [by_path[p]["duration"] for p in kids] == sorted((by_path[p]["duration"] for p in kids), reverse=True)
    root = next(r for r in rows if r["level"] == 0)
    page.locator(f".nw-tree-row[data-path='{root['path']}'] .nw-twisty").click()
    page.wait_for_function("() => document.querySelectorAll('.nw-tree-row').length === 1", timeout=10_000)
    page.locator(".nw-tree-head button", has_text="Expand all").click()
    page.wait_for_function("(n) => document.querySelectorAll('.nw-tree-row').length === n", arg=len(rows),
                           timeout=10_000)

    # Colour by layer: the legend opens and names the layers; the kernel hears the choice.
    page.locator("select[title='Colour instructions by']").select_option("layer")
    page.wait_for_function(f"() => {VIEW}.items?.colorKeys && "
                           "document.querySelector('.nw-legend-head')?.textContent.includes('by layer')", timeout=20_000)
    legend = page.locator(".nw-legend").inner_text()
    assert "model/layers." in legend and "DMA" in legend
    shot(page, "device-tree-03-colour-by-layer")
    run_cell(page, 1)
    page.wait_for_function("() => document.querySelectorAll('.jp-CodeCell')[1].querySelector('.jp-OutputArea-output')"
                           "?.textContent.includes(' layer')", timeout=60_000)

    # Dark theme: the panel follows it.
    theme(page, "JupyterLab Dark")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=20_000)
    page.wait_for_function("() => { const c = getComputedStyle(document.querySelector('.nw-tree-table td')).color;"
                           " const [r, g, b] = c.match(/\\d+/g).map(Number); return r + g + b > 400; }", timeout=20_000)
    shot(page, "device-tree-04-dark")
    theme(page, "JupyterLab Light")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=20_000)

    # A device JSON as neuron-profile 2.27 writes it: the layers' MFU from its layer_summary, each
    # layer's operators under it.
    run_cell(page, 2)
    second = "document.querySelectorAll('.nw-timeline')[1]"
    page.wait_for_function(f"() => {second}?.querySelectorAll('.nw-tree-row').length > 0", timeout=90_000)
    tree = page.locator(".nw-timeline").nth(1).locator(".nw-tree")
    tree.scroll_into_view_if_needed()
    assert "MFU" in tree.locator("th").all_inner_texts()
    for layer in layers:
        row = tree.locator(f".nw-tree-row[data-path='{layer['name']}']")
        assert row.locator("td").last.inner_text() == f"{100 * layer['tensor_engine_mfu']:.2f}%"
    assert tree.locator(".nw-tree-row[data-path='/sg00/_dot.0']").count() == 1
    assert tree.locator(".nw-tree-row[data-path='/sg00'] td").nth(4).inner_text() == \
        f"{len(json.loads(path.read_text())['instruction']):,}"  # the subgraph holds every instruction
    # A click on the layer that carries the MFU lights its instructions (the others dim).
    tree.locator(".nw-tree-row[data-path='/sg00/_dot.0']").click()
    view2 = f"{second}.__nwView"
    page.wait_for_function(f"() => {view2}.model.get('picked_node') === '/sg00/_dot.0' && "
                           f"+{view2}.root.dataset.dimmed > 0", timeout=20_000)
    shot(page, "device-tree-06-neuron-profile-227")
    assert not page.errors  # type: ignore[attr-defined]


def test_the_exported_device_viewer_keeps_its_tree_pick_and_colour_menu(open_file, tmp_path: Path) -> None:
    p = nw.sample_profile()
    viewer = DeviceTraceViewer(p.device_trace(p.device_profiles.iloc[0, 0]))
    rows = viewer.hierarchy["rows"]
    first = next(r for r in rows if r["kind"] == "hlo")
    viewer.pick_node(first["path"])
    export_html(tmp_path / "device_tree.html", viewer, time_range="all")
    o = open_file(tmp_path / "device_tree.html")
    page = o.page
    page.wait_for_function(f"() => +{VIEW}.root.dataset.dimmed > 0", timeout=20_000)
    assert [r["path"] for r in page.evaluate(ROWS) if r["on"]] == [first["path"]]
    other = next(r for r in rows if r["kind"] == "hlo" and r["path"] != first["path"])
    pick_row(page, other["path"])
    check_pick(page, other)
    page.locator("select[title='Colour instructions by']").select_option("hlo")
    page.wait_for_function(f"() => {VIEW}.items?.colorKeys?.includes('{other['name']}') && "
                           "document.querySelector('.nw-legend-head')?.textContent.includes('by HLO operator')",
                           timeout=20_000)
    item = find_item(page, 0, 3, plain=True, instruction=True)
    assert item, "no instruction drawn wide enough to click"
    page.mouse.click(item["x"], item["y"])
    page.wait_for_function("() => document.querySelector('.nw-tree-selected')", timeout=20_000)
    shot(page, "device-tree-05-export")
    assert not o.errors and all(r.startswith("file:") for r in o.requests)
