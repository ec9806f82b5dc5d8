"""A step's bar of "Did the fix work" in an exported page (network blocked): exported with the after-run's Timeline
alone, a click fits it to that step; exported with both runs' Timelines aligned (nw.align), the pair re-aligns on
the step clicked and each shows it from its own start, as the notebook does."""

from __future__ import annotations

from pathlib import Path

from .lab import shot
from .test_timeline_align import SAME_WINDOW, STATE, VIEWS, _write_runs

# Click bar `i` of the step chart (its source's selection, as a tap sets it); returns that bar's t0 and t1.
CLICK = """(i) => { for (const v of Bokeh.index.all_views())
    if (v.model.name === 'nw-fix-steps-fig' && v.el.isConnected) {
      const src = v.model.renderers.find((x) => x.data_source?.name === 'nw-fix-steps').data_source;
      src.selected.indices = [i];
      return [src.data.t0[i], src.data.t1[i]]; }
  return null; }"""
# The bar whose start is step k's start in the after-run (the last timeline on the page).
BAR_OF = f"""(k) => {{ const a = {VIEWS}.at(-1).model.get('aligned'); const at = a.starts[a.steps.indexOf(k)];
  for (const v of Bokeh.index.all_views())
    if (v.model.name === 'nw-fix-steps-fig' && v.el.isConnected) {{
      const src = v.model.renderers.find((x) => x.data_source?.name === 'nw-fix-steps').data_source;
      return src.data.t0.findIndex((t) => t === at); }}
  return -1; }}"""
CHART = "() => [...Bokeh.index.all_views()].some(v => v.model.name === 'nw-fix-steps-fig' && v.el.isConnected)"


def _runs(tmp_path: Path):
    import neuron_widgets as nw
    from neuron_widgets.widgets import Summary, Timeline

    _write_runs(tmp_path)
    b = Timeline(nw.load_profile(tmp_path / "align_before"), height=300)
    a = Timeline(nw.load_profile(tmp_path / "align_after"), height=300)
    s = Summary(a, compare=b.profile)
    assert s.done.wait(300), s.status.value
    return b, a, s


def test_a_step_bar_fits_the_exported_timeline(open_file, tmp_path: Path) -> None:
    from neuron_widgets.export import export_html

    _, a, s = _runs(tmp_path)
    export_html(tmp_path / "one.html", a, s, time_range="all")
    opened = open_file(tmp_path / "one.html")
    page = opened.page
    page.wait_for_selector(".nw-view-summary[data-ready='1']", timeout=30_000)
    page.wait_for_function(CHART, timeout=30_000)
    before = page.evaluate(f"() => {{ const v = {VIEWS}[0].view; return [v.t0, v.t1]; }}")
    t0, t1 = page.evaluate(CLICK, 3)
    assert [t0, t1] != before
    page.wait_for_function(f"([t0, t1]) => {{ const v = {VIEWS}[0].view; return v.t0 === t0 && v.t1 === t1; }}",
                           arg=[t0, t1], timeout=10_000)
    steps = s.charts.fix.result.steps
    m = steps[steps["status"] == "matched"].reset_index(drop=True)
    origin = a.profile.origin_ts
    assert t0 == int(m["start_after_ts"][3]) - origin and t1 - t0 == int(m["duration_after_ns"][3])
    assert opened.requests == [(tmp_path / "one.html").as_uri()] and not opened.errors, opened.errors


def test_a_step_bar_realigns_an_exported_pair(open_file, tmp_path: Path) -> None:
    import neuron_widgets as nw
    from neuron_widgets.export import export_html

    b, a, s = _runs(tmp_path)
    nw.align(b, a, step=4)
    export_html(tmp_path / "pair.html", b, a, s, time_range="all")
    opened = open_file(tmp_path / "pair.html")
    page = opened.page
    page.wait_for_function(f"() => {VIEWS}.length === 2", timeout=30_000)
    page.wait_for_selector(".nw-view-summary[data-ready='1']", timeout=30_000)
    page.wait_for_function(CHART, timeout=30_000)
    assert [x["step"] for x in page.evaluate(STATE)] == [4, 4]
    i = page.evaluate(BAR_OF, 7)
    assert i >= 0
    t0, t1 = page.evaluate(CLICK, i)
    page.wait_for_function(SAME_WINDOW, arg=7, timeout=10_000)
    state = page.evaluate(STATE)
    # The after-run shows the step exactly (its extent), the before-run the same window from its own step 7.
    assert state[1]["view"] == [t0, t1] and state[1]["rel"] == [0, t1 - t0]
    assert state[0]["rel"] == [0, t1 - t0]
    # The step picker above each timeline says so.
    assert page.locator("select.nw-align-step").evaluate_all("(s) => s.map((x) => x.value)") == ["7", "7"]
    page.evaluate("() => { for (const v of Bokeh.index.all_views()) if (v.model.name === 'nw-fix-steps-fig' && "
                  "v.el.isConnected) v.el.scrollIntoView({block: 'center'}); }")
    shot(page, "fix-steps-export-pair")
    assert opened.requests == [(tmp_path / "pair.html").as_uri()] and not opened.errors, opened.errors
