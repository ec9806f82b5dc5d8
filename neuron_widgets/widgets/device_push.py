"""The first window of a drill-down, sent unasked with the new trace's tracks.

Without it the browser asks for its first window once the tracks have arrived and been laid out,
and the kernel answers in its main thread: behind whatever the click that started the drill-down
queued there (the system timeline's own details of the event). Sent from the loading thread just
ahead of the tracks, it skips that round trip, and the frame that lays the tracks out draws it.
What is sent is a guess at what the browser would ask for, made from its earlier requests; the
browser keeps it until the model shows its trace and takes it only while it holds nothing for that
trace (js/src/timeline/replies.ts, `PUSHED`); what it does not cover is asked for as before.
"""

from __future__ import annotations

from typing import Any

# A pushed reply's uuid: this prefix, then how many tracks it holds (tracks 0..k-1).
PUSHED = "push:"

# The browser's layout (js/src/timeline/layout.ts): a lane's row, a track's padding, a group header.
LANE_H, TRACK_PAD, GROUP_H = 18, 4, 20
# The widget's parts above the tracks (title, notes and chips, toolbar, overview, axis), in css px: what
# the tracks' scroll box is short of the widget's height, about.
CHROME_H = 130
# The browser asks for the rows from half a screen above to half a screen below the scroll box.
ROWS_ASKED = 1.5
# Of the resolution the browser asks for: a view is served by a reply up to 1.5x coarser
# (js/src/timeline/viewmath.ts `covers`); 0.75 leaves a plot 12% wider than the guess served,
# with a quarter fewer items to compute, send, decode and draw.
RESOLUTION = 0.75


def tracks_on_screen(tracks: list[dict[str, Any]], height: int) -> int:
    """How many tracks, from the first, the browser asks for when it shows a new trace at the top.

    The rows' places as the browser lays them out: a header per group (each new label prefix),
    then each track's lanes.
    """
    limit = ROWS_ASKED * max(height - CHROME_H, LANE_H)
    y, seen, k = 0, set(), 0
    for t in tracks:
        parts = str(t.get("label", "")).split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            if prefix not in seen:
                seen.add(prefix)
                y += GROUP_H
        if y >= limit:
            break
        k += 1
        y += max(int(t.get("lanes", 1)), 1) * LANE_H + TRACK_PAD
    return k


def first_window(view: list[float], tracks: list[dict[str, Any]], height: int, grouping: str,
                 asked_width: int | None) -> dict[str, Any] | None:
    """The viewport request the browser would make for `view` (half a view either side, as it asks), at
    RESOLUTION of the width it last asked with; None when it never asked (nothing to guess from)."""
    if not asked_width or not tracks:
        return None
    k = tracks_on_screen(tracks, height)
    if k == 0:
        return None
    t0, t1 = float(view[0]), float(view[1])
    w = t1 - t0
    return {"type": "viewport", "grouping": grouping, "t0": t0 - w / 2, "t1": t1 + w / 2,
            "width": max(int(asked_width * RESOLUTION), 1), "tracks": list(range(k))}
