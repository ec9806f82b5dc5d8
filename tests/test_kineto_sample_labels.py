"""Issue 35 item 13: the bundled Kineto sample labelled its GPUs "GPU 0 0" (a process named "GPU 0"
with pid 0). It is written as Kineto writes a GPU (pid the device index, `process_labels` "GPU n",
streams as threads), so it reads as Kineto's own traces do: "GPU 0" with "stream 7" under it."""

from __future__ import annotations

import re

from conftest import trace

import neuron_widgets as nw
from neuron_widgets.sample.kineto import job_events
from neuron_widgets.widgets import Timeline


def gpu_labels(p: nw.Profile) -> list[str]:
    return [t["label"] for t in Timeline(p).tracks if "GPU" in t["label"]]


def test_the_kineto_sample_labels_its_gpus_as_kineto_traces_read() -> None:
    labels = gpu_labels(nw.sample_profile(kind="kineto"))
    assert labels == ["rank0/GPU 0/stream 7", "rank0/GPU 0/stream 20", "rank1/GPU 1/stream 7", "rank1/GPU 1/stream 20"]
    assert not any(re.search(r"GPU \d+ \d+", label) for label in labels), labels
    # A real Kineto trace (HTA's) reads the same way: rank / GPU n / stream s.
    real = gpu_labels(nw.load_profile(trace("hta/nccl_data.json.gz")))
    assert real and all(re.fullmatch(r"rank\d+/GPU \d+/stream \d+", label) for label in real), real


def test_the_kineto_sample_puts_each_gpus_events_under_its_device_pid() -> None:
    for rank, doc in enumerate(job_events(ranks=3)):
        gpu = [e for e in doc["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy")]
        assert gpu and all(e["pid"] == e["args"]["device"] == rank for e in gpu)
        labels = {e["pid"]: e["args"]["labels"] for e in doc["traceEvents"] if e.get("name") == "process_labels"}
        assert labels[rank] == f"GPU {rank}"
