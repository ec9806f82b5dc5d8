"""Any profile written in the Neuron Explorer Parquet layout (SystemProfileEvents and side tables).

So a Kineto, Chrome or Perfetto trace can be opened by the tools that read that layout, and
reopened here without parsing JSON or protobuf again. Events are written in row groups, so
memory stays flat in the number of events.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..model.profile import Profile
from ..model.schema import EVENT_COLUMNS, INCOMPLETE

ROW_GROUP = 1 << 20
# Side tables the layout names, by the counter group each comes from.
_SIDE = {"cpu_usage": "CpuUsage", "host_memory": "HostMemUsage", "hbm_usage": "SystemProfileHbmUsage"}


def export_parquet(profile: Profile, directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Write `profile` to `directory` as SystemProfileEvents.parquet plus its counters and metadata."""
    t0 = time.perf_counter()
    out = Path(os.fspath(directory)).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    names = [c for c in EVENT_COLUMNS if c in profile.column_names]
    extra = [c for c in ("flow_id", "extra_attributes_json", INCOMPLETE) if c in profile.column_names]
    target = out / "SystemProfileEvents.parquet"
    tmp = out / "SystemProfileEvents.parquet.part"
    writer = None
    n = len(profile)
    try:
        for a in range(0, max(n, 1), ROW_GROUP):
            rows = np.arange(a, min(a + ROW_GROUP, n), dtype=np.int64)
            cols = {c: profile.values_at(c, rows) for c in names + extra}
            table = pa.table({c: (v.dictionary_decode() if pa.types.is_dictionary(v.type) else v) for c, v in cols.items()})
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema, compression="zstd")
            writer.write_table(table, row_group_size=ROW_GROUP)
    finally:
        if writer is not None:
            writer.close()
    os.replace(tmp, target)
    written = [target.name]
    for group, table_name in _SIDE.items():
        if group in profile.counters.names():
            df = profile.counters.get(group)
            if isinstance(df, pd.DataFrame) and not df.empty:
                pq.write_table(pa.Table.from_pandas(df, preserve_index=False), out / f"{table_name}.parquet")
                written.append(f"{table_name}.parquet")
    first, last = (profile.start_ts, profile.end_ts) if n else (0, 0)
    pq.write_table(pa.Table.from_pylist([{"first_ts_ns": str(first), "last_ts_ns": str(last), "system_events": n,
                                          "converted_from": str(profile.source), "source_format": profile.format}]),
                   out / "SystemProfileMetadata.parquet")
    written.append("SystemProfileMetadata.parquet")
    dp = profile.device_profiles
    if not dp.empty:
        pq.write_table(pa.Table.from_pandas(dp.drop(columns=[c for c in ("path",) if c in dp]), preserve_index=False),
                       out / "DeviceProfileList.parquet")
        written.append("DeviceProfileList.parquet")
    # Counters the layout has no table for (Chrome `C` events, Perfetto counter tracks) are named, not lost silently.
    skipped = [g for g in profile.counters.names() if g not in _SIDE]
    return {"path": str(out), "events": n, "files": written, "skipped_counters": skipped,
            "seconds": time.perf_counter() - t0}
