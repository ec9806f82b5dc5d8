"""2D canvas against WebGL in headless Chromium (software rendering here): paint time per frame, 1920 px of dense data.

    python bench/bench_paint.py

Builds js/bench/paint.ts with esbuild, opens it from disk in Debian's chromium, and paints the
same synthetic reply (40 lanes, 1 or 2 items per pixel per lane, 3x the plot wide: more than the widget,
which over-fetches 2x, now holds) 120 times while panning (fewer when a frame takes seconds). The
widget's own 2D painter is the one measured for 2D.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import OUT, machine  # noqa: E402
from tests.browser.lab import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

# WebGL without a GPU: SwiftShader, which Chromium now enables only when asked.
GL_ARGS = [a for a in CHROMIUM_ARGS if a != "--disable-gpu"] + ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"]


def main() -> None:
    OUT.mkdir(exist_ok=True)
    js = OUT / "paint.js"
    subprocess.run(["npx", "esbuild", "bench/paint.ts", "--bundle", "--format=iife", f"--outfile={js}"], cwd=ROOT / "js",
                   check=True, capture_output=True)
    page_path = OUT / "paint.html"
    page_path.write_text(f"<!doctype html><html><body><script>{js.read_text()}</script></body></html>")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=GL_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 2000, "height": 1000})
        page.on("console", lambda m: print(m.text, flush=True))
        page.goto(page_path.as_uri())
        result = page.evaluate("() => window.runPaintBench()")
        result["renderer"] = page.evaluate("""() => { const gl = document.createElement('canvas').getContext('webgl2');
            if (!gl) return 'none'; const d = gl.getExtension('WEBGL_debug_renderer_info');
            return d ? gl.getParameter(d.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER); }""")
        browser.close()
    result["machine"] = machine()
    print(json.dumps(result, indent=1))
    (OUT / "paint.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
