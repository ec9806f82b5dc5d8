"""In a real ipykernel: a widget serves the page's messages on the subshell the page addressed,
and answers a resync (the page lost messages) with its whole state.

JupyterLab sends widget messages on a subshell so that a click is answered while a cell runs.
ipykernel 7.4 re-routes a comm's messages to the shell that last published on it; a timeline a
cell has just updated would then wait for the next running cell, and its messages would be
split between two threads. These tests drive a kernel as JupyterLab does, with jupyter_client.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_client import KernelManager

SETUP = """
import neuron_widgets as nw
from neuron_widgets.widgets import EventDetails, Timeline
tl = Timeline(nw.sample_profile())
details = EventDetails(tl)
rows = tl.profile.events.query("name == 'nc_exec_running'").index[:2].tolist()
tl.select(row=rows[0])  # a cell publishes on the comm last: the case that was re-routed
print(tl.model_id, details.model_id, *rows)
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[Any]:
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env={**os.environ, "NEURON_WIDGETS_PROGRESS": "0"})
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _subshell(kc: Any) -> str:
    info = kc.kernel_info(reply=True, timeout=30)["content"]
    if "kernel subshells" not in info.get("supported_features", []):
        pytest.skip("this ipykernel has no subshells")
    msg = kc.session.msg("create_subshell_request", {})
    kc.control_channel.send(msg)
    while True:
        reply = kc.control_channel.get_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            return reply["content"]["subshell_id"]


def _run(kc: Any, code: str) -> str:
    out: list[str] = []
    reply = kc.execute_interactive(code, timeout=120, output_hook=lambda m: out.append(m["content"].get("text", ""))
                                   if m["msg_type"] == "stream" else None)
    assert reply["content"]["status"] == "ok", reply["content"]
    return "".join(out)


def _send(kc: Any, comm_id: str, data: dict[str, Any], subshell: str) -> None:
    msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    msg["header"]["subshell_id"] = subshell  # as JupyterLab sends widget messages
    kc.shell_channel.send(msg)


def _drain(kc: Any) -> None:
    while True:
        try:
            kc.get_iopub_msg(timeout=0.5)
        except Exception:
            return


def test_a_click_is_answered_while_a_cell_runs(kernel: Any) -> None:
    kc = kernel
    subshell = _subshell(kc)
    tl_id, details_id, _first, second = _run(kc, SETUP).split()
    _drain(kc)
    busy = kc.execute("import time; time.sleep(6)")
    # The cell is running on the main shell before the click is sent.
    while True:
        m = kc.get_iopub_msg(timeout=30)
        if m["parent_header"].get("msg_id") == busy and m["msg_type"] == "execute_input":
            break
    sent = time.monotonic()
    _send(kc, tl_id, {"method": "update", "state": {"selected_row": int(second)}, "buffer_paths": []}, subshell)
    events: list[str] = []
    while True:
        m = kc.get_iopub_msg(timeout=30)
        c = m["content"]
        if m["msg_type"] == "comm_msg" and c.get("comm_id") == details_id and c["data"].get("method") == "update" \
                and c["data"]["state"].get("event", {}).get("row") == int(second):
            events.append("details")
        if m["parent_header"].get("msg_id") == busy and m["msg_type"] == "status" \
                and c["execution_state"] == "idle":
            events.append("cell done")
            break
    # The event's details came while the cell still ran, not after it.
    assert events[:1] == ["details"], f"{events} ({time.monotonic() - sent:.1f} s after the click)"


def test_a_resync_is_answered_with_the_whole_state(kernel: Any) -> None:
    kc = kernel
    subshell = _subshell(kc)
    tl_id, details_id, _first, second = _run(kc, SETUP).split()
    _run(kc, f"tl.select(row={second})")
    _drain(kc)
    for comm_id, key in ((tl_id, "selection_detail"), (details_id, "event")):
        _send(kc, comm_id, {"method": "custom", "content": {"type": "resync"}}, subshell)
        while True:
            m = kc.get_iopub_msg(timeout=30)
            c = m["content"]
            if m["msg_type"] == "comm_msg" and c.get("comm_id") == comm_id and c["data"].get("method") == "update":
                break
        state = c["data"]["state"]
        # Everything the page holds of the widget, and the selection as it is now.
        assert {"_esm", "_model_name", key} <= set(state), sorted(state)
        assert state[key]["row"] == int(second)
