"""A realistic sample profile in the Neuron Explorer Parquet layout.

Several instances, processes, threads and NeuronCores; framework ops flowing to
nrt_execute flowing to nc_exec_running; collectives with barriers; timestamp_sync_points;
one numerical_err; one execution that never completes; CPU, host memory and HBM counters;
a DeviceProfileList with device tables for drill-down. Deterministic for a seed, and
written in row groups so 100M events never sit in memory at once.
"""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..progress import progress
from ..readers import load_profile
from . import counters, device_tables, kineto, system
from . import template as tp

SCHEMA_VERSION = "7.4.0"
ROW_GROUP = 1 << 20


def _template(cores: int) -> dict:
    t = tp.build(cores).arrays()
    names = sorted(set(t["name"].tolist()) | {"numerical_err"})
    sources = ["framework", "neuron_rt", "neuron_hw"]
    t["names"], t["sources"] = names, sources
    t["name_code"] = np.array([names.index(n) for n in t["name"]])
    t["source_code"] = np.array([sources.index(s) for s in t["source"]])
    return t


def plan(seed: int, instances: int, processes: int, cores: int, events: int
         ) -> tuple[np.random.Generator, system.Layout, dict, int, int, system.Special]:
    """What a sample or a job is made of: its random source, layout, template, events per step, steps,
    and where its error and hang go (an error on the last group's last core half-way, a hang at the end)."""
    rng = np.random.default_rng(seed)
    layout = system.Layout.make(rng, instances, processes, cores)
    tmpl = _template(cores)
    per_step = len(tmpl["name"]) * layout.groups
    steps = max(round(events / per_step), 3)
    special = system.Special(error_step=steps // 2, error_group=layout.groups - 1,
                             error_core=cores - 1, hang_step=steps - 1)
    return rng, layout, tmpl, per_step, steps, special


def write_sample(directory: str | Path, events: int = 20_000, seed: int = 0, *, instances: int = 2,
                 processes: int = 2, cores: int = 2, device_instructions: int = 600) -> Path:
    """Write a sample profile of about `events` system events into `directory`; return it."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    rng, layout, tmpl, per_step, steps, special = plan(seed, instances, processes, cores, events)
    steps_per_chunk = max(ROW_GROUP // per_step, 1)
    w = None
    written = 0
    first_chunk = None
    with progress(f"writing sample to {out.name}", steps * per_step) as bar:
        for first in range(0, steps, steps_per_chunk):
            chunk_steps = np.arange(first, min(first + steps_per_chunk, steps))
            table = system.chunk(layout, tmpl, chunk_steps, rng, special, written)
            if w is None:
                w = system.writer(out / "SystemProfileEvents.parquet", table.schema)
                first_chunk = table
            w.write_table(table, row_group_size=ROW_GROUP)
            written += table.num_rows
            bar.update(table.num_rows)
    assert w is not None
    w.close()
    t0 = system.BASE_NS
    t1 = system.BASE_NS + steps * tp.STEP_NS
    _side_tables(out, rng, layout, t0, t1, written)
    _device_profiles(out, rng, layout, first_chunk, device_instructions)
    return out


def _side_tables(out: Path, rng: np.random.Generator, layout: system.Layout, t0: int, t1: int, n: int) -> None:
    pq.write_table(counters.cpu_usage(rng, layout.instances, t0, t1), out / "CpuUsage.parquet")
    pq.write_table(counters.host_memory(rng, layout.instances, t0, t1), out / "HostMemUsage.parquet")
    pq.write_table(counters.hbm_usage(rng, layout.instances, layout.processes, t0, t1),
                   out / "SystemProfileHbmUsage.parquet")
    iso = np.datetime_as_string(np.array([t0, t1], dtype="datetime64[ns]"), unit="ns").tolist()
    pq.write_table(pa.Table.from_pylist([{
        "first_ts": iso[0] + "Z", "last_ts": iso[1] + "Z", "first_ts_ns": str(t0), "last_ts_ns": str(t1),
        "ntff_version": 4, "hbm_capacity_bytes": 96 * 2**30,
    }]), out / "SystemProfileMetadata.parquet")
    pq.write_table(pa.Table.from_pylist([{
        "profile_schema_version": SCHEMA_VERSION, "ntff_version": 4, "num_physical_cores": layout.processes * layout.cores,
        "vnc_enabled": False, "first_hw_timestamp": t0, "last_hw_timestamp": t1, "first_ts": iso[0] + "Z",
        "last_ts": iso[1] + "Z", "instance_type": "trn1.32xlarge", "runtime_version": "2.31.0",
        "explorer_version": "2.31.0", "profile_name": "neuron-widgets-sample", "is_simulation": True,
        "ticks_per_nanosec": 1, "system_events": n,
    }]), out / "Metadata.parquet")


def _device_profiles(out: Path, rng: np.random.Generator, layout: system.Layout, first: pa.Table,
                     instructions: int) -> None:
    """A DeviceProfileList row and a device-profile directory per (process, core, model).

    Each holds the first step's execution of its model on its core, at that execution's
    real time (device clock), so drill-down lines up with the system timeline.
    """
    ev = first.select(["name", "start_ts", "end_ts", "instance_id", "process_id", "nc_idx",
                       "extra_attributes_json"]).to_pandas()
    hw = ev[ev["name"] == "nc_exec_running"]
    rows = []
    number = 1
    for inst_i, inst in enumerate(layout.instances):
        for proc in range(layout.processes):
            pid = layout.pids[inst_i][proc]
            for nc in range(layout.cores):
                for model in (tp.FWD_MODEL, tp.BWD_MODEL):
                    # Step 0 runs execution `model` (1 forward, 2 backward) on every core.
                    mine = hw[(hw["instance_id"] == inst) & (hw["process_id"] == pid) & (hw["nc_idx"] == nc)
                              & hw["extra_attributes_json"].str.contains(f'"exec_id":{model},', regex=False)]
                    e = mine.iloc[0]
                    name = f"neuron_profile_{number:03d}"
                    device_tables.write(out / "device_profiles" / name, rng,
                                        [(model, int(e["start_ts"]), int(e["end_ts"]))], instructions,
                                        tp.MODEL_NAMES[model], nc)
                    rows.append({"device_profile_name": name, "instance_id": inst, "process_id": pid,
                                 "nc_id": nc, "session_id": 0, "model_id": model})
                    number += 1
    pq.write_table(pa.Table.from_pylist(rows), out / "DeviceProfileList.parquet")


def sample_path() -> Path:
    """Where the bundled sample profile lives inside the installed package."""
    return Path(str(resources.files("neuron_widgets") / "data" / "sample"))


def sample_profile(kind: str = "neuron", **filters):
    """A small sample profile, loaded (filters as for load_profile).

    `kind="neuron"` (default): the bundled Neuron Explorer profile (2 instances, 8 NeuronCores,
    device profiles). `kind="kineto"`: a two-rank PyTorch-profiler (Kineto) GPU job, written on
    first use, in which rank 0 reaches the all-reduce late.
    """
    if kind == "kineto":
        return load_profile(kineto_sample_paths(), **filters)
    if kind != "neuron":
        raise ValueError(f"kind must be 'neuron' or 'kineto', not {kind!r}")

    path = sample_path()
    if not (path / "SystemProfileEvents.parquet").exists():
        # A source checkout without the generated data: build it once in a temporary place.
        path = Path(tempfile.gettempdir()) / "neuron-widgets-sample"
        if not (path / "SystemProfileEvents.parquet").exists():
            tmp = Path(tempfile.mkdtemp())
            write_sample(tmp)
            shutil.move(str(tmp), path) if not path.exists() else None
    return load_profile(path, **filters)


def kineto_sample_paths() -> list[Path]:
    """The Kineto sample's rank files (written once per machine into the temporary directory)."""
    path = Path(tempfile.gettempdir()) / f"neuron-widgets-kineto-sample-v{kineto.VERSION}"
    files = [path / f"rank-{r}.pt.trace.json.gz" for r in range(kineto.RANKS)]
    if not all(f.exists() for f in files):
        tmp = Path(tempfile.mkdtemp())
        kineto.write_kineto(tmp)
        path.mkdir(parents=True, exist_ok=True)
        for f in files:
            shutil.move(str(tmp / f.name), f)  # each file whole: a reader never sees half of one
    return files
