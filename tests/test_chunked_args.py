"""Arguments kept and scanned in blocks (issue 35.11: a job part's peak memory) give what one read of
every row gives: the byte scan over a chunked column, the error scan block by block, and the
analyses of a sample profile read with tiny blocks against the same profile read whole."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from test_arg_scan import texts
from test_error_args import random_trace

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.analysis import frame as frame_mod
from neuron_widgets.analysis.frame import codes_of, values_of
from neuron_widgets.model import problem_rows as problems_mod
from neuron_widgets.model.problem_rows import error_rows
from neuron_widgets.sample import write_sample


def chunked(arr: pa.Array, seed: int) -> pa.ChunkedArray:
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, len(arr)), size=min(6, len(arr) - 1), replace=False))
    edges = [0, *cuts.tolist(), len(arr)]
    return pa.chunked_array([arr.slice(a, b - a) for a, b in itertools.pairwise(edges)], type=arr.type)


@pytest.mark.parametrize("seed", range(6))
def test_the_byte_scan_of_chunks_is_the_scan_of_the_whole(seed: int) -> None:
    whole, _ = texts(seed)
    parts = chunked(whole, seed)
    assert parts.num_chunks > 1
    for key in ("exec_id", "model_name", "other"):
        assert values_of(parts, key, "int").tolist() == values_of(whole, key, "int").tolist()
        assert values_of(parts, key, "str").tolist() == values_of(whole, key, "str").tolist()
        codes, words = codes_of(parts, key)
        assert len(set(words)) == len(words)  # a value met in several chunks keeps one code
        wc, ww = codes_of(whole, key)
        assert [words[c] if c >= 0 else None for c in codes] == [ww[c] if c >= 0 else None for c in wc]


@pytest.mark.parametrize("seed", range(8))
def test_errors_scanned_in_blocks_are_those_of_one_scan(tmp_path, monkeypatch, seed: int) -> None:
    doc, _ = random_trace(seed, fuchsia=bool(seed % 2))
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    p = nw.load_profile(path)
    whole = error_rows(p, scan_args=True)
    monkeypatch.setattr(problems_mod, "_SCAN_BLOCK", 3)
    assert error_rows(p, scan_args=True).tolist() == whole.tolist()
    # Texts the caller holds for some rows are scanned as given; the others are read.
    rows = np.arange(0, len(p), 2, dtype=np.int64)
    held = p.values_at("extra_attributes_json", rows) if "extra_attributes_json" in p.column_names else None
    if held is not None:
        assert error_rows(p, scan_args=True, known=(rows, chunked(held, seed) if len(held) > 1 else held)).tolist() \
            == whole.tolist()


def _analyses(path) -> dict[str, pd.DataFrame]:
    p = nw.load_profile(path, prepare=False)
    out = {name: getattr(A, name)(p) for name in ("temporal_breakdown", "stragglers", "errors_and_hangs")}
    fr = frame_mod.frame_of(p)
    rows = fr.read_rows()
    out["exec_id"] = pd.DataFrame({"v": fr.arg(rows, "exec_id")})
    codes, words = fr.arg_codes(rows, "model_name")
    out["model_name"] = pd.DataFrame({"v": [words[c] if c >= 0 else None for c in codes]})
    out["texts"] = pd.DataFrame({"v": fr.arg_texts(rows[::7]).to_pylist()})
    return out


def test_a_profile_read_in_tiny_blocks_analyses_as_read_whole(tmp_path, monkeypatch) -> None:
    path = write_sample(tmp_path / "s", events=12_000, seed=3)
    whole = _analyses(path)
    monkeypatch.setattr(frame_mod, "_STORE_BLOCK", 300)
    monkeypatch.setattr(problems_mod, "_SCAN_BLOCK", 777)
    fr_rows = frame_mod.frame_of(nw.load_profile(path, prepare=False)).read_rows().size
    assert fr_rows > 3 * 300  # the kept reads are several chunks here
    blocks = _analyses(path)
    for name, df in whole.items():
        pd.testing.assert_frame_equal(blocks[name], df, obj=name)
