"""Events that signal trouble: errors (numerical_err, failing return codes) and hangs (incomplete)."""

from __future__ import annotations

import re

import numpy as np
import pyarrow.compute as pc

from .profile import Profile
from .schema import INCOMPLETE

ERROR_NAME = re.compile(r"(^|[_\W])(err|error|errors|fail|failed|failure|exception|abort|hang|timeout)([_\W]|$)", re.I)
# A runtime call that returned a code other than 0 (1003 is a numerical error, NaN in the output).
RETURN_CODE = r'"(ret|status|return_code|error_code|rc)"\s*:\s*"?-?[1-9]'
# Scanning every event's arguments for a return code costs ~50 B and ~0.2 µs per event: done
# up to this size, where it stays under a second and 100 MB; larger profiles flag by name.
ARGS_SCAN_LIMIT = 2_000_000


def error_name_codes(names: list[str]) -> np.ndarray:
    return np.array([i for i, n in enumerate(names) if n and ERROR_NAME.search(n)], dtype=np.int64)


def error_rows(profile: Profile, scan_args: bool | None = None) -> np.ndarray:
    """Rows of events that are errors by name, or (on profiles up to ARGS_SCAN_LIMIT) by a non-zero return code."""
    codes = error_name_codes(profile.name_dictionary())
    by_name = np.flatnonzero(np.isin(profile.name_codes(), codes)) if codes.size else np.zeros(0, np.int64)
    if scan_args is None:
        scan_args = len(profile) <= ARGS_SCAN_LIMIT
    if not scan_args or "extra_attributes_json" not in profile.column_names:
        return by_name
    col = profile.column("extra_attributes_json")
    hit = pc.match_substring_regex(col, RETURN_CODE).fill_null(False)
    by_args = np.flatnonzero(hit.to_numpy(zero_copy_only=False))
    return np.union1d(by_name, by_args)


def incomplete_rows(profile: Profile) -> np.ndarray:
    if INCOMPLETE not in profile.column_names:
        return np.zeros(0, np.int64)
    return np.flatnonzero(profile.column(INCOMPLETE).fill_null(False).to_numpy(zero_copy_only=False))
