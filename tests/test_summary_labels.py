"""The Summary in each trace's own words (issue 35 item 4): threads labelled as the Timeline labels their tracks,
Kineto's profiler-wide span never called a thread, headline and chart on one measure, names cut readably."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import summary_traces as T
from bokeh.models import ColumnDataSource
from conftest import trace

import neuron_widgets as nw
from neuron_widgets.summary.data import short_label, track_labels
from neuron_widgets.widgets import Summary


def summarised(path: Path) -> tuple[nw.Profile, Summary]:
    p = nw.load_profile(path, cache=False)
    s = Summary(p)
    assert s.done.wait(60) and "Could not" not in s.status.value
    return p, s


def data(fig, name: str) -> dict:
    return fig.select_one({"type": ColumnDataSource, "name": name}).data


def sentence(s: Summary) -> str:
    return s.charts.head.children[1].text


def timeline_labels(p: nw.Profile) -> list[str]:
    return [str(x) for x in p.tracks("default")["label"]]


def test_fuchsia_threads_read_as_on_the_timeline(tmp_path: Path) -> None:
    p, s = summarised(T.fuchsia(tmp_path / "fuchsia.json"))
    shown = [lab.split("/")[-1] for lab in timeline_labels(p)]
    assert "CoreFlipWaitThread 5260" in shown
    assert data(s.charts.temporal, "nw-temporal")["device"] == ["CoreFlipWaitThread 5260", "RenderThread 5261"]
    assert "The busiest thread is CoreFlipWaitThread 5260" in sentence(s)
    assert "pid 3923" not in sentence(s) and "tid" not in sentence(s)


def test_threads_of_one_name_in_several_processes_say_their_process(tmp_path: Path) -> None:
    p, s = summarised(T.renderers(tmp_path / "lthi.json"))
    devices = data(s.charts.temporal, "nw-temporal")["device"]
    assert sorted(devices) == [f"Renderer{k} {1001 + k}/CrRendererMain 1287" for k in range(4)]
    assert not any("#" in d for d in devices)
    # Each label is the end of that thread's Timeline track label.
    tracks = timeline_labels(p)
    assert all(any(t.endswith("/" + d) for t in tracks) for d in devices)
    assert "The busiest thread is Renderer3 1004/CrRendererMain 1287" in sentence(s)
    longest = s.charts.longest.source.data["thread"]
    assert set(longest) <= set(devices)


def test_kineto_profiler_span_is_no_thread(tmp_path: Path) -> None:
    _, s = summarised(T.neuronx_kineto(tmp_path / "neuronx.json"))
    devices = data(s.charts.temporal, "nw-temporal")["device"]
    assert "PyTorch Profiler" not in " ".join(devices) and devices[0] == "pt_main_thread 77"
    assert "The busiest thread is pt_main_thread 77" in sentence(s)
    assert s.charts.head.children[0].children[2].text == "Threads\n2"


def test_real_kineto_trace_profiler_span_is_no_thread() -> None:
    from neuron_widgets.analysis.threads import thread_breakdown

    t = thread_breakdown(nw.load_profile(trace("hta/nccl_data.json.gz"), prepare=False))
    spans = t[t["track"].str.contains("PyTorch Profiler")]
    assert len(spans) == 2 and not spans["thread"].any()
    assert t.loc[~t["track"].str.contains("PyTorch Profiler|no tid"), "thread"].all()


def test_headline_and_chart_use_one_measure(tmp_path: Path) -> None:
    """The webview shape: short threads fully busy in their own span; the busiest thread is busy longest, and
    the chart puts it first with the same share the headline gives."""
    _, s = summarised(T.webview(tmp_path / "webview.json"))
    d = data(s.charts.temporal, "nw-temporal")
    assert d["device"][0] == "Chrome_InProcGpuThread 2"
    share = re.search(r"The busiest thread is (.+?) \(busy .*?, (\d+)% of the", sentence(s))
    assert share and share.group(1) == d["device"][0]
    assert int(share.group(2)) == round(d["busy_pctg"][0]) == max(round(x) for x in d["busy_pctg"])
    assert d["busy_pctg"] == sorted(d["busy_pctg"], reverse=True)


def test_top_event_labels_are_cut_readably(tmp_path: Path) -> None:
    _, s = summarised(T.neuronx_kineto(tmp_path / "neuronx.json"))
    top = data(s.charts.top_a, "nw-top-a")
    label = dict(zip(top["full"], top["label"], strict=True))
    assert label["<built-in method to of Tensor object at 0x7f0d9c8ac550>"] == "<built-in method to of Tensor object>"
    assert label["/home/user/work/script.py(42): train_step_for_the_model"].startswith("script.py(42): train")
    for lab in top["label"]:
        assert not re.fullmatch(r"0x[0-9a-f]+>|\S+\.py:?", lab), lab
    long = "nn.Module: ResNet50_Backbone_with_a_very_long_name_here_x"
    cut = short_label(long)
    assert len(cut) <= 40 and cut.startswith("nn.Module: ResNet50") and cut.endswith("here_x") and "…" in cut


def test_track_labels_grow_only_where_needed() -> None:
    assert track_labels(["t/A 1/main 1", "t/B 2/main 1", "t/B 2/io 3"]) == ["A 1/main 1", "B 2/main 1", "io 3"]
    assert track_labels(["t/A 1/x", "t/A 1/x"]) == ["x", "x #2"]  # one track twice: numbered, not lengthened


@pytest.mark.parametrize("kind", ["fuchsia", "renderers"])
def test_error_rows_name_their_track(kind: str, tmp_path: Path) -> None:
    path = getattr(T, kind)(tmp_path / f"{kind}.json")
    doc = json.loads(path.read_text())
    first = doc["traceEvents"][-1]
    doc["traceEvents"].append({**first, "name": "Crash", "args": {"error": "segfault"}})
    path.write_text(json.dumps(doc))
    p, s = summarised(path)
    rows = s.charts.problems.source.data
    assert rows["kind"] == ["error"]
    assert any(t.endswith("/" + rows["device"][0]) for t in timeline_labels(p))


def test_kineto_profiler_span_is_no_top_or_longest_event(tmp_path: Path) -> None:
    _, s = summarised(T.neuronx_kineto(tmp_path / "neuronx.json"))
    assert not any("PyTorch Profiler" in f for f in data(s.charts.top_a, "nw-top-a")["full"])
    assert "PyTorch Profiler (0)" not in s.charts.longest.source.data["name"]
    assert "<built-in method to of Tensor object at 0x7f0d9c8ac550>" in s.charts.longest.source.data["name"]
