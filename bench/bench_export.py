"""HTML export: file size, export time and memory, and the page's load and pan in headless Chromium.

    python bench/bench_export.py --events 1000000 10000000

For each sample size (written to bench/out/ once): `neuron-widgets export`'s work in a fresh
interpreter (seconds, peak RSS, file MB, events kept exact and merged), then the file opened
from disk with the network off: time to the data decoded and grouped, to the first frame, the
page's JS heap, and paint time per frame over 60 pan steps of 2% at 1920 px.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import OUT, machine, rss_in_child  # noqa: E402
from tests.browser.lab import launch  # noqa: E402

LOAD = """
import os, resource
import neuron_widgets as nw
from neuron_widgets.export import export_profile
t0 = time.perf_counter()
p = nw.load_profile({src!r})
loaded = time.perf_counter() - t0
rss_load = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
c0 = time.process_time()
"""
EXPORT = "got = export_profile({out!r}, p, max_mb={mb})"
# peak_export_mb: the RSS sampled during the export (the profile and its background preparation included);
# rss_mb: the process's peak over the load and the export.
REPORT = """
out.update(load_s=loaded, export_s=got["seconds"], export_cpu_s=time.process_time() - c0, bytes=got["bytes"],
           **got["timelines"][0], rss_load_mb=rss_load, rss_before_export_mb=base / 2**20,
           peak_export_mb=(base + out["peak"]) / 2**20,
           rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, loadavg=os.getloadavg(), code=nw.__file__)
"""


def sample(events: int) -> Path:
    path = OUT / f"sample_{events}"
    if not (path / "SystemProfileEvents.parquet").exists():
        import neuron_widgets as nw

        nw.write_sample(path, events=events)
    return path


def open_page(browser, path: Path) -> dict:
    context = browser.new_context(viewport={"width": 2200, "height": 1100}, offline=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    t0 = time.time()
    page.goto(path.as_uri())
    page.wait_for_function("() => document.getElementById('nw-export').dataset.ready", timeout=300_000)
    ready = time.time() - t0
    page.wait_for_function("() => +document.querySelector('.nw-timeline')?.dataset.drawn > 0", timeout=300_000)
    first = int(page.evaluate("() => document.querySelector('.nw-timeline').dataset.firstPaint")) / 1000 - t0
    cdp = context.new_cdp_session(page)
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]} \
        if cdp.send("Performance.enable") is not None else {}
    heap = metrics.get("JSHeapUsedSize", 0) / 2**20
    page.evaluate("() => document.querySelector('.nw-timeline').__nwView.frameTimes.splice(0)")
    for _ in range(60):
        page.evaluate("""() => { const v = document.querySelector('.nw-timeline').__nwView, w = v.view.t1 - v.view.t0;
            v.setView({t0: v.view.t0 + 0.02 * w, t1: v.view.t1 + 0.02 * w}); }""")
        page.wait_for_timeout(30)
    frames = page.evaluate("() => document.querySelector('.nw-timeline').__nwView.frameTimes.slice()")
    context.close()
    q = statistics.quantiles(frames, n=20) if len(frames) >= 20 else [max(frames)] * 19
    return {"ready_s": ready, "first_paint_s": first, "heap_mb": heap, "frames": len(frames),
            "frame_p50_ms": statistics.median(frames), "frame_p95_ms": q[18], "errors": errors}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--max-mb", type=float, default=25.0)
    ap.add_argument("--no-browser", action="store_true", help="the export only, not the page in Chromium")
    args = ap.parse_args()
    print(machine())
    rows = []
    with sync_playwright() as pw:
        browser = launch(pw)
        for n in args.events:
            src = sample(n)
            out = OUT / f"export_{n}.html"
            got = rss_in_child(EXPORT.format(out=str(out), mb=args.max_mb), LOAD.format(src=str(src)), REPORT, every=0.02)
            page = {} if args.no_browser else open_page(browser, out)
            row = {"events": n, **got, **page}
            rows.append(row)
            print(f"{n:>11,} events: {got['bytes'] / 1e6:5.1f} MB, {got['exact']:,} exact + {got['merged']:,} merged "
                  f"in {got['blocks']:,} blocks; load {got['load_s']:.1f} s, export {got['export_s']:.1f} s "
                  f"({got['export_cpu_s']:.1f} s CPU), peak RSS {got['rss_mb']:.0f} MB ({got['rss_load_mb']:.0f} MB "
                  f"after the load; during the export {got['peak_export_mb']:.0f} MB from "
                  f"{got['rss_before_export_mb']:.0f}), load average {got['loadavg'][0]:.1f}; {got['code']}")
            if page:
                print(f"    page ready {page['ready_s']:.2f} s, first paint {page['first_paint_s']:.2f} s, JS heap "
                      f"{page['heap_mb']:.0f} MB, pan p50/p95 {page['frame_p50_ms']:.1f}/{page['frame_p95_ms']:.1f} ms, "
                      f"errors {len(page['errors'])}")
        browser.close()
    (OUT / "export.json").write_text(json.dumps({"machine": machine(), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
