"""Small generated traces shaped like the real ones the Summary is read against: a Fuchsia trace (threads named
in systemTraceEvents), a Chrome trace of several renderers whose main threads share a name (lthi), a webview
trace where short threads are fully busy and a long one is the busiest, and a torch-neuronx Kineto trace with
Kineto's profiler-wide span (pid "Spans")."""

from __future__ import annotations

import json
from pathlib import Path


def fuchsia(path: Path) -> Path:
    ev = [{"ph": "X", "name": "FramePresented", "cat": "gfx", "pid": 3923, "tid": 5260, "ts": 16_000 * i, "dur": 9_000,
           "args": {"frame_number": i, "error": i % 3}} for i in range(45)]
    ev += [{"ph": "X", "name": "RenderFrame", "cat": "gfx", "pid": 3923, "tid": 5261, "ts": 16_000 * i + 100,
            "dur": 2_000} for i in range(45)]
    doc = {"traceEvents": ev, "systemTraceEvents": {"type": "fuchsia", "events": [
        {"ph": "p", "pid": 3923, "name": "scenic"},
        {"ph": "t", "pid": 3923, "tid": 5260, "name": "CoreFlipWaitThread"},
        {"ph": "t", "pid": 3923, "tid": 5261, "name": "RenderThread"}]}}
    path.write_text(json.dumps(doc))
    return path


def renderers(path: Path) -> Path:
    """Four renderer processes whose main threads are all `CrRendererMain 1287` (lthi's shape)."""
    ev = []
    for k, pid in enumerate((1001, 1002, 1003, 1004)):
        ev += [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"Renderer{k}"}},
               {"ph": "M", "name": "thread_name", "pid": pid, "tid": 1287, "args": {"name": "CrRendererMain"}}]
        ev += [{"ph": "X", "name": "ThreadControllerImpl::RunTask", "pid": pid, "tid": 1287, "ts": 1000 * i + k,
                "dur": 100 * (k + 1)} for i in range(20)]
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def webview(path: Path) -> Path:
    """Short threads fully busy (one 1 µs event each) beside a long thread busy 13% of its span, the busiest."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "Chrome_InProcGpuThread"}}]
    ev += [{"ph": "X", "name": "Draw", "pid": 1, "tid": 2, "ts": 10_000 * i, "dur": 1_300} for i in range(100)]
    ev += [{"ph": "X", "name": "Tiny", "pid": 1, "tid": 10 + k, "ts": 5_000 * k, "dur": 1} for k in range(6)]
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def neuronx_kineto(path: Path) -> Path:
    """A torch-neuronx Kineto trace: python threads and Kineto's profiler-wide span on pid "Spans"."""
    ev = [{"ph": "M", "name": "process_name", "pid": 77, "args": {"name": "python3.10"}},
          {"ph": "M", "name": "thread_name", "pid": 77, "tid": 77, "args": {"name": "pt_main_thread"}},
          {"ph": "X", "name": "PyTorch Profiler (0)", "cat": "Trace", "pid": "Spans", "tid": "PyTorch Profiler",
           "ts": 0, "dur": 100_000},
          {"ph": "X", "name": "<built-in method to of Tensor object at 0x7f0d9c8ac550>", "cat": "python_function",
           "pid": 77, "tid": 77, "ts": 10, "dur": 30_000},
          {"ph": "X", "name": "/home/user/work/script.py(42): train_step_for_the_model", "cat": "python_function",
           "pid": 77, "tid": 77, "ts": 40_000, "dur": 20_000},
          {"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": 77, "tid": 78, "ts": 100, "dur": 500}]
    path.write_text(json.dumps({"traceEvents": ev, "schemaVersion": 1}))
    return path


def kineto_without_launches(path: Path) -> Path:
    """One rank's Kineto trace whose kernels have no launch call beside them (as an MTIA trace records them)."""
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "MTIA 0"}},
          {"ph": "M", "name": "process_name", "pid": 5, "args": {"name": "python"}}]
    ev += [{"ph": "X", "name": f"fused_kernel_{i % 3}", "cat": "kernel", "pid": 0, "tid": 7, "ts": 100 * i, "dur": 60,
            "args": {"stream": 7, "device": 0}} for i in range(30)]
    ev += [{"ph": "X", "name": "aten::linear", "cat": "cpu_op", "pid": 5, "tid": 5, "ts": 100 * i, "dur": 40}
           for i in range(30)]
    path.write_text(json.dumps({"traceEvents": ev, "schemaVersion": 1, "deviceProperties": [{"id": 0}]}))
    return path
