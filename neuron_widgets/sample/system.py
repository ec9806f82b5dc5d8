"""SystemProfileEvents of the sample: the template repeated, written in row groups."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import template as tp

BASE_NS = 1_772_323_200_000_000_000  # 2026-03-01T00:00:00Z


@dataclass(frozen=True)
class Layout:
    """Who runs where: instances, processes per instance, NeuronCores per process."""

    instances: tuple[str, ...]
    processes: int
    cores: int
    pids: tuple[tuple[int, ...], ...]

    @classmethod
    def make(cls, rng: np.random.Generator, instances: int, processes: int, cores: int) -> Layout:
        ids = tuple("i-0" + "".join(rng.choice(list("0123456789abcdef"), 16)) for _ in range(instances))
        pids = tuple(tuple(int(p) for p in rng.integers(1_000_000, 4_000_000, processes)) for _ in range(instances))
        return cls(ids, processes, cores, pids)

    @property
    def groups(self) -> int:
        return len(self.instances) * self.processes


@dataclass
class Special:
    """Rows that make the sample honest: one numerical error, one execution that never ends."""

    error_step: int
    error_group: int
    error_core: int
    hang_step: int


def _strings(values: list[str], codes: np.ndarray) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(values, pa.string()))


def _join(*parts: pa.Array | str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _attributes(kind: np.ndarray, model: np.ndarray, exec_id: np.ndarray, nc: np.ndarray,
                cpu_ts: np.ndarray, ret: np.ndarray) -> pa.Array:
    """extra_attributes_json built column-wise by Arrow, not per event in Python."""
    n = kind.size
    mid = pa.array(model).cast(pa.string())
    names = np.array(["", tp.MODEL_NAMES[tp.FWD_MODEL], tp.MODEL_NAMES[tp.BWD_MODEL]], dtype=object)
    mname = pa.array(names[np.clip(model, 0, 2)].tolist(), pa.string())
    eid = pa.array(exec_id).cast(pa.string())
    core = pa.array(nc).cast(pa.string())
    dev_ts = pa.array(cpu_ts - 1_000_000_000 * 3600).cast(pa.string())
    host_ts = pa.array(cpu_ts).cast(pa.string())
    retv = pa.array(ret).cast(pa.string())
    out = pa.nulls(n, pa.string())

    def sizes(scale: int) -> pa.Array:
        # 16-64 KiB per copy (times `scale`), varying from event to event: 2-17 GB/s over the
        # template's copy durations, as host-device DMA on a real instance.
        return pa.array(16_384 * scale * (1 + (cpu_ts // 1_000) % 4)).cast(pa.string())

    forms = {
        tp.EXEC: _join('{"model_id":', mid, ',"model_name":"', mname, '","exec_id":', eid, ',"ret":', retv, "}"),
        tp.HW_EXEC: _join('{"model_name":"', mname, '","model_id":', mid, ',"exec_id":', eid,
                          ',"device_core_idx":', core, ',"nc_idx":', core, "}"),
        tp.SYNC: _join('{"cpu_timestamp_ns":', host_ts, ',"nc_timestamp_ns":', dev_ts, ',"exec_id":', eid, "}"),
        tp.CC: _join('{"cc_op":"all_reduce","algorithm":"ring","replica_group":"0-', core, '","exec_id":', eid, "}"),
        tp.TENSOR: _join('{"tensor_name":"output_', core, '","size":', sizes(4), "}"),
        tp.COPY: _join('{"size":', sizes(1), ',"model_id":', mid, "}"),
    }
    for k, arr in forms.items():
        out = pc.if_else(pa.array(kind == k), arr, out)
    return out


def collectives(tmpl: dict[str, np.ndarray], layout: Layout, steps: np.ndarray, special: Special,
                rng: np.random.Generator, step0: np.ndarray, start: np.ndarray, end: np.ndarray) -> None:
    """Per step, every core's barrier lasts until the last core arrives; the all-reduce and the
    rest of each backward execution follow that release. One core is late most steps (a straggler).

    `start` and `end` are (steps, groups, template events), changed in place.
    """
    names = tmpl["names"]
    code, core, execution = tmpl["name_code"], tmpl["core"], tmpl["execution"]

    def at(name: str, c: int) -> int:
        return int(np.flatnonzero((code == names.index(name)) & (core == c) & (execution == 1))[0])

    s, g = start.shape[0], start.shape[1]
    late_group, late_core = g - 1, layout.cores - 1
    # Every core has the same compute before the all-reduce, give or take a few microseconds;
    # the late one takes 40-120 us more in most steps.
    jitter = rng.integers(0, 10_000, size=(s, g, layout.cores))
    late = rng.random(s) < 0.85
    jitter[late, late_group, late_core] += rng.integers(40_000, 120_000, size=int(late.sum()))
    bars = [at("cc_exec_barrier", c) for c in range(layout.cores)]
    arrive = step0 + (0.96 * tmpl["start"][bars]).astype(np.int64)[None, None, :] + jitter
    hung = np.isin(steps, [special.hang_step])
    arrive_max = arrive.copy()
    arrive_max[hung, 0, 0] = np.iinfo(np.int64).min  # the hung core does not take part
    release = arrive_max.max(axis=(1, 2)) + 2_000
    for c, b in enumerate(bars):
        start[:, :, b] = arrive[:, :, c]
        end[:, :, b] = release[:, None]
        delta = release[:, None] + 1_000 - start[:, :, at("cc_running", c)]
        for name in ("cc_running", "kbl_exec_post", "dmem_buf_copyout"):
            start[:, :, at(name, c)] += delta
            end[:, :, at(name, c)] += delta
        for name in ("nc_exec_running", "kbl_exec_wait", "nrt_execute"):
            end[:, :, at(name, c)] += delta


def _flows(flow_key: np.ndarray) -> pa.Array:
    """flow_id lists: events sharing a key (one execution's chain) share one id; -1 has none."""
    has = flow_key >= 0
    values = pa.array(flow_key[has]).cast(pa.string())
    offsets = np.zeros(flow_key.size + 1, dtype=np.int32)
    np.cumsum(has, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(~has))


def chunk(layout: Layout, tmpl: dict[str, np.ndarray], steps: np.ndarray, rng: np.random.Generator,
          special: Special, next_id: int) -> pa.Table:
    """All events of the given steps, every process of every instance, in time order."""
    k = tmpl["name"].size
    g = layout.groups
    s = steps.size
    scale = rng.uniform(0.92, 1.0, size=(s, g, 1))  # slower and faster steps, nesting kept
    shift = rng.integers(0, 4_000, size=(s, g, 1))
    step0 = BASE_NS + steps[:, None, None] * tp.STEP_NS + shift
    start = (step0 + (tmpl["start"][None, None, :] * scale).astype(np.int64))
    end = start + (tmpl["dur"][None, None, :] * scale).astype(np.int64)
    collectives(tmpl, layout, steps, special, rng, step0, start, end)
    group = np.broadcast_to(np.arange(g)[None, :, None], (s, g, k))
    step = np.broadcast_to(steps[:, None, None], (s, g, k))
    kind = np.broadcast_to(tmpl["kind"][None, None, :], (s, g, k))
    core = np.broadcast_to(tmpl["core"][None, None, :], (s, g, k))
    start, end, group, step, kind, core = (a.reshape(-1) for a in (start, end, group, step, kind, core))
    idx = np.tile(np.arange(k), s * g)
    name_code = tmpl["name_code"][idx]
    src_code = tmpl["source_code"][idx]
    attrs = tmpl["attrs"][idx]
    model = tmpl["model"][idx]
    execution = tmpl["execution"][idx]
    flow = tmpl["flow"][idx]

    inst = group // layout.processes
    proc = group % layout.processes
    pids = np.array(layout.pids, dtype=np.int64).reshape(-1)[group]
    has_core = core >= 0
    nc = np.where(has_core, core, 0)
    pcore = proc * layout.cores + nc
    worker = group * layout.cores + nc
    tid = np.select([kind == tp.MAIN, kind == tp.LOADER, kind == tp.STREAM], [pids, pids + 1, pids],
                    default=pids + 16 + nc)
    # Executions are numbered per core: two per step.
    exec_id = np.where(execution >= 0, step * 2 + execution + 1, 0)
    flow_key = np.where(flow >= 0, ((step * g + group) * 2 + flow) * 64 + np.where(has_core, nc + 1, 0), -1)
    # The framework op's chain reaches every core's nrt_execute and nc_exec_running.
    fw = (flow >= 0) & ~has_core
    ret = np.zeros(start.size, dtype=np.int64)

    err = (step == special.error_step) & (group == special.error_group) & (core == special.error_core) & \
          (execution == 1) & (name_code == tmpl["names"].index("nrt_execute"))
    ret[err] = 1003
    incomplete = (step == special.hang_step) & (group == 0) & (core == 0) & (execution == 1)
    hang_names = [tmpl["names"].index(n) for n in ("nrt_execute", "kbl_exec_wait", "nc_exec_running")]
    # The hung core never reaches the all-reduce: the others' barriers release without it.
    gone_names = [tmpl["names"].index(n) for n in ("kbl_exec_post", "dmem_buf_copyout", "cc_exec_barrier", "cc_running")]
    open_end = incomplete & np.isin(name_code, hang_names)
    keep = ~(incomplete & np.isin(name_code, gone_names))

    n = start.size
    table = pa.table({
        "id": np.arange(next_id, next_id + n, dtype=np.int64),
        "name": _strings(tmpl["names"], name_code),
        "start_ts": start,
        "end_ts": pa.array(end, mask=open_end),
        "duration_ns": pa.array(end - start, mask=open_end),
        "trace_event_source": _strings(tmpl["sources"], src_code),
        "instance_id": _strings(list(layout.instances), inst),
        "process_id": pids,
        "thread_id": tid,
        "nc_idx": pa.array(nc, mask=~has_core),
        "pcore_idx": pa.array(pcore, mask=~(has_core & (kind == tp.HARDWARE))),
        "worker_gid": pa.array(worker, mask=~(has_core & (kind == tp.HARDWARE))),
        "flow_id": _fw_flows(flow_key, fw, layout.cores),
        "framework_stream_id": pa.array(np.where(kind == tp.STREAM, "0", None).tolist(), pa.string())
        .dictionary_encode(),
        "extra_attributes_json": _attributes(attrs, model, exec_id, nc, start, ret),
    })
    table = table.filter(pa.array(keep))
    if special.error_step in steps:
        table = pa.concat_tables([table, _numerical_error(table, tmpl, special)])
    order = np.lexsort((-pc.fill_null(table.column("end_ts"), np.iinfo(np.int64).max).to_numpy(),
                        table.column("start_ts").to_numpy()))
    table = table.take(order)
    ids = np.arange(next_id, next_id + table.num_rows, dtype=np.int64)
    return table.set_column(0, "id", pa.array(ids))


def _fw_flows(flow_key: np.ndarray, framework: np.ndarray, cores: int) -> pa.Array:
    """A framework op links to all cores' executions: it carries one flow id per core."""
    has = flow_key >= 0
    per = np.where(framework, cores, has.astype(np.int64))
    offsets = np.zeros(flow_key.size + 1, dtype=np.int32)
    np.cumsum(per, out=offsets[1:])
    base = np.repeat(flow_key, per)
    within = np.arange(base.size) - np.repeat(offsets[:-1], per)
    values = np.where(np.repeat(framework, per), base + within + 1, base)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values).cast(pa.string()), mask=pa.array(~has))


def _numerical_error(table: pa.Table, tmpl: dict, special: Special) -> pa.Table:
    """A numerical_err raised by the core during the execution whose nrt_execute returned 1003."""
    names = table.column("name").to_numpy(zero_copy_only=False)
    attrs = table.column("extra_attributes_json").to_numpy(zero_copy_only=False)
    hits = np.flatnonzero((names == "nc_exec_running") & np.array([a is not None and '"exec_id":' in a for a in attrs]))
    ret_rows = np.flatnonzero((names == "nrt_execute") & np.array([a is not None and '"ret":1003' in a for a in attrs]))
    r = int(ret_rows[0])
    row = table.slice(r, 1).to_pylist()[0]
    match = [h for h in hits if table.column("thread_id")[h].as_py() == row["thread_id"]
             and table.column("start_ts")[h].as_py() > row["start_ts"]
             and table.column("start_ts")[h].as_py() < row["end_ts"]]
    hw = table.slice(int(match[0]), 1).to_pylist()[0]
    t = hw["start_ts"] + hw["duration_ns"] * 2 // 3
    err = dict(hw, name="numerical_err", start_ts=t, end_ts=t, duration_ns=0, flow_id=None,
               extra_attributes_json='{"ret":1003,"error":"NaN in output tensor","exec_id":'
               + str(row["extra_attributes_json"].split('"exec_id":')[1].split(",")[0]) + "}")
    return pa.Table.from_pylist([err], schema=table.schema)


def writer(path: Path, schema: pa.Schema) -> pq.ParquetWriter:
    return pq.ParquetWriter(path, schema, compression="zstd", write_statistics=True,
                            use_dictionary=["name", "trace_event_source", "instance_id", "framework_stream_id"])
