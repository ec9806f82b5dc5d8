// Which drawn item is under a point: the row and lane from y, then the item whose extent holds x.

import { FLAG_ERROR, FLAG_HIGHLIGHT, FLAG_INCOMPLETE, type Items } from "./data";
import { LANE_H, type Row, rowsIn } from "./layout";
import type { Range } from "./viewmath";

/** Index into `items` of the item at (x, yContent), or -1. Markers and narrow items win ties. */
export function hitTest(
  rows: Row[],
  items: Items | null,
  view: Range,
  width: number,
  x: number,
  yContent: number,
): number {
  if (!items) return -1;
  const row = rowsIn(rows, yContent, yContent + 1)[0];
  if (row?.kind !== "track") return -1;
  const lane = Math.floor((yContent - row.y - 2) / LANE_H);
  if (lane < 0 || lane >= row.lanes) return -1;
  const scale = width / (view.t1 - view.t0);
  let best = -1;
  let bestScore = Infinity;
  for (let i = 0; i < items.n; i++) {
    if (items.track[i] !== row.track || items.lane[i] !== lane) continue;
    const x0 = (items.start[i] - view.t0) * scale;
    const x1 = (items.end[i] - view.t0) * scale;
    const slack = x1 - x0 < 3 ? 2 : 0;
    if (x < x0 - slack || x > x1 + slack) continue;
    const marked = items.flags[i] & (FLAG_ERROR | FLAG_INCOMPLETE | FLAG_HIGHLIGHT) ? 0 : 1;
    const score = marked * 1e12 + (x1 - x0);
    if (score < bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}
