"""From a hardware event to its device profile, read once and put on the host clock.

DeviceProfileList rows with the event's instance and process, `nc_id` equal to the event's
nc_idx (both logical cores) and the event's model id. Where device-profile directories sit
is not public: beside the system profile (`device_profiles/<name>`, `<name>`, `<name>@latest`,
in it or its parent) or in the directory given as `device_profiles_dir`.
Device time goes to host time with the execution's timestamp_sync_point:
`host = sync_cpu + (device - sync_device)`; without one, the execution's start is laid on
the nc_exec_running's start, and the trace says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa

from ...errors import ProfileError
from ..filters import dict_mask

if TYPE_CHECKING:
    from ..profile import Profile
    from .trace import DeviceTrace


def homes(profile: Profile) -> list[Path]:
    """The folders this profile's device files may be in, links resolved.

    The folder given as `device_profiles_dir`, the profile's own folder (a processed profile's
    directory, or the folder of a trace file) and, for several inputs merged into one profile
    (a folder of ranks, a capture, a job), each input's folder. In neuron-explorer's
    `--data-path` layout (`profiles/global/<name>@latest`) processed profiles are siblings, so
    that `profiles/global` folder is one too.
    """
    out: list[Path] = []

    def add(folder: Path) -> None:
        try:
            real = folder.resolve(strict=True)
        except (OSError, RuntimeError):
            return
        if real.is_dir() and real not in out:
            out.append(real)

    def walk(extra: dict[str, Any], source: str | None, depth: int) -> None:
        if extra.get("directory"):
            home = Path(str(extra["directory"]))
        elif source:
            home = Path(source) if Path(source).is_dir() else Path(source).parent
        else:
            home = None
        if home is not None:
            add(home)
            if home.parent.name == "global" and home.parent.parent.name == "profiles":
                add(home.parent)
        inputs = extra.get("inputs")
        sources = extra.get("input_sources")
        if depth < 8 and isinstance(inputs, list):
            for i, sub in enumerate(inputs):
                src = sources[i] if isinstance(sources, list) and i < len(sources) else None
                walk(sub if isinstance(sub, dict) else {}, src, depth + 1)

    given = profile.extra.get("device_profiles_dir")
    if given:
        add(Path(str(given)).expanduser())
    walk(profile.extra, profile.source if Path(profile.source).exists() else None, 0)
    return out


def candidate_dirs(profile: Profile, name: str) -> list[Path]:
    """Where a device profile of this name may sit, in the order looked at."""
    out = []
    for root in homes(profile):
        for folder in (root / "device_profiles", root):
            out += [folder / name, folder / f"{name}@latest"]
    return out


def _plain_name(profile: Profile, name: str) -> None:
    """A device profile's name is one plain path component: never a path, never `..`."""
    bad = (not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name
           or Path(name).is_absolute() or Path(name).name != name)
    if bad:
        shown = name if len(name) <= 80 else name[:77] + "..."
        raise ProfileError(profile.source, f"its DeviceProfileList names the device profile {shown!r}, which is not "
                           "a plain name: device profiles are read from inside the profile's folder only",
                           "Rewrite the DeviceProfileList with the names of the device-profile directories or "
                           "files beside the profile, or pass device_profiles_dir=DIR")


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


def _confined(profile: Profile, name: str, path: Path, roots: list[Path]) -> Path:
    """`path` with its links resolved, if it and every file a device loader reads in it stay inside `roots`."""
    try:
        real = path.resolve(strict=True)
        inner = [f.resolve(strict=True) for f in real.iterdir()] if real.is_dir() else []
    except (OSError, RuntimeError):
        real, inner = Path(), []
        outside = True
    else:
        outside = not _inside(real, roots) or not all(_inside(f, roots) for f in inner)
    if outside:
        raise ProfileError(path, f"the device profile {name!r} leads outside the profile's folder (a link or a path "
                           f"that resolves elsewhere, or cannot be resolved); it was not read. Allowed: "
                           f"{', '.join(str(r) for r in roots) or 'none'}",
                           "Copy the device profile into the profile's folder (device_profiles/<name>), or pass "
                           "load_profile(..., device_profiles_dir=DIR) with the directory that holds it")
    return real


def locate(profile: Profile, name: str) -> Path:
    """The device profile's directory or file, inside the profile's folders (see `homes`) only."""
    _plain_name(profile, name)
    roots = homes(profile)
    dp = profile.device_profiles
    if "path" in dp and name in set(dp["device_profile_name"]):
        listed = dp.loc[dp["device_profile_name"] == name, "path"].iloc[0]
        if isinstance(listed, str) and listed:
            path = Path(listed)
            if not path.is_absolute() and roots:
                path = roots[0] / path
            if path.exists() or path.is_symlink():
                return _confined(profile, name, path, roots)
    for d in candidate_dirs(profile, name):
        if d.is_dir() or d.is_symlink():
            return _confined(profile, name, d, roots)
    looked = ", ".join(str(d) for d in candidate_dirs(profile, name)[:4])
    raise ProfileError(name, "the device profile's data was not found (looked in " + (looked or "no folder") + ", ...)",
                       "Pass load_profile(..., device_profiles_dir=DIR) with the directory that holds it")


def profile_for(profile: Profile, event: dict[str, Any]) -> str:
    dp = profile.device_profiles
    if dp.empty:
        raise ProfileError(profile.source, "lists no device profiles", "Capture with device profiling on")
    args = event.get("args") or {}
    if event.get("nc_idx") is None:
        raise ProfileError(profile.source, f"event {event.get('id')} ({event.get('name')}) ran on no NeuronCore, so "
                           "it has no device trace", "Pick a hardware event such as nc_exec_running")
    # A list of tens of profiles, compared in plain Python: pandas' per-operation cost was most of a
    # drill-down's first 10 ms (and more while the click's details held the GIL).
    match = np.ones(len(dp), dtype=bool)
    for col, value in (("instance_id", event.get("instance_id")), ("process_id", event.get("process_id")),
                       ("nc_id", event.get("nc_idx")), ("model_id", args.get("model_id"))):
        if value is None or col not in dp:
            continue
        values = dp[col].tolist()
        known = [bool(pd.notna(v)) for v in values]  # None, NaN and pd.NA alike
        if any(known):
            match &= np.array([k and bool(v == value) for k, v in zip(known, values, strict=True)], dtype=bool)
    found = dp[match] if not match.all() else dp
    if found.empty:
        raise ProfileError(profile.source, f"has no device profile for {event.get('name')} on "
                           f"{event.get('instance_id')} PID {event.get('process_id')} NC {event.get('nc_idx')} "
                           f"model {args.get('model_id')}", "Device profiles are captured for some executions only; "
                           "see Profile.device_profiles")
    if "session_id" in found and len(found) > 1:
        found = found.sort_values("session_id")
    return str(found["device_profile_name"].iloc[0])


def _is(profile: Profile, column: str, value: Any) -> np.ndarray:
    return dict_mask(profile.column(column), lambda values: np.array([v == value for v in values], dtype=bool))


@dataclass(frozen=True)
class SyncRows:
    """The profile's timestamp_sync_point events: their rows, and the columns that say whose they are."""

    rows: np.ndarray
    instance: list[Any]
    process: np.ndarray
    core: np.ndarray  # nc_idx, -1 where null
    start: np.ndarray


def sync_rows(profile: Profile) -> SyncRows:
    """Found once per profile (one pass over the names, the rest read at those rows): a drill-down then
    picks its core's among a few rows, where it took four passes over every event (15 ms at 1M events)."""
    def build() -> SyncRows:
        rows = np.flatnonzero(_is(profile, "name", "timestamp_sync_point"))
        at = pa.array(rows)
        found = SyncRows(rows, profile.column("instance_id").take(at).to_pylist(), profile.array("process_id")[rows],
                         profile.column("nc_idx").take(at).fill_null(-1).to_numpy(zero_copy_only=False),
                         profile.array("start_ts")[rows])
        with profile._lock:
            profile.__dict__["_sync_rows"] = found
        return found

    return cast(SyncRows, profile._once("sync_rows", lambda: profile.__dict__.get("_sync_rows"), build))


def sync_points(profile: Profile, event: dict[str, Any], nearest: bool = False) -> pd.DataFrame:
    """exec_id, host and device timestamps of the sync points on the event's core.

    `nearest`: only the last one taken at or before the event (its own execution's, usually),
    so a drill-down reads one event's arguments instead of every sync point's.
    """
    core = event.get("nc_idx") if event.get("nc_idx") is not None else -1
    s = sync_rows(profile)
    instance = event["instance_id"]
    mine = (np.array([v is not None and v == instance for v in s.instance], dtype=bool) & (s.process == event["process_id"])
            & (s.core == core))
    rows = s.rows[mine]
    if nearest:
        before = rows[s.start[mine] <= int(event["start_ts"])]
        rows = before[-1:]
    out = []
    for a in profile.args_of_rows(rows):
        if {"cpu_timestamp_ns", "nc_timestamp_ns"} <= set(a):
            out.append((a.get("exec_id"), int(a["cpu_timestamp_ns"]), int(a["nc_timestamp_ns"])))
    return pd.DataFrame(out, columns=["exec_id", "cpu_ns", "device_ns"])


def device_start(trace: DeviceTrace) -> int:
    info = trace.execution_info
    if "execution_start_ts" in info and info["execution_start_ts"].notna().any():
        return int(info["execution_start_ts"].min())
    return trace.span[0]


def aligned_trace(profile: Profile, trace: DeviceTrace, event: dict[str, Any],
                  nearest: pd.DataFrame | None = None) -> DeviceTrace:
    """The trace on the host clock; `nearest` is `sync_points(..., nearest=True)` when already looked up."""
    start = device_start(trace)
    wanted = (event.get("args") or {}).get("exec_id")
    sp = sync_points(profile, event, nearest=True) if nearest is None else nearest
    if sp.empty or wanted is None or sp["exec_id"].iloc[0] != wanted or int(sp["device_ns"].iloc[0]) > start:
        sp = sync_points(profile, event)
    if not sp.empty:
        # The device profile's own execution: the sync point taken just before its device start.
        before = sp[sp["device_ns"] <= start]
        own = before.loc[before["device_ns"].idxmax()] if not before.empty else \
            sp.loc[(sp["device_ns"] - start).abs().idxmin()]
        offset = int(own["cpu_ns"]) - int(own["device_ns"])
        if wanted is None or own["exec_id"] == wanted:
            return trace.aligned(offset, "timestamp_sync_point", residual_ns=int(event["start_ts"]) - (start + offset))
        return trace.aligned(offset, "timestamp_sync_point",
                             note=f"this device profile holds execution {own['exec_id']}, not the selected "
                                  f"execution {wanted}: it is shown at its own time")
    return trace.aligned(int(event["start_ts"]) - start, "execution start laid on nc_exec_running",
                         note="no timestamp_sync_point on this core: device time aligned by the execution's "
                              "start, clock drift within it is not corrected")
