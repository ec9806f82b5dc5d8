"""What keeps the messages between the page and our widgets flowing, in order, and none lost.

Kernel side: ipykernel 7.4 handles an incoming comm message on the subshell that last
*published* on that comm, not on the one the page addressed. A widget updated by a cell or by
one of our background threads then has its next click handled on the main shell (where it
waits for any running cell), and the click after that on the widget subshell JupyterLab chose:
two threads serve one widget at once, out of order. Our widgets never wait in the kernel for a
reply from the page, which is what that routing is for, so their messages go where the page
sent them: with JupyterLab's default (one subshell for all widget comms), one thread, in order,
and free while a cell runs.

Page side: anywidget drops every kernel message to a model whose front-end code took more than
2 s to load. Our front end notices (js/src/common/resync.ts), takes the messages itself and
asks for the state again: the widget answers a "resync" with all of it.
"""

from __future__ import annotations

from typing import Any

from .messages import ResyncRequest, request_class


def _where_the_page_sent_it(_data: Any, default: str | None) -> str | None:
    return default


def keep_in_order(comm: Any) -> None:
    """Route `comm`'s incoming messages to the subshell the page addressed (no-op on other kernels)."""
    if comm is not None and hasattr(comm, "_reply_subshell_for"):
        comm._reply_subshell_for = _where_the_page_sent_it


def _resync(widget: Any, content: Any, _buffers: Any) -> None:
    if request_class(content) is ResyncRequest:
        widget.send_state()


class Delivered:
    """Mixin for a widget class: its messages are kept in order (`keep_in_order`) and it answers a resync."""

    comm: Any

    def open(self) -> None:
        super().open()  # type: ignore[misc]
        keep_in_order(self.comm)
        self.on_msg(_resync)  # type: ignore[attr-defined]
