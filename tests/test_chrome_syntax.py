"""The Chrome byte scan checks JSON's syntax as it reads (no msgspec pass before it): whatever it takes
must be a document msgspec takes too, so a damaged file still reaches msgspec and its clear error."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import msgspec
import numpy as np
import pytest
from conftest import trace
from test_chrome_fast import plain_trace

import neuron_widgets as nw
from neuron_widgets.readers.chrome import scan
from neuron_widgets.readers.chrome.events import TOP
from neuron_widgets.readers.chrome.fast import NUMERIC, scanned

LEADING = b"\xef\xbb\xbf \t\r\n"


def msgspec_takes(data: bytes) -> bool:
    """What the msgspec road decodes without an error (as reader._top does it)."""
    try:
        TOP.decode(data.lstrip(LEADING))
    except (msgspec.DecodeError, RecursionError):
        return False
    return True


def scan_takes(data: bytes) -> bool:
    return scan.document(np.frombuffer(data, np.uint8), NUMERIC) is not None


# Damage of every kind the grammar knows, each beside the document it damages.
CASES = [
    b'{"traceEvents": []}', b'{"traceEvents": [{}]}', b' \n{"traceEvents": [{"ph": "X"}]}\n ', b"{}",
    b'\xef\xbb\xbf{"traceEvents": []}',
    b'{"traceEvents": [{"ph": "X", "ts": 1.}]}', b'{"traceEvents": [{"ph": "X", "ts": .5}]}',
    b'{"traceEvents": [{"ph": "X", "ts": 01}]}', b'{"traceEvents": [{"ph": "X", "ts": -}]}',
    b'{"traceEvents": [{"ph": "X", "ts": 1e}]}', b'{"traceEvents": [{"ph": "X", "ts": 1e+}]}',
    b'{"traceEvents": [{"ph": "X", "ts": +1}]}', b'{"traceEvents": [{"ph": "X", "ts": -0}]}',
    b'{"traceEvents": [{"ph": "X", "ts": 1E+2}]}', b'{"traceEvents": [{"ph": "X", "ts": 0.e1}]}',
    b'{"traceEvents": [{"ph": "X", "ts": -01}]}', b'{"traceEvents": [{"ph": "X", "ts": NaN}]}',
    b'{"traceEvents": [{"ph": "X", "ts": tru}]}', b'{"traceEvents": [{"ph": "X", "ts": nul}]}',
    b'{"traceEvents": [{"ph": "X", "ts": falsy}]}', b'{"traceEvents": [{"ph": "X", "args": [1,]}]}',
    b'{"traceEvents": [{"ph": "X",}]}', b'{"traceEvents": [{"ph": "X"},]}', b'{"traceEvents": [{"ph" "X"}]}',
    b'{"traceEvents": [{"ph": "X" "ts": 1}]}', b'{"traceEvents": [{"ph": "X"} {"ph": "X"}]}',
    b'{"traceEvents": [{"ph": "\\x"}]}', b'{"traceEvents": [{"ph": "\\u12g4"}]}', b'{"traceEvents": [{"ph": "\\u00e9"}]}',
    b'{"traceEvents": [{"ph": "\\ud800"}]}', b'{"traceEvents": [{"ph": "\\udc00"}]}',
    b'{"traceEvents": [{"ph": "\\ud83d\\ude00"}]}', b'{"traceEvents": [{"ph": "\x01"}]}',
    b'{"traceEvents": [{"ph": "\x7f"}]}', b'{"traceEvents": [{"ph": "X"}]} x', b'{"traceEvents": [{"ph": "X"}]}\x00',
    b'{"traceEvents": [{"ph": "X"}]}\x0b', b'\x0c{"traceEvents": []}', b'{"traceEvents": [{"ph": "X"}]]}',
    b'{"traceEvents": [{"args": {"a": {]}}]}', b'{"traceEvents": [{"args": {,"a": 1}}]}', b'{1: 2}',
    b'{"traceEvents": [{"args": {"a": 1 "b": 2}}]}', b'{"traceEvents": [{"args": {"a": [1 2]}}]}',
    b'{"traceEvents": [{"args": {"a": {"b" : 1 , }}}]}', b'{"traceEvents": [{"args": "\\t\\n\\"\\\\\\/\\b\\f\\r"}]}',
    b'{"traceEvents": [1, "a", null, true, false, [], {}]}', b'{"traceEvents": [{"ph": "X"}], "x": 1e999}',
    b'{"traceEvents": [{"ph": "X"}], "traceEvents": []}', b'{"trace\\u0045vents": [], "traceEvents": []}',
    b'{"traceEvents": {"ph": "X"}}', b'{"traceEvents": [{"ph": "X"}], "meta": {"a": [1, {"b": null}]}}',
    b'{"traceEvents": [', b'{"traceEvents": [{"ph": "X", "name": "ab', b'{"traceEvents": [{"ph": "X"}]', b'{',
    b'[{"ph": "X"}]', b'"traceEvents"', b"", b"   ",
    b'{"traceEvents": [{"args": ' + b"[" * 150 + b"]" * 150 + b"}]}",
    b'{"traceEvents": [{"args": ' + b"[" * 600 + b"]" * 600 + b"}]}",
    b'{"traceEvents": [{"args": ' + b"[" * 1200 + b"]" * 1200 + b"}]}",
]


@pytest.mark.parametrize("data", CASES, ids=range(len(CASES)))
def test_the_scan_takes_no_document_msgspec_refuses(data: bytes) -> None:
    if scan_takes(data):
        assert msgspec_takes(data)


def test_the_scan_takes_valid_documents() -> None:
    """Every valid object document but those it leaves to msgspec on purpose (escaped surrogates, nesting
    past MAX_DEPTH, a second traceEvents)."""
    left = [b"\\ud8", b"\\udc", b"[" * 300, b'}], "traceEvents": []']
    valid = [d for d in CASES if msgspec_takes(d) and d.lstrip(LEADING)[:1] == b"{" and not any(x in d for x in left)]
    assert len(valid) >= 15
    for data in valid:
        assert scan_takes(data), data


def mutated(data: bytes, r: random.Random) -> bytes:
    """`data` with one random piece of damage."""
    i = r.randrange(len(data) + 1)
    tokens = [b'"', b"\\", b",", b":", b"{", b"}", b"[", b"]", b" ", b"-", b".", b"e", b"0", b"1", b"t", b"n",
              b"\x00", b"\x1f", b"\\u", b"\\ud8", b"\xff", b"E+", b"null", b"1e999"]
    kind = r.randrange(5)
    if kind == 0:
        return data[:i] + data[i + r.randint(1, 3):]
    if kind == 1:
        return data[:i] + r.choice(tokens) + data[i:]
    if kind == 2:
        return data[:i] + r.choice(tokens) + data[i + 1:]
    if kind == 3:
        return data[:i]
    j = r.randrange(len(data) + 1)
    return data[:i] + data[min(i, j):max(i, j)] + data[i:]


def test_damaged_documents_never_pass_the_scan_when_msgspec_refuses_them() -> None:
    r = random.Random(40)
    seeds = [json.dumps(plain_trace(s), ensure_ascii=bool(s % 2)).encode() for s in range(12)]
    with gzip.open(trace("hta/nccl_data.json.gz")) as f:
        seeds.append(f.read(6000).rsplit(b"},", 1)[0] + b"}]}")
    taken = refused = 0
    for seed in seeds:
        assert scan_takes(seed) == msgspec_takes(seed), seed[:200]
        for _ in range(300):
            data = seed
            for _ in range(r.randint(1, 3)):
                data = mutated(data, r)
            if scan_takes(data):
                taken += 1
                assert msgspec_takes(data), data
            elif not msgspec_takes(data):
                refused += 1
    assert taken > 100 and refused > 1000  # the damage reached both sides of the line


def test_a_damaged_file_is_read_by_msgspec_and_named(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}, {"ph": "X", '
                    '"name": "b", "ts": 01, "dur": 2, "pid": 1, "tid": 1}]}')
    with pytest.raises(nw.ProfileError, match=r"trace\.json: is not valid JSON \(JSON is malformed: invalid number"):
        nw.load_profile(path, cache=False)


def test_what_the_scan_leaves_to_msgspec_still_reads(tmp_path: Path) -> None:
    """An escaped surrogate pair (msgspec's to judge) takes the msgspec road, whole."""
    events = [{"ph": "X", "name": "\U0001f600 step", "ts": 1, "dur": 2, "pid": 1, "tid": 1},
              {"ph": "X", "name": "plain", "ts": 3, "dur": 1, "pid": 1, "tid": 1, "args": {"a": [[[[1]]]] * 2}}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    assert scanned(path.read_bytes()) is None
    p = nw.load_profile(path, cache=False)
    assert p.name_dictionary() == ["\U0001f600 step", "plain"]
