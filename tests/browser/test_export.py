"""Exported HTML opened from disk in Chromium with the network off: drawn, interactive, safe, honest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page

import neuron_widgets as nw
from neuron_widgets.export import blob, export_html, export_profile
from neuron_widgets.widgets import DeviceTraceViewer, EventDetails, Timeline

from .lab import brush, find_item, scripts_had_their_chance, settle, shot, wait_item

EVIL = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script><b>bold</b>'


def view_of(page: Page) -> list[float]:
    return [float(x) for x in page.evaluate("() => document.querySelector('.nw-timeline').dataset.view").split(",")]


def canvas_box(page: Page) -> dict:
    box = page.locator(".nw-canvas").first.bounding_box()
    assert box
    return box


def test_an_export_works_offline_zoom_click_details_grouping_brush(open_file, tmp_path: Path,
                                                                   sample: nw.Profile) -> None:
    tl = Timeline(sample, height=560)
    export_html(tmp_path / "view.html", tl, EventDetails(tl), time_range="all")
    o = open_file(tmp_path / "view.html")
    page = o.page

    # The page grouped the events itself: the same tracks, lanes and counts as the kernel.
    got = page.evaluate("() => window.__nwExport.hosts[0].model.get('tracks')")
    want = sample.tracks("default")
    assert [t["label"] for t in got] == want["label"].tolist()
    assert [t["lanes"] for t in got] == want["lanes"].tolist()
    assert [t["events"] for t in got] == want["events"].tolist()
    # Its level of detail: whole span at 1920 px, every event counted once, at most ~2 items per pixel per lane.
    reply = page.evaluate("""() => { const h = window.__nwExport.hosts[0], tr = h.model.get('tracks');
        const r = h.store.viewport('default', 0, h.meta.span[1], 1920, tr.map((_, i) => i));
        const count = new Uint32Array(r.buffers[r.meta.columns.indexOf('count')]);
        let sum = 0; for (let i = 0; i < r.meta.merged; i++) sum += count[i];
        return {n: r.meta.merged, sum, lanes: tr.reduce((a, t) => a + t.lanes, 0)}; }""")
    assert reply["sum"] == len(sample)
    assert reply["n"] <= 2 * 1920 * reply["lanes"] + reply["lanes"]

    # Zoom at the cursor with Ctrl+wheel (the wheel alone scrolls the tracks, as in Perfetto).
    box = canvas_box(page)
    before = view_of(page)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 60)
    page.keyboard.down("Control")
    for _ in range(6):
        page.mouse.wheel(0, -400)
    page.keyboard.up("Control")
    page.wait_for_function("(w) => { const v = document.querySelector('.nw-timeline').dataset.view.split(',');"
                           " return v[1] - v[0] < w / 4; }", arg=before[1] - before[0], timeout=10_000)
    page.wait_for_function("() => +document.querySelector('.nw-timeline').dataset.drawn > 0")

    # Find an nc_exec_running, click it: the details below fill in, with its chain.
    page.keyboard.press("0")
    page.locator(".nw-input").first.fill("^nc_exec_running$")
    page.locator(".nw-btn", has_text="▶").first.click()
    page.wait_for_function("() => document.querySelector('.nw-details-title')?.textContent === 'nc_exec_running'",
                           timeout=10_000)
    item = wait_item(page, 0, 4, name="nc_exec_running")
    page.mouse.click(item["x"], item["y"])
    page.wait_for_function("(r) => document.querySelector('.nw-details').dataset.row === String(r)", arg=item["row"])
    text = page.inner_text(".nw-details")
    assert "nc_exec_running" in text and "Upstream (" in text and "Arguments (" in text
    detail = page.evaluate("() => window.__nwExport.hosts[0].model.get('selection_detail')")
    assert detail["upstream"], "nc_exec_running has a runtime call upstream in the sample"
    # Its fields agree with the kernel's view of the same event.
    event_id = int(detail["id"])
    event = sample.event(event_id)
    assert str(event["start_ts"]) in text and str(event["process_id"]) in text
    # A dependency row focuses the timeline on that event.
    up = page.locator(".nw-deps .nw-dep").first
    up_name = up.locator("td").first.inner_text()
    up.click()
    page.wait_for_function("(n) => document.querySelector('.nw-details-title').textContent === n", arg=up_name)
    shot(page, "export-details")

    # Grouping switch: the labels change to the thread grouping's.
    page.select_option(".nw-select", "thread")
    page.wait_for_function("() => window.__nwExport.hosts[0].model.get('tracks').some(t => t.label.includes('TID'))")
    labels = page.evaluate("() => window.__nwExport.hosts[0].model.get('tracks').map(t => t.label)")
    assert labels == sample.tracks("thread")["label"].tolist()
    page.wait_for_function("() => +document.querySelector('.nw-timeline').dataset.drawn > 0")

    # Shift+drag brushes a range: its summary shows, with counts.
    page.evaluate("() => window.scrollTo(0, 0)")
    page.locator(".nw-btn", has_text="Reset").first.click()
    box = canvas_box(page)
    brush(page, box, 200, 500)
    page.wait_for_selector(".nw-summary", state="visible")
    assert "events" in page.inner_text(".nw-summary")
    shot(page, "export-offline")
    assert not o.errors
    assert o.requests == [(tmp_path / "view.html").as_uri()]


def test_a_page_packed_in_many_blocks_reads_whole_in_the_browser(open_file, tmp_path: Path, sample: nw.Profile,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The payload's gzip is made in blocks on several cores; the browser's DecompressionStream reads them
    as one stream (blocks cut at an odd size, so sections and typed arrays straddle them)."""
    monkeypatch.setattr(blob, "CHUNK", 40_009)
    got = export_profile(tmp_path / "blocks.html", sample, time_range="all")
    o = open_file(tmp_path / "blocks.html")
    want = sample.tracks("default")
    tracks = o.page.evaluate("() => window.__nwExport.hosts[0].model.get('tracks')")
    assert [t["events"] for t in tracks] == want["events"].tolist()
    total = o.page.evaluate("""() => { const h = window.__nwExport.hosts[0], tr = h.model.get('tracks');
        const r = h.store.viewport('default', 0, h.meta.span[1], 1920, tr.map((_, i) => i));
        const count = new Uint32Array(r.buffers[r.meta.columns.indexOf('count')]);
        let sum = 0; for (let i = 0; i < r.meta.merged; i++) sum += count[i]; return sum; }""")
    assert total == len(sample) == got["timelines"][0]["events"]
    assert not o.errors and len(o.requests) == 1


def test_profile_text_in_an_export_stays_text(open_file, tmp_path: Path) -> None:
    path = tmp_path / "evil.json"
    events = [{"ph": "X", "name": EVIL, "ts": 10 * i, "dur": 8, "pid": 1, "tid": 1, "args": {EVIL: EVIL}}
              for i in range(50)]
    path.write_text(json.dumps({"traceEvents": events}))
    export_profile(tmp_path / "evil.html", nw.load_profile(path), title=EVIL)
    o = open_file(tmp_path / "evil.html")
    page = o.page
    item = find_item(page, 0, 1)
    assert item
    page.mouse.move(item["x"], item["y"])
    page.wait_for_function("(t) => document.querySelector('.nw-tooltip')?.textContent.includes(t)", arg=EVIL)
    page.mouse.click(item["x"], item["y"])
    page.wait_for_function("() => document.querySelector('.nw-details-title')")
    assert page.inner_text(".nw-details-title") == EVIL
    assert EVIL in page.inner_text(".nw-details")
    assert page.title() == EVIL
    scripts_had_their_chance(page)
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("#nw-export img, #nw-export b, .nw-tooltip img, .nw-tooltip b").count() == 0
    assert not o.errors and len(o.requests) == 1


def test_a_coarse_export_says_what_was_merged(open_file, tmp_path: Path, sample: nw.Profile) -> None:
    got = export_profile(tmp_path / "coarse.html", sample, max_mb=0.3)
    st = got["timelines"][0]
    assert st["merged"] > 0
    o = open_file(tmp_path / "coarse.html")
    page = o.page
    note = page.inner_text(".nw-head")
    assert "Coarse" in note and f"{st['merged']:,}" in note and f"{st['exact']:,}" in note
    # A block stays a block when zoomed into, and its tooltip says why.
    block = page.evaluate("""() => { const v = document.querySelector('.nw-timeline').__nwView, it = v.items;
        for (let i = 0; i < it.n; i++) if ((it.flags[i] & 16) && !(it.flags[i] & 8) && it.count[i] > 1)
          return {t0: it.start[i], t1: it.end[i],
          track: it.track[i], lane: it.lane[i]}; return null; }""")
    assert block
    pad = (block["t1"] - block["t0"]) * 2 + 1000
    page.evaluate("(b) => document.querySelector('.nw-timeline').__nwView.setView({t0: b.t0 - b.pad, t1: b.t1 + b.pad})",
                  {**block, "pad": pad})
    page.wait_for_function("""(b) => { const it = document.querySelector('.nw-timeline').__nwView.items;
        return it && it.t1 - it.t0 < 10 * (b.t1 - b.t0 + 2 * b.pad); }""", arg={**block, "pad": pad})
    found = page.evaluate("""(b) => { const root = document.querySelector('.nw-timeline'), v = root.__nwView, it = v.items;
        const canvas = root.querySelector('.nw-canvas').getBoundingClientRect(), scroll = root.querySelector('.nw-scroll');
        for (let i = 0; i < it.n; i++) {
          if (!(it.flags[i] & 16) || it.track[i] !== b.track || it.lane[i] !== b.lane || it.start[i] !== b.t0) continue;
          const row = v.rows.find(r => r.kind === 'track' && r.track === it.track[i]);
          if (!row) return null;
          row.y - scroll.scrollTop > canvas.height - 30 && (scroll.scrollTop = row.y - 50);
          const span = v.view.t1 - v.view.t0;
          return {x: canvas.left + ((it.start[i] + it.end[i]) / 2 - v.view.t0) / span * canvas.width,
                  y: canvas.top + row.y + it.lane[i] * 18 + 10 - scroll.scrollTop, count: it.count[i]};
        } return null; }""", block)
    assert found and found["count"] > 1
    settle(page, 0)  # the scroll above is drawn
    page.mouse.move(found["x"], found["y"])
    page.wait_for_function("() => document.querySelector('.nw-tooltip')?.textContent.includes('merged in this export')")
    shot(page, "export-coarse")
    assert not o.errors and len(o.requests) == 1


def test_a_device_trace_export_shows_engines_and_instruction_details(open_file, tmp_path: Path,
                                                                     sample: nw.Profile) -> None:
    trace = sample.device_trace(str(sample.device_profiles["device_profile_name"].iloc[0]))
    viewer = DeviceTraceViewer(trace)
    export_html(tmp_path / "device.html", viewer, EventDetails(viewer), time_range="all")
    o = open_file(tmp_path / "device.html")
    page = o.page
    labels = page.evaluate("() => window.__nwExport.hosts[0].model.get('tracks').map(t => t.label)")
    assert "Engines/Tensor" in labels and any(x.startswith("DMA/") for x in labels)
    assert page.locator(".nw-chip").count() >= 3
    item = None
    for name in ("MATMUL", None):
        item = find_item(page, 0, 2, name=name)
        if item:
            break
    assert item
    page.mouse.click(item["x"], item["y"])
    page.wait_for_function("(r) => document.querySelector('.nw-details')?.dataset.row === String(r)", arg=item["row"])
    text = page.inner_text(".nw-details")
    event_id = int(page.evaluate("() => window.__nwExport.hosts[0].model.get('selection_detail').id"))
    args = viewer.profile.event(event_id)["args"]
    assert args and all(str(k) in text for k in list(args)[:5]), (text, args)
    shot(page, "export-device")
    assert not o.errors and len(o.requests) == 1


def test_an_export_in_a_dark_colour_scheme(open_file, tmp_path: Path, sample: nw.Profile) -> None:
    # Issue 14, bug 10: white below the content, `29800 us` on the axis, a clipped search placeholder.
    export_profile(tmp_path / "dark.html", sample)
    o = open_file(tmp_path / "dark.html", dark=True, width=1280)
    page = o.page
    bottom = page.evaluate("""() => { const e = document.elementFromPoint(5, innerHeight - 3);
        return getComputedStyle(e).backgroundColor; }""")
    rgb = [int(x) for x in bottom[bottom.index("(") + 1:bottom.index(")")].split(",")[:3]]
    assert sum(rgb) < 150, bottom  # the page's dark background reaches the window's bottom
    labels = page.evaluate("""() => { const v = document.querySelector('.nw-timeline').__nwView;
        v.setView({t0: 29.0e6, t1: 30.6e6}); return v.axisLabels(); }""")
    assert labels and all(t.endswith(" ms") for t in labels), labels
    clipped = page.evaluate("""() => { const i = document.querySelector('.nw-timeline .nw-input');
        const c = document.createElement('canvas').getContext('2d'); c.font = getComputedStyle(i).font;
        return c.measureText(i.placeholder).width > i.clientWidth - 8; }""")
    assert not clipped
    # The help and the wheel convention work offline too.
    page.locator(".nw-timeline").first.focus()
    page.keyboard.press("?")
    page.locator(".nw-timeline .nw-help").wait_for(state="visible")
    shot(page, "export-dark")
    assert not o.errors and len(o.requests) == 1


def test_an_export_has_the_overview_strip_with_far_clock_pieces(open_file, tmp_path: Path, sample: nw.Profile) -> None:
    # Issue 26: the exported page had no overview strip. It has the notebook's, far-clock pieces included.
    import numpy as np
    from test_far_clock import _trace

    tl = Timeline(sample, height=400)
    export_html(tmp_path / "strip.html", tl, time_range="all")
    o = open_file(tmp_path / "strip.html")
    strip = o.page.locator(".nw-overview")
    assert strip.is_visible()
    assert o.page.evaluate("() => window.__nwExport.hosts[0].model.get('overview').bins.length") == 512
    # Density drawn: many columns of the strip are not the background.
    painted = o.page.evaluate("""() => { const c = document.querySelector('.nw-overview'), x = c.getContext('2d');
        const d = x.getImageData(0, 0, c.width, c.height).data, bg = [d[0], d[1], d[2]]; let n = 0;
        for (let i = 0; i < d.length; i += 4)
          if (Math.abs(d[i] - bg[0]) + Math.abs(d[i+1] - bg[1]) + Math.abs(d[i+2] - bg[2]) > 30) n++;
        return n; }""")
    assert painted > 2000
    # A click on the strip moves the exported view there, as in the notebook.
    box = strip.bounding_box()
    assert box
    before = view_of(o.page)
    o.page.mouse.click(box["x"] + box["width"] * 0.9, box["y"] + box["height"] / 2)
    o.page.wait_for_function("(t0) => +document.querySelector('.nw-timeline').dataset.view.split(',')[0] > t0 + 1e6",
                             arg=before[0])
    assert not o.errors, o.errors

    far = nw.load_profile(_trace(tmp_path / "far.json", np.random.default_rng(1), 20, 0, 800), prepare=False,
                          cache=False)
    export_html(tmp_path / "far.html", Timeline(far, height=300), time_range="all")
    o = open_file(tmp_path / "far.html")
    ov = o.page.evaluate("() => window.__nwExport.hosts[0].model.get('overview')")
    assert [x["events"] for x in ov["outliers"]] == [20] and ov["range"][0] == 0
    # "all" is all: the far clock's events too (they lie before the origin).
    assert "Exported 820 events" in o.page.locator(".nw-timeline .nw-head").inner_text()
    assert o.page.evaluate("() => window.__nwExport.hosts[0].model.get('span')[0]") < -1e14
    shot(o.page, "export-06-overview-strip")
    assert not o.errors, o.errors


def test_a_relayout_with_the_help_closed_lays_nothing_out(open_file, tmp_path: Path, sample: nw.Profile) -> None:
    # Each relayout (tracks arriving, a resize, a collapsed group) asked the closed help overlay for its
    # offsetParent, which makes the browser lay out the whole page first: ~27 ms of a drill-down's paint
    # in JupyterLab. Closed, it reads nothing; open, it still fits itself to the room below its top.
    export_html(tmp_path / "help.html", Timeline(sample, height=400), time_range="all")
    o = open_file(tmp_path / "help.html")
    got = o.page.evaluate("""() => {
        const v = document.querySelector('.nw-timeline').__nwView, help = v.root.querySelector('.nw-help');
        const own = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'offsetParent');
        let reads = 0;
        Object.defineProperty(help, 'offsetParent', {get() { reads++; return own.get.call(this); }});
        v.relayout();
        const closed = reads;
        help.style.maxHeight = '';
        v.help.toggle(true);
        v.relayout();
        return {closed, open: reads - closed, maxHeight: help.style.maxHeight};
    }""")
    assert got["closed"] == 0, got
    assert got["open"] >= 1 and got["maxHeight"].endswith("px"), got
    assert not o.errors, o.errors
