"""The level-of-detail viewport query: what to draw for a time window at a given width.

Every event at least one pixel wide comes back exactly; narrower ones are merged per pixel
bucket per lane (count, and the longest event standing for the run), so a reply never holds
more than about two items per pixel per visible lane, whatever the window holds. A mipmap
built once per grouping (power-of-two buckets, Perfetto's idea) makes a whole-profile view
cost the same as a narrow one. The engine needs only start/end columns and a track and lane
per event, so device traces can use it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import lod_kernels as k

# Level 0 buckets hold about this many events of a lane on average: few enough to scan, and
# the mipmap then has at most about a quarter as many entries as there are events.
EVENTS_PER_FINEST_BUCKET = 8


@dataclass
class LodIndex:
    lane_order: np.ndarray  # events by (track, lane, start)
    seg_off: np.ndarray  # lane_order[seg_off[s]:seg_off[s+1]] is segment s
    track_segs: np.ndarray  # segments of track t: track_segs[t] .. track_segs[t+1]
    origin: int
    shift0: int
    lvl_key: np.ndarray
    lvl_lo: np.ndarray
    lvl_best: np.ndarray
    lvl_max: np.ndarray
    lvl_fs: np.ndarray  # start of a bucket's first event
    lvl_bs: np.ndarray  # start and end of a bucket's longest event
    lvl_be: np.ndarray
    lvl_off: np.ndarray  # (levels, segments + 1) offsets into the lvl_* arrays

    @property
    def levels(self) -> int:
        return self.lvl_off.shape[0]

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.lane_order, self.seg_off, self.track_segs, self.lvl_key, self.lvl_lo,
                                      self.lvl_best, self.lvl_max, self.lvl_fs, self.lvl_bs, self.lvl_be,
                                      self.lvl_off))


def build(track: np.ndarray, lane: np.ndarray, lanes_per_track: np.ndarray, start: np.ndarray,
          end: np.ndarray) -> LodIndex:
    """The index over events given in time order, with their track and lane."""
    n_tracks = lanes_per_track.size
    track_segs = np.zeros(n_tracks + 1, dtype=np.int64)
    np.cumsum(lanes_per_track, out=track_segs[1:])
    n_segs = int(track_segs[-1])
    seg = track_segs[:-1][track] + lane if track.size else np.zeros(0, np.int64)
    # A stable sort of time-ordered events by segment leaves each lane in start order.
    key = seg.astype(np.uint16) if n_segs <= 65536 else seg
    lane_order = np.argsort(key, kind="stable").astype(np.int32 if track.size < 2**31 else np.int64)
    seg_off = np.zeros(n_segs + 1, dtype=np.int64)
    np.cumsum(np.bincount(seg, minlength=n_segs), out=seg_off[1:])
    origin = int(start.min()) if start.size else 0
    span = max(int(end.max()) - origin, 1) if end.size else 1
    # Lanes share the events: size the finest bucket by a lane's density, not the profile's.
    base = max(span * EVENTS_PER_FINEST_BUCKET * max(n_segs, 1) // max(track.size, 1), 1)
    shift0 = int(base - 1).bit_length()
    finest = k.build_level0(lane_order, seg_off, start, end, origin, shift0)
    # Levels with more entries than events / EVENTS_PER_FINEST_BUCKET cost more memory than
    # scanning the events saves: zoomed in that far, the query walks the events instead.
    while finest[0].size > max(track.size // EVENTS_PER_FINEST_BUCKET, 1) and shift0 < int(span).bit_length():
        finest = k.coarsen(*finest)
        shift0 += 1
    levels = [finest]
    for _ in range(1, max(int(span).bit_length() - shift0 + 1, 1)):
        levels.append(k.coarsen(*levels[-1]))
    sizes = np.array([lv[0].size for lv in levels], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    lvl_off = np.stack([lv[7] + s for lv, s in zip(levels, starts, strict=True)])
    cat = [np.concatenate([lv[j] for lv in levels]) for j in range(7)]
    key, lo, best, maxend, fs, bs, be = cat
    return LodIndex(lane_order, seg_off, track_segs, origin, shift0, key, lo, best, maxend, fs, bs, be, lvl_off)


def query(lod: LodIndex, start: np.ndarray, end: np.ndarray, t0: int, t1: int, width_px: int,
          tracks: Sequence[int] | np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Items for window [t0, t1) drawn `width_px` wide: rows, times, segment and count per item."""
    if t1 <= t0:
        raise ValueError(f"the window must end after it starts ({t0} .. {t1})")
    if width_px < 1:
        raise ValueError("width_px must be at least 1")
    px = max((t1 - t0) // width_px, 1)
    if tracks is None:
        segs = np.arange(lod.seg_off.size - 1, dtype=np.int64)
    else:
        t = np.asarray(tracks, dtype=np.int64)
        if t.size and (t.min() < 0 or t.max() >= lod.track_segs.size - 1):
            raise IndexError(f"track out of range 0..{lod.track_segs.size - 2}")
        segs = np.concatenate([np.arange(lod.track_segs[i], lod.track_segs[i + 1]) for i in t]) if t.size \
            else np.zeros(0, np.int64)
    level = int(px).bit_length() - 1 - lod.shift0  # the coarsest level with buckets of at most a pixel
    level = min(level, lod.levels - 1)
    row, s, e, seg, count = k.query(segs, lod.seg_off, lod.lane_order, start, end, int(t0), int(t1), int(px),
                                    lod.shift0, lod.lvl_key, lod.lvl_lo, lod.lvl_best, lod.lvl_max, lod.lvl_fs,
                                    lod.lvl_bs, lod.lvl_be, lod.lvl_off,
                                    lod.origin, level if level >= 0 else -1)
    return {"row": row, "start_ts": s, "end_ts": e, "segment": seg, "count": count, "px_ns": np.int64(px)}
