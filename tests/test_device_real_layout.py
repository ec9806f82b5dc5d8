"""Device JSON as neuron-profile 2.27 lays it out (issue 35 items 1, 2 and 8; issue 36 item 7).

The files are written by neuron_widgets.sample.device_json, field by field as the real exports
are: layers relative to their subgraph, layer_summary rows with full paths covering their
descendants, ids past 2^53, nested DMA source lists, "unknown" places.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_device import random_device_trace
from reference_device import layer_of, ref_engines

import neuron_widgets as nw
from neuron_widgets.analysis import device_breakdown as D
from neuron_widgets.analysis.device_profiles import _numbers
from neuron_widgets.model.device.events import DeviceEvents
from neuron_widgets.model.device.strip import engine_strip, execution_span
from neuron_widgets.model.timefmt import duration
from neuron_widgets.sample import device_json
from neuron_widgets.summary.device_charts import DeviceSummaryCharts, engine_columns
from neuron_widgets.widgets import DeviceTraceViewer

SHAPES = [dict(subgraphs=1, layers=1, depth=1, instructions=133, dma=356),
          dict(subgraphs=1, layers=1, depth=1, instructions=127, dma=40, waits=False),
          dict(subgraphs=3, layers=4, depth=3, instructions=600, dma=200),
          dict(subgraphs=2, layers=6, depth=2, instructions=90, dma=0),
          dict(subgraphs=1, layers=3, depth=4, instructions=1, dma=3)]


def write(tmp_path: Path, seed: int, shape: dict) -> Path:
    return device_json.write(tmp_path / f"device_profile_model_{seed}.json", np.random.default_rng(seed), **shape)


def test_the_generated_file_has_the_real_layout(tmp_path: Path) -> None:
    doc = json.loads(write(tmp_path, 1, SHAPES[0]).read_text())
    for key in ("instruction", "dma", "semaphore_update", "active_time", "dma_throughput", "pending_dma",
                "instruction_usage", "nc_mem_usage", "layer_summary", "summary", "summary_groups",
                "summary_group_order", "terminology", "metadata", "profile_info", "neff_header", "neff_node",
                "dma_queues_info", "model_info", "warnings", "ham"):
        assert isinstance(doc[key], list) and all(isinstance(r, dict) for r in doc[key]), key
    ins = doc["instruction"]
    assert len(ins) == 133 and set(ins[0]) >= {
        "timestamp", "duration", "label", "subgroup", "opcode", "operands", "pc", "id", "hlo_name", "layer", "bir_id",
        "raw_bir_id", "bir_instruction_name", "penguin_id", "raw_penguin_id", "instruction_type", "activation_fn",
        "evt_wait_time", "crc_in", "crc_out", "hlo_attrs", "fully_qualified_subgraph"}
    assert all(r["id"] > 2**53 for r in ins) and {r["fully_qualified_subgraph"] for r in ins} == {"/sg00"}
    own = [r for r in ins if r["layer"] == ""]
    assert own and all(r["hlo_name"] == "" for r in own)
    assert {r["layer"] for r in ins} - {""} == {"_dot.0"}
    rows = {r["name"]: r for r in doc["layer_summary"]}
    assert set(rows) == {"/sg00", "/sg00/_dot.0"}
    counts = {n: sum(v for k, v in r.items() if k.endswith("_instruction_count")) for n, r in rows.items()}
    assert counts == {"/sg00": 133, "/sg00/_dot.0": len(ins) - len(own)}
    dma = doc["dma"][0]
    assert isinstance(dma["source"], list) and isinstance(dma["source"][0], list) and isinstance(dma["dest"], list)
    assert {"subgroup", "dma_queue", "dma_engine", "queue_type", "is_cc_dma"} <= set(dma)
    assert doc["model_info"][0]["sg_name"] == "sg00"


@pytest.mark.parametrize("seed,shape", list(enumerate(SHAPES)))
def test_one_node_per_path_and_parents_hold_their_children(tmp_path: Path, seed: int, shape: dict) -> None:
    """Issue 35.1: the subgraph is the root, its layers under it, the MFU on the node with the instructions."""
    path = write(tmp_path, seed, shape)
    doc = json.loads(path.read_text())
    trace = nw.load_device_trace(path)
    h = trace.hierarchy()
    assert h["path"].is_unique
    assert not h["path"].str.contains(re.escape("(no layer)")).any()
    paths = [layer_of(r) for r in doc["instruction"]]
    # Each node holds the instructions whose layer path is it or lies under it.
    for row in h[h["kind"] == "layer"].itertuples():
        want = sum(p == row.path or p.startswith(row.path + "/") for p in paths)
        assert row.instructions == want, row.path
    subgraphs = sorted({r["fully_qualified_subgraph"] for r in doc["instruction"]})
    roots = h[h["parent"] == ""]
    assert sorted(roots["path"]) == subgraphs and (roots["level"] == 0).all()
    assert roots["instructions"].sum() == len(doc["instruction"])
    # Every layer_summary row is one node: its instructions are the row's counts, its MFU is there.
    for r in doc["layer_summary"]:
        node = h[h["path"] == r["name"]].iloc[0]
        assert node["instructions"] == sum(v for k, v in r.items() if k.endswith("_instruction_count"))
        assert node["mfu"] == pytest.approx(100 * r["tensor_engine_mfu"]) and node["source"] == "layer_summary"
        assert node["instructions"] > 0
        assert node["level"] == r["name"].count("/") - 1
    # Levels follow parents.
    level = dict(zip(h["path"], h["level"], strict=True))
    for row in h.itertuples():
        assert row.level == (level[row.parent] + 1 if row.parent else 0)


def test_a_picked_layer_lights_its_instructions(tmp_path: Path) -> None:
    path = write(tmp_path, 0, SHAPES[0])
    doc = json.loads(path.read_text())
    viewer = DeviceTraceViewer(nw.load_device_trace(path))
    ins = viewer.device_trace.instructions
    layer = next(r["name"] for r in doc["layer_summary"] if r["name"] != "/sg00")
    viewer.pick_node(layer)
    picked = viewer.node_instructions()
    want = [i for i, r in enumerate(doc["instruction"]) if layer_of(r) == layer]
    assert len(picked) == len(want) > 0 and sorted(ins.index.get_indexer(picked.index)) == want
    assert len(viewer.node_instructions("/sg00")) == len(ins)
    # What the browser dims by: each event's node is the layer's subtree for exactly these instructions.
    rows = viewer.hierarchy["rows"]
    under = {k for k, r in enumerate(rows) if r["path"] == layer or r["path"].startswith(layer + "/")}
    events = viewer.profile
    tables = events.column("table").to_pylist()
    src = events.array("source_row")
    lit = sorted(int(src[e]) for e in range(len(events)) if tables[e] == "instructions" and int(viewer._node[e]) in under)
    assert lit == want
    mfu = {r["path"]: r for r in rows if r["mfu"] is not None}
    assert mfu[layer]["instructions"] == len(want)


def agree(trace) -> None:
    """The strip, the Summary's engine chart and headline, the hierarchy, the analyses and the device-profile list
    give each engine the same active time and waits."""
    a, b = execution_span(trace)
    span = max(b - a, 1)
    et = D.engine_time(trace).set_index("engine")
    ref = ref_engines(trace.instructions) if len(trace) else {}
    assert set(et.index) == set(ref)
    for e, r in ref.items():
        assert (et.loc[e, "active_ns"], et.loc[e, "wait_ns"], et.loc[e, "busy_ns"]) == (r["active"], r["wait"], r["busy"])
        assert et.loc[e, "instructions"] == r["instructions"] and et.loc[e, "waits"] == r["waits"]
        assert et.loc[e, "active_ns"] + et.loc[e, "wait_ns"] <= span
    chips = {c["label"]: c for c in engine_strip(trace)}
    for e in et.index:
        active, wait = int(et.loc[e, "active_ns"]), int(et.loc[e, "wait_ns"])
        assert chips[e]["value"].startswith(f"{duration(active)} · {min(active / span, 1):.0%}")
        assert (f"waits {min(wait / span, 1):.0%}" in chips[e]["value"]) == (wait > 0)
    waits = D.semaphore_waits(trace).set_index("engine")
    for e in waits.index:
        assert waits.loc[e, "wait_ns"] == et.loc[e, "wait_ns"]
    r = D.device_breakdown(trace)
    cols = engine_columns(r)
    for e, run, wait in zip(cols["engine"], cols["running"], cols["waiting"], strict=True):
        assert run == pytest.approx(100 * float(et.loc[e, "active_ns"]) / span)
        assert wait == pytest.approx(100 * float(et.loc[e, "wait_ns"]) / span)
    sentence = r["bound"]
    hit = re.search(r"(\S+) sits in semaphore waits (\d+)%", sentence)
    if hit:
        assert f"{hit.group(2)}%" == f"{float(et.loc[hit.group(1), 'wait_ns']) / span:.0%}"
        assert et.loc[hit.group(1), "wait_ns"] == et["wait_ns"].max()
    numbers = _numbers(trace)
    for e in et.index:
        assert numbers[f"{e}_active_pctg"] == pytest.approx(100 * min(float(et.loc[e, "active_ns"]) / span, 1))
    h = trace.hierarchy()
    roots = h[(h["parent"] == "") & (h["kind"] == "layer")]
    if len(roots) == 1 and roots["instructions"].iat[0] == len(trace):
        root = roots.iloc[0]
        for e in et.index:
            assert root[f"{e}_active_ns"] == et.loc[e, "active_ns"] and root[f"{e}_wait_ns"] == et.loc[e, "wait_ns"]
        # The panel's busiest engine (the largest active time) is the strip's busiest.
        busiest = max(et.index, key=lambda e: et.loc[e, "active_ns"])
        assert root[f"{busiest}_active_ns"] == et["active_ns"].max()


@pytest.mark.parametrize("seed", range(60))
def test_engine_numbers_agree_on_random_traces(seed: int) -> None:
    """Issue 35.2."""
    agree(random_device_trace(seed))


@pytest.mark.parametrize("seed,shape", list(enumerate(SHAPES)))
def test_engine_numbers_agree_on_the_real_layout(tmp_path: Path, seed: int, shape: dict) -> None:
    trace = nw.load_device_trace(write(tmp_path, seed, shape))
    agree(trace)
    if shape.get("waits", True) and len(trace) > 100:
        # The long waits on Vector or Sync: the headline, the chart and the strip name the same share.
        et = D.engine_time(trace).set_index("engine")
        worst = et["wait_ns"].idxmax()
        assert et.loc[worst, "wait_ns"] > 0 and et.loc[worst, "active_ns"] > 0
        assert "waits" in {c["label"]: c for c in engine_strip(trace)}[worst]["value"]


def test_dma_queues_and_directions_come_from_the_json(tmp_path: Path) -> None:
    path = write(tmp_path, 3, SHAPES[0])
    doc = json.loads(path.read_text())
    trace = nw.load_device_trace(path)
    traffic = D.dma_traffic(trace)
    assert set(traffic["queue"]) == {r["subgroup"] for r in doc["dma"]}
    assert not traffic["direction"].str.contains("unknown").any() and (traffic["direction"] != "").all()
    both_unknown = [r for r in doc["dma"] if r["source"] == [["unknown"]] and r["dest"] == ["unknown"]]
    assert both_unknown and set(traffic["direction"]) >= {r["queue_type"] for r in both_unknown}
    assert traffic["bytes"].sum() == sum(r["transfer_size"] for r in doc["dma"])
    tracks = set(DeviceEvents.of(trace).tracks("engines")["label"])
    assert {f"DMA/{r['subgroup']}" for r in doc["dma"]} <= tracks
    # Without names the queue and DMA engine numbers name the track.
    for r in doc["dma"]:
        r["subgroup"] = ""
    path.write_text(json.dumps(doc))
    again = nw.load_device_trace(path)
    q = D.dma_traffic(again)["queue"]
    assert q.str.fullmatch(r"queue \d+ E\d+").all()
    assert any(str(t).startswith("DMA/queue ") for t in DeviceEvents.of(again).tracks("engines")["label"])


def test_the_summary_notes_are_separate_sentences(tmp_path: Path) -> None:
    """Issue 35.8: "...computed from N instructions. Span, FLOPs and MFU of 2 layer(s) ..." as two sentences."""
    trace = nw.load_device_trace(write(tmp_path, 0, SHAPES[0]))
    charts = DeviceSummaryCharts(trace, D.device_breakdown(trace))
    note = charts.layout.select_one({"name": "nw-headline-note"}).text
    assert re.search(r"instructions\. Span, FLOPs and MFU of 2 layer\(s\) taken from the profile's layer_summary\.$",
                     note), note
    assert note.startswith("Spans, instruction counts")


BAD_ROWS = [
    {"timestamp": 1e300, "duration": 5, "label": "Vector", "opcode": "TensorTensor"},
    {"timestamp": -1e300, "duration": 5, "label": "Vector", "opcode": "TensorTensor"},
    {"timestamp": 2**63 + 10, "duration": 5, "label": "Vector", "opcode": "TensorTensor"},
    {"timestamp": 100, "duration": -40, "label": "Scalar", "opcode": "Activate"},
    {"timestamp": None, "duration": 5, "label": "Scalar", "opcode": "Activate"},
    {"timestamp": "NaN", "duration": 5, "label": "Scalar", "opcode": "Activate"},
    {"timestamp": 200, "duration": 1e300, "label": "Scalar", "opcode": "Activate"},
    {"timestamp": 300, "duration": None, "label": "Scalar", "opcode": "Activate"},
]


def test_bad_device_times_are_counted_warnings_never_wrapped_numbers(tmp_path: Path) -> None:
    """Issue 36.7: each bad row dropped or clamped, and said so in the trace's warnings and the viewer's notes."""
    path = write(tmp_path, 0, SHAPES[1])
    doc = json.loads(path.read_text())
    good = len(doc["instruction"])
    doc["instruction"] += [dict(r, fully_qualified_subgraph="/sg00", layer="", id=2**60 + k)
                           for k, r in enumerate(BAD_ROWS)]
    doc["dma"].append({"timestamp": 1e300, "duration": 3, "subgroup": "q", "transfer_size": 1})
    doc["dma"].append({"timestamp": 50, "duration": -3, "subgroup": "q", "transfer_size": 1})
    doc["semaphore_update"].append({"id": "s", "timestamp": float("inf") if False else 1e300, "value": 1})
    doc["active_time"].append({"start_ts": 10, "end_ts": 1e300, "duration_ns": 5, "engine": "vector"})
    doc["layer_summary"].append({"name": "/sg00/far", "start": 1e300, "end": 2e300, "duration": 1e300})
    path.write_text(json.dumps(doc))
    trace = nw.load_device_trace(path)
    w = trace.warnings
    assert w["device JSON instruction: rows whose timestamp is out of range (|t| >= 2^62 ns), dropped"] == 3
    assert w["device JSON instruction: rows without a numeric timestamp, dropped"] == 2
    assert w["device JSON instruction: negative durations, clamped to 0 ns"] == 1
    assert w["device JSON instruction: durations reaching past 2^62 ns, shortened"] == 1
    assert w["device JSON instruction: rows without a numeric duration, taken as 0 ns"] == 1
    assert w["device JSON dma: rows whose timestamp is out of range (|t| >= 2^62 ns), dropped"] == 1
    assert w["device JSON dma: negative durations, clamped to 0 ns"] == 1
    assert w["device JSON semaphore_update: rows whose timestamp is out of range (|t| >= 2^62 ns), dropped"] == 1
    assert w["device JSON active_time: rows whose end is missing or out of range, ended at their start"] == 1
    assert len(trace) == good + 3  # the negative, the long and the missing durations are kept, clamped
    for df in (trace.instructions, trace.dma, trace.active_time):
        s, e = df["start_ts"].to_numpy(), df["end_ts"].to_numpy()
        assert df["start_ts"].dtype == np.int64 and (e >= s).all() and (np.abs(e) < 2**62).all() and (s >= 0).all()
    assert trace.instructions["id"].iloc[-1] == 2**60 + len(BAD_ROWS) - 1  # ids stay exact
    h = trace.hierarchy()
    assert (h["start_ts"].abs() < 2**62).all() and any("outside the int64" in n for n in h.attrs["notes"])
    viewer = DeviceTraceViewer(trace)
    assert sum("Reader warning: device JSON" in n for n in viewer.notes) == len(w.counts)
    agree(trace)
    charts = DeviceSummaryCharts(trace, D.device_breakdown(trace))
    assert "Reader warning: device JSON instruction: negative durations" in \
        charts.layout.select_one({"name": "nw-headline-note"}).text


def test_older_layouts_keep_their_full_paths(tmp_path: Path) -> None:
    """Rows whose layer is already a full path (older exports), or that carry no subgraph (Parquet), keep it."""
    ins = pd.DataFrame({"start_ts": [0, 10, 20, 30], "end_ts": [5, 15, 25, 35],
                        "timeline_track": ["Vector"] * 4, "opcode": ["X"] * 4,
                        "layer": ["/sg00/_dot.3", "_dot.3", "", "model/mlp"],
                        "fully_qualified_subgraph": ["/sg00", "/sg00", "/sg00", None]})
    h = nw.DeviceTrace("t", "test", ins).hierarchy().set_index("path")
    assert h.loc["/sg00", "instructions"] == 3 and h.loc["/sg00/_dot.3", "instructions"] == 2
    assert h.loc["/model/mlp", "instructions"] == 1 and h.loc["/model", "instructions"] == 1
    assert len(h) == 4


def test_nan_and_infinity_literals_are_read_and_their_rows_counted(tmp_path: Path) -> None:
    """Python's json writes NaN and Infinity, which strict JSON has not: the file is read, those rows dropped or
    clamped, and each kind counted."""
    path = write(tmp_path, 0, SHAPES[1])
    doc = json.loads(path.read_text())
    good = len(doc["instruction"])
    doc["instruction"] += [{"timestamp": float("nan"), "duration": 5, "label": "Vector", "opcode": "X"},
                           {"timestamp": float("inf"), "duration": 5, "label": "Vector", "opcode": "X"},
                           {"timestamp": 40, "duration": float("nan"), "label": "Vector", "opcode": "X"},
                           {"timestamp": 50, "duration": float("-inf"), "label": "Vector", "opcode": "X"}]
    path.write_text(json.dumps(doc))  # allow_nan: NaN, Infinity, -Infinity literals
    assert "NaN" in path.read_text() and "Infinity" in path.read_text()
    trace = nw.load_device_trace(path)
    w = trace.warnings
    assert w["device JSON: NaN / Infinity literals (not JSON) read as numbers"] == 1
    assert w["device JSON instruction: rows without a numeric timestamp, dropped"] == 2
    assert w["device JSON instruction: rows without a numeric duration, taken as 0 ns"] == 2
    assert len(trace) == good + 2 and (trace.instructions["end_ts"] >= trace.instructions["start_ts"]).all()
    path.write_text(path.read_text()[:-40])  # cut short: still a clear error naming the file
    with pytest.raises(nw.ProfileError, match=re.escape(path.name)):
        nw.load_device_trace(path)


_value = st.one_of(st.none(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
                   st.text(max_size=4), st.booleans(), st.lists(st.integers(), max_size=2))
_row = st.fixed_dictionaries({}, optional={
    "timestamp": _value, "duration": _value, "label": _value, "opcode": _value, "layer": _value,
    "fully_qualified_subgraph": _value, "hlo_name": _value, "id": _value, "subgroup": _value, "dma_queue": _value,
    "dma_engine": _value, "queue_type": _value, "source": _value, "dest": _value, "transfer_size": _value})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ins=st.lists(_row | _value, max_size=12), dma=st.lists(_row | _value, max_size=8),
       layers=st.lists(st.fixed_dictionaries({"name": _value}, optional={"start": _value, "end": _value,
                                                                         "tensor_engine_mfu": _value}), max_size=4))
def test_fuzz_device_json_never_crashes_nor_drops_uncounted(tmp_path: Path, ins, dma, layers) -> None:
    """Any device JSON: a ProfileError naming the file, or a trace whose every dropped row is counted, whose
    times are int64 within the limit, and which the hierarchy, the analyses, the strip and the viewer take."""
    path = tmp_path / "device_profile_model_9.json"
    path.write_text(json.dumps({"instruction": ins, "dma": dma, "layer_summary": layers}))
    try:
        trace = nw.load_device_trace(path)
    except nw.ProfileError as exc:
        assert path.name in str(exc)
        return
    w = trace.warnings.counts
    for key, rows, df in (("instruction", ins, trace.instructions), ("dma", dma, trace.dma)):
        dropped = sum(v for k, v in w.items() if k.startswith(f"device JSON {key}:") and "dropped" in k)
        assert len(df) + dropped == len(rows), (key, dict(w))
        if len(df):
            s, e = df["start_ts"].to_numpy(), df["end_ts"].to_numpy()
            assert df["start_ts"].dtype == np.int64 and (e >= s).all() and (np.abs(e) < 2**62).all()
    h = trace.hierarchy()
    assert h["path"].is_unique
    D.device_breakdown(trace)
    engine_strip(trace)
    DeviceTraceViewer(trace)


@pytest.mark.parametrize("seed", range(30))
def test_random_real_layout_files_match_the_references(tmp_path: Path, seed: int) -> None:
    """Random shapes of neuron-profile 2.27's layout, read from the file: the hierarchy, top operators, DMA
    traffic and waits against the slow references, and every view's engine numbers agreeing."""
    from random_device import random_device_json
    from reference_device import ref_dma, ref_hierarchy, ref_layers, ref_top, ref_waits

    trace = random_device_json(seed, tmp_path)
    ins = trace.instructions
    h = trace.hierarchy()
    if len(trace):
        ref = ref_hierarchy(ins)
        computed = h[h["source"] == "instructions"]
        assert set(h["path"]) == set(ref)  # every layer_summary row names a node the instructions make
        for row in h.to_dict("records"):
            r = ref[row["path"]]
            assert (row["parent"], row["level"], row["instructions"]) == (r["parent"], r["level"], r["count"])
            assert {c[:-10]: row[c] for c in h.columns if c.endswith("_active_ns") and row[c]} == \
                {e: v for e, v in r["active"].items() if v}
            assert {c[:-8]: row[c] for c in h.columns if c.endswith("_wait_ns") and row[c]} == \
                {e: v for e, v in r["wait"].items() if v}
        for row in computed.to_dict("records"):
            assert (row["start_ts"], row["end_ts"]) == (ref[row["path"]]["start"], ref[row["path"]]["end"])
        for by, column in (("hlo", "hlo_name"), ("opcode", "opcode")):
            got = D.top_operators(trace, by, limit=None)
            want = ref_top(ins, column)
            assert {r[by]: (r["instructions"], r["engine_ns"], r["busy_ns"]) for r in got.to_dict("records")} == \
                {k: (v["instructions"], v["engine_ns"], v["busy_ns"]) for k, v in want.items()}
        got = D.top_operators(trace, "layer", limit=None)  # own and inclusive (with its sublayers), by path
        keys = ("own_instructions", "own_engine_ns", "instructions", "engine_ns", "busy_ns")
        assert {r["layer"]: tuple(r[k] for k in keys) for r in got.to_dict("records")} == \
            {k: tuple(v[c] for c in keys) for k, v in ref_layers(ins).items()}
        waits = D.semaphore_waits(trace)
        want_w = ref_waits(ins)
        assert {r["engine"]: (r["waits"], r["wait_ns"]) for r in waits.to_dict("records")} == \
            {k: (v["waits"], v["wait_ns"]) for k, v in want_w.items()}
    if not trace.dma.empty:
        got = D.dma_traffic(trace)
        want = ref_dma(trace.dma)
        assert {(r["queue"], r["direction"]): (r["packets"], r["bytes"], r["busy_ns"]) for r in got.to_dict("records")} \
            == {k: (v["packets"], v["bytes"], v["busy_ns"]) for k, v in want.items()}
    agree(trace)
    assert not trace.warnings  # a well-formed file: nothing dropped or clamped
