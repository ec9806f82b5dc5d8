"""Where the built front end lives (neuron_widgets/static, made by `npm run build` in js/)."""

from __future__ import annotations

import json
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"


def asset(name: str) -> Path | str:
    """Path of a built front-end file (anywidget reloads it on change when ANYWIDGET_HMR=1).

    When the bundle is missing (a source checkout never built), the widget shows how to build
    it instead of failing at import.
    """
    path = STATIC / name
    if path.exists():
        return path
    if name.endswith(".css"):
        return ""
    message = (f"{path} is missing: the widget front end is not built. Install the package with `pip install .` "
               "(which builds it), or run `npm ci && npm run build` in the repository's js/ folder.")
    return f"export default {{ render({{ el }}) {{ el.textContent = {json.dumps(message)}; }} }};"
