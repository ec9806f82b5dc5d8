"""TrackIndex: one grouping mode applied to a profile (its tracks, each event's lane), built in one pass."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .lanes import lanes_in_time_order, track_order


@dataclass
class TrackIndex:
    """One grouping mode applied to a profile: tracks, and per event its track and lane."""

    grouping: str
    tracks: pd.DataFrame  # one row per track: label, keys, lanes, events
    combo_track: np.ndarray  # track of each combo
    combo: np.ndarray  # combo of each event (shared by every grouping of the profile)
    lane: np.ndarray  # int16 per event, table order
    offsets: np.ndarray  # order[offsets[t]:offsets[t+1]] are track t's events
    # Events per (track, lane), track by track: the level-of-detail index's segments (model/track_lod.py).
    lane_events: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    _order: np.ndarray | None = field(default=None, repr=False)

    @property
    def track(self) -> np.ndarray:
        """Track of each event, table order (derived: one per-event array per profile, not per mode)."""
        return self.combo_track[self.combo]

    @property
    def order(self) -> np.ndarray:
        """Events by track, then start time (made on first use: views read the level-of-detail index instead)."""
        if self._order is None:
            self._order = track_order(self.track, len(self.tracks))
        return self._order

    def nbytes(self) -> int:
        held = 0 if self._order is None else self._order.nbytes
        return self.lane.nbytes + self.offsets.nbytes + self.lane_events.nbytes + held


def build_track_index(grouping: str, tracks: pd.DataFrame, combo_track: np.ndarray, combo: np.ndarray,
                      start: np.ndarray, end: np.ndarray, combo_events: np.ndarray | None = None) -> TrackIndex:
    """Lanes and per-track counts of events (in time order) whose track is `combo_track[combo]`
    (`combo_events`: the events per combo, when known)."""
    n_tracks = len(tracks)
    lane, lanes_per_track, lane_events = lanes_in_time_order(combo, combo_track, start, end, n_tracks, combo_events)
    # Each track's events are its lanes' (lane_events lists them track by track).
    lane_track = np.repeat(np.arange(n_tracks), lanes_per_track)
    counts = np.bincount(lane_track, weights=lane_events, minlength=n_tracks).astype(np.int64)
    offsets = np.zeros(n_tracks + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    tracks = tracks.assign(lanes=lanes_per_track, events=counts)
    tracks.index.name = "track"
    return TrackIndex(grouping, tracks, combo_track, combo, lane, offsets, lane_events)
