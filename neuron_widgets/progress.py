"""A progress bar that appears only for loads that take over a second."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm.auto import tqdm


@contextmanager
def progress(desc: str, total: int | None = None, unit: str = "events") -> Iterator[tqdm]:
    quiet = os.environ.get("NEURON_WIDGETS_PROGRESS", "1") == "0"
    bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=True, delay=1.0, leave=False,
               disable=quiet, file=sys.stderr)
    try:
        yield bar
    finally:
        bar.close()
