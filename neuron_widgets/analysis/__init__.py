"""Analyses of a Profile as pandas DataFrames: where the time goes, why devices idle, who is late, what failed.

Times are int64 nanoseconds (HTA-shaped Kineto tables keep HTA's microseconds where HTA has
them), shares are percent. Each result's `attrs["notes"]` says what the analysis could not know.
"""

import threading

import numpy as np

from . import critical_path_job, findings_job  # noqa: F401  (a Job's critical path, what-if and findings: register themselves)
from .across import across
from .compare import compare
from .compare_steps import Comparison  # compare(before, after, by="step")'s result; the import registers it
from .critical_path import critical_path, critical_path_breakdown, critical_path_headline
from .critical_path_graph import warm as warm_path
from .density import busy_density
from .findings import findings
from .idle import idle_time_breakdown
from .intervals import warm as warm_intervals
from .kernels import group_stats, kernel_breakdown
from .launches import launch_stats
from .overlap import comm_comp_overlap
from .problems import NRT_STATUS, errors_and_hangs, last_events
from .stragglers import stragglers
from .suite import all_analyses
from .temporal import temporal_breakdown
from .what_if import WhatIf, what_if

__all__ = ["NRT_STATUS", "Comparison", "WhatIf", "across", "all_analyses", "busy_density", "comm_comp_overlap", "compare",
           "critical_path", "critical_path_breakdown", "critical_path_headline", "errors_and_hangs", "findings",
           "idle_time_breakdown", "kernel_breakdown", "last_events", "launch_stats", "stragglers", "temporal_breakdown",
           "what_if"]


def _warm() -> None:
    # Loaded here, in the warm-up thread, rather than by `import neuron_widgets.analysis` (~10 ms each).
    from ..model.device.hierarchy import warm as warm_hierarchy
    from .critical_path_chrome import warm as warm_chrome

    warm_intervals()
    warm_hierarchy()
    warm_path()
    warm_chrome()
    group_stats(np.zeros(1, np.int64), np.zeros(1, np.int64), 1)


# The numba kernels load in the background from the import on, while the user loads a profile.
threading.Thread(target=_warm, name="neuron-widgets-analysis-warm", daemon=True).start()
