"""Biome's lint and format of the front end (js/biome.jsonc), run from pytest so the README's one
test command checks it too (.ci/run runs it before pytest as well)."""

from __future__ import annotations

from test_frontend_units import JS, _npx


def test_biome_finds_nothing_in_the_front_end() -> None:
    out = _npx("biome", "ci", "--colors=off", "src", "test", "bench")
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]


def test_no_comment_silences_a_linter_that_is_not_there() -> None:
    """Biome is the front end's linter: eslint's comments would only hide what Biome is told to check."""
    stale = [f"{p.relative_to(JS)}:{n}" for p in JS.glob("[stb]*/**/*.ts")
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "eslint-disable" in line]
    assert not stale, stale
