"""Device analyses and the hierarchy against slow references on random device traces, and on the formats."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from random_device import random_device_trace
from reference_device import ref_dma, ref_hierarchy, ref_layers, ref_top, ref_waits

import neuron_widgets as nw
from neuron_widgets.analysis import device_breakdown as D

SEEDS = range(120)


@pytest.mark.parametrize("seed", SEEDS)
def test_hierarchy_matches_the_reference(seed: int) -> None:
    trace = random_device_trace(seed)
    h = trace.hierarchy()
    ref = ref_hierarchy(trace.instructions)
    assert set(h["path"]) == set(ref)
    for row in h.to_dict("records"):
        r = ref[row["path"]]
        assert (row["name"], row["kind"], row["level"], row["parent"]) == (r["name"], r["kind"], r["level"], r["parent"])
        assert (row["start_ts"], row["end_ts"], row["instructions"]) == (r["start"], r["end"], r["count"])
        assert row["duration_ns"] == r["end"] - r["start"]
        active = {c[: -len("_active_ns")]: row[c] for c in h.columns if c.endswith("_active_ns") and row[c]}
        assert active == {e: v for e, v in r["active"].items() if v}
        waits = {c[: -len("_wait_ns")]: row[c] for c in h.columns if c.endswith("_wait_ns") and row[c]}
        assert waits == {e: v for e, v in r["wait"].items() if v}
        if "adjusted_flops" in trace.instructions:
            assert row["flops"] == pytest.approx(r["flops"])
    # Tree order: every parent comes before its children, siblings by start.
    seen: set[str] = {""}
    for parent, path in zip(h["parent"], h["path"], strict=True):
        assert parent in seen
        seen.add(path)


@pytest.mark.parametrize("seed", SEEDS)
def test_top_layers_say_own_and_inclusive_as_the_hierarchy(seed: int) -> None:
    """Issue 35.2: `/sg00` read 113 instructions in top_operators and 133 in the hierarchy. A layer's row is its
    hierarchy path; own_* are its own instructions (what it is ranked by; the own shares add up to 1), the rest
    include its sublayers, as the hierarchy counts them."""
    trace = random_device_trace(seed)
    got = D.top_operators(trace, "layer", limit=None)
    ref = ref_layers(trace.instructions) if len(trace) else {}
    assert set(got["layer"]) == set(ref)
    for row in got.to_dict("records"):
        r = ref[row["layer"]]
        assert (row["own_instructions"], row["own_engine_ns"], row["instructions"], row["engine_ns"], row["busy_ns"]) \
            == (r["own_instructions"], r["own_engine_ns"], r["instructions"], r["engine_ns"], r["busy_ns"])
        assert {c[4:-3]: row[c] for c in got.columns if c.startswith("own_") and c.endswith("_ns")
                and c != "own_engine_ns" and row[c]} == {e: v for e, v in r["own_per"].items() if v}
    assert list(got["own_engine_ns"]) == sorted(got["own_engine_ns"], reverse=True)
    if got["own_engine_ns"].sum() > 0:  # instructions of no length have no engine time to share
        assert got["own_share"].sum() == pytest.approx(1.0)
    if len(got):
        h = trace.hierarchy()
        layers = h[h["kind"] == "layer"].set_index("path")["instructions"]
        for path, n in zip(got["layer"], got["instructions"], strict=True):
            if path in layers.index:  # "(no layer)" is no node of the tree
                assert n == layers[path], path


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("by,column", [("hlo", "hlo_name"), ("opcode", "opcode")])
def test_top_operators_match_the_reference(seed: int, by: str, column: str) -> None:
    trace = random_device_trace(seed)
    got = D.top_operators(trace, by, limit=None)
    ref = ref_top(trace.instructions, column) if len(trace) else {}
    assert set(got[by]) == set(ref)
    for row in got.to_dict("records"):
        r = ref[row[by]]
        assert (row["instructions"], row["engine_ns"], row["busy_ns"]) == (r["instructions"], r["engine_ns"], r["busy_ns"])
        assert {c[:-3]: row[c] for c in got.columns if c.endswith("_ns") and c not in ("engine_ns", "busy_ns")
                and row[c]} == {e: v for e, v in r["per"].items() if v}
    assert list(got["engine_ns"]) == sorted(got["engine_ns"], reverse=True)


@pytest.mark.parametrize("seed", SEEDS)
def test_dma_traffic_and_semaphore_waits_match_the_reference(seed: int) -> None:
    trace = random_device_trace(seed)
    got = D.dma_traffic(trace)
    ref = ref_dma(trace.dma) if not trace.dma.empty else {}
    assert {(q, d) for q, d in zip(got["queue"], got["direction"], strict=True)} == set(ref)
    for row in got.to_dict("records"):
        r = ref[(row["queue"], row["direction"])]
        assert (row["packets"], row["bytes"], row["busy_ns"]) == (r["packets"], r["bytes"], r["busy_ns"])
        assert row["bandwidth_gbps"] == pytest.approx(r["bytes"] / max(r["busy_ns"], 1))
    waits = D.semaphore_waits(trace)
    ref_w = ref_waits(trace.instructions) if len(trace) else {}
    assert set(waits["engine"]) == set(ref_w)
    for row in waits.to_dict("records"):
        r = ref_w[row["engine"]]
        assert (row["waits"], row["wait_ns"]) == (r["waits"], r["wait_ns"])
        if "evt_wait_time_ns" in trace.instructions:
            assert row["event_wait_ns"] == r["event_wait"]
        else:
            assert np.isnan(row["event_wait_ns"])
    sentence = D.device_bound(trace)
    assert sentence.endswith(".") and "nan" not in sentence


def test_the_generator_makes_the_promised_shapes() -> None:
    traces = [random_device_trace(s) for s in SEEDS]
    assert any(len(t) == 0 for t in traces) and any(len(t) >= 2000 for t in traces)
    assert any(t.instructions["layer"].isna().all() for t in traces if len(t))
    assert any(t.instructions["layer"].isna().any() and t.instructions["layer"].notna().any() for t in traces if len(t))
    assert any("nki_source_location" in t.instructions for t in traces)
    assert any(t.dma.empty for t in traces) and any("source" in t.dma for t in traces)
    assert any(isinstance(t.instructions["opcode"].dtype, pd.CategoricalDtype) for t in traces if len(t))
    assert any(t.instructions["timeline_track"].isna().any() for t in traces if len(t))
    # neuron-profile's layout, decided per row: relative layers, full paths, rows without a subgraph.
    mixed = [t.instructions for t in traces if "fully_qualified_subgraph" in t.instructions and len(t) > 100]
    assert mixed and all(ins["fully_qualified_subgraph"].isna().any() for ins in mixed)
    assert any((ins["layer"] == "").any() and ins["layer"].str.startswith("/sg0").any()
               and ins["layer"].str.match(r"^[a-z]").any() for ins in mixed)
    assert any("queue_idx" in t.dma and (t.dma["queue_name"].isna() | (t.dma["queue_name"] == "")).any()
               for t in traces if not t.dma.empty)


def neuron_profile_227(path, n_layers: int = 3) -> tuple:
    """A device JSON in the older layout where each instruction's `layer` is already a full path (`/sg00`, as its
    subgraph), with a layer_summary that agrees with its instructions. The real 2.27 layout (layers relative to
    their subgraph) is neuron_widgets.sample.device_json's, tested in test_device_real_layout.py."""
    rng = np.random.default_rng(7)
    instructions, layers = [], []
    t = 0
    for k in range(n_layers):
        first = t
        for i in range(40):
            d = int(rng.integers(10, 200))
            instructions.append({"timestamp": t, "duration": d, "label": ["TensorMatrix", "Vector", "Scalar"][i % 3],
                                 "opcode": ["MATMUL", "TENSOR_TENSOR", "ACTIVATE"][i % 3], "operands": "x",
                                 "hlo_name": f"_dot.{k}" if i % 2 else f"_add.{k}", "layer": f"/sg0{k}",
                                 "fully_qualified_subgraph": f"/sg0{k}", "id": 2**60 + len(instructions),
                                 "subgroup": "", "pc": i})
            t += d + int(rng.integers(0, 30))
        layers.append({"name": f"/sg0{k}", "start": first, "end": instructions[-1]["timestamp"]
                       + instructions[-1]["duration"], "tensor_engine_mfu": 0.01 * (k + 1)})
        layers[-1]["duration"] = layers[-1]["end"] - layers[-1]["start"]
    dma = [{"timestamp": 5 * i, "duration": 20, "subgroup": "qSyncSpillReload0-Q1-E0", "dma_queue": 0,
            "queue_type": "data", "source": [["WEIGHT"]], "dest": ["SB"], "transfer_size": 4096, "id": i}
           for i in range(30)]
    doc = {"instruction": instructions, "dma": dma, "layer_summary": layers,
           "summary": [{"total_time": t / 1e9, "mfu_estimated_percent": 0.02}],
           "metadata": [{"profile_name": "p227"}]}
    path.write_text(json.dumps(doc))
    return path, layers


def test_hierarchy_of_a_227_device_json_equals_its_layer_summary(tmp_path) -> None:
    path, layers = neuron_profile_227(tmp_path / "device_profile_model_1.json")
    trace = nw.load_device_trace(path)
    h = trace.hierarchy()
    for layer in layers:
        row = h[h["path"] == layer["name"]].iloc[0]
        assert row["source"] == "layer_summary"
        assert (row["start_ts"], row["end_ts"], row["duration_ns"]) == (layer["start"], layer["end"], layer["duration"])
        assert row["mfu"] == pytest.approx(100 * layer["tensor_engine_mfu"])
        # The instructions agree with the summary here, so the computed span is the same.
        ins = trace.instructions[trace.instructions["layer"] == layer["name"]]
        assert row["instructions"] == len(ins) and row["end_ts"] == ins["end_ts"].max()
    ops = h[h["kind"] == "hlo"]
    assert set(ops["path"]) >= {"/sg00/_dot.0", "/sg00/_add.0"}
    assert ops["parent"].isin([x["name"] for x in layers]).all()
    assert any("layer_summary" in n for n in h.attrs["notes"])
    dma = D.dma_traffic(trace)
    assert dma.loc[0, "direction"] == "WEIGHT → SB" and dma.loc[0, "bytes"] == 30 * 4096


def test_layers_only_the_summary_knows_are_kept(tmp_path) -> None:
    path, _ = neuron_profile_227(tmp_path / "d.json")
    doc = json.loads(path.read_text())
    doc["layer_summary"].append({"name": "/sg99", "start": 0, "end": 10, "duration": 10, "tensor_engine_mfu": 0.5})
    path.write_text(json.dumps(doc))
    h = nw.load_device_trace(path).hierarchy()
    extra = h[h["path"] == "/sg99"].iloc[0]
    assert extra["instructions"] == 0 and extra["mfu"] == pytest.approx(50) and extra["source"] == "layer_summary"


def test_device_analyses_on_the_sample_and_their_errors() -> None:
    p = nw.sample_profile()
    trace = p.device_trace("neuron_profile_001")
    r = D.device_breakdown(trace)
    assert r["engines"]["share"].between(0, 1).all() and len(r["engines"]) == 6
    assert r["opcodes"].iloc[0]["engine_ns"] >= r["opcodes"].iloc[-1]["engine_ns"]
    assert "Compute-bound on TensorMatrix" in r["bound"]
    assert r["waits"].set_index("engine").loc["Sync", "waits"] > 0
    util = D.layer_utilisation(trace)
    assert (util.filter(like="_util") <= 1.0 + 1e-9).all().all()
    with pytest.raises(TypeError, match="system profile"):
        D.engine_time(p)
    with pytest.raises(TypeError, match=r"nw\.load_device_trace"):
        D.engine_time("device_profile_model_1.json")
    with pytest.raises(ValueError, match="by must be one of"):
        D.top_operators(trace, "colour")


def test_an_aligned_trace_moves_its_layer_summary(tmp_path) -> None:
    path, layers = neuron_profile_227(tmp_path / "d.json")
    trace = nw.load_device_trace(path).aligned(1_000_000, "test")
    h = trace.hierarchy()
    row = h[h["path"] == "/sg00"].iloc[0]
    assert row["start_ts"] == layers[0]["start"] + 1_000_000
