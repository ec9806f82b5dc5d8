// The overview strip above the tracks: event density over the whole profile, the shown window
// marked; a click or a drag moves the window there. Its data is one small histogram per
// profile (the `overview` trait), so it costs nothing per frame. With the findings on, their
// ranges are marked along its top: a hover names one (as text), a click fits the view to it.

import type { Theme } from "../common/colors";
import { h } from "../common/dom";
import { formatDuration } from "../common/time";
import {
  type DrawnMark,
  type FindingMark,
  LANE_H,
  laneTop,
  MIN_MARK_W,
  markAt,
  markText,
  packLanes,
  severityColor,
} from "./findings";
import type { Range } from "./viewmath";

export const OVERVIEW_H = 24;
// Width of a far-clock cluster's piece, and of the break drawn between pieces (css px).
const PIECE_W = 28;
const BREAK_W = 12;

/** The strip's data (model.overview): counts over the dense part, far-clock clusters apart. */
export interface OverviewData {
  bins?: number[];
  range?: [number, number];
  outliers?: { t0: number; t1: number; events: number }[];
}

interface Piece {
  t0: number;
  t1: number;
  x0: number;
  w: number;
  events: number; // for an outlier cluster; -1 for the dense part
}

/** The strip's pieces left to right: clusters before the dense part, the dense part, clusters after. */
export function layoutPieces(data: OverviewData, width: number): Piece[] {
  const range = data.range ?? [0, 1];
  const outliers = [...(data.outliers ?? [])].sort((a, b) => a.t0 - b.t0);
  const before = outliers.filter((o) => o.t1 <= range[0]);
  const after = outliers.filter((o) => o.t1 > range[0]);
  const dense = Math.max(width - outliers.length * (PIECE_W + BREAK_W), width / 2);
  const side = outliers.length ? (width - dense) / outliers.length - BREAK_W : 0;
  const pieces: Piece[] = [];
  let x = 0;
  for (const o of before) {
    pieces.push({ t0: o.t0, t1: Math.max(o.t1, o.t0 + 1), x0: x, w: side, events: o.events });
    x += side + BREAK_W;
  }
  pieces.push({ t0: range[0], t1: Math.max(range[1], range[0] + 1), x0: x, w: dense, events: -1 });
  x += dense + BREAK_W;
  for (const o of after) {
    pieces.push({ t0: o.t0, t1: Math.max(o.t1, o.t0 + 1), x0: x, w: side, events: o.events });
    x += side + BREAK_W;
  }
  return pieces;
}

export class Overview {
  readonly el = h("canvas", {
    class: "nw-overview",
    title: "Event density over the whole profile: click or drag to move there",
  });
  // What a hover over a finding's mark says: the page's own element, its text set as text only.
  readonly tip = h("div", { class: "nw-tooltip nw-finding-tip" });
  private dragging = false;
  private width = 1;
  private pieces: Piece[] = [{ t0: 0, t1: 1, x0: 0, w: 1, events: -1 }];
  private marks: FindingMark[] = [];
  drawnMarks: DrawnMark[] = []; // the findings' marks as last drawn (tests read them)
  hovered = -1; // the mark named by the tip, or -1

  constructor(
    private moveTo: (t: number) => void,
    private fitTo: (t0: number, t1: number) => void,
  ) {
    const at = (e: PointerEvent) => {
      const t = this.timeAt(e.clientX - this.el.getBoundingClientRect().left);
      if (t !== null) this.moveTo(t);
    };
    const markUnder = (e: PointerEvent | MouseEvent) => {
      const r = this.el.getBoundingClientRect();
      return markAt(this.drawnMarks, e.clientX - r.left, e.clientY - r.top);
    };
    this.el.addEventListener("pointerdown", (e) => {
      const hit = markUnder(e);
      if (hit) {
        const m = this.marks[hit.index];
        this.fitTo(m.t0, m.t1);
        e.preventDefault();
        return;
      }
      this.dragging = true;
      this.el.setPointerCapture?.(e.pointerId);
      at(e);
      e.preventDefault();
    });
    this.el.addEventListener("pointermove", (e) => {
      if (this.dragging) at(e);
      const hit = this.dragging ? null : markUnder(e);
      this.showTip(hit, e.clientX, e.clientY);
      this.el.title = hit ? "" : this.titleAt(e.clientX - this.el.getBoundingClientRect().left);
    });
    this.el.addEventListener("pointerleave", () => this.showTip(null, 0, 0));
    const stop = () => (this.dragging = false);
    this.el.addEventListener("pointerup", stop);
    this.el.addEventListener("pointercancel", stop);
  }

  private showTip(hit: DrawnMark | null, cx: number, cy: number): void {
    this.hovered = hit ? hit.index : -1;
    this.el.style.cursor = hit ? "zoom-in" : "";
    if (!hit) {
      this.tip.style.display = "none";
      return;
    }
    this.tip.textContent = markText(this.marks[hit.index]);
    this.tip.style.display = "block";
    const w = this.tip.offsetWidth;
    this.tip.style.left = `${Math.max(Math.min(cx + 12, window.innerWidth - w - 8), 4)}px`;
    this.tip.style.top = `${cy + 16}px`;
  }

  private pieceAt(x: number): Piece {
    // Between pieces (on a break): the nearer one.
    let best = this.pieces[0];
    let gap = Infinity;
    for (const p of this.pieces) {
      const d = x < p.x0 ? p.x0 - x : x > p.x0 + p.w ? x - p.x0 - p.w : 0;
      if (d < gap) [best, gap] = [p, d];
    }
    return best;
  }

  private timeAt(x: number): number | null {
    const p = this.pieceAt(x);
    const f = Math.min(Math.max((x - p.x0) / Math.max(p.w, 1), 0), 1);
    return p.t0 + f * (p.t1 - p.t0);
  }

  private titleAt(x: number): string {
    const p = this.pieceAt(x);
    if (p.events < 0) {
      return this.pieces.length > 1
        ? "Event density over the profile's dense part (the pieces across the breaks are events on a far clock): click or drag to move there"
        : "Event density over the whole profile: click or drag to move there";
    }
    const dense = this.pieces.find((q) => q.events < 0)!;
    const away =
      p.t1 <= dense.t0 ? `${formatDuration(dense.t0 - p.t1)} before` : `${formatDuration(p.t0 - dense.t1)} after`;
    return `${p.events.toLocaleString("en-US")} events on a far clock, ${away} the rest: click to go there`;
  }

  /** Draw the density, the window `view` and the findings' `marks`; hidden without bins. */
  draw(
    data: OverviewData | undefined,
    view: Range,
    width: number,
    dpr: number,
    th: Theme,
    marks: FindingMark[] = [],
  ): void {
    const bins = data?.bins ?? [];
    const show = bins.length > 0;
    this.el.style.display = show ? "" : "none";
    (this.el.previousElementSibling as HTMLElement | null)?.style.setProperty("display", show ? "" : "none");
    this.marks = marks;
    if (!show) {
      this.drawnMarks = [];
      return;
    }
    this.width = width;
    this.pieces = layoutPieces(data!, width);
    // The marks get a band of their own above the density: the window's box never covers them.
    const band = this.placeMarks();
    const c = this.el;
    if (c.width !== Math.round(width * dpr) || c.height !== Math.round((OVERVIEW_H + band) * dpr)) {
      c.width = Math.round(width * dpr);
      c.height = Math.round((OVERVIEW_H + band) * dpr);
      c.style.width = `${width}px`;
      c.style.height = `${OVERVIEW_H + band}px`;
    }
    const ctx = c.getContext("2d")!;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, OVERVIEW_H + band);
    if (band) {
      this.drawMarks(ctx, th);
      ctx.setTransform(dpr, 0, 0, dpr, 0, band * dpr);
    }
    ctx.fillStyle = th.header;
    for (const p of this.pieces) ctx.fillRect(p.x0, 0, p.w, OVERVIEW_H);
    // Square-root heights: a burst of a million events must not flatten a quiet phase to nothing.
    let top = 0;
    for (const b of bins) top = Math.max(top, b);
    const scale = top > 0 ? (OVERVIEW_H - 3) / Math.sqrt(top) : 0;
    const dense = this.pieces.find((p) => p.events < 0)!;
    const bw = dense.w / bins.length;
    ctx.fillStyle = th.muted;
    for (let i = 0; i < bins.length; i++) {
      if (bins[i] <= 0) continue;
      const hgt = Math.max(Math.sqrt(bins[i]) * scale, 1);
      ctx.fillRect(dense.x0 + i * bw, OVERVIEW_H - hgt, Math.max(bw - 0.5, 0.5), hgt);
    }
    for (const p of this.pieces) {
      if (p.events < 0) continue;
      // A cluster as one block, as high as its events would stand in one of the dense part's bins.
      const hgt = Math.min(Math.max(Math.sqrt(p.events) * scale, 3), OVERVIEW_H - 3);
      ctx.fillRect(p.x0 + 2, OVERVIEW_H - hgt, Math.max(p.w - 4, 1), hgt);
    }
    // The breaks: two slanted strokes in each gap, as an axis break is drawn.
    ctx.strokeStyle = th.muted;
    ctx.lineWidth = 1.2;
    for (const p of this.pieces.slice(1)) {
      const mid = p.x0 - BREAK_W / 2;
      for (const dx of [-2.5, 2.5]) {
        ctx.beginPath();
        ctx.moveTo(mid + dx - 3, OVERVIEW_H - 3);
        ctx.lineTo(mid + dx + 3, 3);
        ctx.stroke();
      }
    }
    // The window, in each piece it reaches; one that falls in a break marks the break's edge.
    ctx.fillStyle = th.accent;
    ctx.strokeStyle = th.accent;
    let marked = false;
    for (const p of this.pieces) {
      const a = Math.max(view.t0, p.t0);
      const b = Math.min(view.t1, p.t1);
      if (b < a) continue;
      marked = true;
      this.mark(ctx, this.xIn(p, a), this.xIn(p, b), p);
    }
    if (!marked) {
      const x = this.xOf((view.t0 + view.t1) / 2);
      this.mark(ctx, x - 1, x + 1, this.pieceAt(x));
    }
  }

  /** The findings' ranges in x, packed into lanes: their band's height (0 without marks). */
  private placeMarks(): number {
    const xs = this.marks.map((m) => {
      let x0 = this.xOf(m.t0);
      let x1 = this.xOf(Math.max(m.t1, m.t0));
      if (x1 - x0 < MIN_MARK_W) {
        const mid = (x0 + x1) / 2;
        [x0, x1] = [mid - MIN_MARK_W / 2, mid + MIN_MARK_W / 2];
      }
      return { x0: Math.max(x0, 0), x1: Math.min(x1, this.width), severity: m.severity };
    });
    const lanes = packLanes(xs);
    this.drawnMarks = xs.map((x, i) => ({
      x0: x.x0,
      x1: x.x1,
      y0: laneTop(lanes[i]),
      y1: laneTop(lanes[i]) + LANE_H,
      index: i,
    }));
    return xs.length ? laneTop(Math.max(...lanes) + 1) : 0;
  }

  /** The findings' ranges in their band above the density, each in its severity's colour. */
  private drawMarks(ctx: CanvasRenderingContext2D, th: Theme): void {
    // Wider first: a narrow mark sharing the last lane stays visible on top of a wide one.
    const order = this.drawnMarks.slice().sort((a, b) => b.x1 - b.x0 - (a.x1 - a.x0));
    for (const d of order) {
      ctx.fillStyle = severityColor(this.marks[d.index].severity, th.dark);
      ctx.fillRect(d.x0, d.y0, Math.max(d.x1 - d.x0, 1), LANE_H);
    }
  }

  private mark(ctx: CanvasRenderingContext2D, xa: number, xb: number, p: Piece): void {
    const x0 = Math.max(Math.min(xa, p.x0 + p.w - 2), p.x0);
    const w = Math.max(Math.min(xb, p.x0 + p.w) - x0, 2); // a window narrower than a pixel still shows
    ctx.globalAlpha = 0.25;
    ctx.fillRect(x0, 0, w, OVERVIEW_H);
    ctx.globalAlpha = 1;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(x0 + 0.75, 0.75, w - 1.5, OVERVIEW_H - 1.5);
  }

  private xIn(p: Piece, t: number): number {
    return p.x0 + ((t - p.t0) / (p.t1 - p.t0 || 1)) * p.w;
  }

  /** The x (css px, from the strip's left) of a time: for tests. */
  xOf(t: number): number {
    const inside = this.pieces.find((p) => t >= p.t0 && t <= p.t1);
    if (inside) return this.xIn(inside, t);
    // In a break: its middle.
    const next = this.pieces.find((p) => p.t0 > t);
    return next ? next.x0 - BREAK_W / 2 : this.width;
  }
}
