// Painting on a 2D canvas: rectangles batched per colour (one path and one fill per colour),
// names inside rectangles wide enough to read them, markers for errors and hangs, the selection
// with its dependency arrows, and counter tracks.

import { ERROR_COLOR, nameColor, type Theme } from "../common/colors";
import { sampleAt, visibleRange } from "./counterscale";
import { FLAG_COARSE, FLAG_ERROR, FLAG_HIGHLIGHT, FLAG_INCOMPLETE, type Items } from "./data";
import { GROUP_H, LANE_H, type Row } from "./layout";

export interface View {
  t0: number;
  t1: number;
  width: number; // CSS pixels of the plot area
}

export interface Place {
  row: number;
  start: number;
  end: number;
  track: number;
  lane: number;
  name: string;
}

export interface Scene {
  view: View;
  rows: Row[]; // rows on screen
  scrollTop: number;
  height: number;
  trackY: Map<number, number>; // track -> y (content coordinates) of visible tracks
  items: Items | null;
  names: string[];
  theme: Theme;
  match: Uint8Array | null; // search: 1 per matching name code
  selection: { place: Place; upstream: Place[]; downstream: Place[] } | null;
  brush: [number, number] | null;
  hoverRow: number;
  counters: Map<string, { t: Float64Array; v: Float64Array }>;
  pick: string | null; // the legend's highlighted colour: the others are dimmed
  nodeMask: Uint8Array | null; // a device hierarchy node picked: 1 per node under it; other events dim
  // The critical path shown: its events are the highlighted ones, every other event dims, and its
  // jumps between tracks are drawn as arrows (flat [t_from, track, lane, t_to, track, lane, ...]); on a
  // job's timeline, spans mark where it runs through a folded part (flat [t0, t1, track, ...]).
  critical?: { jumps: number[]; spans?: number[] } | null;
  pointerT: number | null; // the time under the pointer: counters mark their value there
  pinned: number; // group headers pinned at the top (their labels stay while their rows scroll)
}

// Text is the costliest thing to paint in software; past this many names a frame shows the first.
const MAX_LABELS = 400;

const colorCache = new Map<string, string>();
export function colorOf(key: string, dark: boolean): string {
  const k = (dark ? "d" : "l") + key;
  let c = colorCache.get(k);
  if (!c) {
    c = nameColor(key, dark);
    colorCache.set(k, c);
  }
  return c;
}

/** What gives item i its colour: its `color_by` value when the view colours by one, else its name. */
export function colorKeyOf(it: Items, names: string[], i: number): string {
  if (it.color && it.colorKeys) return it.color[i] >= 0 ? it.colorKeys[it.color[i]] : "(none)";
  return names[it.name[i]] ?? "";
}

export function xOf(view: View, t: number): number {
  return ((t - view.t0) / (view.t1 - view.t0)) * view.width;
}

export function paint(
  ctx: CanvasRenderingContext2D,
  s: Scene,
): { drawn: number; dimmed: number; jumps: number; spans: number } {
  const { view, theme } = s;
  ctx.fillStyle = theme.background;
  ctx.fillRect(0, 0, view.width, s.height);
  // Row backgrounds and separators.
  for (const r of s.rows) {
    const y = r.y - s.scrollTop;
    if (r.kind === "group") {
      ctx.fillStyle = theme.header;
      ctx.fillRect(0, y, view.width, r.h);
    }
    ctx.fillStyle = theme.grid;
    ctx.fillRect(0, y + r.h - 1, view.width, 1);
  }
  let drawn = 0;
  let dimmed = 0;
  const items = s.items;
  if (items) ({ drawn, dimmed } = paintItems(ctx, s, items));
  for (const r of s.rows) if (r.kind === "counter") paintCounter(ctx, s, r);
  // The pinned headers' band, under their labels, as Perfetto draws it.
  for (let k = 0; k < s.pinned; k++) {
    ctx.fillStyle = theme.header;
    ctx.fillRect(0, k * GROUP_H, view.width, GROUP_H);
    ctx.fillStyle = theme.grid;
    ctx.fillRect(0, (k + 1) * GROUP_H - 1, view.width, 1);
  }
  const spans = s.critical?.spans ? paintSpans(ctx, s, s.critical.spans) : 0;
  const jumps = s.critical ? paintJumps(ctx, s, s.critical.jumps) : 0;
  if (s.selection) paintSelection(ctx, s);
  if (s.brush) {
    const a = xOf(view, s.brush[0]);
    const b = xOf(view, s.brush[1]);
    ctx.fillStyle = theme.dark ? "rgba(120,170,255,0.16)" : "rgba(25,118,210,0.12)";
    ctx.fillRect(a, 0, b - a, s.height);
    ctx.fillStyle = theme.accent;
    ctx.fillRect(a, 0, 1, s.height);
    ctx.fillRect(b, 0, 1, s.height);
  }
  return { drawn, dimmed, jumps, spans };
}

function paintItems(ctx: CanvasRenderingContext2D, s: Scene, it: Items): { drawn: number; dimmed: number } {
  const { view, theme } = s;
  const scale = view.width / (view.t1 - view.t0);
  const buckets = new Map<string, number[]>();
  const dimmed = new Map<string, number[]>();
  let drawn = 0;
  let nDim = 0;
  const keys = it.color && it.colorKeys ? it.colorKeys : null;
  const labelled: number[] = [];
  const marked: number[] = [];
  const coarse: number[] = [];
  for (let i = 0; i < it.n; i++) {
    const ty = s.trackY.get(it.track[i]);
    if (ty === undefined) continue;
    const x0 = (it.start[i] - view.t0) * scale;
    const x1 = (it.end[i] - view.t0) * scale;
    if (x1 < -1 || x0 > view.width + 1) continue;
    const f = it.flags[i];
    if (f & (FLAG_ERROR | FLAG_INCOMPLETE | FLAG_HIGHLIGHT)) {
      marked.push(i);
      continue;
    }
    const code = it.name[i];
    const key = keys ? (it.color![i] >= 0 ? keys[it.color![i]] : "(none)") : (s.names[code] ?? "");
    const dim =
      !!s.critical ||
      (s.match !== null && !s.match[code]) ||
      (s.pick !== null && key !== s.pick) ||
      (s.nodeMask !== null && !(it.node && it.node[i] >= 0 && s.nodeMask[it.node[i]]));
    if (dim) nDim++;
    const map = dim ? dimmed : buckets;
    let b = map.get(key);
    if (!b) {
      b = [];
      map.set(key, b);
    }
    b.push(i);
    if (x1 - x0 > 36 && it.count[i] === 1 && labelled.length < MAX_LABELS) labelled.push(i);
    if (f & FLAG_COARSE && x1 - x0 >= 3) coarse.push(i);
    drawn++;
  }
  const rect = (i: number) => {
    const y = s.trackY.get(it.track[i])! + it.lane[i] * LANE_H - s.scrollTop + 2;
    const x0 = Math.max((it.start[i] - view.t0) * scale, -2);
    const x1 = Math.min((it.end[i] - view.t0) * scale, view.width + 2);
    ctx.rect(x0, y, Math.max(x1 - x0, 1), LANE_H - 3);
  };
  // Consecutive items of one colour on one lane that touch on screen become one rectangle: a
  // dense lane is thousands of sub-pixel items, and each rectangle costs the software rasteriser.
  const merged = (idx: number[]) => {
    let run = -1;
    let rx0 = 0;
    let rx1 = 0;
    let ry = 0;
    for (const i of idx) {
      const y = s.trackY.get(it.track[i])! + it.lane[i] * LANE_H - s.scrollTop + 2;
      const x0 = Math.max((it.start[i] - view.t0) * scale, -2);
      const x1 = Math.max(Math.min((it.end[i] - view.t0) * scale, view.width + 2), x0 + 1);
      if (run >= 0 && y === ry && x0 <= rx1 + 0.5) {
        if (x1 > rx1) rx1 = x1;
        continue;
      }
      if (run >= 0) ctx.rect(rx0, ry, rx1 - rx0, LANE_H - 3);
      run = i;
      rx0 = x0;
      rx1 = x1;
      ry = y;
    }
    if (run >= 0) ctx.rect(rx0, ry, rx1 - rx0, LANE_H - 3);
  };
  for (const [map, alpha] of [
    [dimmed, 0.18],
    [buckets, 1],
  ] as const) {
    ctx.globalAlpha = alpha;
    for (const [key, idx] of map) {
      ctx.fillStyle = colorOf(key, theme.dark);
      ctx.beginPath();
      merged(idx);
      ctx.fill();
    }
  }
  ctx.globalAlpha = 1;
  if (coarse.length) {
    // An export's merged blocks are hatched: they are not events, and zooming will not split them.
    ctx.save();
    ctx.beginPath();
    for (const i of coarse) rect(i);
    ctx.clip();
    ctx.strokeStyle = theme.dark ? "rgba(0,0,0,0.4)" : "rgba(255,255,255,0.6)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let x = -s.height; x < view.width; x += 6) {
      ctx.moveTo(x, s.height);
      ctx.lineTo(x + s.height, 0);
    }
    ctx.stroke();
    ctx.restore();
  }
  if (s.match || s.pick !== null || s.nodeMask) {
    // Matches get an outline so they stand out from the dimmed rest.
    ctx.strokeStyle = theme.foreground;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (const idx of buckets.values()) for (const i of idx) rect(i);
    ctx.stroke();
  }
  for (const i of marked) {
    const f = it.flags[i];
    const y = s.trackY.get(it.track[i])! + it.lane[i] * LANE_H - s.scrollTop + 2;
    const x0 = Math.max((it.start[i] - view.t0) * scale, -2);
    const x1 = Math.min((it.end[i] - view.t0) * scale, view.width + 2);
    const w = Math.max(x1 - x0, 2);
    if (f & FLAG_ERROR) ctx.fillStyle = ERROR_COLOR;
    else ctx.fillStyle = colorOf(s.names[it.name[i]] ?? "", theme.dark);
    ctx.fillRect(x0, y, w, LANE_H - 3);
    if (f & FLAG_INCOMPLETE) {
      // Never finished: a hatched end and a dashed outline (a hang, or the capture stopped).
      ctx.save();
      ctx.setLineDash([4, 3]);
      ctx.strokeStyle = ERROR_COLOR;
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 + 1, y + 1, w - 2, LANE_H - 5);
      ctx.restore();
      ctx.fillStyle = ERROR_COLOR;
      ctx.beginPath();
      ctx.moveTo(Math.min(x1, view.width) - 8, y + (LANE_H - 3) / 2);
      ctx.lineTo(Math.min(x1, view.width), y);
      ctx.lineTo(Math.min(x1, view.width), y + LANE_H - 3);
      ctx.fill();
    }
    if (f & FLAG_ERROR && w < 6) {
      // A point-like error: a triangle above it so it is seen at any zoom.
      ctx.fillStyle = ERROR_COLOR;
      ctx.beginPath();
      ctx.moveTo(x0 - 5, y);
      ctx.lineTo(x0 + 5, y);
      ctx.lineTo(x0, y + 8);
      ctx.fill();
    }
    if (f & FLAG_HIGHLIGHT) {
      ctx.strokeStyle = critColor(theme.dark);
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 - 1, y - 1, w + 2, LANE_H - 1);
    }
    if (x1 - x0 > 36) labelled.push(i);
    drawn++;
  }
  // Names inside rectangles wide enough to hold a few characters.
  ctx.font = `11px ${theme.font}`;
  ctx.textBaseline = "middle";
  for (const i of labelled) {
    const x0 = Math.max((it.start[i] - view.t0) * scale, 0);
    const x1 = Math.min((it.end[i] - view.t0) * scale, view.width);
    const room = x1 - x0 - 6;
    if (room < 24) continue;
    const name = s.names[it.name[i]] ?? "";
    const fit = Math.floor(room / 6.2);
    const text = name.length > fit ? `${name.slice(0, Math.max(fit - 1, 1))}…` : name;
    const y = s.trackY.get(it.track[i])! + it.lane[i] * LANE_H - s.scrollTop + 2 + (LANE_H - 3) / 2;
    ctx.fillStyle = it.flags[i] & FLAG_ERROR || theme.dark ? "#ffffff" : "#1a1a1a";
    ctx.fillText(text, x0 + 3, y);
  }
  return { drawn, dimmed: nDim };
}

function placeRect(s: Scene, p: Place): { x0: number; x1: number; y: number } | null {
  const ty = s.trackY.get(p.track);
  if (ty === undefined || p.lane < 0) return null; // lane -1: a preview drawn that does not hold the event
  return { x0: xOf(s.view, p.start), x1: xOf(s.view, p.end), y: ty + p.lane * LANE_H - s.scrollTop + 2 };
}

/** A dependency arrow: a curve from one event's point to another's, with its head at `to`. */
function flowArrow(ctx: CanvasRenderingContext2D, from: { x: number; y: number }, to: { x: number; y: number }): void {
  ctx.beginPath();
  ctx.moveTo(from.x, from.y);
  const mx = (from.x + to.x) / 2;
  ctx.bezierCurveTo(mx, from.y, mx, to.y, to.x, to.y);
  ctx.stroke();
  const ang = Math.atan2(to.y - from.y, to.x - mx || 1);
  ctx.beginPath();
  ctx.moveTo(to.x, to.y);
  ctx.lineTo(to.x - 7 * Math.cos(ang - 0.4), to.y - 7 * Math.sin(ang - 0.4));
  ctx.lineTo(to.x - 7 * Math.cos(ang + 0.4), to.y - 7 * Math.sin(ang + 0.4));
  ctx.fill();
}

/** Where a job's path runs through a folded part: a band over the part's summary lane, outlined as the path's
 * events are, at least 3 px wide so that a short passage shows at any zoom. */
function paintSpans(ctx: CanvasRenderingContext2D, s: Scene, spans: number[]): number {
  const { view } = s;
  const outline = critColor(s.theme.dark);
  ctx.save();
  ctx.lineWidth = 2;
  ctx.strokeStyle = outline;
  let drawn = 0;
  for (let k = 0; k + 2 < spans.length; k += 3) {
    if (spans[k + 1] < view.t0 || spans[k] > view.t1) continue;
    const ty = s.trackY.get(spans[k + 2]);
    if (ty === undefined) continue; // its track is collapsed, hidden or scrolled away
    const y = ty - s.scrollTop + 2;
    const x0 = Math.max(xOf(view, spans[k]), -2);
    const x1 = Math.min(xOf(view, spans[k + 1]), view.width + 2);
    const w = Math.max(x1 - x0, 3);
    ctx.globalAlpha = 0.35;
    ctx.fillStyle = outline;
    ctx.fillRect(x0, y, w, LANE_H - 3);
    ctx.globalAlpha = 1;
    ctx.strokeRect(x0 - 1, y - 1, w + 2, LANE_H - 1);
    drawn++;
  }
  ctx.restore();
  return drawn;
}

/** The outline of the path's events (and a job's spans): amber in dark, deep orange in light. */
function critColor(dark: boolean): string {
  return dark ? "#ffd54f" : "#f57f17";
}

/** The critical path's jumps between tracks in view, drawn as the selection's flow arrows are. */
function paintJumps(ctx: CanvasRenderingContext2D, s: Scene, jumps: number[]): number {
  const { view } = s;
  ctx.save();
  ctx.strokeStyle = s.theme.dark ? "#ffd54f" : "#e65100";
  ctx.fillStyle = ctx.strokeStyle;
  ctx.lineWidth = 1.5;
  const yOf = (track: number, lane: number) => {
    const ty = s.trackY.get(track);
    return ty === undefined ? null : ty + lane * LANE_H - s.scrollTop + 2 + (LANE_H - 3) / 2;
  };
  let drawn = 0;
  for (let k = 0; k + 5 < jumps.length; k += 6) {
    const t0 = jumps[k];
    const t1 = jumps[k + 3];
    if (Math.max(t0, t1) < view.t0 || Math.min(t0, t1) > view.t1) continue;
    // A jump to or from a track out of view (collapsed, hidden, scrolled away) is left out.
    const y0 = yOf(jumps[k + 1], jumps[k + 2]);
    const y1 = yOf(jumps[k + 4], jumps[k + 5]);
    if (y0 === null || y1 === null) continue;
    flowArrow(ctx, { x: xOf(view, t0), y: y0 }, { x: xOf(view, t1), y: y1 });
    if (++drawn >= 5000) break; // more than a canvas can show apart: zoom in for the rest
  }
  ctx.restore();
  return drawn;
}

function paintSelection(ctx: CanvasRenderingContext2D, s: Scene): void {
  const sel = s.selection!;
  const me = placeRect(s, sel.place);
  ctx.save();
  ctx.lineWidth = 2;
  ctx.strokeStyle = s.theme.foreground;
  if (me) ctx.strokeRect(me.x0 - 1, me.y - 1, Math.max(me.x1 - me.x0, 1) + 2, LANE_H - 1);
  ctx.strokeStyle = s.theme.accent;
  ctx.fillStyle = s.theme.accent;
  ctx.lineWidth = 1.5;
  const arrow = (from: { x: number; y: number }, to: { x: number; y: number }) => flowArrow(ctx, from, to);
  const mid = (r: { x0: number; y: number }) => ({ x: r.x0, y: r.y + (LANE_H - 3) / 2 });
  if (me) {
    for (const u of sel.upstream) {
      const r = placeRect(s, u);
      if (r) arrow(mid(r), mid(me));
    }
    for (const d of sel.downstream) {
      const r = placeRect(s, d);
      if (r) arrow(mid(me), mid(r));
    }
  }
  ctx.restore();
}

function paintCounter(ctx: CanvasRenderingContext2D, s: Scene, r: Extract<Row, { kind: "counter" }>): void {
  const data = s.counters.get(r.key);
  const y0 = r.y - s.scrollTop;
  if (!data || data.t.length === 0) return;
  // Scaled to what the window shows (from 0), as the label's "max" says.
  const seen = visibleRange(data, s.view.t0, s.view.t1);
  const lo = Math.min(seen ? seen[0] : r.series.min, 0);
  const hi = Math.max(seen ? seen[1] : r.series.max, lo + 1e-9);
  const yOf = (v: number) => y0 + r.h - 3 - ((v - lo) / (hi - lo)) * (r.h - 8);
  const color = colorOf(r.series.kind + r.series.label.split("/").slice(-1)[0], s.theme.dark);
  ctx.beginPath();
  ctx.moveTo(Math.max(xOf(s.view, data.t[0]), -1), y0 + r.h - 3);
  for (let i = 0; i < data.t.length; i++) {
    const x = Math.max(Math.min(xOf(s.view, data.t[i]), s.view.width + 1), -1);
    const xn = i + 1 < data.t.length ? Math.min(xOf(s.view, data.t[i + 1]), s.view.width + 1) : s.view.width + 1;
    const y = yOf(data.v[i]);
    ctx.lineTo(x, y);
    ctx.lineTo(Math.max(xn, -1), y); // a sample holds until the next one
  }
  ctx.lineTo(s.view.width + 1, y0 + r.h - 3);
  ctx.closePath();
  ctx.fillStyle = color;
  ctx.globalAlpha = 0.75;
  ctx.fill();
  ctx.globalAlpha = 1;
  if (s.pointerT !== null) {
    const k = sampleAt(data, s.pointerT);
    if (k >= 0) {
      const x = xOf(s.view, s.pointerT);
      ctx.fillStyle = s.theme.foreground;
      ctx.fillRect(x, y0 + 1, 1, r.h - 2);
      ctx.beginPath();
      ctx.arc(x, yOf(data.v[k]), 2.5, 0, 2 * Math.PI);
      ctx.fill();
    }
  }
}
