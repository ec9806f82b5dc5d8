"""Timeline(job) in a real JupyterLab: a track per node, their density painted, a click loads that node's events."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page

from .lab import open_notebook, run_all, shot, theme, wait_cells_done
from .test_summary_kinds import notebook

VIEW = "document.querySelector('.nw-timeline').__nwView"

# A drawn event of the track labelled `label`, in page coordinates.
ON_TRACK = """(label) => {
  const root = document.querySelector('.nw-timeline'), v = root.__nwView, it = v.items;
  if (!it) return null;
  const tracks = v.model.get('tracks'), canvas = root.querySelector('.nw-canvas').getBoundingClientRect();
  const scroll = root.querySelector('.nw-scroll'), w = canvas.width, span = v.view.t1 - v.view.t0;
  for (let i = 0; i < it.n; i++) {
    if (it.count[i] !== 1 || tracks[it.track[i]]?.label !== label) continue;
    const row = v.rows.find(r => r.kind === 'track' && r.track === it.track[i]);
    if (!row) continue;
    const y = row.y + it.lane[i] * 18 + 10 - scroll.scrollTop;
    const x0 = Math.max((it.start[i] - v.view.t0) / span * w, 0), x1 = Math.min((it.end[i] - v.view.t0) / span * w, w);
    if (x1 - x0 < 2 || y < 5 || y > canvas.height - 5) continue;
    return {x: canvas.left + (x0 + x1) / 2, y: canvas.top + y};
  }
  return null;
}"""


# The painted colour (r, g, b) at the middle of an event named `name`.
PIXEL = """(name) => {
  const root = document.querySelector('.nw-timeline'), v = root.__nwView, it = v.items, names = v.model.get('names');
  const canvas = root.querySelector('canvas.nw-canvas'), w = canvas.getBoundingClientRect().width;
  const scroll = root.querySelector('.nw-scroll'), span = v.view.t1 - v.view.t0, r = window.devicePixelRatio || 1;
  for (let i = 0; i < it.n; i++) {
    if (it.count[i] !== 1 || names[it.name[i]] !== name) continue;
    const row = v.rows.find(x => x.kind === 'track' && x.track === it.track[i]);
    const x0 = Math.max((it.start[i] - v.view.t0) / span * w, 0), x1 = Math.min((it.end[i] - v.view.t0) / span * w, w);
    if (!row || x1 - x0 < 3) continue;
    const y = row.y + it.lane[i] * 18 + 8 - scroll.scrollTop;
    const d = canvas.getContext('2d').getImageData(Math.round((x0 + x1) / 2 * r), Math.round(y * r), 1, 1).data;
    return [d[0], d[1], d[2]];
  }
  return null;
}"""

DEBUG = """() => { const v = document.querySelector('.nw-timeline').__nwView, it = v.items;
  return {n: it.n, count: [...it.count.slice(0, 5)], track: [...it.track.slice(0, 5)], rows: v.rows.slice(0, 5),
          start: [...it.start.slice(0, 3)], end: [...it.end.slice(0, 3)], view: v.view}; }"""


def labels(page: Page) -> list[str]:
    return page.evaluate(f"() => {VIEW}.model.get('tracks').map(t => t.label)")


def test_job_timeline_tracks_density_and_a_click_into_a_node(page: Page, lab: str, lab_root: Path) -> None:
    notebook(lab_root, "job_timeline.ipynb", [
        "import neuron_widgets as nw\nfrom neuron_widgets.sample.job import write_job\n"
        "job = nw.load_job(write_job('jobtl', nodes=3, events=30_000, processes=1, cores=3, seed=4), results='results-tl')",
        "tl = nw.JobTimeline(job, height=420)\ntl"])
    open_notebook(page, lab, "job_timeline.ipynb")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function(f"() => {VIEW} && /3 of 3 parts summarised/.test({VIEW}.model.get('status'))", timeout=120_000)
    page.wait_for_function(f"() => {{ const v = {VIEW}; return v.items && v.items.n > 20; }}", timeout=60_000)
    assert labels(page) == ["node-00", "node-01", "node-02"]
    page.locator(".nw-timeline").first.scroll_into_view_if_needed()
    shot(page, "job-timeline-lab")
    # Zoomed to a tenth of the job, where the runs are several pixels wide.
    page.evaluate(f"() => {{ const v = {VIEW}, h = v.home(); v.setView({{t0: h[0], t1: h[0] + (h[1] - h[0]) / 10}}); }}")
    page.wait_for_function(f"() => {{ const v = {VIEW}, h = v.home(); return v.items && "
                           "v.view.t1 - v.view.t0 < (h[1] - h[0]) / 5 && v.items.n > 0; }", timeout=30_000)
    page.wait_for_function(f"() => ({PIXEL})('busy >= 75%') !== null", timeout=30_000)
    # The kernel has the zoomed view (sent 150 ms after the last change): an opened part keeps it.
    page.wait_for_function(f"() => {{ const v = {VIEW}, m = v.model.get('view'); "
                           "return m[1] - m[0] === v.view.t1 - v.view.t0; }", timeout=10_000)
    zoomed = page.evaluate(f"() => [{VIEW}.view.t0, {VIEW}.view.t1]")
    # The density runs are painted on each node's track, busier in a deeper blue.
    light, deep = page.evaluate(PIXEL, "busy < 25%"), page.evaluate(PIXEL, "busy >= 75%")
    assert light and deep and sum(deep) < sum(light) - 150, (light, deep)
    for label in ("node-00", "node-02"):
        assert page.evaluate(ON_TRACK, label), (label, page.evaluate(DEBUG))
    pt = page.evaluate(ON_TRACK, "node-02")
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function(f"() => {VIEW}.model.get('tracks').some(t => t.label.startsWith('node-02/'))", timeout=60_000)
    got = labels(page)
    assert got[:2] == ["node-00", "node-01"] and "node-02" not in got
    assert any(lab.endswith("/neuron_hw/NC0:0") for lab in got if lab.startswith("node-02/")), got
    page.wait_for_function(f"() => /node-02: [0-9,]+ events shown/.test({VIEW}.model.get('status'))", timeout=30_000)
    # Its events are drawn on its own tracks, in the window the user had zoomed to.
    page.wait_for_function(f"() => {{ const v = {VIEW}, t = v.model.get('tracks'); return v.items && "
                           "[...Array(v.items.n).keys()].some(i => t[v.items.track[i]]?.label.startsWith('node-02/')); }",
                           timeout=60_000)
    now = page.evaluate(f"() => [{VIEW}.view.t0, {VIEW}.view.t1]")
    assert abs((now[1] - now[0]) - (zoomed[1] - zoomed[0])) < 1e3, (now, zoomed)
    shot(page, "job-timeline-node-opened")
    # The dark theme: busier reads brighter there.
    try:
        theme(page, "JupyterLab Dark")
        page.wait_for_function(f"() => {VIEW}.theme.dark", timeout=20_000)
        page.wait_for_function(f"() => {{ const a = ({PIXEL})('busy < 25%'), b = ({PIXEL})('busy >= 75%'); "
                               "return a && b && b[0] + b[1] + b[2] > a[0] + a[1] + a[2] + 150; }", timeout=20_000)
        shot(page, "job-timeline-lab-dark")
    finally:
        theme(page, "JupyterLab Light")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=20_000)
    assert not page.errors, page.errors  # type: ignore[attr-defined]


# In the page, at every change of the tracks, of `opened` or of the brush's table: what the model holds then
# (Backbone fires a message's change events once all its values are set: one message, one consistent state).
RECORD = """() => {
  const m = document.querySelector('.nw-timeline').__nwView.model;
  window.__nwSeen = [];
  const rec = (what) => window.__nwSeen.push({what, opened: m.get('opened'),
    labels: m.get('tracks').map(t => t.label),
    brushTracks: ((m.get('brush_summary') || {}).by_track || []).map(r => r.key)});
  for (const k of ['tracks', 'opened', 'brush_summary']) m.on('change:' + k, () => rec(k));
  return true;
}"""


def mismatch(seen: dict, parts: list[str]) -> str:
    opened, labels = seen["opened"], seen["labels"]
    if not isinstance(opened, list):
        return f"no opened parts in the page's state at a change of {seen['what']}: {opened!r}"
    inner = {lab.split("/", 1)[0] for lab in labels if "/" in lab}
    folded = {lab for lab in labels if "/" not in lab}
    if inner != set(opened) or folded & set(opened) or folded | set(opened) != set(parts):
        return f"at a change of {seen['what']}: opened={opened}, tracks of {sorted(inner)}, folded {sorted(folded)}"
    if not set(seen["brushTracks"]) <= set(labels):
        return f"at a change of {seen['what']}: the brush's table names {sorted(set(seen['brushTracks']) - set(labels))[:2]}"
    return ""


def test_each_message_carries_the_opened_parts_with_their_tracks(page: Page, lab: str, lab_root: Path) -> None:
    """Issue 35.14: the tracks, the opened parts and the brush's table reach the page together, whichever kernel
    thread opens or closes a part (a cell's thread here, the page's click in the test above)."""
    parts = ["node-00", "node-01", "node-02"]
    notebook(lab_root, "job_published.ipynb", [
        "import threading\nimport neuron_widgets as nw\nfrom neuron_widgets.sample.job import write_job\n"
        "job = nw.load_job(write_job('jobpub', nodes=3, events=6_000, processes=1, cores=2, seed=4), results='results-pub')",
        "tl = nw.JobTimeline(job, height=420)\ntl",
        # Once the page has brushed (after it started recording), parts are opened and closed by a thread.
        "go = threading.Event()\ntl.observe(lambda ch: go.set() if len(ch['new']) == 2 else None, 'brush')\n"
        "def cycles():\n"
        "    go.wait()\n"
        "    for _ in range(3):\n"
        "        for part in ('node-00', 'node-02', 'node-01'):\n"
        "            tl.open_part(part)\n"
        "        for part in ('node-01', 'node-00', 'node-02'):\n"
        "            tl.close_part(part)\n"
        "    tl.title = 'cycles done'\n"
        "threading.Thread(target=cycles, daemon=True).start()"])
    open_notebook(page, lab, "job_published.ipynb")
    run_all(page)
    wait_cells_done(page)
    page.wait_for_function(f"() => {VIEW} && /3 of 3 parts summarised/.test({VIEW}.model.get('status'))", timeout=120_000)
    assert page.evaluate(RECORD)
    page.evaluate(f"() => {{ const m = {VIEW}.model, s = m.get('span'); "
                  "m.set('brush', [s[0] + (s[1] - s[0]) / 5, s[0] + (s[1] - s[0]) / 2]); m.save_changes(); }")
    page.wait_for_function(f"() => {VIEW}.model.get('title') === 'cycles done'", timeout=180_000)
    seen = page.evaluate("() => window.__nwSeen")
    wrong = [w for w in (mismatch(s, parts) for s in seen) if w]
    assert not wrong, wrong[:3]
    # Every open and close reached the page (each a change of the tracks), and the brush stayed with its table.
    assert sum(s["what"] == "tracks" for s in seen) >= 18 and any(s["opened"] == parts[:1] for s in seen)
    assert seen[-1]["opened"] == [] and seen[-1]["labels"] == parts and seen[-1]["brushTracks"]
    assert len(page.evaluate(f"() => {VIEW}.model.get('brush')")) == 2
    assert not page.errors, page.errors  # type: ignore[attr-defined]
