"""Durations and times as text, the one set of rules: js/src/common/time.ts follows them to the character.

Rounding is done on the float's exact value, halves away from zero, because that is what
JavaScript's `toFixed` does; Python's own format rounds halves to even and would write 2.5 ns as
"2 ns" where the browser writes "3 ns". A value that rounds up to the next unit is written in that
unit (999.95 µs is "1 ms", never "1000 µs").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext

# Largest first. The step to the next unit up is the ratio of their scales (1000, or 60 for s/min/h).
UNITS: tuple[tuple[float, str], ...] = (
    (3600e9, "h"), (60e9, "min"), (1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
# Past a million hours (114 years: no real profile) the number is written with an exponent.
HUGE_HOURS = 1e6
NOT_A_TIME = "—"


_HALF_UP = Context(prec=400, rounding=ROUND_HALF_UP)
_STEPS = [Decimal(1).scaleb(-d) for d in range(8)]


def _fixed(v: float, digits: int) -> str:
    """`v` (finite, >= 0) with `digits` decimals, halves away from zero, as JavaScript's toFixed."""
    # Only an exact half rounds differently from Python's own format; values here times 10^digits
    # stay under ~1e6, so float error is far below the window and a real half is never missed.
    if abs((v * 10.0**digits) % 1.0 - 0.5) > 1e-6:
        return f"{v:.{digits}f}"
    return str(Decimal(v).quantize(_STEPS[digits], context=_HALF_UP))


def _trim(s: str) -> str:
    return s.rstrip("0").rstrip(".") if "." in s else s


def _huge(v: float) -> str:
    with localcontext() as ctx:
        ctx.prec, ctx.rounding = 400, ROUND_HALF_UP
        mantissa, exponent = format(Decimal(v), ".2e").split("e")
    return f"{_trim(mantissa)}e{int(exponent)}"


def _text(ns: float, decimals: Callable[[float, str], int]) -> str:
    """`|ns|` in the largest unit it reaches, with `decimals(value, unit)` decimals, carried upward."""
    a = abs(ns)
    i = next((k for k, (scale, _) in enumerate(UNITS) if a >= scale), len(UNITS) - 1)
    while True:
        scale, unit = UNITS[i]
        v = a / scale
        if unit == "h" and v >= HUGE_HOURS:
            return f"{_huge(v)} h"
        text = _fixed(v, decimals(v, unit))
        # Rounded up to a whole next unit (999.96 ns -> "1000"): say it in that unit instead.
        if i > 0 and float(text) >= UNITS[i - 1][0] / scale:
            i -= 1
            continue
        return f"{_trim(text)} {unit}"


def _sign(ns: float, text: str) -> str:
    return f"-{text}" if ns < 0 and not text.startswith("0 ") else text


def _three(v: float, unit: str) -> int:
    return 0 if unit == "ns" or v >= 100 else 1 if v >= 10 else 2


def _five(v: float, unit: str) -> int:
    if unit == "ns":
        return 0
    return 4 if v < 10 else 3 if v < 100 else 2 if v < 1000 else 1 if v < 10000 else 0


def duration(ns: float) -> str:
    """A length of time with three significant digits in a readable unit: 1.25 ms, 45.6 µs, 830 ns, 1.5 min."""
    ns = float(ns)
    if not math.isfinite(ns):
        return NOT_A_TIME
    return _sign(ns, _text(ns, _three))


def offset(ns: float) -> str:
    """A time from the profile's start as the timeline's axis reads it, five significant digits: 392.27 µs."""
    ns = float(ns)
    if not math.isfinite(ns):
        return NOT_A_TIME
    return _sign(ns, _text(ns, _five))
