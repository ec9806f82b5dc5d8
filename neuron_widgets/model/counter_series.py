"""Counter tracks of the timeline: one series per instance, core, HBM or Chrome counter."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .profile import Profile
from .transfers import bandwidth


@dataclass
class CounterSeries:
    """Series metadata for the browser, and per series its times (ns from the profile start) and values."""

    series: list[dict[str, Any]] = field(default_factory=list)
    data: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # For hover breakdowns (HBM by category): the source rows of a series, in time order.
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)

    def add(self, key: str, label: str, kind: str, unit: str, df: pd.DataFrame, value: str,
            breakdown: bool = False, origin: int = 0) -> None:
        df = df.sort_values("timestamp", kind="stable")
        t = (df["timestamp"].to_numpy(np.int64) - origin).astype(np.float64)
        v = pd.to_numeric(df[value], errors="coerce").to_numpy(np.float64)
        ok = np.isfinite(v)
        if not ok.any():
            return
        t, v = t[ok], v[ok]
        # A series is listed last: a reader in another thread (a view's reply, an export) that finds it in
        # `series` finds its points (and breakdown) too.
        self.data[key] = (t, v)
        if breakdown:
            self.frames[key] = df.loc[ok].reset_index(drop=True)
        self.series.append({"key": key, "label": label, "kind": kind, "unit": unit,
                            "max": float(v.max()), "min": float(min(v.min(), 0.0)), "breakdown": breakdown})

    def at(self, key: str, t: float) -> dict[str, Any]:
        """The sample of a series in force at time t (ns from start), with its breakdown if it has one."""
        if key not in self.data:
            return {}
        times, values = self.data[key]
        i = int(np.searchsorted(times, t, side="right")) - 1
        if i < 0:
            return {}
        out: dict[str, Any] = {"t": float(times[i]), "value": float(values[i])}
        frame = self.frames.get(key)
        if frame is not None:
            row = frame.iloc[i]
            parts = {c.removesuffix("_bytes"): int(row[c]) for c in frame.columns
                     if c.endswith("_bytes") and c != "total_bytes" and pd.notna(row[c]) and row[c]}
            out["breakdown"] = dict(sorted(parts.items(), key=lambda kv: -kv[1]))
        return out


def _groups(df: pd.DataFrame, keys: list[str]) -> Iterator[tuple[tuple[Any, ...], pd.DataFrame]]:
    keys = [k for k in keys if k in df.columns]
    if not keys:
        yield (), df
        return
    for k, part in df.groupby(keys, sort=True, dropna=False):
        yield (k if isinstance(k, tuple) else (k,)), part


def counter_series(profile: Profile, transfers: bool = True) -> CounterSeries:
    """Host memory, HBM use by category, host CPU per core, host-device bandwidth and any other sampled counters.

    `transfers=False` leaves out the bandwidth series (they read the transfers' arguments: about
    a second at 10M events), which `add_bandwidth` adds later.
    """
    out = CounterSeries()
    origin = profile.origin_ts
    names = profile.counters.names()
    if "host_memory" in names:
        df = profile.host_memory
        value = "used_percent" if "used_percent" in df.columns else "used_bytes"
        for key, part in _groups(df, ["instance_id"]):
            inst = "/".join(map(str, key))
            out.add(f"host_memory:{inst}", f"{inst}/Host memory", "memory", "%" if value == "used_percent" else "B",
                    part, value, origin=origin)
    if "hbm_usage" in names:
        df = profile.hbm_usage
        for key, part in _groups(df, ["instance_id", "device_idx", "hbm_idx"]):
            inst, *rest = [str(k) for k in key] or ["?"]
            where = f"Device:{rest[0]}/HBM:{rest[1]}" if len(rest) == 2 else "HBM"
            out.add(f"hbm:{inst}:{'/'.join(rest)}", f"{inst}/HBM usage/{where}", "hbm", "B", part, "total_bytes",
                    breakdown=True, origin=origin)
    if "cpu_usage" in names:
        df = profile.cpu_usage
        for key, part in _groups(df, ["instance_id", "cpu_id"]):
            inst, cpu = (str(key[0]), str(key[1])) if len(key) == 2 else ("?", str(key[0]) if key else "?")
            out.add(f"cpu:{inst}:{cpu}", f"{inst}/CPU utilisation/CPU {cpu}", "cpu", "%", part, "util_percent",
                    origin=origin)
    if transfers:
        add_bandwidth(out, profile)
    for name in names:
        if name in ("host_memory", "hbm_usage", "cpu_usage"):
            continue
        df = profile.counter(name)
        if df.empty or "timestamp" not in df.columns:
            continue
        if {"name", "series", "value"} <= set(df.columns):
            # As chrome://tracing draws them: a counter per process (the same name in two processes
            # is two counters), each series a line.
            track_names = profile.track_names
            for key, part in _groups(df, ["instance_id", "process_id", "name", "series"]):
                parts = [str(k) for k in key]
                if "process_id" in df.columns and len(key) == 4:
                    inst, pid = key[0], key[1]
                    parts[1] = track_names.process_label(inst, pid) or f"PID:{pid}"
                label = "/".join(parts)
                kind = "bandwidth" if any(w in label.lower() for w in ("bandwidth", "transfer", "dma")) else "counter"
                out.add(f"{name}:{label}", label, kind, "", part, "value", origin=origin)
        else:
            cols = [c for c in df.columns if c not in ("timestamp", "instance_id") and pd.api.types.is_numeric_dtype(df[c])]
            for c in cols:
                kind = "bandwidth" if any(w in c.lower() for w in ("bandwidth", "transfer")) else "counter"
                out.add(f"{name}:{c}", f"{name}/{c}", kind, "", df, c, origin=origin)
    return out


def add_bandwidth(out: CounterSeries, profile: Profile) -> None:
    """A host-device bandwidth series per instance, NeuronCore and direction (model.transfers)."""
    origin = profile.origin_ts
    for bw in bandwidth(profile):
        # Grouped per instance like HBM usage, so the group starts collapsed and leaves room for events.
        label = f"{bw.instance}/Host-device bandwidth/NC:{bw.nc}/{bw.direction}"
        df = pd.DataFrame({"timestamp": bw.times, "rate": bw.rate})
        out.add(f"bandwidth:{bw.instance}:{bw.nc}:{bw.direction}", label, "bandwidth", "B/s", df, "rate", origin=origin)
