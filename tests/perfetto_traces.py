"""Perfetto traces built with the compiled proto classes, in the layouts the reader must handle."""

from __future__ import annotations

from pathlib import Path

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

BEGIN, END, INSTANT, COUNTER = (pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END,
                                pb.TrackEvent.TYPE_INSTANT, pb.TrackEvent.TYPE_COUNTER)


class Builder:
    def __init__(self) -> None:
        self.trace = pb.Trace()

    def packet(self, seq: int | None = None, ts: int | None = None) -> pb.TracePacket:
        p = self.trace.packet.add()
        if seq is not None:
            p.trusted_packet_sequence_id = seq
        if ts is not None:
            p.timestamp = ts
        return p

    def process(self, uuid: int, pid: int, name: str = "") -> None:
        d = self.packet().track_descriptor
        d.uuid, d.process.pid = uuid, pid
        if name:
            d.process.process_name = name

    def thread(self, uuid: int, pid: int, tid: int, name: str = "") -> None:
        d = self.packet().track_descriptor
        d.uuid, d.thread.pid, d.thread.tid = uuid, pid, tid
        if name:
            d.thread.thread_name = name

    def named(self, uuid: int, name: str, parent: int | None = None, counter: bool = False) -> None:
        d = self.packet().track_descriptor
        d.uuid, d.name = uuid, name
        if parent is not None:
            d.parent_uuid = parent
        if counter:
            d.counter.SetInParent()

    def intern(self, seq: int, names: dict[int, str] | None = None, args: dict[int, str] | None = None,
               cats: dict[int, str] | None = None, clear: bool = False) -> None:
        p = self.packet(seq)
        if clear:
            p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        for iid, n in (names or {}).items():
            e = p.interned_data.event_names.add()
            e.iid, e.name = iid, n
        for iid, n in (args or {}).items():
            e = p.interned_data.debug_annotation_names.add()
            e.iid, e.name = iid, n
        for iid, n in (cats or {}).items():
            e = p.interned_data.event_categories.add()
            e.iid, e.name = iid, n

    def scoped_clock(self, seq: int, track: int, boottime: int, start: int) -> None:
        """As the SDK starts a sequence: state cleared, events on clock 64 and `track` by default,
        then a snapshot putting clock 64's `start` (incremental) at `boottime` on BOOTTIME."""
        p = self.packet(seq)
        p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        p.trace_packet_defaults.timestamp_clock_id = 64
        p.trace_packet_defaults.track_event_defaults.track_uuid = track
        snap = self.packet(seq)
        snap.timestamp, snap.timestamp_clock_id = 0, 6
        for cid, value, inc in ((6, boottime, False), (64, start, True)):
            c = snap.clock_snapshot.clocks.add()
            c.clock_id, c.timestamp, c.is_incremental = cid, value, inc

    def event(self, seq: int, ts: int, kind: int, track: int | None = None, name: str | int | None = None,
              args: dict | None = None, flows: tuple[int, ...] = (), terminating: tuple[int, ...] = (),
              category: str | None = None, value: float | None = None) -> pb.TrackEvent:
        p = self.packet(seq, ts)
        te = p.track_event
        te.type = kind
        if track is not None:
            te.track_uuid = track
        if isinstance(name, int):
            te.name_iid = name
        elif name is not None:
            te.name = name
        if category is not None:
            te.categories.append(category)
        for k, v in (args or {}).items():
            a = te.debug_annotations.add()
            if isinstance(k, int):
                a.name_iid = k
            else:
                a.name = k
            _set(a, v)
        te.flow_ids.extend(flows)
        te.terminating_flow_ids.extend(terminating)
        if value is not None:
            te.double_counter_value = value
        return te

    def bytes(self) -> bytes:
        return self.trace.SerializeToString()

    def write(self, path: Path) -> Path:
        path.write_bytes(self.bytes())
        return path


def _set(a: pb.DebugAnnotation, v: object) -> None:
    if isinstance(v, bool):
        a.bool_value = v
    elif isinstance(v, int):
        a.int_value = v
    elif isinstance(v, float):
        a.double_value = v
    elif isinstance(v, str):
        a.string_value = v
    elif isinstance(v, dict):
        for k, x in v.items():
            e = a.dict_entries.add()
            e.name = k
            _set(e, x)
    elif isinstance(v, list):
        for x in v:
            _set(a.array_values.add(), x)


def neuron_explorer_layout() -> Builder:
    """What `neuron-explorer view --output-format perfetto` writes by default, as the docs describe it.

    A Perfetto process per (instance_id, process_id), a thread row per (worker_gid, lnc_idx,
    thread_id) under it; events carry lnc_idx and worker_gid among their arguments.
    """
    b = Builder()
    b.intern(1, {1: "nc_exec_running", 2: "nrt_execute", 3: "cc_exec_barrier", 4: "cc_running"},
             {1: "model_name", 2: "lnc_idx", 3: "worker_gid", 4: "exec_id"}, clear=True)
    for inst, (proc_uuid, pid) in {"i-0aaa": (100, 4001), "i-0bbb": (200, 4001)}.items():
        b.process(proc_uuid, pid, f"instance_id={inst} process_id={pid}")
        b.thread(proc_uuid + 1, pid, pid + 5, "nrt thread")
        for core in range(2):
            b.named(proc_uuid + 10 + core, f"worker_gid={core + (2 if inst == 'i-0bbb' else 0)} lnc_idx={core} "
                                            f"thread_id={pid + 5}", parent=proc_uuid)
    t = 1_000_000
    for step in range(3):
        for proc_uuid in (100, 200):
            for core in range(2):
                track = proc_uuid + 10 + core
                start = t + step * 100_000 + core * 1_000
                b.event(1, start - 500, BEGIN, proc_uuid + 1, 2, {1: "neff_fwd", 4: step})
                b.event(1, start - 400, END, proc_uuid + 1)
                b.event(1, start, BEGIN, track, 1, {1: "neff_fwd", 2: core, 3: core, 4: step})
                b.event(1, start + 50_000, BEGIN, track, 4)
                b.event(1, start + 50_000, BEGIN, track, 3)
                b.event(1, start + 60_000 - core * 5_000, END, track)
                b.event(1, start + 70_000, END, track)
                b.event(1, start + 80_000, END, track)
    return b
