"""The Device Trace Viewer's hierarchy panel and colours, against slow references on random device traces."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from random_device import random_device_trace
from reference_device import layer_of, text
from test_device_analyses import neuron_profile_227
from test_export import Export

import neuron_widgets as nw
from neuron_widgets.model.device.events import DeviceEvents
from neuron_widgets.model.device.hierarchy import NO_LAYER
from neuron_widgets.widgets import DeviceTraceViewer, wire
from neuron_widgets.widgets.device_tree import tree_payload

SEEDS = range(40)


def ref_chain(row: dict) -> list[str]:
    """The paths of an instruction's nodes, outermost first (the hierarchy's rule, spelt out)."""
    names = [s for s in layer_of(row).split("/") if s.strip()]
    extra = [t for t in (text(row.get("hlo_name")), text(row.get("nki_source_location"))) if t]
    if not names and not extra:
        names = [NO_LAYER]
    names += extra
    return ["/" + "/".join(names[: i + 1]) for i in range(len(names))]


def instruction_rows(viewer: DeviceTraceViewer) -> tuple[np.ndarray, np.ndarray]:
    """The viewer's event rows that are instructions, and their rows in the instructions table."""
    ev = viewer.profile
    tables = ev.column("table").to_pylist()
    rows = np.flatnonzero(np.array([t == "instructions" for t in tables], bool))
    return rows, ev.array("source_row")[rows]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_picked_node_holds_exactly_the_instructions_under_it(seed: int) -> None:
    trace = random_device_trace(seed)
    viewer = DeviceTraceViewer(trace)
    rows = viewer.hierarchy.get("rows", [])
    chains = [ref_chain(r) for r in trace.instructions.to_dict("records")]
    if trace.instructions.empty:
        assert rows == [] and viewer._node is None
        return
    assert {r["path"] for r in rows} == {p for c in chains for p in c}
    ev_rows, src = instruction_rows(viewer)
    paths = [r["path"] for r in rows]
    for r in rows:
        want = {i for i, c in enumerate(chains) if r["path"] in c}
        assert set(np.flatnonzero(trace.instructions.index.isin(viewer.node_instructions(r["path"]).index))) == want
        # What the browser dims by: each event's node, and the node's subtree.
        under = {k for k, p in enumerate(paths) if p == r["path"] or p.startswith(r["path"] + "/")}
        lit = {int(s) for e, s in zip(ev_rows, src, strict=True) if int(viewer._node[e]) in under}
        assert lit == want
    # Events that are not instructions (DMA packets) belong to no node.
    others = np.setdiff1d(np.arange(len(viewer.profile)), ev_rows)
    assert (viewer._node[others] == -1).all()
    # A selected instruction names its own (deepest) node.
    if len(ev_rows):
        e = int(ev_rows[len(ev_rows) // 2])
        viewer.selected_row = e
        assert viewer.selection_detail["node_path"] == chains[int(src[len(ev_rows) // 2])][-1]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("by,column,missing", [("layer", "layer", "(no layer)"), ("hlo", "hlo_name", "(no HLO operator)"),
                                               ("nki", "nki_source_location", "(no NKI kernel)")])
def test_colour_keys_are_each_instructions_own_value(seed: int, by: str, column: str, missing: str) -> None:
    trace = random_device_trace(seed)
    events = DeviceEvents.of(trace)
    codes, keys = events.color_codes(by)
    assert codes.size == len(events)
    tables = events.column("table").to_pylist()
    src = events.array("source_row")
    records = trace.instructions.to_dict("records")
    labels = {"dma": "DMA", "instructions": "Engines"}
    for i in range(len(events)):
        if tables[i] == "instructions":
            value = layer_of(records[src[i]]) if by == "layer" else text(records[src[i]].get(column))
            want = (value.strip() and value) or missing
        else:
            want = labels[tables[i]]
        assert keys[codes[i]] == want


def test_the_viewer_colours_by_layer_and_the_reply_carries_colours_and_nodes() -> None:
    trace = random_device_trace(next(s for s in range(200) if len(random_device_trace(s).instructions) >= 300
                                     and random_device_trace(s).instructions["layer"].notna().any()))
    viewer = DeviceTraceViewer(trace)
    assert [c["value"] for c in viewer.color_choices][:2] == ["name", "layer"]
    viewer.color_by = "layer"
    assert viewer._color is not None and len(viewer._color_keys) > 1
    a, b = viewer.span
    meta, buffers = wire.viewport_reply(viewer.profile, "engines", a, b, 800, None, viewer._marked, viewer._color,
                                        None, viewer._node)
    assert "node" in meta["columns"] and "color" in meta["columns"]
    node = np.frombuffer(buffers[meta["columns"].index("node")], np.int32)
    row = np.frombuffer(buffers[meta["columns"].index("row")], np.int32)
    assert (node == viewer._node[row]).all()
    viewer.color_by = "opcode"  # an alias of the name
    assert viewer._color is None
    with pytest.raises(ValueError, match="no node"):
        viewer.pick_node("/not/there")


def test_pick_node_fits_the_view_and_a_retarget_clears_it() -> None:
    p = nw.sample_profile()
    first = p.device_trace(p.device_profiles.iloc[0, 0])
    viewer = DeviceTraceViewer(first)
    node = next(r for r in viewer.hierarchy["rows"] if r["kind"] == "hlo")
    viewer.pick_node(node["path"])
    assert viewer.picked_node == node["path"]
    assert viewer.view[0] < node["start"] < node["end"] < viewer.view[1]
    assert viewer.view[1] - viewer.view[0] < 1.2 * (node["end"] - node["start"]) + 200
    assert len(viewer.node_instructions()) == node["instructions"]
    viewer.show(p.device_trace(p.device_profiles.iloc[1, 0]))
    assert viewer.picked_node == "" and viewer.hierarchy["rows"]
    viewer.pick_node(None)
    assert len(viewer.node_instructions()) == 0


def test_a_long_tree_keeps_the_longest_nodes_and_counts_the_rest_under_their_ancestors() -> None:
    trace = random_device_trace(next(s for s in range(200) if len(random_device_trace(s).hierarchy()) >= 12))
    events = DeviceEvents.of(trace)
    full = trace.hierarchy()
    data, node = tree_payload(events, max_nodes=5)
    kept = [r["path"] for r in data["rows"]]
    assert 5 <= len(kept) < len(full) and any("longest" in n for n in data["notes"])
    longest = full.sort_values("duration_ns", ascending=False, kind="stable")["path"].head(5)
    assert set(longest) <= set(kept)
    for path in kept:  # ancestors come along
        parent = full.set_index("path").at[path, "parent"]
        assert parent == "" or parent in kept
    tables = events.column("table").to_pylist()
    src = events.array("source_row")
    records = trace.instructions.to_dict("records")
    for i in range(len(events)):
        if tables[i] != "instructions":
            assert node[i] == -1
            continue
        listed = [p for p in ref_chain(records[src[i]]) if p in kept]
        # Under its deepest listed node; in no node when even its outermost layer was left out.
        assert (kept[node[i]] if node[i] >= 0 else None) == (listed[-1] if listed else None)


def test_a_227_device_json_shows_the_layer_summary_in_the_panel(tmp_path) -> None:
    path, layers = neuron_profile_227(tmp_path / "device_profile_model_1.json")
    viewer = DeviceTraceViewer(nw.load_device_trace(path))
    rows = {r["path"]: r for r in viewer.hierarchy["rows"]}
    origin = viewer.profile.origin_ts
    trace = viewer.device_trace
    for layer in layers:
        r = rows[layer["name"]]
        assert r["source"] == "layer_summary" and r["mfu"] == pytest.approx(100 * layer["tensor_engine_mfu"])
        h = trace.hierarchy().set_index("path").loc[layer["name"]]
        assert (r["start"], r["end"], r["duration"]) == (h["start_ts"] - origin, h["end_ts"] - origin, h["duration_ns"])
    assert {c["value"] for c in viewer.color_choices} == {"name", "layer", "hlo"}


def test_the_export_carries_the_tree_the_nodes_and_every_colouring(tmp_path) -> None:
    p = nw.sample_profile()
    viewer = DeviceTraceViewer(p.device_trace(p.device_profiles.iloc[0, 0]))
    viewer.color_by = "hlo"
    path = viewer.hierarchy["rows"][3]["path"]
    viewer.pick_node(path)
    viewer.to_html(tmp_path / "device.html", time_range="all")
    page = Export(tmp_path / "device.html")
    meta = page.json("t0:meta")
    assert meta["state"]["hierarchy"] == viewer.hierarchy and meta["state"]["picked_node"] == path
    assert meta["state"]["color_by"] == "hlo" and set(meta["color_sets"]) == {"layer", "hlo"}
    assert meta["color_keys"] == viewer._color_keys
    n = meta["n_exact"]
    assert n == len(viewer.profile)  # every event is exact in this small trace
    node = page.array("t0:node")[:n]  # the page's exact rows are the profile's rows, in order
    assert (node == viewer._node).all()
    layer_codes = page.array("t0:color:layer")[:n]
    want = viewer.profile.color_codes("layer")
    assert [meta["color_sets"]["layer"][c] for c in layer_codes] == [want[1][c] for c in want[0]]


def test_a_trace_without_instructions_has_no_panel() -> None:
    trace = random_device_trace(next(s for s in range(200) if random_device_trace(s).instructions.empty
                                     and not random_device_trace(s).dma.empty))
    viewer = DeviceTraceViewer(trace)
    assert viewer.hierarchy == {} and viewer._node is None
    assert [c["value"] for c in viewer.color_choices] == ["name"]
    assert isinstance(viewer.node_instructions("/x"), pd.DataFrame)
