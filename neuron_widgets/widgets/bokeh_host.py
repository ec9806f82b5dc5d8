"""BokehJS on the notebook page and the probe that reports the page's theme: what every Summary draws with."""

from __future__ import annotations

from typing import Any

import anywidget
import IPython
import ipywidgets as W
import traitlets as t
from bokeh.io import output_notebook
from bokeh.models import ColumnDataSource
from bokeh.resources import Resources

from ..bundle import asset
from .delivery import Delivered

_BOKEHJS_LOADED = False


def load_bokehjs() -> None:
    """Put BokehJS on the notebook page (jupyter_bokeh draws with it), inline: no network is needed.

    Once per kernel: the load travels in the output of the cell that first shows a Summary.
    """
    global _BOKEHJS_LOADED
    if _BOKEHJS_LOADED:
        return
    # Looked up at each call (the module's attribute, not a name bound at import): a test or an embedding
    # shell may stand in for it.
    shell = IPython.get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return  # not in a notebook: nothing to draw on
    _publish_bokehjs()
    _BOKEHJS_LOADED = True


def _publish_bokehjs() -> None:
    output_notebook(Resources(mode="inline", components=["bokeh", "bokeh-widgets", "bokeh-tables"]), hide_banner=True)


def bokehjs_here(out: W.Output) -> None:
    """Load BokehJS (inline) into this Output, on a page that lacks it."""
    out.clear_output()
    with out:
        _publish_bokehjs()


class ThemeProbe(Delivered, anywidget.AnyWidget):
    """Reports whether JupyterLab shows a dark theme (canvas-drawn chart text needs real colours)."""

    _esm = asset("theme.js")
    dark = t.Bool(False).tag(sync=True)
    bokeh_ready = t.Bool(False).tag(sync=True)  # the Summary's chart view is drawn in the browser
    # BokehJS tables drawn before the page holds them wait for it (see js/src/common/bokehtables.ts);
    # until the page has that, the Summary keeps its chart view off the page.
    tables_ready = t.Bool(False).tag(sync=True)
    # The page has no BokehJS (reloaded, or another tab, on a kernel that loaded it for an earlier
    # page): the Summary then puts the load on this page, in an output of its own.
    bokeh_missing = t.Bool(False).tag(sync=True)


def source_of(fig: Any) -> Any:
    """The ColumnDataSource a figure draws from."""
    return fig.select_one({"type": ColumnDataSource})
