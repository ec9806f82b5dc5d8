"""Everyday clicks on a Timeline in a real JupyterLab (issue 14): each bug's test failed before its fix.

One notebook serves the module: a Timeline at height=520 with EventDetails, a second Timeline
linked to it when the cells run (its view moved first), and the device-profile picker.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat as nbf
import pytest
from playwright.sync_api import Browser, Locator, Page

from .lab import brush, find_item, open_notebook, run_all, settle, shot, theme, wait_cells_done

VIEW = "document.querySelectorAll('.nw-timeline')[0].__nwView"
CELLS = [
    "import neuron_widgets as nw\nfrom neuron_widgets.widgets import Timeline, EventDetails, DeviceProfilePicker, link\n"
    "p = nw.sample_profile()\ntl = Timeline(p, height=520)\ntl",
    "EventDetails(tl)",
    # The first timeline's view moves, then the second is linked: it must follow at once.
    "tl2 = Timeline(p, height=300)\ns = tl.span\n"
    "tl.view = [s[0] + 0.2 * (s[1] - s[0]), s[0] + 0.3 * (s[1] - s[0])]\nlk = link(tl, tl2)\ntl2",
    "DeviceProfilePicker(tl)",
]


@pytest.fixture(scope="module")
def lab_page(browser: Browser, lab: str, lab_root: Path) -> Iterator[Page]:
    nb = nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(c) for c in CELLS], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbf.write(nb, lab_root / "interaction.ipynb")
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors  # type: ignore[attr-defined]
    open_notebook(page, lab, "interaction.ipynb")
    run_all(page)
    wait_cells_done(page, 180_000)
    page.wait_for_function("() => document.querySelectorAll('.nw-timeline').length >= 2", timeout=60_000)
    page.locator(".nw-timeline").first.scroll_into_view_if_needed()
    page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=60_000)
    yield page
    assert not errors, errors
    context.close()


def view(page: Page, i: int = 0) -> tuple[float, float]:
    t0, t1 = page.evaluate("(i) => document.querySelectorAll('.nw-timeline')[i].dataset.view", i).split(",")
    return float(t0), float(t1)


# The canvas's bottom-left pixel, R + G + B: the plot's background there.
BOTTOM_LEFT_RGB_SUM = """() => { const c = document.querySelector('.nw-timeline .nw-canvas');
  const d = c.getContext('2d').getImageData(2, c.height - 3, 1, 1).data; return d[0] + d[1] + d[2]; }"""


def top_timeline(page: Page, tracks: bool = False) -> None:
    """The first timeline on screen, whole profile, no range or selection; scrolled to its first event track if `tracks`."""
    page.locator(".nw-timeline").first.scroll_into_view_if_needed()
    page.evaluate(f"() => {{ const v = {VIEW}; v.setBrush(null); v.select(-1); v.scroll.scrollTop = 0;"
                  " v.setView({t0: v.home()[0], t1: v.home()[1]}); }")
    if tracks:
        page.evaluate(f"() => {{ {VIEW}.scroll.scrollTop = Math.max({VIEW}.rows.find(r => r.kind === 'track').y - 30, 0); }}")
        page.wait_for_function(f"() => {VIEW}.items && {VIEW}.items.n > 0 && +{VIEW}.root.dataset.drawn > 0", timeout=20_000)
    settle(page, 0)


def expanded(page: Page, scroll_top: int) -> Locator:
    """The first timeline with every group open, scrolled to `scroll_top` px."""
    top_timeline(page)
    tl = page.locator(".nw-timeline").first
    tl.get_by_role("button", name="Expand all").click()
    page.evaluate(f"(y) => {{ {VIEW}.scroll.scrollTop = y; }}", scroll_top)
    return tl


def canvas_fits(page: Page) -> dict:
    return page.evaluate("""() => { const r = document.querySelector('.nw-timeline'), v = r.__nwView;
      const c = r.querySelector('.nw-canvas'), s = r.querySelector('.nw-scroll');
      return {cw: c.getBoundingClientRect().width, ch: c.getBoundingClientRect().height,
              pw: v.plotWidth(), sh: s.clientHeight}; }""")


def test_link_aligns_the_second_timeline_at_once(lab_page: Page) -> None:
    # Bug 4: linking aligned nothing until the next change.
    page = lab_page
    page.wait_for_function("() => document.querySelectorAll('.nw-timeline')[1]?.dataset.view", timeout=30_000)
    settle(page, 0)
    settle(page, 1)
    a, b = view(page, 0), view(page, 1)
    assert abs(b[0] - a[0]) < 1e-3 * (a[1] - a[0]) and abs(b[1] - a[1]) < 1e-3 * (a[1] - a[0]), (a, b)


def test_clearing_the_range_gives_the_plot_its_height_back(lab_page: Page) -> None:
    # Bug 2: after Clear / Esc the canvas kept the height it had beside the range table.
    page = lab_page
    top_timeline(page)
    box = page.locator(".nw-timeline .nw-canvas").first.bounding_box()
    assert box
    brush(page, box, 200, 500)
    page.wait_for_selector(".nw-timeline .nw-summary table", state="visible", timeout=20_000)
    settle(page, 0)
    with_table = canvas_fits(page)
    assert abs(with_table["ch"] - with_table["sh"]) <= 1, with_table
    # Item 16: the table leaves the events most of a 520 px widget.
    assert with_table["sh"] >= 250, with_table
    page.keyboard.press("Escape")
    page.wait_for_selector(".nw-timeline .nw-summary", state="hidden", timeout=10_000)
    settle(page, 0)
    after = canvas_fits(page)
    assert after["sh"] > with_table["sh"] and abs(after["ch"] - after["sh"]) <= 1, after
    shot(page, "interaction-01-range-cleared")


def test_theme_switch_repaints_at_full_size(lab_page: Page) -> None:
    # Bug 1: the dark theme left a 50x20 px blank canvas until the next wheel event.
    page = lab_page
    top_timeline(page)

    try:
        theme(page, "JupyterLab Dark")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=20_000)
        # The view reads the theme's colours once they have landed, then repaints.
        page.wait_for_function(f"() => {VIEW}.theme.dark", timeout=10_000)
        settle(page, 0)
        fit = canvas_fits(page)
        assert fit["pw"] > 600 and abs(fit["cw"] - fit["pw"]) <= 1 and abs(fit["ch"] - fit["sh"]) <= 1, fit
        page.wait_for_function(f"() => ({BOTTOM_LEFT_RGB_SUM})() < 200", timeout=10_000)  # painted dark, not left white or blank
        shot(page, "interaction-02-dark-theme")
    finally:
        theme(page, "JupyterLab Light")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=20_000)
        page.wait_for_function(f"() => !{VIEW}.theme.dark", timeout=10_000)
        settle(page, 0)


def test_view_stays_within_the_profile(lab_page: Page) -> None:
    # Bug 7: zooming out showed time before the profile's start (-1000 us).
    page = lab_page
    top_timeline(page)
    page.locator(".nw-timeline").first.focus()
    for _ in range(6):
        page.keyboard.press("s")
    settle(page, 0)
    span = page.evaluate(f"() => {VIEW}.span()")
    t0, t1 = view(page)
    assert t0 >= span[0] - 0.011 * (t1 - t0) and t1 <= span[1] + 0.011 * (t1 - t0), (t0, t1, span)
    # Jump to the first event: the view does not open far before it either.
    page.evaluate(f"() => {VIEW}.setView({{t0: {VIEW}.span()[0] - 5e5, t1: {VIEW}.span()[0] + 5e5}})")
    settle(page, 0)
    t0, t1 = view(page)
    assert t0 >= span[0] - 0.011 * (t1 - t0), (t0, span)


def test_axis_labels_read_in_the_unit_of_their_magnitude(lab_page: Page) -> None:
    # Bug 10 (and the notebook's axis): `29800 us` where `29.8 ms` is meant.
    page = lab_page
    top_timeline(page)
    labels = page.evaluate(f"() => {{ const v = {VIEW}; v.setView({{t0: 29.0e6, t1: 30.6e6}}); return v.axisLabels(); }}")
    assert labels and all(s.endswith(" ms") for s in labels), labels
    assert any(s.startswith("29.") or s.startswith("30") for s in labels), labels


def test_tooltip_stays_inside_the_widget(lab_page: Page) -> None:
    # Bug 6: tooltips ran past the widget's bottom and right edges.
    page = lab_page
    top_timeline(page)
    root = page.locator(".nw-timeline").first.bounding_box()
    assert root
    item = page.evaluate(f"""() => {{ const v = {VIEW}, it = v.items;
      const r = document.querySelector('.nw-timeline .nw-canvas').getBoundingClientRect();
      let best = null;
      const rows = v.rows.filter(x => x.kind === 'track'), top = v.scroll.scrollTop, h = v.scroll.clientHeight;
      for (let i = 0; i < it.n; i++) {{ const row = rows.find(x => x.track === it.track[i]); if (!row) continue;
        const y = row.y + it.lane[i] * 18 + 10 - top; if (y < h - 120 || y > h - 4) continue;
        const x = (Math.min(it.end[i], v.view.t1) - v.view.t0) / (v.view.t1 - v.view.t0) * r.width - 2;
        if (x < r.width - 150) continue;
        if (!best || x > best.x) best = {{x, y}}; }}
      return best && {{x: r.left + best.x, y: r.top + best.y}}; }}""")
    assert item, "no event near the plot's bottom right corner"
    page.mouse.move(item["x"], item["y"])
    page.wait_for_selector(".nw-tooltip", state="visible")
    # The arguments arrive and grow it: measured once they have.
    page.wait_for_function("() => [...document.querySelectorAll('.nw-tooltip')].some(t => t.style.display === 'block'"
                           " && t.dataset.argsRow)", timeout=20_000)
    tip = page.locator(".nw-tooltip:visible").bounding_box()
    assert tip
    assert tip["x"] >= root["x"] - 1 and tip["x"] + tip["width"] <= root["x"] + root["width"] + 1, (tip, root)
    assert tip["y"] >= root["y"] - 1 and tip["y"] + tip["height"] <= root["y"] + root["height"] + 1, (tip, root)
    shot(page, "interaction-03-tooltip-corner")
    page.mouse.move(root["x"] + 5, root["y"] - 30)


def test_counter_shows_its_scale_value_and_pointer_time(lab_page: Page) -> None:
    # Bug 9 and item 14: the counter tooltip said "at 0 ns" at 430 us; a counter shows its scale.
    page = lab_page
    top_timeline(page)
    tl = page.locator(".nw-timeline").first
    tl.get_by_role("button", name="Expand all").click()
    page.wait_for_function(f"() => {VIEW}.rows.some(r => r.kind === 'counter' && r.series.unit === 'B')", timeout=10_000)
    page.wait_for_function(f"() => {VIEW}.rows.some(r => r.kind === 'counter' && r.series.unit === 'B' && "
                           f"{VIEW}.counterData.has(r.key) && r.y < {VIEW}.scroll.clientHeight - 30)", timeout=20_000)
    row = page.evaluate(f"() => {{ const v = {VIEW}; const r = v.rows.find(r => r.kind === 'counter' && r.series.unit === 'B'"
                        " && v.counterData.has(r.key));"
                        " return {y: r.y - v.scroll.scrollTop, key: r.key, label: r.label}; }")
    box = page.locator(".nw-timeline .nw-canvas").first.bounding_box()
    assert box
    page.mouse.move(box["x"] + 0.45 * box["width"], box["y"] + row["y"] + 13)
    page.wait_for_selector(".nw-tooltip .nw-tt-value div", state="visible", timeout=10_000)
    pointer = page.evaluate(f"() => {VIEW}.formatTime({VIEW}.timeAt({VIEW}.mouse.x))")
    text = page.locator(".nw-tooltip .nw-tt-value").inner_text()
    assert f"at {pointer}" in text, (text, pointer)
    # The label carries the window's maximum and the value under the pointer.
    label = tl.locator(f".nw-label-counter[data-key='{row['key']}']")
    assert "max" in label.locator(".nw-counter-scale").inner_text()
    assert label.locator(".nw-counter-value").inner_text().strip()
    shot(page, "interaction-04-counter")
    tl.get_by_role("button", name="Collapse all").click()
    tl.get_by_role("button", name="Expand all").click()


# The labels of the tracks the first Timeline's model holds (what the kernel last sent).
LABELS = "() => document.querySelector('.nw-timeline').__nwView.model.get('tracks').map(t => t.label)"
SAME = "(a, b) => a.length === b.length && a.every((x, i) => x === b[i])"


def test_grouping_switch_starts_at_the_top_and_labels_stick(lab_page: Page) -> None:
    # Bug 8: the scroll offset survived a grouping switch; group labels scrolled away.
    page = lab_page
    tl = expanded(page, 700)
    settle(page, 0)
    sticky = page.evaluate("""() => [...document.querySelectorAll('.nw-timeline')[0].querySelectorAll('.nw-label-sticky')]
      .map(e => ({text: e.textContent, top: e.getBoundingClientRect().top}))""")
    scroll_top = page.locator(".nw-timeline .nw-scroll").first.bounding_box()
    assert sticky and scroll_top and abs(sticky[0]["top"] - scroll_top["y"]) <= 2, (sticky, scroll_top)
    shot(page, "interaction-08-sticky-groups")
    options = page.evaluate("() => [...document.querySelector('.nw-timeline .nw-select').options].map(o => o.value)")
    current = page.evaluate("() => document.querySelector('.nw-timeline .nw-select').value")
    other = next(o for o in options if o != current)
    before = page.evaluate(LABELS)
    tl.locator(".nw-select").first.select_option(other)
    # The browser sets the grouping at once; the new grouping's tracks come from the kernel after it (later
    # under load): the scroll is reset when they are drawn.
    page.wait_for_function(f"(old) => !({SAME})(({LABELS})(), old)", arg=before, timeout=30_000)
    settle(page, 0)
    assert page.evaluate(f"() => {VIEW}.scroll.scrollTop") == 0
    tl.locator(".nw-select").first.select_option(current)
    page.wait_for_function(f"(old) => ({SAME})(({LABELS})(), old)", arg=before, timeout=30_000)
    settle(page, 0)


# Track labels crossing the bottom of the pinned group headers (their top half hidden), and those
# starting right at it (shown in the part still in view).
STRADDLE = """() => { const root = document.querySelectorAll('.nw-timeline')[0];
  const pinned = [...root.querySelectorAll('.nw-label-sticky')].map(e => e.getBoundingClientRect().bottom);
  if (!pinned.length) return null;
  const edge = Math.max(...pinned);
  const rows = [...root.querySelectorAll('.nw-label-track, .nw-label-counter')].map(e => e.getBoundingClientRect());
  return {crossing: rows.filter(r => r.top < edge - 1 && r.bottom > edge + 1).length,
          atEdge: rows.filter(r => Math.abs(r.top - edge) < 1 && r.height > 1).length}; }"""


def test_a_track_partly_under_the_pinned_headers_keeps_its_label(lab_page: Page) -> None:
    # Issue 26 item 4: the pinned headers hid the label of a partly scrolled track.
    page = lab_page
    expanded(page, 0)
    shown_at_edge = 0
    for offset in range(500, 1100, 9):
        page.evaluate(f"() => {{ {VIEW}.scroll.scrollTop = {offset}; }}")
        # The labels as drawn for this offset: none crossing the headers' edge (1 + those moved to it;
        # 1 where no group is being scrolled through, so nothing is pinned).
        done = page.wait_for_function(f"() => {{ const s = ({STRADDLE})(); "
                                      f"return Math.abs({VIEW}.scroll.scrollTop - {offset}) < 2 && "
                                      "(s === null ? 1 : s.crossing === 0 && 1 + s.atEdge); }", timeout=10_000)
        shown_at_edge += int(done.json_value()) - 1
    assert shown_at_edge > 0  # some offsets put a track half under the headers: its label moved below them
    shot(page, "interaction-08b-label-under-pinned")


def test_help_overlay_from_key_and_button(lab_page: Page) -> None:
    # Item 11.
    page = lab_page
    top_timeline(page)
    tl = page.locator(".nw-timeline").first
    tl.focus()
    page.keyboard.press("?")
    help_box = tl.locator(".nw-help")
    help_box.wait_for(state="visible", timeout=5_000)
    text = help_box.inner_text()
    for words in ("Ctrl", "wheel", "W", "Shift", "Fit", "Esc"):
        assert words in text, (words, text)
    shot(page, "interaction-05-help")
    page.keyboard.press("Escape")
    help_box.wait_for(state="hidden", timeout=5_000)
    tl.get_by_role("button", name="?").click()
    help_box.wait_for(state="visible", timeout=5_000)
    tl.get_by_role("button", name="?").click()
    help_box.wait_for(state="hidden", timeout=5_000)


def test_help_overlay_fits_a_short_timeline_and_scrolls(lab_page: Page) -> None:
    # Issue 26 item 4: in a 520 px timeline the help was cut at the bottom and could not scroll.
    page = lab_page
    top_timeline(page)
    tl = page.locator(".nw-timeline").first
    old = page.evaluate(f"() => {VIEW}.model.get('height')")
    page.evaluate(f"() => {VIEW}.model.set('height', 360)")
    page.wait_for_function("() => document.querySelector('.nw-timeline').getBoundingClientRect().height <= 362")
    try:
        tl.get_by_role("button", name="?").click()
        help_box = tl.locator(".nw-help")
        help_box.wait_for(state="visible", timeout=5_000)
        inside = page.evaluate("""() => { const r = document.querySelector('.nw-timeline').getBoundingClientRect(),
            h = document.querySelector('.nw-timeline .nw-help'), b = h.getBoundingClientRect();
            return {bottom: b.bottom, root: r.bottom, scroll: h.scrollHeight, client: h.clientHeight}; }""")
        assert inside["bottom"] <= inside["root"], inside
        assert inside["scroll"] > inside["client"], inside  # more keys than room: it scrolls
        before = view(page)
        notebook = "() => document.querySelector('.jp-WindowedPanel-outer, .jp-Notebook').scrollTop"
        page_at = page.evaluate(notebook)
        box = help_box.bounding_box()
        assert box
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, 400)
        page.wait_for_function("() => document.querySelector('.nw-timeline .nw-help').scrollTop > 0")
        last = help_box.locator("tr").last
        page.mouse.wheel(0, 2000)
        page.wait_for_function("""() => { const h = document.querySelector('.nw-timeline .nw-help');
            return h.scrollTop + h.clientHeight >= h.scrollHeight - 1; }""")
        assert last.is_visible() and "show or hide" in last.inner_text()
        assert view(page) == before  # the wheel scrolled the help, not the timeline
        assert page.evaluate(notebook) == page_at  # nor the notebook, once the help's end was reached
        shot(page, "interaction-05b-help-short")
        tl.get_by_role("button", name="?").click()
        help_box.wait_for(state="hidden", timeout=5_000)
    finally:
        page.evaluate(f"(h) => {VIEW}.model.set('height', h)", old)


def test_wheel_scrolls_and_ctrl_wheel_zooms(lab_page: Page) -> None:
    # Item 12: the wheel scrolls the tracks, as in Perfetto; Ctrl+wheel and W/S zoom.
    page = lab_page
    expanded(page, 0)
    box = page.locator(".nw-timeline .nw-canvas").first.bounding_box()
    assert box
    before = view(page)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 100)
    page.mouse.wheel(0, 300)
    page.wait_for_function(f"() => {VIEW}.scroll.scrollTop > 100", timeout=10_000)
    settle(page, 0)
    assert page.evaluate(f"() => {VIEW}.scroll.scrollTop") > 100
    assert view(page) == before
    page.keyboard.down("Control")
    page.mouse.wheel(0, -300)
    page.keyboard.up("Control")
    settle(page, 0)
    after = view(page)
    assert after[1] - after[0] < 0.8 * (before[1] - before[0])


def test_fit_button_fits_range_then_selection_then_all(lab_page: Page) -> None:
    # Item 15.
    page = lab_page
    top_timeline(page)
    tl = page.locator(".nw-timeline").first
    home = page.evaluate(f"() => {VIEW}.home()")
    page.evaluate(f"() => {VIEW}.setBrush([{VIEW}.home()[0] + 1e5, {VIEW}.home()[0] + 3e5])")
    tl.get_by_role("button", name="Fit").click()
    settle(page, 0)
    t0, t1 = view(page)
    assert abs(t0 - (home[0] + 1e5)) < 1e3 and abs(t1 - (home[0] + 3e5)) < 1e3, (t0, t1)
    page.evaluate(f"() => {VIEW}.setBrush(null)")
    top_timeline(page, tracks=True)
    item = find_item(page, 0, 4, plain=True)
    assert item
    page.mouse.click(item["x"], item["y"])
    page.wait_for_function(f"() => 'row' in {VIEW}.model.get('selection_detail')", timeout=20_000)
    sel = page.evaluate(f"() => {VIEW}.model.get('selection_detail')")
    tl.get_by_role("button", name="Fit").click()
    settle(page, 0)
    t0, t1 = view(page)
    assert t0 <= sel["start"] and t1 >= sel["end"] and (t1 - t0) < 0.5 * (home[1] - home[0]), (t0, t1, sel)
    page.keyboard.press("Escape")
    page.evaluate(f"() => {VIEW}.select(-1)")
    page.wait_for_function(f"() => !('row' in {VIEW}.model.get('selection_detail'))", timeout=20_000)
    tl.get_by_role("button", name="Fit").click()
    settle(page, 0)
    t0, t1 = view(page)
    assert abs(t0 - home[0]) < 1 and abs(t1 - home[1]) < 1
    # The track tools can be found without hovering.
    opacity = page.evaluate("() => getComputedStyle(document.querySelector('.nw-timeline .nw-label-tools')).opacity")
    display = page.evaluate("() => getComputedStyle(document.querySelector('.nw-timeline .nw-label-tools')).display")
    assert display != "none" and float(opacity) >= 0.35


def test_legend_counts_and_highlights(lab_page: Page) -> None:
    # Item 13.
    page = lab_page
    top_timeline(page, tracks=True)
    tl = page.locator(".nw-timeline").first
    tl.get_by_role("button", name="Legend").click()
    legend = tl.locator(".nw-legend")
    legend.wait_for(state="visible", timeout=5_000)
    entries = legend.locator(".nw-legend-entry")
    page.wait_for_function("() => document.querySelectorAll('.nw-timeline .nw-legend-entry').length >= 3", timeout=5_000)
    first = entries.first
    name = first.locator(".nw-legend-name").inner_text()
    count = int(first.locator(".nw-legend-count").inner_text().replace(",", ""))
    assert count > 0
    drawn_before = int(page.evaluate("() => document.querySelector('.nw-timeline').dataset.drawn"))
    first.click()
    page.wait_for_function("() => +document.querySelector('.nw-timeline').dataset.dimmed > 0", timeout=5_000)
    assert page.evaluate(f"() => {VIEW}.pick") == name
    assert int(page.evaluate("() => document.querySelector('.nw-timeline').dataset.dimmed")) < drawn_before
    legend.locator(".nw-legend-entry.nw-on").wait_for(state="visible", timeout=5_000)
    shot(page, "interaction-06-legend")
    first.click()  # a second click clears the highlight
    page.wait_for_function("() => +document.querySelector('.nw-timeline').dataset.dimmed === 0", timeout=5_000)
    assert page.evaluate(f"() => {VIEW}.pick") is None
    # Two quick clicks land on rows drawn before the first pick (refills are throttled): they
    # still toggle on then off, not on twice.
    first.click()
    first.click()
    page.wait_for_function(f"() => {VIEW}.pick === null && +document.querySelector('.nw-timeline').dataset.dimmed === 0",
                           timeout=5_000)
    legend.locator(".nw-legend-entry.nw-on").wait_for(state="detached", timeout=5_000)
    tl.get_by_role("button", name="Legend").click()
    legend.wait_for(state="hidden", timeout=5_000)


def test_picker_filter_matches_every_word_and_dims_behind(lab_page: Page) -> None:
    # Item 17.
    page = lab_page
    page.locator(".nw-open-list").first.scroll_into_view_if_needed()
    page.locator(".nw-open-list").first.click()
    dialog = page.locator("dialog.nw-dialog[open]")
    dialog.wait_for(state="visible", timeout=10_000)
    rows = dialog.locator(".nw-pick-row")
    total = rows.count()
    assert total > 2
    cells = [rows.nth(i).locator("td").all_inner_texts() for i in range(total)]
    # Two words from different columns of one row: only rows holding both remain.
    a, b = cells[0][0].split()[0], cells[0][-1].split()[0]
    dialog.locator("input[type=search]").fill(f"{a} {b}")
    want = sum(1 for c in cells if any(a.lower() in x.lower() for x in c) and any(b.lower() in x.lower() for x in c))
    assert want >= 1
    page.wait_for_function("(n) => document.querySelectorAll('dialog.nw-dialog[open] .nw-pick-row').length === n",
                           arg=want, timeout=10_000)
    backdrop = page.evaluate("() => getComputedStyle(document.querySelector('dialog.nw-dialog[open]'), '::backdrop')"
                             ".backgroundColor")
    alpha = float(backdrop.rsplit(",", 1)[1].strip(" )")) if backdrop.startswith("rgba") else 1.0
    assert alpha >= 0.4, backdrop
    shot(page, "interaction-07-picker")
    dialog.get_by_role("button", name="Cancel").click()
