"""The analyses as bokeh charts: builders usable alone (charts.py), and the Summary's assembly (build.py)."""

from .build import SummaryCharts
from .charts import (
    apply_theme,
    compare_table,
    counters_chart,
    device_table,
    idle_chart,
    problems_table,
    straggler_chart,
    straggler_steps_chart,
    temporal_chart,
    top_chart,
)

__all__ = ["SummaryCharts", "apply_theme", "compare_table", "counters_chart", "device_table", "idle_chart",
           "problems_table", "straggler_chart", "straggler_steps_chart", "temporal_chart", "top_chart"]
