"""Arguments read by the byte scan agree with a JSON parse, on the values it reads in place and on those it hands back."""

from __future__ import annotations

import json
import random

import numpy as np
import pyarrow as pa

from neuron_widgets.analysis.frame import codes_of, values_of

VALUES = [0, 7, -3, 1003, 2**53 + 1, 2**63 - 1, "12", "-4", "neff_fwd", "b\"q", "caf\u00e9", "tab\there", "", None, 1.5,
          True, [1, 2], {"exec_id": 99}]


def texts(seed: int, n: int = 400) -> tuple[pa.Array, list]:
    rnd = random.Random(seed)
    out, objs = [], []
    for _ in range(n):
        if rnd.random() < 0.05:
            out.append(None)
            objs.append(None)
            continue
        obj = {k: rnd.choice(VALUES) for k in rnd.sample(["exec_id", "model_name", "other"], rnd.randint(0, 3))}
        objs.append(obj)
        # Spacing and escapes as different writers produce them.
        out.append(json.dumps(obj, separators=rnd.choice([(",", ":"), (", ", ": ")]), ensure_ascii=rnd.random() < 0.5))
    return pa.array(out, pa.string()), objs


def expected_int(obj: dict | None, key: str) -> int:
    v = None if obj is None else obj.get(key)
    if isinstance(v, bool) or v is None:
        return -1
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return -1
    return int(v) if isinstance(v, (int, float)) else -1


def test_integers_as_json_reads_them() -> None:
    for seed in range(5):
        t, objs = texts(seed)
        got = values_of(t, "exec_id", "int")
        assert got.tolist() == [expected_int(o, "exec_id") for o in objs]


def test_strings_and_their_codes_as_json_reads_them() -> None:
    for seed in range(5):
        t, objs = texts(seed)
        want = [o.get("model_name") if o and isinstance(o.get("model_name"), str) else None for o in objs]
        assert values_of(t, "model_name", "str").tolist() == want
        codes, words = codes_of(t, "model_name")
        assert len(set(words)) == len(words)  # one code per value, escaped or not
        assert [words[c] if c >= 0 else None for c in codes] == want


def test_an_escaped_value_shares_the_code_of_its_plain_spelling() -> None:
    t = pa.array(['{"m": "caf\\u00e9"}', '{"m": "café"}', '{"m": "a"}', None, "{}"])
    codes, words = codes_of(t, "m")
    assert codes[0] == codes[1] and words[codes[0]] == "café"
    assert codes[3] == codes[4] == -1 and words[codes[2]] == "a"
    assert codes.dtype == np.int32
