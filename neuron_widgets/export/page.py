"""The HTML page of an export: our bundle and styles inline, the data as base64, a strict CSP.

The Content-Security-Policy forbids every network request, so the page cannot reach out even
by mistake; inline code is ours (the bundle), and the profile's text lives only in the data.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Any

from ..bundle import STATIC

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
       "base-uri 'none'; form-action 'none'")

PAGE_CSS = """
html, body { margin: 0; background: var(--jp-layout-color0, #fff); color: var(--jp-ui-font-color1, #222);
  font-family: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", sans-serif); }
/* The colours are set on body: it fills the window, so no white shows below a short page. */
body { min-height: 100vh; }
@media (prefers-color-scheme: dark) { body:not([data-theme=light]) { --jp-layout-color0: #111418;
  --jp-layout-color1: #1b1f24; --jp-layout-color2: #262b31; --jp-ui-font-color0: #f2f2f2;
  --jp-ui-font-color1: #e6e6e6; --jp-ui-font-color2: #b0b0b0; --jp-border-color1: #3a3f45;
  --jp-border-color2: #30353b; } }
.nw-export { max-width: 100%; padding: 12px 16px 24px; box-sizing: border-box; }
.nw-export > h1 { font-size: 16px; font-weight: 600; margin: 0 0 4px; }
.nw-export > .nw-export-note { font-size: 12px; opacity: .75; margin: 0 0 10px; }
.nw-export > .nw-view { margin: 0 0 14px; }
.nw-export .nw-boot-error { color: #d62728; white-space: pre-wrap; }
"""

_UNSAFE = re.compile(r"</(script|style)", re.IGNORECASE)


def _asset(name: str) -> str:
    path = STATIC / name
    if not path.exists():
        raise RuntimeError(f"{path} is missing: the front end is not built. Install the package with `pip install .` "
                           "(which builds it), or run `npm ci && npm run build` in the repository's js/ folder.")
    text = path.read_text(encoding="utf-8")
    if _UNSAFE.search(text):  # would end its element early; the bundle never should contain it
        raise RuntimeError(f"{path} contains a closing script/style tag and cannot be inlined")
    return text


def _json_for_script(obj: Any) -> str:
    """JSON that stays inside a <script> element whatever it holds."""
    text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def bokeh_scripts() -> str:
    """BokehJS (core, widgets, tables) as inline scripts, for pages with Summary charts."""
    from bokeh.resources import Resources  # bokeh loads only for a page with Summary charts

    # Core, widgets (Divs, layouts) and tables; not MathJax or WebGL, which no chart here uses.
    inline = Resources(mode="inline", components=["bokeh", "bokeh-widgets", "bokeh-tables"])

    # A "</script" inside the library's code would end its element; "<\\/" means the same to JavaScript.
    escaped = "<" + "\\" + "/"
    return "".join("<script>" + _UNSAFE.sub(lambda m: escaped + m.group(1), js) + "</script>\n" for js in inline.js_raw)


def _parts(title: str, manifest: dict[str, Any], charts: bool) -> tuple[str, str]:
    """The page before its base64 data and after it."""
    head = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"neuron-widgets\">\n"
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{_asset('timeline.css')}</style>\n<style>{PAGE_CSS}</style>\n</head>\n<body>\n"
        "<main class=\"nw-export\" id=\"nw-export\"><noscript>This exported view needs JavaScript.</noscript></main>\n"
        f"<script type=\"application/json\" id=\"nw-manifest\">{_json_for_script(manifest)}</script>\n"
        "<script type=\"application/octet-stream\" id=\"nw-data\">"
    )
    tail = "</script>\n" + (bokeh_scripts() if charts else "") + f"<script>{_asset('export.js')}</script>\n</body></html>\n"
    return head, tail


def page(title: str, manifest: dict[str, Any], data_b64: str, charts: bool = False) -> str:
    head, tail = _parts(title, manifest, charts)
    return head + data_b64 + tail


B64_CHUNK = 3 << 20  # bytes encoded at a time: a multiple of 3, so the pieces join into one base64 text


def write_page_file(path: Path, title: str, manifest: dict[str, Any], packed: bytes, charts: bool = False) -> int:
    """Write the page to `path`, its data base64'd a piece at a time (the page is never one string); its bytes."""
    head, tail = _parts(title, manifest, charts)
    view = memoryview(packed)
    size = 0
    with open(path, "wb") as f:
        size += f.write(head.encode("utf-8"))
        for i in range(0, len(view), B64_CHUNK):
            size += f.write(base64.b64encode(view[i:i + B64_CHUNK]))
        size += f.write(tail.encode("utf-8"))
    return size


def page_overhead(title: str, charts: bool = False) -> int:
    """Bytes of a page without its data (the bundles dominate), with room for the manifest."""
    return len(page(title, {"version": 1, "sections": {}}, "", charts).encode("utf-8")) + 64_000
