"""The export's gzip made on several cores reads back as the data, by any gunzip, the same bytes each time."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

from neuron_widgets.export import blob as B


@pytest.mark.parametrize("seed", range(12))
def test_blocks_made_side_by_side_are_one_gzip_of_the_data(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    chunk = int(rng.choice([1, 7, 1000, 40_000, 1 << 16]))
    monkeypatch.setattr(B, "CHUNK", chunk)
    sizes = rng.integers(0, 5 * chunk + 3, int(rng.integers(0, 6))).tolist()
    # Compressible data (repeats further back than one block, so the primed window matters) and noise.
    parts = [rng.integers(0, int(rng.choice([4, 256])), s, dtype=np.uint8).tobytes() for s in sizes]
    data = b"".join(parts)
    got = B.gzip_parallel([memoryview(p) for p in parts])
    assert gzip.decompress(got) == data
    d = zlib.decompressobj(31)  # a single member: nothing after its trailer
    assert d.decompress(got) == data and d.eof and d.unused_data == b""
    assert B.gzip_parallel([memoryview(p) for p in parts]) == got


def test_the_seams_cost_almost_nothing() -> None:
    values = np.cumsum(np.random.default_rng(3).integers(0, 50, 6_000_000)).astype(np.int64).view(np.uint8)
    got = B.gzip_parallel([memoryview(values)])
    one = zlib.compressobj(B.LEVEL, zlib.DEFLATED, 31)
    ref = one.compress(values) + one.flush()
    assert gzip.decompress(got) == values.tobytes()
    assert len(got) <= 1.01 * len(ref)
