"""Issue 37: a job's critical path on its JobTimeline in a real JupyterLab (the toolbar's toggle, busy while the
path is computed part by part, spans on the folded parts, outlines on an opened part, jumps between parts, the
headline), light and dark, and in the export opened offline; what is drawn is checked against critical_path(job)."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import neuron_widgets as nw
from neuron_widgets.analysis import critical_path
from neuron_widgets.export import export_html
from neuron_widgets.job.view import under
from neuron_widgets.model.timefmt import duration
from neuron_widgets.model.worker_labels import core_label
from neuron_widgets.sample.job import write_job
from neuron_widgets.widgets import JobTimeline

from .lab import open_notebook, run_all, settle, shot, theme, wait_cells_done
from .test_job_timeline import ON_TRACK
from .test_summary_kinds import notebook

VIEW = "document.querySelector('.nw-timeline').__nwView"
BUTTON = ".nw-timeline .nw-btn"

# What the page shows of the path: its state, the spans, jumps and outlined items drawn, the outline colour's
# pixels, the line beside the button and the headline under the toolbar.
DRAWN = """() => { const root = document.querySelector('.nw-timeline'), v = root && root.__nwView;
  if (!v || !v.items) return null;
  let outlined = 0;
  for (let k = 0; k < v.items.n; k++) if (v.items.flags[k] & 4) outlined++;
  const c = root.querySelector('.nw-canvas'), data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const want = v.theme.dark ? [0xff, 0xd5, 0x4f] : [0xf5, 0x7f, 0x17];
  let outlinePx = 0;
  for (let k = 0; k < data.length; k += 4)
    if (Math.abs(data[k] - want[0]) < 30 && Math.abs(data[k + 1] - want[1]) < 30
        && Math.abs(data[k + 2] - want[2]) < 30) outlinePx++;
  const line = root.querySelector('.nw-critical-line');
  return { critical: root.dataset.critical, spans: +root.dataset.spans, jumps: +root.dataset.jumps,
           dimmed: +root.dataset.dimmed, outlined, outlinePx, dark: v.theme.dark,
           info: root.querySelector('.nw-critical-info').textContent,
           headline: line.style.display === 'none' ? '' : line.textContent }; }"""

# The kernel's spans as the page holds them: [t0, t1, track label] (times from the page's origin).
SPANS = f"""() => {{ const v = {VIEW}, s = v.model.get('critical_info').spans || [], t = v.model.get('tracks');
  const out = []; for (let k = 0; k + 2 < s.length; k += 3) out.push([s[k], s[k + 1], t[s[k + 2]].label]);
  return {{ spans: out, origin: v.model.get('origin_ns') }}; }}"""

# Every drawn single event (not merged): start, end (from the page's origin), name, track label, outlined or not.
ITEMS = f"""() => {{ const v = {VIEW}, it = v.items, names = v.model.get('names'), t = v.model.get('tracks');
  const out = []; for (let i = 0; i < it.n; i++) if (it.count[i] === 1)
    out.push([it.start[i], it.end[i], names[it.name[i]], t[it.track[i]].label, (it.flags[i] & 4) !== 0]);
  return {{ items: out, origin: v.model.get('origin_ns') }}; }}"""


# The widest band of the path over a folded part on screen: where to point at it, which it is, its track and times.
BAND = """() => { const root = document.querySelector('.nw-timeline'), v = root.__nwView;
  const s = (v.model.get('critical_info') || {}).spans || [], tracks = v.model.get('tracks');
  const canvas = root.querySelector('.nw-canvas').getBoundingClientRect(), top = root.querySelector('.nw-scroll').scrollTop;
  const w = canvas.width, span = v.view.t1 - v.view.t0;
  let best = null;
  for (let k = 0; k + 2 < s.length; k += 3) {
    const row = v.rows.find(r => r.kind === 'track' && r.track === s[k + 2]);
    if (!row) continue;
    const x0 = Math.max((s[k] - v.view.t0) / span * w, 0), x1 = Math.min((s[k + 1] - v.view.t0) / span * w, w);
    const y = row.y + 10 - top;
    if (x1 - x0 < 4 || y < 5 || y > canvas.height - 5) continue;
    if (!best || x1 - x0 > best.w)
      best = {x: canvas.left + (x0 + x1) / 2, y: canvas.top + y, w: x1 - x0, index: k / 3,
               label: tracks[s[k + 2]].label, t0: s[k], t1: s[k + 1]};
  }
  return best && {...best, origin: v.model.get('origin_ns')}; }"""

# The tooltip as shown: which band, its heading lines, and each line of segments with the numbers it was made from.
TOOLTIP = """() => { const el = document.querySelector('.nw-tooltip');
  return { span: el.dataset.span ?? null, visible: el.style.display !== 'none',
           name: el.querySelector('.nw-tt-name')?.textContent ?? '', text: el.textContent,
           lines: [...el.querySelectorAll('.nw-tt-seg')].map(d => ({kind: d.dataset.kind, worker: d.dataset.worker,
             ns: +d.dataset.ns, count: +d.dataset.count, text: d.textContent})) }; }"""

# At every change of the tracks in the page: the path's state then and the labels of the tracks its spans are on.
RECORD_PATH = f"""() => {{ const m = {VIEW}.model; window.__nwPath = [];
  m.on('change:tracks', () => {{ const c = m.get('critical_info') || {{}}, t = m.get('tracks'), s = c.spans || [];
    const on = []; for (let k = 0; k + 2 < s.length; k += 3) on.push(t[s[k + 2]] ? t[s[k + 2]].label : '#' + s[k + 2]);
    window.__nwPath.push({{state: c.state, on, opened: m.get('opened'), labels: t.map(x => x.label)}}); }});
  return true; }}"""


def drawn(page: Page) -> dict:
    return page.evaluate(DRAWN)


def timeline_label(job: nw.Job, part: str, seg: object, cache: dict) -> str:
    """Slowly: the worker of a segment as the JobTimeline labels its track once the part is open (a core as the
    Default grouping's runtime track, a host thread as the Thread grouping's track of its events)."""
    inst, pid, nc, tid = (getattr(seg, c) for c in ("instance_id", "process_id", "nc_idx", "thread_id"))
    if pd.isna(tid):
        return core_label(inst, pid, nc, part=part)
    if part not in cache:
        p = under(job.load(part), part)
        idx = p.track_index("thread")
        cache[part] = (p.events, [str(x) for x in idx.tracks["label"]], idx)
    ev, labels, idx = cache[part]
    row = int(((ev["instance_id"] == f"{part}/{inst}") & (ev["process_id"] == pid) & (ev["thread_id"] == tid)).idxmax())
    return labels[int(idx.combo_track[idx.combo[row]])]


def expected_band(job: nw.Job, path: pd.DataFrame, folded: set[str], band: dict) -> list[tuple[str, str, int, int]]:
    """Slowly: the segments of the run through a folded part that the band [t0, t1] on `label` is drawn for,
    summed by kind and worker, longest first."""
    origin = int(band["origin"])
    runs: list[list] = []
    last = None
    for seg in path.itertuples():
        part = str(seg.part)
        if part in folded:
            if last != part:
                runs.append([part, []])
            runs[-1][1].append(seg)
        last = part if part in folded else None
    mine = [segs for part, segs in runs if part == band["label"] and int(segs[0].start_ts) - origin == band["t0"]
            and int(segs[-1].end_ts) - origin == band["t1"]]
    assert len(mine) == 1, (band, len(runs))
    sums: dict[tuple[str, str], list[int]] = {}
    cache: dict = {}
    for seg in mine[0]:
        key = (str(seg.kind), timeline_label(job, band["label"], seg, cache))
        sums.setdefault(key, [0, 0])
        sums[key][0] += int(seg.duration_ns)
        sums[key][1] += 1
    return sorted(((k, w, ns, n) for (k, w), (ns, n) in sums.items()), key=lambda x: -x[2])


def check_band_hover(page: Page, job: nw.Job, path: pd.DataFrame, folded: set[str]) -> None:
    """Point at a band of the path over a folded part: the tooltip names the path's segments there (kind, worker as
    its track is labelled, time, count), not the density run under it."""
    band = page.evaluate(BAND)
    assert band, "no band of the path on screen"
    page.mouse.move(band["x"], band["y"])
    page.wait_for_function(f"() => ({TOOLTIP})().span === '{band['index']}' && ({TOOLTIP})().visible", timeout=10_000)
    tip = page.evaluate(TOOLTIP)
    want = expected_band(job, path, folded, band)
    assert len(want) <= 8  # every group listed (past eight the rest are one line)
    assert [(x["kind"], x["worker"], x["ns"], x["count"]) for x in tip["lines"]] == want
    for x in tip["lines"]:
        n = f"{x['count']} segment{'' if x['count'] == 1 else 's'}"
        assert x["text"] == f"{x['kind']} {duration(x['ns'])} in {n} on {x['worker']}"
    assert tip["name"] == f"critical path through {band['label']}"
    total = sum(n for *_, n in want)
    assert f"duration {duration(band['t1'] - band['t0'])} · {total} segments" in tip["text"]
    assert "busy" not in tip["text"]  # not the density run under the band


def wait_drawn(page: Page, condition: str, timeout: int = 60_000) -> dict:
    """Wait until the path's drawing satisfies `condition` (a JS expression over `s`, DRAWN's answer)."""
    try:
        page.wait_for_function(f"() => {{ const s = ({DRAWN})(); return !!s && ({condition}); }}", timeout=timeout)
    except PlaywrightTimeout:
        shot(page, "job-critical-failed")
        raise AssertionError(f"not drawn as {condition!r}: {drawn(page)}") from None
    settle(page, 0)
    return drawn(page)


def expected_spans(path: pd.DataFrame, folded: set[str], origin: int) -> list[list]:
    """Slowly: each run of consecutive segments in one folded part, from its first start to its last end."""
    out: list[list] = []
    last = None
    for seg in path.itertuples():
        part = str(seg.part)
        if part in folded:
            if last == part:
                out[-1][1] = int(seg.end_ts) - origin
            else:
                out.append([int(seg.start_ts) - origin, int(seg.end_ts) - origin, part])
        last = part if part in folded else None
    return out


def path_events(job: nw.Job, path: pd.DataFrame, part: str, origin: int) -> set[tuple[float, float, str, str]]:
    """The part's events on the path as the page draws them: start, end (from the page's origin), name, and the
    label of their track (the part's own tracks, renamed under the part as the JobTimeline shows them)."""
    p = under(job.load(part), part)
    idx = p.track_index("default")
    labels = [str(x) for x in idx.tracks["label"]]
    ids = set(path.loc[(path["part"] == part) & (path["event_id"] >= 0), "event_id"].astype(int))
    ev = p.events
    rows = [r for r, i in enumerate(ev["id"]) if int(i) in ids]
    assert len(rows) == len(ids)
    return {(float(ev["start_ts"].iloc[r] - origin), float(ev["end_ts"].iloc[r] - origin), str(ev["name"].iloc[r]),
             labels[int(idx.combo_track[idx.combo[r]])]) for r in rows}


def check_outlines(page: Page, job: nw.Job, path: pd.DataFrame, part: str) -> int:
    """Every outlined single item is one of the part's path events, and none of those is drawn without an outline."""
    got = page.evaluate(ITEMS)
    want = path_events(job, path, part, int(got["origin"]))
    outlined = [tuple(i[:4]) for i in got["items"] if i[4]]
    plain = [tuple(i[:4]) for i in got["items"] if not i[4]]
    assert outlined and set(outlined) <= want, sorted(set(outlined) - want)[:5]
    assert not set(plain) & want, sorted(set(plain) & want)[:5]
    return len(outlined)


def test_the_toolbar_toggle_draws_the_jobs_path_in_lab(page: Page, lab: str, lab_root: Path) -> None:
    notebook(lab_root, "job_critical.ipynb", [
        "import neuron_widgets as nw\nfrom neuron_widgets.sample.job import write_job\n"
        "job = nw.load_job(write_job('jobcp', nodes=3, events=20_000, processes=1, cores=2, seed=11), "
        "results='results-cp')",
        "tl = nw.JobTimeline(job, height=760)\ntl"])
    open_notebook(page, lab, "job_critical.ipynb")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function(f"() => {VIEW} && /3 of 3 parts summarised/.test({VIEW}.model.get('status'))",
                           timeout=180_000)
    page.locator(".nw-timeline").first.scroll_into_view_if_needed()
    settle(page, 0)
    assert drawn(page)["critical"] == "off"
    page.locator(BUTTON, has_text="Critical path").click()
    # Busy while the job's path is computed part by part: a spinner before the line (the kernel stays free).
    page.wait_for_function("() => document.querySelector('.nw-timeline').dataset.critical === 'computing'",
                           timeout=30_000)
    assert page.evaluate("() => getComputedStyle(document.querySelector('.nw-critical-info'), '::before')"
                         ".animationName") == "nw-spin"
    # The kernel's answer (the page says computing as soon as the toggle is on): how the path is being computed.
    page.wait_for_function("() => /part by part/.test(document.querySelector('.nw-critical-info').textContent)",
                           timeout=30_000)
    shot(page, "job-critical-computing")
    s = wait_drawn(page, "s.critical === 'shown' && s.spans > 0 && s.jumps > 0 && s.outlinePx > 20", 240_000)
    job = nw.load_job(lab_root / "jobcp", results=lab_root / "results-cp")
    path = critical_path(job, scheduler="sync")
    # The spans the kernel sent are the path's runs through the folded parts; they are drawn, and so are
    # the jumps between the parts' tracks; the headline names the straggler's core.
    got = page.evaluate(SPANS)
    assert got["spans"] == expected_spans(path, {"node-00", "node-01", "node-02"}, int(got["origin"]))
    assert s["dimmed"] > 0 and s["info"].startswith("critical path: ") and " between parts" in s["info"]
    assert s["headline"].startswith("node-02/") and "is on the critical path in" in s["headline"]
    assert s["headline"] == page.evaluate(f"() => {VIEW}.model.get('critical_info').headline")
    shot(page, "job-critical-01-folded-light")
    # Over a band: the path's segments it stands for, not the density run under it (issue 35.14's leftover).
    check_band_hover(page, job, path, {"node-00", "node-01", "node-02"})
    shot(page, "job-critical-01b-band-hover-light")
    page.mouse.move(10, 10)
    # Open the part the path runs through most: its path events are outlined, the rest of it dimmed. The
    # message with the new tracks carries the path placed on them (never the spans of the tracks before).
    assert page.evaluate(RECORD_PATH)
    pt = page.evaluate(ON_TRACK, "node-02")
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function(f"() => {VIEW}.model.get('tracks').some(t => t.label.startsWith('node-02/'))",
                           timeout=120_000)
    seen = page.evaluate("() => window.__nwPath")
    assert seen and seen[-1]["opened"] == ["node-02"], seen
    for x in seen:
        assert x["state"] == "shown" and x["on"], x
        assert all("/" not in lab and lab not in x["opened"] and lab in x["labels"] for lab in x["on"]), x
    s = wait_drawn(page, "s.critical === 'shown' && s.outlined > 0 && s.jumps > 0", 120_000)
    page.evaluate(f"() => {{ const v = {VIEW}, h = v.home(); v.setView({{t0: h[0], t1: h[0] + (h[1] - h[0]) / 8}}); }}")
    s = wait_drawn(page, f"s.critical === 'shown' && s.outlined > 0 && {VIEW}.view.t1 - {VIEW}.view.t0 < "
                         f"({VIEW}.home()[1] - {VIEW}.home()[0]) / 4")
    assert check_outlines(page, job, path, "node-02") > 5
    got = page.evaluate(SPANS)
    assert got["spans"] == expected_spans(path, {"node-00", "node-01"}, int(got["origin"]))
    page.mouse.move(10, 10)  # no tooltip over the screenshot
    shot(page, "job-critical-02-opened-light")
    try:
        theme(page, "JupyterLab Dark")
        page.wait_for_function(f"() => {VIEW}.theme.dark === true", timeout=30_000)
        s = wait_drawn(page, "s.dark && s.critical === 'shown' && s.outlined > 0 && s.outlinePx > 20")
        assert check_outlines(page, job, path, "node-02") > 5
        shot(page, "job-critical-03-opened-dark")
        page.evaluate(f"() => {{ const v = {VIEW}, h = v.home(); v.setView({{t0: h[0], t1: h[1]}}); }}")
        wait_drawn(page, "s.dark && s.critical === 'shown' && s.spans > 0 && s.jumps > 0 && s.outlinePx > 20")
        shot(page, "job-critical-04-whole-dark")
    finally:
        theme(page, "JupyterLab Light")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=20_000)
    # Off: the outlines, spans, jumps, dimming and headline go.
    page.locator(BUTTON, has_text="Critical path").click()
    wait_drawn(page, "s.critical === 'off' && s.outlined === 0 && s.spans === 0 && s.jumps === 0 && s.dimmed === 0 "
                     "&& s.headline === ''")
    assert not page.errors, page.errors  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> nw.Job:
    root = tmp_path_factory.mktemp("jobcp-export")
    return nw.load_job(write_job(root / "job", nodes=3, events=20_000, processes=1, cores=2, seed=11),
                       results=root / "results")


@pytest.mark.parametrize("dark", [False, True])
def test_the_export_shows_the_jobs_path_offline(open_file, job: nw.Job, tmp_path: Path, dark: bool) -> None:
    jt = JobTimeline(job, height=760)
    assert jt.summarised.wait(180), jt.status
    jt.open_part("node-02")
    jt.critical_path = True
    end = time.monotonic() + 240
    while jt.critical_info.get("state") == "computing" and time.monotonic() < end:  # the kernel's threads, polled
        time.sleep(0.05)
    assert jt.critical_info["state"] == "shown", jt.critical_info
    export_html(tmp_path / "job.html", jt, time_range="all")
    o = open_file(tmp_path / "job.html", dark=dark)
    s = wait_drawn(o.page, "s.critical === 'shown' && s.outlined > 0 && s.spans > 0 && s.jumps > 0 "
                           "&& s.outlinePx > 20")
    assert s["info"] == jt.critical_info["text"] and s["headline"] == jt.critical_info["headline"]
    assert s["dark"] is dark
    path = critical_path(job, scheduler="sync")
    got = o.page.evaluate(SPANS)
    assert got["spans"] == expected_spans(path, {"node-00", "node-01"}, int(got["origin"]))
    o.page.evaluate(f"() => {{ const v = {VIEW}, h = v.home(); v.setView({{t0: h[0], t1: h[0] + (h[1] - h[0]) / 8}}); }}")
    wait_drawn(o.page, f"s.outlined > 0 && {VIEW}.view.t1 - {VIEW}.view.t0 < ({VIEW}.home()[1] - {VIEW}.home()[0]) / 4")
    assert check_outlines(o.page, job, path, "node-02") > 5
    o.page.evaluate(f"() => {{ const v = {VIEW}, h = v.home(); v.setView({{t0: h[0], t1: h[1]}}); }}")
    wait_drawn(o.page, "s.critical === 'shown' && s.spans > 0 && s.jumps > 0")
    shot(o.page, f"job-critical-export-{'dark' if dark else 'light'}")
    check_band_hover(o.page, job, path, {"node-00", "node-01"})  # offline too: the export carries what bands are
    shot(o.page, f"job-critical-export-band-hover-{'dark' if dark else 'light'}")
    o.page.mouse.move(5, 5)
    # The page's toggle turns the dimming, spans, jumps and headline off.
    o.page.locator(BUTTON, has_text="Critical path").click()
    wait_drawn(o.page, "s.critical !== 'shown' && s.dimmed === 0 && s.spans === 0 && s.jumps === 0 && s.headline === ''")
    assert not o.errors and not [r for r in o.requests if not r.startswith("file:")]
