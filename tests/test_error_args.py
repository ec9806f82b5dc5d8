"""Errors that events report in their own arguments: a number under `error` is a count, never a failure.

Random Chrome and Fuchsia traces whose events carry `error`, `errors`, `exception`, `error_code` ...
arguments of every kind of value are checked against a slow reference that reads each event's
arguments as a dict (tests/reference_neuron.says_error); Neuron return codes and error names stay errors.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import TRACES, traces_listed
from reference_neuron import CODE_KEYS, ERROR_KEYS, nonzero_code, says_error

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.model.problem_rows import error_rows

VALUES = [0, 1, 3, 45, -1, 2.5, 0.0, -0.5, "", " ", "0", "none", "OK", "Success", "boom", "device-side assert",
          'quote " inside', True, False, None, [], [1], {}, {"a": 1}, {"code": 0},
          # numbers written as strings: the same numbers (issue 35.3), and strings that only start like one
          "5", "3", " 7 ", "-1", "+2", "2.5", "0.0", "1e3", "0x1f", "0x0", "NaN", "inf", "1_000", "5 apples", "0x", "1.2.3"]
CATEGORIES = ["gfx", "frame", "input", "error", "v8,exception", "input_failure", "disabled-by-default-gpu"]


def _category_says_error(cat: str) -> bool:
    return any(w.lower() in ("error", "errors", "exception", "failure", "fatal") for w in re.split(r"[_\W]+", cat))


def random_trace(seed: int, fuchsia: bool) -> tuple[dict, set[str]]:
    """A trace of uniquely named events with random arguments, and the names the reference calls errors."""
    rng = np.random.default_rng(seed)
    events, errors = [], set()
    for i in range(int(rng.integers(5, 80))):
        args: dict = {}
        if fuchsia and rng.random() < .5:  # as Fuchsia's FramePresented: a frame number and an error count
            args = {"frame_number": int(i), "error": int(rng.integers(0, 3))}
        for _ in range(int(rng.integers(0, 3))):
            key = str(rng.choice([*ERROR_KEYS, "frame_number", "status", "ret", "detail"]))
            args[key] = VALUES[int(rng.integers(len(VALUES)))]
        name = f"ev{i}" if rng.random() < .7 else f"ev{i} error"  # a name alone never makes one an error here
        # Now and then a Neuron runtime call: its non-zero return code (1003 or "1003") and an error name are errors.
        neuron = rng.random() < .15
        cat = "neuron_rt" if neuron else str(rng.choice(CATEGORIES))
        if neuron:
            name = f"nrt_call{i}" if rng.random() < .7 else f"nrt_call{i}_error"
            args["nc_idx"] = 0
        events.append({"ph": "X", "name": name, "cat": cat, "pid": 3923, "tid": 5260 + i % 3,
                       "ts": i * 10, "dur": 5, "args": args})
        if any(says_error(k, args.get(k)) for k in ERROR_KEYS) or _category_says_error(cat) \
                or (neuron and (name.endswith("_error") or any(nonzero_code(args.get(k)) for k in CODE_KEYS))):
            errors.add(name)
    doc: dict = {"traceEvents": events}
    if fuchsia:
        doc["systemTraceEvents"] = {"type": "fuchsia", "events": [
            {"ph": "p", "pid": 3923, "name": "scenic"},
            *({"ph": "t", "pid": 3923, "tid": 5260 + k, "name": f"CoreFlipWaitThread{k}"} for k in range(3))]}
    return doc, errors


@pytest.mark.parametrize("seed", range(40), ids=lambda s: f"seed-{s}")
def test_error_arguments_match_the_reference(seed: int, tmp_path: Path) -> None:
    doc, want = random_trace(seed, fuchsia=seed % 2 == 0)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    p = nw.load_profile(path, cache=False)
    got = A.errors_and_hangs(p)
    assert set(got.loc[got["kind"] == "error", "name"]) == want
    names = p.name_dictionary()
    assert {names[c] for c in p.name_codes()[error_rows(p)]} == want


def test_fuchsia_frame_presented_with_an_error_count_is_no_error(tmp_path: Path) -> None:
    events = [{"ph": "X", "name": "FramePresented", "cat": "gfx", "pid": 3923, "tid": 5260, "ts": 16_000 * i, "dur": 100,
               "args": {"frame_number": i, "error": i % 3}} for i in range(45)]
    path = tmp_path / "fuchsia.json"
    path.write_text(json.dumps({"traceEvents": events, "systemTraceEvents": {"type": "fuchsia", "events": []}}))
    p = nw.load_profile(path, cache=False)
    assert A.errors_and_hangs(p).empty
    assert error_rows(p).size == 0


def test_a_number_written_as_a_string_is_the_same_number(tmp_path: Path) -> None:
    """`"error": "5"` is a count as `"error": 5` is (issue 35.3); so are "errors": "3", "NaN" and "0x1f"; words,
    true and non-empty objects stay errors; on a Neuron call "ret": "1003" is the failure 1003 is."""
    values = [0, 5, "5", "0", True, False, "timeout", "none", 1.5, None, {"code": 3}, "Error: failed to open", "",
              "NaN", " 12 ", "0x1f", "-2", "5 apples"]
    ev = [{"ph": "X", "name": f"ev{i}", "pid": 1, "tid": 1, "ts": 10 * i, "dur": 5, "args": {"error": v}}
          for i, v in enumerate(values)]
    ev += [{"ph": "X", "name": "errs", "pid": 1, "tid": 1, "ts": 500, "dur": 5, "args": {"errors": "3"}},
           {"ph": "X", "name": "code_text", "pid": 1, "tid": 1, "ts": 510, "dur": 5, "args": {"error_code": "7"}},
           {"ph": "X", "name": "code_zero_text", "pid": 1, "tid": 1, "ts": 520, "dur": 5, "args": {"error_code": "0"}},
           {"ph": "i", "s": "p", "name": "FramePresented", "pid": 1, "tid": 2, "ts": 600,
            "args": {"frame_number": 1, "error": "3"}},
           {"ph": "X", "name": "nrt_execute", "cat": "neuron_rt", "pid": 1, "tid": 3, "ts": 700, "dur": 5,
            "args": {"nc_idx": 0, "ret": "1003"}},
           {"ph": "X", "name": "nrt_load", "cat": "neuron_rt", "pid": 1, "tid": 3, "ts": 710, "dur": 5,
            "args": {"nc_idx": 0, "ret": "0", "error": "2"}},
           {"ph": "X", "name": "nrt_status_text", "cat": "neuron_rt", "pid": 1, "tid": 3, "ts": 720, "dur": 5,
            "args": {"nc_idx": 0, "status": "1 of 3 done"}}]
    path = tmp_path / "errargs.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    p = nw.load_profile(path, cache=False)
    got = A.errors_and_hangs(p)
    want = {"ev4", "ev6", "ev10", "ev11", "ev17", "code_text", "nrt_execute"}
    assert set(got.loc[got["kind"] == "error", "name"]) == want
    names = p.name_dictionary()
    assert {names[c] for c in p.name_codes()[error_rows(p)]} == want


def test_neuron_return_codes_and_error_strings_are_still_errors(tmp_path: Path) -> None:
    ev = [{"ph": "X", "name": "nrt_execute", "cat": "neuron_rt", "pid": 1, "tid": 1, "ts": 0, "dur": 5,
           "args": {"nc_idx": 0, "ret": 1003}},
          {"ph": "X", "name": "nrt_execute", "cat": "neuron_rt", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
           "args": {"nc_idx": 0, "ret": 0, "error": 2}},
          {"ph": "X", "name": "nc_exec_running", "cat": "neuron_hw", "pid": 1, "tid": 2, "ts": 10, "dur": 5,
           "args": {"nc_idx": 0, "status": 5}},
          {"ph": "X", "name": "numerical_err", "cat": "neuron_hw", "pid": 1, "tid": 2, "ts": 20, "dur": 1,
           "args": {"nc_idx": 0}},
          {"ph": "X", "name": "aten::add", "cat": "cpu_op", "pid": 1, "tid": 3, "ts": 30, "dur": 1,
           "args": {"error": "device-side assert"}},
          {"ph": "X", "name": "aten::mul", "cat": "cpu_op", "pid": 1, "tid": 3, "ts": 40, "dur": 1,
           "args": {"error": 0, "errors": 7}}]
    path = tmp_path / "neuronx.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    got = A.errors_and_hangs(nw.load_profile(path, cache=False))
    errors = got[got["kind"] == "error"]
    assert sorted(errors["name"]) == ["aten::add", "nc_exec_running", "nrt_execute", "numerical_err"]
    assert set(errors["code"].dropna()) == {1003, 5}


@pytest.mark.parametrize("rel", traces_listed("*/*.json*"))
def test_no_false_errors_on_the_real_traces(rel: str) -> None:
    got = A.errors_and_hangs(nw.load_profile(TRACES / rel, prepare=False, cache=False))
    assert (got["kind"] == "error").sum() == 0
