"""Events that signal trouble, by where they come from: errors, hangs and merely unfinished events.

Errors:
- Neuron's own events (sources `neuron_rt`, `neuron_hw`; NDET's events read as these): an error
  name (`numerical_err`, `numerical_error`, names with error / fail / timeout as a word), or a
  non-zero return code argument (`ret`, `status`, ...; 1003 is a numerical error).
- Any other event (Kineto, Chrome, browser traces): only when it says so itself: a category that
  names an error, or an `error` / `exception` / `failure` argument with a value. A framework
  function's name is never an error (`<built-in function set_fullgraph_error_on_nested_compile>`).
A value is judged by what it is, not by how it is written: `"5"` is the number 5 (`numeric_value`).
A number under `error`, `errors`, `exception`, ... is a count or a code, never a failure; a non-zero
number under a return-code key (`error_code` on any event; `ret`, `status`, ... on Neuron's) is one.
Unfinished events: a hang when it is an execution (Neuron runtime or device events, device
kernels); anything else (a B/S event open when a browser trace stopped) is only incomplete.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .schema import INCOMPLETE

if TYPE_CHECKING:
    from .profile import Profile

ERROR_NAME = re.compile(r"(^|[_\W])(err|error|errors|fail|failed|failure|exception|abort|hang|timeout)([_\W]|$)", re.I)
NEURON_SOURCES = ("neuron_rt", "neuron_hw")
# Unfinished events of these sources are executions that never ended: hangs.
EXECUTION_SOURCES = (*NEURON_SOURCES, "device")
# A runtime call that returned a code other than 0 (1003 is a numerical error, NaN in the output): the keys of a
# Neuron event's return code, and the candidates' sign (confirmed by `says_error`, as every sign here).
CODE_KEYS = ("ret", "status", "return_code", "error_code", "rc")
RETURN_CODE = r'"(ret|status|return_code|error_code|rc)"\s*:\s*"?\s*[-+]?(0*[1-9]|0[xX]0*[1-9a-fA-F]|0*\.0*[1-9])'
# An event that reports an error in its own arguments: a key naming one whose value says so. A number under
# `error`, `errors`, `err`, `failure` or `exception` is a count or a flag (Fuchsia's FramePresented carries
# `"error": 0`, others a count of retries), never a failure, whether written 3 or "3"; under `error_code` a
# non-zero number is one. Other strings say so unless they are a no-error word (NO_ERROR_WORDS); true and
# non-empty objects and lists say so.
# (RE2, pyarrow's engine, has no look-ahead: candidates are found here, each confirmed by `says_error`.)
ERROR_ARG = (r'"(error|errors|exception|failure|error_message|err)"\s*:\s*("[^"]|true|\{\s*"|\[\s*[^\]\s])'
             r'|"error_code"\s*:\s*(-?[1-9]|-?0\.[0-9]*[1-9]|"[^"]|true|\{\s*"|\[\s*[^\]\s])')
ERROR_KEYS = ("error", "errors", "exception", "failure", "error_message", "err", "error_code")
NO_ERROR_WORDS = frozenset({"0", "none", "null", "nil", "false", "no", "ok", "okay", "success", "succeeded", "n/a",
                            "na", "no error", "noerror", "0x0"})
ERROR_CATEGORY = re.compile(r"(^|[_\W])(error|errors|exception|failure|fatal)([_\W]|$)", re.I)
# Scanning every event's arguments costs ~50 B and ~0.2 µs per event: done up to this size,
# where it stays under a second and 100 MB; larger profiles flag by name and category.
ARGS_SCAN_LIMIT = 2_000_000


def error_name_codes(names: list[str]) -> np.ndarray:
    """Codes of the names that are errors when a Neuron event bears them."""
    return np.array([i for i, n in enumerate(names) if n and ERROR_NAME.search(n)], dtype=np.int64)


def source_codes(profile: Profile) -> tuple[np.ndarray, list[str]]:
    """Each event's source as a code into the returned list (-1: none)."""
    if len(profile) == 0 or "trace_event_source" not in profile.column_names:
        return np.full(len(profile), -1, np.int64), []
    col = profile._joined("trace_event_source").chunk(0)
    if not pa.types.is_dictionary(col.type):
        col = col.dictionary_encode()
    return col.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64), col.dictionary.to_pylist()


def of_sources(codes: np.ndarray, sources: list[str], wanted: tuple[str, ...]) -> np.ndarray:
    """Per event, whether its source (a code into `sources`, -1: none) is one of `wanted`."""
    table = np.array([s in wanted for s in sources] + [False], bool)
    return table[codes]  # -1 reads the trailing False


def neuron_rows_mask(profile: Profile) -> np.ndarray:
    codes, sources = source_codes(profile)
    return of_sources(codes, sources, NEURON_SOURCES)


def error_rows(profile: Profile, scan_args: bool | None = None,
               known: tuple[np.ndarray, pa.Array | pa.ChunkedArray] | None = None) -> np.ndarray:
    """Rows of error events (see the module's rules). Arguments are scanned up to ARGS_SCAN_LIMIT events.

    `known`: sorted rows whose arguments the caller already holds, with those texts (not read again).
    """
    n = len(profile)
    if n == 0:
        return np.zeros(0, np.int64)
    neuron = neuron_rows_mask(profile)
    codes = error_name_codes(profile.name_dictionary())
    by_name = np.flatnonzero(np.isin(profile.name_codes(), codes)) if codes.size else np.zeros(0, np.int64)
    found = [by_name[neuron[by_name]]]
    if "category" in profile.column_names:
        cat = profile.column("category").combine_chunks()
        if not pa.types.is_dictionary(cat.type):
            cat = cat.dictionary_encode()
        bad = np.array([bool(c) and bool(ERROR_CATEGORY.search(str(c))) for c in cat.dictionary.to_pylist()] + [False])
        found.append(np.flatnonzero(bad[cat.indices.fill_null(-1).to_numpy(zero_copy_only=False)]))
    if scan_args is None:
        scan_args = n <= ARGS_SCAN_LIMIT
    if scan_args and "extra_attributes_json" in profile.column_names:
        found.extend(_scanned_errors(profile, neuron, known))
    return np.unique(np.concatenate(found)).astype(np.int64)


# Rows of arguments read at a time by the scan: the column is read in blocks and not kept, so the scan
# costs a block of texts, not a second copy of every event's (a job part's peak, issue 35.11).
_SCAN_BLOCK = 1 << 18


def _scanned_errors(profile: Profile, neuron: np.ndarray,
                    known: tuple[np.ndarray, pa.Array | pa.ChunkedArray] | None) -> list[np.ndarray]:
    found, rest = [], np.arange(len(profile), dtype=np.int64)
    if known is not None and known[0].size:
        rows, texts = known
        found.append(argument_errors(texts, neuron, rows))
        left = np.ones(len(profile), bool)
        left[rows] = False
        rest = np.flatnonzero(left)
    for i in range(0, rest.size, _SCAN_BLOCK):
        block = rest[i:i + _SCAN_BLOCK]
        found.append(argument_errors(profile.values_at("extra_attributes_json", block), neuron, block))
    return found


def argument_errors(texts: pa.ChunkedArray | pa.Array, neuron: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Rows whose arguments report an error: a non-zero return code on a Neuron event, an error argument on any.

    `texts` are the arguments at `rows` (default: every row); `neuron` tells Neuron events per row.
    """
    # One scan for either sign finds the candidates; only those are read again, and judged by `says_error`.
    hit = np.flatnonzero(pc.match_substring_regex(texts, f"{RETURN_CODE}|{ERROR_ARG}").fill_null(False)
                         .to_numpy(zero_copy_only=False))
    where = np.arange(len(texts)) if rows is None else np.asarray(rows, np.int64)
    ok = np.zeros(hit.size, bool)
    mine = neuron[where[hit]]
    for is_neuron in (True, False):
        part = mine == is_neuron
        if part.any():
            ok[part] = says_error_texts(texts.take(pa.array(hit[part])).to_pylist(), neuron=is_neuron)
    return where[hit[ok]]


def says_error(args: Any, neuron: bool = False) -> bool:
    """Whether an event's arguments (a dict) report an error of their own: the one judge of every sign the
    scan finds (RETURN_CODE on a Neuron event, `neuron`; ERROR_ARG on any)."""
    if not isinstance(args, dict):
        return False
    if neuron and any(_nonzero_code(args.get(k)) for k in CODE_KEYS):
        return True
    return any(_value_says_error(k, args.get(k)) for k in ERROR_KEYS)


def numeric_value(v: Any) -> float | None:
    """The number a value holds: a JSON number, or a string that writes one (`"5"`, `" -3 "`, `"2.5e3"`, `"0x1f"`,
    `"NaN"`); None for anything else (booleans are flags, not numbers)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if not isinstance(v, str):
        return None
    text = v.strip().replace("_", "?")  # Python reads "1_000"; a trace's writer means no number by it
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return float(int(text, 16)) if text.lower().lstrip("+-").startswith("0x") else None
    except ValueError:
        return None


def _nonzero_code(v: Any) -> bool:
    """A return code other than 0 (NaN is no code)."""
    x = numeric_value(v)
    return x is not None and x == x and x != 0


def _value_says_error(key: str, v: Any) -> bool:
    if v is None or isinstance(v, bool):
        return v is True
    if numeric_value(v) is not None:  # a number, however written: a count under any key but a return code's
        return key == "error_code" and _nonzero_code(v)
    if isinstance(v, str):
        return bool(v.strip()) and v.strip().lower() not in NO_ERROR_WORDS
    return isinstance(v, list | dict) and len(v) > 0


def says_error_texts(texts: list[str | None], neuron: bool = False) -> np.ndarray:
    """`says_error` of each argument text (JSON), each distinct text parsed once; `neuron`: they are Neuron events'."""
    seen: dict[str | None, bool] = {}
    for text in texts:
        if text not in seen:
            try:
                seen[text] = says_error(json.loads(text), neuron) if text else False
            except (ValueError, RecursionError):
                seen[text] = True  # not JSON: the scan's own sign stands
    return np.array([seen[t] for t in texts], bool)


def incomplete_rows(profile: Profile) -> np.ndarray:
    if INCOMPLETE not in profile.column_names:
        return np.zeros(0, np.int64)
    return np.flatnonzero(profile.column(INCOMPLETE).fill_null(False).to_numpy(zero_copy_only=False))
