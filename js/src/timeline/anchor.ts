// The tracks' scroll kept across a change of the rows' heights: the same tracks with other lanes (a
// grouping's preview swapped for every event) keep the row at the top of the view where it was.

import { type Row, rowsIn, type TrackInfo } from "./layout";

/** The row at the top of the scroll area, and how far into it the top is. */
export interface Anchor {
  key: string;
  offset: number;
}

function rowKey(r: Row): string {
  return r.kind === "track" ? `t${r.track}` : r.kind === "group" ? `g${r.path}` : `c${r.key}`;
}

/** Where the scroll area's top is, as a row and an offset into it (null at the very top: it stays there). */
export function anchorOf(rows: Row[], top: number): Anchor | null {
  if (top <= 0) return null;
  const [r] = rowsIn(rows, top, top + 1);
  return r ? { key: rowKey(r), offset: top - r.y } : null;
}

/** The scroll offset that puts the anchor's row back at the top (null if that row is gone). */
export function scrollFor(rows: Row[], a: Anchor): number | null {
  const r = rows.find((x) => rowKey(x) === a.key);
  return r ? r.y + Math.min(a.offset, Math.max(r.h - 1, 0)) : null;
}

/** The same tracks, by label and order: items held keep their meaning (track numbers) under the new ones. */
export function sameTracks(a: TrackInfo[], b: TrackInfo[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].label !== b[i].label) return false;
  return true;
}
