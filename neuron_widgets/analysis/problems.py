"""What failed and what hung: the NDET report as a DataFrame, and the events that led up to each."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..model.problem_rows import (
    ARGS_SCAN_LIMIT,
    EXECUTION_SOURCES,
    NEURON_SOURCES,
    argument_errors,
    error_rows,
    of_sources,
)
from ..model.profile import Profile
from .devices import EXECUTION, RUNTIME_EXECUTE
from .frame import Frame, frame_of, notes_of, sorted_union, values_of

# The Neuron runtime's status codes (nrt_status.h), in words.
NRT_STATUS: dict[int, str] = {
    1: "NRT_FAILURE: non-specific failure",
    2: "NRT_INVALID: invalid input (NEFF, instruction, tensor name or size)",
    3: "NRT_INVALID_HANDLE: invalid handle",
    4: "NRT_RESOURCE: could not allocate a resource",
    5: "NRT_TIMEOUT: the operation timed out",
    6: "NRT_HW_ERROR: hardware failure",
    7: "NRT_QUEUE_FULL: the execution queue is full",
    9: "NRT_LOAD_NOT_ENOUGH_NC: not enough NeuronCores to load the model",
    10: "NRT_UNSUPPORTED_NEFF_VERSION: the NEFF's version is not supported",
    11: "NRT_FAIL_HOST_MEM_ALLOC: host memory allocation failed",
    13: "NRT_UNINITIALIZED: the runtime is not initialised",
    14: "NRT_CLOSED: the runtime is closed",
    15: "NRT_QUEUE_EMPTY: the queue is empty",
    101: "NRT_EXEC_UNIT_UNRECOVERABLE: the execution unit cannot recover",
    1002: "NRT_EXEC_BAD_INPUT: invalid input to the execution",
    1003: "NRT_EXEC_COMPLETED_WITH_NUM_ERR: numerical error (NaN in the inputs or the compiled model)",
    1004: "NRT_EXEC_COMPLETED_WITH_ERR: the execution completed with an error",
    1005: "NRT_EXEC_NC_BUSY: the NeuronCore is busy",
    1006: "NRT_EXEC_OOB: out-of-bounds access during the execution",
    1100: "NRT_COLL_PENDING: a collective is still pending",
    1200: "NRT_EXEC_HW_ERR_COLLECTIVES: hardware error in collectives",
    1201: "NRT_EXEC_HW_ERR_HBM_UE: uncorrectable HBM memory error",
    1202: "NRT_EXEC_HW_ERR_NC_UE: uncorrectable NeuronCore error",
    1203: "NRT_EXEC_HW_ERR_DMA_ABORT: DMA aborted",
    1204: "NRT_EXEC_SW_NQ_OVERFLOW: notification queue overflow",
    1205: "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE: repairable uncorrectable HBM error",
    1206: "NRT_NETWORK_PROXY_FAILURE: network proxy failure",
}
CODE_KEYS = ("ret", "status", "return_code", "error_code", "rc")
THREAD = ("instance_id", "process_id", "thread_id")
COLUMNS = ["kind", "name", "instance_id", "process_id", "thread_id", "nc_idx", "exec_id", "model_name", "code", "meaning",
           "start_ts", "id", "row"]


def meaning(code: int | None, name: str = "") -> str:
    if code is not None and code in NRT_STATUS:
        return NRT_STATUS[code]
    if "numerical" in name or "nan" in name.lower():
        return "numerical error (NaN)"
    if code is not None and code >= 0:
        return f"return code {code}"
    return "an error event"


def errors_and_hangs(profile: Profile, scan_args: bool | None = None) -> pd.DataFrame:
    """One row per problem, oldest first: errors, hangs and incomplete events, as NDET reports them.

    `kind` is `error` for an error event: on Neuron's own events (runtime, device, NDET) an
    error name (`numerical_err`, names with error / fail / timeout) or a non-zero `ret` / status
    argument; on other events (Kineto, Chrome) a category or an `error` / `exception` argument
    that says so, never a function's name. `hang` is an execution that never ended (Neuron
    runtime or device events, once per execution: its enclosing runtime call is not a second
    hang; device kernels); `incomplete` is any other event still open when the trace stopped
    (a browser's B/S events at the very end). `code` is the return code, `meaning` its NRT name
    and sense (1003: a numerical error, NaN). Arguments of every event are scanned up to 2M
    events; larger profiles scan the `nrt_execute` calls only (`scan_args=True` scans every
    event). `last_events(profile, row)` gives the tail before one.
    """
    fr = frame_of(profile)
    # Once per profile (kept on its frame): all_analyses, findings and the Summary each ask.
    return fr._cached(("errors_and_hangs", scan_args), lambda: _errors_and_hangs(fr, scan_args)).copy()


def _errors_and_hangs(fr: Frame, scan_args: bool | None) -> pd.DataFrame:
    notes: list[str] = []
    err = _error_rows(fr, scan_args, notes)
    hang, unfinished = _hang_rows(fr)
    rows = np.concatenate([err, hang, unfinished])
    kinds = np.array(["error"] * err.size + ["hang"] * hang.size + ["incomplete"] * unfinished.size, dtype=object)
    df = _describe(fr, rows, kinds)
    if hang.size:
        notes.append(f"{int(fr.incomplete.sum()) - unfinished.size} execution events never completed; shown once per "
                     f"execution ({hang.size} hangs)")
    if unfinished.size:
        notes.append(f"{unfinished.size} other events were still open when the trace stopped: incomplete, not hangs")
    return notes_of(df.sort_values(["start_ts", "kind"], ignore_index=True), notes)


def _error_rows(fr: Frame, scan_args: bool | None, notes: list[str]) -> np.ndarray:
    if scan_args is None:
        scan_args = len(fr) <= ARGS_SCAN_LIMIT
        if not scan_args:
            notes.append(f"{len(fr):,} events: return codes read from nrt_execute calls only "
                         "(errors_and_hangs(profile, scan_args=True) reads every event's arguments)")
    # The kept argument reads (executions, runtime calls, barriers...) are scanned where they are.
    known = fr.kept_texts() if scan_args and "extra_attributes_json" in fr.profile.column_names else None
    found = error_rows(fr.profile, scan_args=scan_args, known=known)
    if scan_args or "extra_attributes_json" not in fr.profile.column_names:
        return found
    scan = fr.rows_named(RUNTIME_EXECUTE)
    neuron = of_sources(fr.source, fr.sources, NEURON_SOURCES)
    return sorted_union(found, argument_errors(fr.arg_texts(scan), neuron, scan))


def _hang_rows(fr: Frame) -> tuple[np.ndarray, np.ndarray]:
    """Unfinished executions, one per execution (the device's event when it has one, else the innermost),
    and the other unfinished events."""
    rows = np.flatnonzero(fr.incomplete)
    if rows.size == 0:
        return rows, rows
    executing = of_sources(fr.source[rows], fr.sources, EXECUTION_SOURCES)
    other, rows = rows[~executing], rows[executing]
    if rows.size == 0:
        return rows, other
    codes, _ = fr.core_codes()
    core = codes[rows]
    exec_id = fr.arg(rows, "exec_id")
    thread = fr.combo_codes(THREAD, rows)
    hw = fr.sources.index("neuron_hw") if "neuron_hw" in fr.sources else -2
    df = pd.DataFrame({"row": rows, "core": core, "thread": thread, "exec": exec_id,
                       "hw": fr.source[rows] == hw, "start": fr.start[rows]})
    # A hung core runs nothing else: without an exec_id its unfinished events are one hang.
    df["unit"] = np.where(df["core"] >= 0, df["core"], -2 - df["thread"])
    df = df.sort_values(["hw", "start"], ascending=False)
    return np.sort(df.drop_duplicates(["unit", "exec"], keep="first")["row"].to_numpy()), other


def _describe(fr: Frame, rows: np.ndarray, kinds: np.ndarray) -> pd.DataFrame:
    if rows.size == 0:
        return pd.DataFrame(columns=COLUMNS)
    texts = fr.arg_texts(rows)
    code = np.full(rows.size, -1, np.int64)
    for key in reversed(CODE_KEYS):
        v = values_of(texts, key)
        code = np.where(v != -1, v, code)
    exec_id = values_of(texts, "exec_id")
    model = values_of(texts, "model_name", "str")
    codes, _ = fr.core_codes()
    missing = np.array([m is None for m in model]) & (exec_id >= 0) & (codes[rows] >= 0)
    if missing.any():
        model[missing] = _model_of_execution(fr, codes[rows][missing], exec_id[missing])
    names = [fr.names[c] for c in fr.name[rows]]
    nc = fr.combo_values("nc_idx", rows)
    return pd.DataFrame({
        "kind": kinds, "name": names,
        "instance_id": fr.combo_values("instance_id", rows), "process_id": fr.combo_values("process_id", rows),
        "thread_id": fr.combo_values("thread_id", rows), "nc_idx": pd.array(list(nc), dtype="Int64"),
        "exec_id": _nullable(exec_id, exec_id >= 0),
        "model_name": model,
        "code": _nullable(code, code != -1),
        "meaning": [_meaning_of(k, c if c != -1 else None, n) for k, c, n in zip(kinds, code.tolist(), names, strict=True)],
        "start_ts": fr.start[rows], "id": fr.profile.array("id")[rows], "row": rows,
    })[COLUMNS]


def _nullable(values: np.ndarray, ok: np.ndarray) -> pd.arrays.IntegerArray:
    out = pd.array(np.where(ok, values, 0), dtype="Int64")
    out[~ok] = pd.NA
    return out


def _meaning_of(kind: str, code: int | None, name: str) -> str:
    if kind == "hang":
        return "never completed: a possible hang (read the last events before it)"
    if kind == "incomplete":
        return "still open when the trace stopped (the recording ended first): not a hang"
    return meaning(code, name)


def _model_of_execution(fr: Frame, core: np.ndarray, exec_id: np.ndarray) -> np.ndarray:
    ex = fr.rows_named(EXECUTION)
    codes, _ = fr.core_codes()
    table = pd.DataFrame({"core": codes[ex], "exec": fr.arg(ex, "exec_id"), "model": fr.arg(ex, "model_name", "str")})
    table = table.drop_duplicates(["core", "exec"]).set_index(["core", "exec"])["model"]
    return table.reindex(pd.MultiIndex.from_arrays([core, exec_id])).to_numpy(dtype=object)


def last_events(profile: Profile, problem: Any, n: int = 20) -> pd.DataFrame:
    """The last `n` events on the problem's NeuronCore (else its thread) up to it, oldest first.

    `problem` is a row of `errors_and_hangs` (a Series or dict with `row` or `id`) or an event id.
    NDET's advice: the tail before a hang or an error says what the core was doing.
    """
    fr = frame_of(profile)
    if isinstance(problem, (pd.Series, dict)):
        row = int(problem["row"]) if problem.get("row") is not None else profile.row_of(int(problem["id"]))
    else:
        row = profile.row_of(int(problem))
    codes, _ = fr.core_codes()
    if codes[row] >= 0:
        same = np.flatnonzero(codes.full() == codes[row])
        where = "NeuronCore"
    else:
        thread = fr.combo_codes(THREAD)
        same = np.flatnonzero(thread == thread[row])
        where = "thread"
    same = same[(fr.start[same] < fr.start[row]) | (same == row)]
    tail = same[np.lexsort((same, fr.start[same]))][-max(int(n), 1):]
    core = profile.core.take(tail).to_pandas()
    core["row"] = tail
    core["incomplete"] = fr.incomplete[tail]
    return notes_of(core, [f"the last {tail.size} events on the problem's {where}, up to and including it"])
