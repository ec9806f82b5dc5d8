// The findings' marks on the overview strip (analysis.findings, the kernel's `findings_info`):
// their colour by severity, the line a hover shows, and their packing into lanes in a band above the
// strip's density, so that a finding spanning the run does not hide one inside it.

import { formatDuration } from "../common/time";

/** One finding as the kernel (or the exported page) sends it: times in ns from the profile's start. */
export interface FindingMark {
  t0: number;
  t1: number;
  severity: string; // high / medium / low
  rule: string;
  title: string; // from the trace's own words: only ever shown as text
  gain_ns: number | null;
  part: string | null;
}

/** A mark as drawn, in css px from the strip's left and top (tests read them: `Overview.drawnMarks`). */
export interface DrawnMark {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  index: number; // into the marks given
}

export const LANE_H = 5;
const LANE_GAP = 2;
const MAX_LANES = 4;
export const MIN_MARK_W = 5; // an instant (an error) still shows, and can be hovered

// [light, dark]: red for what must be fixed, orange, then olive (clear of the blue window mark).
const COLORS: Record<string, [string, string]> = {
  high: ["#d62728", "#ff6b6b"],
  medium: ["#e67e00", "#ffa94d"],
  low: ["#9e9d24", "#d4e157"],
};

export function severityColor(severity: string, dark: boolean): string {
  return (COLORS[severity] ?? COLORS.low)[dark ? 1 : 0];
}

const RANK: Record<string, number> = { high: 0, medium: 1, low: 2 };

/** What a hover over a mark says: severity, rule, the title, its gain. */
export function markText(m: FindingMark): string {
  const gain =
    typeof m.gain_ns === "number" && Number.isFinite(m.gain_ns)
      ? `gain ${formatDuration(m.gain_ns)}`
      : "no predicted gain";
  const part = m.part ? ` [${m.part}]` : "";
  return `${m.severity} · ${m.rule}${part} (${gain}): ${m.title}. Click to fit the view to it.`;
}

/**
 * Lanes for marks already placed in x: the most severe take the top lanes first, each mark the
 * first lane where it overlaps no other; past the last lane they share it (the narrower drawn last).
 */
export function packLanes(xs: { x0: number; x1: number; severity: string }[]): number[] {
  const order = xs
    .map((_, i) => i)
    .sort((a, b) => (RANK[xs[a].severity] ?? 3) - (RANK[xs[b].severity] ?? 3) || xs[a].x0 - xs[b].x0);
  const ends: number[] = [];
  const lane = new Array<number>(xs.length).fill(MAX_LANES - 1);
  for (const i of order) {
    let k = ends.findIndex((e) => e <= xs[i].x0);
    if (k < 0 && ends.length < MAX_LANES) k = ends.push(-Infinity) - 1;
    if (k < 0) continue;
    lane[i] = k;
    ends[k] = xs[i].x1 + 1;
  }
  return lane;
}

export function laneTop(lane: number): number {
  return 2 + lane * (LANE_H + LANE_GAP);
}

/** The mark under a point, in its lane (below the lanes the strip moves the window); the narrowest of several. */
export function markAt(drawn: DrawnMark[], x: number, y: number): DrawnMark | null {
  let best: DrawnMark | null = null;
  for (const d of drawn) {
    if (x < d.x0 - 1 || x > d.x1 + 1 || y < d.y0 - 1 || y > d.y1 + 1) continue;
    if (!best || d.x1 - d.x0 < best.x1 - best.x0) best = d;
  }
  return best;
}
