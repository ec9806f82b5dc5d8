"""One thread, in the order the page sent them, for the messages the page sends our widgets.

ipykernel 7.4 handles an incoming comm message on the subshell that last *published* on that
comm, not on the one the page addressed. A widget updated by a cell or by one of our background
threads therefore has its next click handled on the main shell (where it waits for any running
cell), and the click after that on the widget subshell JupyterLab chose. Two threads then serve
one widget at once and out of order; traitlets and ipywidgets are not made for that, and an
event's details could be computed and never reach the page.

Our widgets never wait in the kernel for a reply from the page, which is what that routing is
for, so their messages go where the page sent them: with JupyterLab's default (one subshell for
all widget comms) that is one thread, in order, and free while a cell runs.
"""

from __future__ import annotations

from typing import Any


def _where_the_page_sent_it(_data: Any, default: str | None) -> str | None:
    return default


def keep_in_order(comm: Any) -> None:
    """Route `comm`'s incoming messages to the subshell the page addressed (no-op on other kernels)."""
    if comm is not None and hasattr(comm, "_reply_subshell_for"):
        comm._reply_subshell_for = _where_the_page_sent_it


class InOrder:
    """Mixin for a widget class: its comm serves the page's messages as `keep_in_order` says."""

    comm: Any

    def open(self) -> None:
        super().open()  # type: ignore[misc]
        keep_in_order(self.comm)
