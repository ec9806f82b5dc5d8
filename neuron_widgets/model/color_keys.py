"""What a timeline colours events by (`color_by`): the name, a column, an argument, or a device trace's own keys."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .problem_rows import ARGS_SCAN_LIMIT
from .profile import Profile


def color_codes(profile: Profile, key: str) -> tuple[np.ndarray | None, list[str]]:
    """Per event a code into a list of keys that colours it; None to colour by name."""
    own = getattr(profile, "color_codes", None)  # a device trace colours by layer, HLO operator...
    got = own(key) if own is not None else None
    if got is not None:
        return got
    if key == "name":
        return None, []
    if key in profile.column_names:
        values = profile.column(key).combine_chunks()
        codes, uniques = pd.factorize(values.to_pandas(), use_na_sentinel=True)
    else:
        # Not a column: an argument key (model_name...), read from every event's arguments.
        if len(profile) > ARGS_SCAN_LIMIT:
            raise ValueError(f"color_by={key!r} is not a column, and reading it from the arguments of "
                             f"{len(profile):,} events is too slow; use a column ({', '.join(profile.column_names)}) "
                             "or filter the profile first (profile.filter(...))")
        args = profile.args_of_rows(np.arange(len(profile)))
        codes, uniques = pd.factorize(pd.Series([a.get(key) for a in args], dtype=object).map(
            lambda v: None if v is None else str(v)), use_na_sentinel=True)
    keys = [str(u) for u in uniques]
    return codes.astype(np.int32), keys
