"""A large profile's preview in any grouping: what a view draws at once while that grouping is built on all events."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import profile as model_profile
from .grouping import GROUPINGS
from .profile import Profile
from .track_index import TrackIndex


@dataclass(frozen=True)
class PreviewGrouping:
    """A profile's preview (`Profile.preview`) with one grouping's tracks and lanes built.

    Once the profile's combos are known (a grouping of it was built), the preview's tracks are the
    whole profile's: the same labels in the same order, so a view keeps its track numbers (tracks
    hidden or moved, the items on screen, the selection's track) when the whole profile's index
    replaces the preview. Lanes and event counts are the sample's. Before that (a view opened while
    the profile loads) the preview's tracks are its own, a subset of the whole profile's.
    """

    preview: Profile
    grouping: str
    # The whole profile's combo of each event and each combo's track: set when the preview's tracks
    # are the whole profile's, so an event the sample lacks still has its track.
    codes: np.ndarray | None = None
    combo_track: np.ndarray | None = None

    def place(self, row: int) -> tuple[int, int]:
        """(track, lane) of a row of the whole profile; lane -1 when the sample lacks it, track -1 when unknown."""
        rows = self.preview.source_rows
        assert rows is not None
        at = int(np.searchsorted(rows, row))
        if at < rows.size and rows[at] == row:
            idx = self.preview.track_index(self.grouping)
            return int(idx.combo_track[idx.combo[at]]), int(idx.lane[at])
        if self.codes is not None and self.combo_track is not None and 0 <= row < self.codes.size:
            return int(self.combo_track[self.codes[row]]), -1
        return -1, -1


def has_preview(profile: Profile) -> bool:
    """Whether views of `profile` draw a preview while a grouping is built: large, with the standard groupings
    (a device trace's engines and tables are built before it is shown)."""
    return len(profile) >= model_profile.PREVIEW_MIN_EVENTS and profile.groupings == GROUPINGS


def preview_in(profile: Profile, grouping: str) -> PreviewGrouping:
    """The profile's preview with `grouping`'s tracks and lanes (built once per grouping, then kept on the preview).

    The sample is made once per profile (`Profile.preview`, 0.3 s of CPU at 10M events) and kept;
    a grouping of it costs tens of milliseconds at 400,000 events.
    """
    preview = profile.preview()
    if not any(profile.ready(g) for g in GROUPINGS):
        # The combos are not known yet (the profile is still loading): reading them would be a pass
        # over every event (1.4 s at 10M). The preview's own tracks, as at load.
        preview.track_index(grouping)
        return PreviewGrouping(preview, grouping)
    codes, combo_track, labels = profile.grouping_keys(grouping)
    rows = preview.source_rows
    assert rows is not None

    def build() -> TrackIndex:
        # Profile's own builder, handed the whole profile's tracks: the sample's events go where all events go.
        return preview._build_index(grouping, pd.DataFrame({"label": labels}), combo_track, codes[rows])

    idx: TrackIndex = preview._once(f"index:{grouping}", lambda: preview._indexes.get(grouping), build)
    if idx.tracks["label"].tolist() != labels:  # built earlier with the preview's own tracks (at load)
        return PreviewGrouping(preview, grouping)
    return PreviewGrouping(preview, grouping, codes, combo_track)
