// What the view must ask the kernel (or an exported page's store) for: the items of a window
// and the counter values around it. Pure functions of what is on screen and what is held.

import type { Items, Wish } from "./data";
import { type Row, rowsIn } from "./layout";
import { covers, type Range } from "./viewmath";

export interface Held {
  rows: Row[];
  top: number; // the tracks' scroll offset
  height: number;
  width: number;
  view: Range;
  grouping: string;
  revision: number;
  items: Items | null;
  counterWindow: { t0: number; t1: number; keys: string } | null;
}

function trackIds(rows: Row[]): number[] {
  return rows.filter((r) => r.kind === "track").map((r) => (r as Extract<Row, { kind: "track" }>).track);
}

/** The viewport to ask for, or null when what is held serves the view. */
export function viewportWish(s: Held): Wish | null {
  // Rows half a screen above and below come too, so scrolling shows data at once; more would
  // multiply the reply (dense lanes fill two items per pixel each) past a few MB.
  const tracks = trackIds(rowsIn(s.rows, s.top - s.height / 2, s.top + 1.5 * s.height));
  const it = s.items;
  const onScreen = trackIds(rowsIn(s.rows, s.top, s.top + s.height));
  const ok =
    it &&
    it.grouping === s.grouping &&
    it.revision === s.revision &&
    covers(it, s.view, s.width) &&
    onScreen.every((t) => it.tracks.has(t));
  if (ok || !tracks.length) return null;
  // Half a screen either side: a pan draws at once from what is held, and asks for more.
  const w = s.view.t1 - s.view.t0;
  const t0 = s.view.t0 - w / 2;
  const t1 = s.view.t1 + w / 2;
  const px = Math.round(s.width * 2);
  return {
    type: "viewport",
    key: `${s.grouping}|${s.revision}|${t0}|${t1}|${px}|${tracks.join(",")}`,
    payload: { grouping: s.grouping, t0, t1, width: px, tracks },
  };
}

/** The counter values to ask for (the counter rows near the screen), or null. */
export function counterWish(s: Held): Wish | null {
  const near = rowsIn(s.rows, s.top - s.height / 2, s.top + 1.5 * s.height);
  const keys = near.filter((r) => r.kind === "counter").map((r) => (r as Extract<Row, { kind: "counter" }>).key);
  const cw = s.counterWindow;
  const kjoin = keys.join(",");
  const span = s.view.t1 - s.view.t0;
  if (
    !keys.length ||
    (cw && cw.keys === kjoin && cw.t0 <= s.view.t0 && cw.t1 >= s.view.t1 && cw.t1 - cw.t0 <= 6 * span)
  ) {
    return null;
  }
  const t0 = s.view.t0 - span;
  const t1 = s.view.t1 + span;
  return { type: "counters", key: `${kjoin}|${t0}|${t1}`, payload: { keys, t0, t1, width: Math.round(s.width * 3) } };
}
