"""Raw capture directories written by the Neuron runtime.

`<output_dir>/<instance>_pid_<pid>/[<timestamp>/]` with ntrace.pb, trace_info.pb, cpu_util.pb,
host_mem.pb, *.neff, *.ntff and the framework's trace.json. The binary formats are not public:
when the `neuron-explorer` command is on PATH it converts the capture to Parquet (once, into a
cache keyed by the capture's contents); when it is not, the error says which command to run
where the Neuron tools are installed. Framework trace.json files load either way.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import LoadWarnings, ProfileError
from ...model.filters import Filters
from ...model.profile import Profile
from ..multi import Load, merge
from .parquet import profile_dirs

CLI = "neuron-explorer"
_CAPTURE_SUFFIXES = (".pb", ".ntff", ".neff")
_MAX_DEPTH = 4


@dataclass
class Inventory:
    root: Path
    pb: list[Path] = field(default_factory=list)
    ntff: list[Path] = field(default_factory=list)
    neff: list[Path] = field(default_factory=list)
    traces: list[Path] = field(default_factory=list)
    others: list[Path] = field(default_factory=list)

    @classmethod
    def of(cls, root: Path) -> Inventory:
        inv = cls(root)
        for dirpath, dirnames, filenames in os.walk(root):
            depth = len(Path(dirpath).relative_to(root).parts)
            if depth >= _MAX_DEPTH:
                dirnames[:] = []
            for name in sorted(filenames):
                f = Path(dirpath) / name
                if name.endswith(".pb"):
                    inv.pb.append(f)
                elif name.endswith(".ntff"):
                    inv.ntff.append(f)
                elif name.endswith(".neff"):
                    inv.neff.append(f)
                elif name.endswith((".json", ".json.gz")) and "trace" in name:
                    inv.traces.append(f)
                else:
                    inv.others.append(f)
        return inv

    @property
    def files(self) -> list[Path]:
        return self.pb + self.ntff + self.neff + self.traces + self.others

    def describe(self) -> str:
        parts = [f"{len(v)} {k}" for k, v in (("*.pb", self.pb), ("*.ntff", self.ntff), ("*.neff", self.neff),
                                               ("trace.json", self.traces)) if v]
        return ", ".join(parts) if parts else "no capture files"

    def key(self) -> str:
        """Identity of the capture's contents: names, sizes and modification times."""
        h = hashlib.sha256()
        for f in sorted(self.pb + self.ntff + self.neff):
            st = f.stat()
            h.update(f"{f.relative_to(self.root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        return h.hexdigest()[:24]


def sniff(path: Path) -> bool:
    if not path.is_dir():
        return False
    try:
        entries = list(path.iterdir())
    except OSError:
        return False
    if not entries:
        return True  # an empty directory given as a profile is a capture that wrote nothing
    if any(e.is_dir() and "_pid_" in e.name for e in entries):
        return True
    return any(e.is_file() and e.name.endswith(_CAPTURE_SUFFIXES) for e in entries)


def _command(root: Path) -> str:
    return f"{CLI} view -d {root} --output-format parquet"


def check(inv: Inventory, warnings: LoadWarnings) -> None:
    """Explain the signs of a failed capture in words users can act on."""
    root = inv.root
    if not inv.files:
        raise ProfileError(root, "the capture directory is empty: the runtime wrote no profile",
                           "Enable capture (NEURON_RT_INSPECT_ENABLE=1, NEURON_RT_INSPECT_OUTPUT_DIR) or use the "
                           "framework's profiler API, and let the job run at least one execution")
    empty = [f for f in inv.ntff if f.stat().st_size == 0]
    if empty:
        warnings.add(f"{root.name}: device traces of 0 bytes (no execution was captured, usually a warm-up problem: "
                     "run a few iterations before profiling)", len(empty), empty[0].name)
    if inv.ntff and not inv.neff:
        warnings.add(f"{root.name}: device traces without their .neff (they cannot be decoded: set neff_cache_dir "
                     "or TORCH_NEURONX_NEFF_CACHE_DIR so the compiled model is saved beside the capture)", len(inv.ntff))
    if inv.pb and not inv.ntff:
        warnings.add(f"{root.name}: system profile only, no device traces (fine if that was intended)", 1)
    if not inv.pb and not inv.traces:
        raise ProfileError(root, f"holds no system trace (ntrace.pb) and no trace.json ({inv.describe()})",
                           "Capture again with system profiling on, or point at the directory the runtime wrote")


def cache_dir() -> Path:
    base = os.environ.get("NEURON_WIDGETS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "neuron-widgets")
    return Path(base) / "captures"


def convert(inv: Inventory) -> Path:
    """The capture processed to Parquet by neuron-explorer, from the cache when it is current."""
    target = cache_dir() / inv.key()
    if target.is_dir():
        try:
            found = profile_dirs(target)
        except OSError:
            found = []
        if found:
            return found[0]
    exe = shutil.which(CLI)
    assert exe is not None
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="convert-", dir=target.parent))
    cmd = [exe, "view", "-d", str(inv.root), "--output-format", "parquet", "--data-path", str(work)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=6 * 3600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise ProfileError(inv.root, f"`{' '.join(cmd)}` could not run ({exc})",
                           f"Run `{_command(inv.root)}` by hand and load its output") from None
    found = profile_dirs(work) if done.returncode == 0 else []
    if not found:
        shutil.rmtree(work, ignore_errors=True)
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ProfileError(inv.root, f"{CLI} failed (exit {done.returncode}): {' | '.join(tail) or 'no output'}",
                           f"Run `{_command(inv.root)}` by hand to see the whole error")
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    work.rename(target)
    return profile_dirs(target)[0]


def read(path: Path, filters: Filters, load_profile: Load) -> Profile:
    """The capture's system profile (converted) and framework traces, each opened with `load_profile`
    (the package's, handed in by its registry, so this module does not import the package back)."""
    inv = Inventory.of(path)
    warnings = LoadWarnings()
    check(inv, warnings)
    kwargs = filters.as_kwargs()
    profiles: list[Profile] = []
    names: list[str] = []
    if inv.pb:
        if shutil.which(CLI):
            profiles.append(load_profile(convert(inv), **kwargs))
            names.append("system profile")
        elif not inv.traces:
            # The signs of a failed capture are said now, so nobody runs a conversion that will fail.
            signs = "; ".join(k.split(": ", 1)[-1] for k in warnings if "0 bytes" in k or "without their .neff" in k)
            raise ProfileError(path, f"is a raw Neuron capture ({inv.describe()}) and `{CLI}` is not installed here "
                               "to convert it" + (f". Before converting, note: {signs}" if signs else ""),
                               f"Run `{_command(path)}` where the Neuron tools are installed, then "
                               "load the directory it writes (or pass --data-path and load profiles/global/<name>)")
        else:
            warnings.add(f"{path.name}: system trace not converted ({CLI} is not installed here); only the framework "
                         f"trace is shown. Run `{_command(path)}` where the Neuron tools are installed to add it", 1)
    for t in inv.traces:
        profiles.append(load_profile(t, **kwargs))
        names.append(str(t.relative_to(path)))
    merged = profiles[0] if len(profiles) == 1 else merge(profiles, names, str(path))
    merged.warnings.merge(warnings)
    merged.extra["capture"] = {"root": str(path), "found": inv.describe(), "ntff": [str(f) for f in inv.ntff],
                               "neff": [str(f) for f in inv.neff]}
    merged.extra["filters_applied"] = True
    return merged
