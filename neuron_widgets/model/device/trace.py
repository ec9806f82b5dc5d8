"""DeviceTrace: the instruction-level trace of one device profile (one NEFF on one NeuronCore)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...errors import LoadWarnings

TIME_COLUMNS = {"instructions": ("start_ts", "end_ts"), "dma": ("start_ts", "end_ts"),
                "cc_ops": ("start_ts", "end_ts"), "semaphores": ("timestamp",), "active_time": ("start_ts", "end_ts"),
                "layers": ("start", "end")}


@dataclass
class DeviceTrace:
    """Tables of a device profile; times in device nanoseconds until `aligned()` maps them to the host.

    `instructions` (engine track in `timeline_track`), `dma` (queue in `queue_name`),
    `semaphores`, `cc_ops`, `flows`, `summary`, `execution_info`: each a DataFrame, empty where
    the source has no such table. `metadata` and `source` say where it came from, `warnings`
    what the reader dropped or clamped.
    """

    source: str
    format: str
    instructions: pd.DataFrame
    dma: pd.DataFrame = field(default_factory=pd.DataFrame)
    semaphores: pd.DataFrame = field(default_factory=pd.DataFrame)
    cc_ops: pd.DataFrame = field(default_factory=pd.DataFrame)
    flows: pd.DataFrame = field(default_factory=pd.DataFrame)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    execution_info: pd.DataFrame = field(default_factory=pd.DataFrame)
    active_time: pd.DataFrame = field(default_factory=pd.DataFrame)
    # The device JSON's layer_summary (name, start, end, duration, tensor_engine_mfu, ...), when written.
    layers: pd.DataFrame = field(default_factory=pd.DataFrame)
    metadata: dict[str, Any] = field(default_factory=dict)
    # How device time was put on the host clock, and by how much (ns added to device times).
    alignment: str = "device clock (not aligned)"
    offset_ns: int = 0
    residual_ns: int | None = None
    notes: list[str] = field(default_factory=list)
    # Rows the reader dropped or clamped (times out of range, negative durations...), counted.
    warnings: LoadWarnings = field(default_factory=LoadWarnings)

    def __len__(self) -> int:
        return len(self.instructions)

    @property
    def span(self) -> tuple[int, int]:
        if self.instructions.empty:
            return (0, 0)
        return int(self.instructions["start_ts"].min()), int(self.instructions["end_ts"].max())

    def aligned(self, offset_ns: int, how: str, residual_ns: int | None = None, note: str | None = None) -> DeviceTrace:
        """A copy with every time column moved by `offset_ns` onto the host clock."""
        moved = {}
        for name, cols in TIME_COLUMNS.items():
            df = getattr(self, name)
            if not df.empty:
                # assign, not copy(): with copy-on-write the untouched columns (strings) are shared.
                df = df.assign(**{c: df[c].astype("int64") + offset_ns for c in cols if c in df})
            moved[name] = df
        info = self.execution_info.copy()
        for c in ("execution_start_ts", "execution_end_ts"):
            if c in info:
                info[c] = info[c].astype("int64") + offset_ns
        return DeviceTrace(self.source, self.format, moved["instructions"], moved["dma"], moved["semaphores"],
                           moved["cc_ops"], self.flows, self.summary, info, moved["active_time"], moved["layers"],
                           dict(self.metadata), how, self.offset_ns + offset_ns, residual_ns,
                           [*self.notes, *([note] if note else [])], self.warnings)

    def hierarchy(self) -> pd.DataFrame:
        """Layer -> HLO operator -> NKI kernel, a row per node with its span, share, engine times, FLOPs, MFU."""
        # On first use: `import neuron_widgets` imports DeviceTrace, and need not load the hierarchy's numba pass,
        # engine tables and interval unions (~10 ms) for a session that never opens a device trace.
        from .hierarchy import hierarchy

        cached = self.__dict__.get("_hierarchy")
        if cached is None:
            cached = self.__dict__["_hierarchy"] = hierarchy(self)
        return cached.copy()

    def __repr__(self) -> str:
        warned = sum(self.warnings.counts.values())
        return (f"<DeviceTrace {self.format} {self.source!r}: {len(self.instructions):,} instructions, "
                f"{len(self.dma):,} DMA, {self.alignment}" + (f", {warned:,} rows dropped or clamped (.warnings)"
                                                              if warned else "") + ">")
