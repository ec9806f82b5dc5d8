"""A reviewer's find: on nccl_data a page exported from a Timeline at its starting view said 26,934 events
and the Summary beside it 26,935. The file holds 26,935 (26,933 complete events and 2 instants, the last
at the very end): the export's range, taken from the view, was half-open at the last end."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest
from conftest import trace
from test_export_count import random_chrome

import neuron_widgets as nw
from neuron_widgets.export import export_html
from neuron_widgets.widgets import Summary, Timeline

EVENT_PHASES = {"X", "i", "I"}  # what these traces hold as events (metadata, flow and counter records are not)


def events_in_file(path: Path) -> int:
    """The reference: the trace's events counted from its JSON, without the reader."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return sum(1 for e in doc["traceEvents"] if e.get("ph") in EVENT_PHASES)


def summary_events(page: Path) -> int:
    """The Events card of the Summary the page carries."""
    text = page.read_text(encoding="utf-8")
    manifest = json.loads(re.search(r'id="nw-manifest">(.*?)</script>', text, re.S).group(1))["sections"]
    raw = gzip.decompress(base64.b64decode(re.search(r'id="nw-data">(.*?)</script>', text, re.S).group(1)))
    s = manifest["summary0"]
    item = raw[s["offset"]:s["offset"] + s["bytes"]].decode()
    found = re.findall(r'"text":"Events\\n([0-9,]+)"', item)
    assert len(found) == 1, found
    return int(found[0].replace(",", ""))


def test_nccl_data_page_and_summary_agree_with_the_file(tmp_path: Path) -> None:
    path = trace("hta/nccl_data.json.gz")
    p = nw.load_profile(path)
    tl = Timeline(p)  # its starting view: the whole profile
    s = Summary(tl)  # tied to the timeline, as a notebook has it
    got = export_html(tmp_path / "page.html", tl, s)
    want = events_in_file(Path(path))
    assert want == 26_935
    assert got["timelines"][0]["events"] == want
    assert summary_events(tmp_path / "page.html") == want


@pytest.mark.parametrize("seed", range(10))
def test_a_timeline_at_its_starting_view_exports_every_event(seed: int, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(random_chrome(seed)))
    p = nw.load_profile(path)
    got = export_html(tmp_path / "page.html", Timeline(p))
    assert got["timelines"][0]["events"] == events_in_file(path) == len(p)


def test_a_zoomed_view_still_exports_only_what_it_shows(tmp_path: Path) -> None:
    p = nw.load_profile(trace("hta/nccl_data.json.gz"))
    tl = Timeline(p)
    a, b = p.origin_ts + 100_000_000, p.origin_ts + 200_000_000
    tl.time_range = (a, b)
    got = export_html(tmp_path / "page.html", tl)
    start, end = p.array("start_ts"), p.array("end_ts")
    assert got["timelines"][0]["events"] == int(((start < b) & (end >= a)).sum()) < len(p)
