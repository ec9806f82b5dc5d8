"""Readers, one module per input format, and the detection that picks one.

A reader is a `sniff(path) -> bool` and a `read(path, filters) -> Profile`. Adding a
format is adding a module and one `Reader(...)` line below.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from .. import memory
from ..errors import ProfileError
from ..model.device.loading import set_device_loader
from ..model.filters import Filters
from ..model.order import warm as warm_kernels
from ..model.profile import Profile
from ..model.timefmt import duration
from . import cache, chrome, multi, perfetto
from .cache import enabled as cache_switch
from .columns import unique_dictionaries
from .neuron import capture, parquet, runtime_json
from .neuron import legacy_json as neuron_json
from .neuron.device_trace import load_device_trace, load_device_trace_staged
from .sniff import counting_repairs, damaged_compression, describe_foreign, inflate_bound

set_device_loader(load_device_trace, load_device_trace_staged)

# Below this, a view builds the index in tens of milliseconds: no background preparation.
PREPARE_MIN_EVENTS = 200_000


@dataclass(frozen=True)
class Reader:
    name: str
    sniff: Callable[[Path], bool]
    read: Callable[[Path, Filters], Profile]
    # Readers that parse a whole file (JSON, protobuf) keep what they built in the parse cache.
    cache_version: int | None = None


READERS: list[Reader] = [
    Reader("neuron-parquet", parquet.sniff, parquet.read),
    # The capture and a folder of inputs open their parts with load_profile (and the folder asks the
    # registry's readers which files are traces): handed in, so neither module imports this package.
    Reader("neuron-capture", capture.sniff, lambda p, filters: capture.read(p, filters, load_profile)),
    Reader("several-inputs", lambda p: multi.sniff(p, READERS),
           lambda p, filters: multi.read(p, filters, load_profile, READERS)),
    Reader("neuron-json", neuron_json.sniff, neuron_json.read, neuron_json.VERSION),
    Reader("neuron-runtime-json", runtime_json.sniff, runtime_json.read, runtime_json.VERSION),
    Reader("chrome-json", chrome.sniff, chrome.read, chrome.VERSION),
    Reader("perfetto", perfetto.sniff, perfetto.read, perfetto.VERSION),
]


def register(reader: Reader, first: bool = False) -> None:
    """Add a reader; `first` lets it claim files before the built-in ones."""
    if first:
        READERS.insert(0, reader)
    else:
        READERS.append(reader)


def load_profile(path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *,
                 format: str | None = None, neuron_cores: str | int | Iterable[int] | None = None,
                 event_types: str | Sequence[str] | None = None, instances: str | Iterable[str] | None = None,
                 time_range: Sequence[int | float | str] | None = None, device_profiles_dir: str | os.PathLike[str] | None = None,
                 prepare: bool | None = None, cache: bool = True, max_inflated_bytes: int | None = None) -> Profile:
    """Load a profile, detecting its format.

    Filters (`neuron_cores="0,2-3"`, `event_types="hardware,^cc_exec_barrier"`,
    `instances=[...]`, `time_range=(t0, t1)`) are applied while reading: for Parquet they
    are pushed into the scan, so a subset of a profile larger than memory can be opened.
    `device_profiles_dir` says where device-profile directories are, when not beside the profile.
    `prepare` (default on; NEURON_WIDGETS_PREPARE=0 turns it off) builds the default grouping's
    tracks, lanes and level-of-detail index in a background thread, so that a Timeline opened
    afterwards paints at once instead of building them first. Profiles under 200k events are
    not prepared ahead: a view builds their index in a few tens of milliseconds, and a thread
    would only compete with whatever the user runs next.
    `cache` (default on): a JSON or Perfetto trace is kept as columns after its first parse
    (in NEURON_WIDGETS_CACHE, default ~/.cache/neuron-widgets), so opening it again is fast.
    `max_inflated_bytes` bounds what a compressed file may inflate to and how large one Perfetto
    packet may be (default: NEURON_WIDGETS_MAX_INFLATED_BYTES, else 256 MiB or 100 times the compressed
    file, whichever is more, and 256 MiB per packet); past it the load stops with a ProfileError.
    """
    prepare = prepare if prepare is not None else os.environ.get("NEURON_WIDGETS_PREPARE", "1") != "0"
    if prepare:
        # numba's first kernel in a process costs about half a second (its typing context):
        # paid while the file is read, not by the first view.
        threading.Thread(target=warm_kernels, name="neuron-widgets-warm", daemon=True).start()
    with cache_switch(cache), inflate_bound(max_inflated_bytes):
        profile = _load(path, format=format, neuron_cores=neuron_cores, event_types=event_types,
                        instances=instances, time_range=time_range)
    _report_clock_outliers(profile)
    if len(profile) >= memory.GIVE_BACK_MIN_EVENTS:
        memory.give_back()
    # The device files beside a single trace file (a folder's own trace was given them as it loaded).
    one = path[0] if isinstance(path, list | tuple) and len(path) == 1 else path
    trace = Path(os.fspath(one)).expanduser() if isinstance(one, str | os.PathLike) else None
    if profile.format == "perfetto" and profile._device_profiles is None and trace is not None and trace.is_file():
        profile._device_profiles = perfetto.device_profiles(trace)
    if device_profiles_dir is not None:
        profile.extra["device_profiles_dir"] = os.fspath(device_profiles_dir)
    if prepare and len(profile) >= PREPARE_MIN_EVENTS:
        profile.prepare("default")
    return profile


def _load(path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *,
          format: str | None = None, neuron_cores: str | int | Iterable[int] | None = None,
          event_types: str | Sequence[str] | None = None, instances: str | Iterable[str] | None = None,
          time_range: Sequence[int | float | str] | None = None) -> Profile:
    filters = Filters.make(neuron_cores, event_types, instances, time_range)
    if isinstance(path, list | tuple):
        if not path:
            raise ProfileError(None, "an empty list of paths was given", "Pass at least one profile path")
        if len(path) > 1:
            for one in path:
                _check_exists(Path(os.fspath(one)).expanduser())
            return multi.load_many([Path(os.fspath(p)).expanduser() for p in path], filters,
                                   ", ".join(os.fspath(p) for p in path), load_profile)
        path = path[0]
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"expected a path or a list of paths, not {type(path).__name__}")
    p = Path(os.fspath(path)).expanduser()
    _check_exists(p)
    if format is None:
        # A file parsed before and unchanged since: its cached columns, without sniffing again.
        known = cache.lookup(p, {r.name: r.cache_version for r in READERS if r.cache_version is not None})
        if known is not None:
            known._table = unique_dictionaries(known._table)  # an entry written before a reader was fixed
            return known.filter(**filters.as_kwargs()) if filters else known
    candidates = READERS if format is None else [r for r in READERS if r.name == format]
    if not candidates:
        names = ", ".join(r.name for r in READERS)
        raise ValueError(f"unknown format {format!r}; known: {names}")
    for reader in candidates:
        try:
            claims = format is not None or reader.sniff(p)
        except OSError as exc:
            raise ProfileError(p, f"cannot be read ({exc.strerror or exc})", "Check the file's permissions") from None
        if claims:
            if reader.cache_version is not None:
                profile = cache.load_or_parse(p, reader.name, reader.cache_version, partial(_read, reader, p, filters))
            else:
                profile = _read(reader, p, filters)
            # Readers that cannot push a filter down get it applied here, after the load.
            if filters and not profile.extra.get("filters_applied", reader.name == "neuron-parquet"):
                profile = profile.filter(**filters.as_kwargs())
            return profile
    damage = damaged_compression(p)
    if damage:
        raise ProfileError(p, f"the compressed data is damaged or cut short ({damage})",
                           "Copy the file again, or decompress it by hand to see how much is readable")
    raise ProfileError(p, f"is not a profile format neuron-widgets reads ({describe_foreign(p)})",
                       "Pass a Neuron Explorer Parquet directory, a raw capture directory, legacy Neuron JSON "
                       "(system_profile.json), the runtime's trace JSON, a Chrome/PyTorch trace .json(.gz) "
                       "or a Perfetto .pftrace")


def _read(reader: Reader, p: Path, filters: Filters) -> Profile:
    """The reader's Profile, with the text it replaced counted (see sniff.repaired); a document that
    holds lone escaped surrogates is read again with them replaced; what no reader should let through
    is said as a ProfileError naming the file."""
    try:
        with counting_repairs() as fixes:
            profile = _read_or_say(reader, p, filters)
    except ProfileError as exc:
        if "surrogate" not in exc.problem:  # msgspec's and orjson's words for an escaped half of a UTF-16 pair
            raise
        with counting_repairs(escapes=True) as fixes:
            profile = _read_or_say(reader, p, filters)
    profile.warnings.add(f"{p.name}: bytes that are not UTF-8 text, or escaped halves of UTF-16 pairs, replaced by "
                         "\N{REPLACEMENT CHARACTER}", fixes[0])
    profile._table = unique_dictionaries(profile._table)
    return profile


def _read_or_say(reader: Reader, p: Path, filters: Filters) -> Profile:
    try:
        return reader.read(p, filters)
    except UnicodeDecodeError as exc:
        raise ProfileError(p, f"holds text that is not UTF-8 ({exc.reason})",
                           "Re-export the trace; its texts must be UTF-8") from None
    except RecursionError:
        raise ProfileError(p, "holds JSON nested too deeply to read (arrays or objects inside each other, "
                           "hundreds of levels deep)", "A profiler does not write this: check how the file was made, "
                           "or remove the deep value") from None


def _check_exists(p: Path) -> None:
    if not p.exists():
        raise ProfileError(p, "no such file or directory", "Check the path; relative paths start from " + os.getcwd())
    if p.is_file() and p.stat().st_size == 0:
        raise ProfileError(p, "the file is empty", "The capture or the conversion may have failed; record or convert it again")


def _report_clock_outliers(profile: Profile) -> None:
    """Say in the warnings which events sit on a clock far from the rest (the view opens on the rest)."""
    split = profile.clock_split
    if not split.outliers:
        return
    names = profile.column("name")
    for (a, b), gap in zip(split.outliers, split.gaps, strict=True):
        seen = sorted(set(names.slice(a, min(b - a, 2000)).to_pylist()))[:4]
        kind = (f"{Path(profile.source).name}: events {duration(gap)} away from the rest of the trace (a second "
                "clock?); the view opens on the rest, these stay loaded and searchable")
        if kind not in profile.warnings:  # a profile from the parse cache may carry it already
            profile.warnings.add(kind, b - a, ", ".join(map(str, seen)))
