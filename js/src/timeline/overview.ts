// The overview strip above the tracks: event density over the whole profile, the shown window
// marked; a click or a drag moves the window there. Its data is one small histogram per
// profile (the `overview` trait), so it costs nothing per frame.

import type { Theme } from "../common/colors";
import { h } from "../common/dom";
import type { Range } from "./viewmath";

export const OVERVIEW_H = 24;

export class Overview {
  readonly el = h("canvas", { class: "nw-overview", title: "Event density over the whole profile: click or drag to move there" });
  private dragging = false;
  private width = 1;
  private span: [number, number] = [0, 1];

  constructor(private moveTo: (t: number) => void) {
    const at = (e: PointerEvent) => {
      const r = this.el.getBoundingClientRect();
      const f = Math.min(Math.max((e.clientX - r.left) / Math.max(r.width, 1), 0), 1);
      this.moveTo(this.span[0] + f * (this.span[1] - this.span[0]));
    };
    this.el.addEventListener("pointerdown", (e) => {
      this.dragging = true;
      this.el.setPointerCapture?.(e.pointerId);
      at(e);
      e.preventDefault();
    });
    this.el.addEventListener("pointermove", (e) => this.dragging && at(e));
    const stop = () => (this.dragging = false);
    this.el.addEventListener("pointerup", stop);
    this.el.addEventListener("pointercancel", stop);
  }

  /** Draw `bins` (event counts over `span`, equal widths) and the window `view`; hidden without bins. */
  draw(bins: number[] | undefined, span: [number, number], view: Range, width: number, dpr: number, th: Theme): void {
    const show = !!bins && bins.length > 0;
    this.el.style.display = show ? "" : "none";
    (this.el.previousElementSibling as HTMLElement | null)?.style.setProperty("display", show ? "" : "none");
    if (!show) return;
    this.width = width;
    this.span = span;
    const c = this.el;
    if (c.width !== Math.round(width * dpr) || c.height !== Math.round(OVERVIEW_H * dpr)) {
      c.width = Math.round(width * dpr);
      c.height = Math.round(OVERVIEW_H * dpr);
      c.style.width = `${width}px`;
      c.style.height = `${OVERVIEW_H}px`;
    }
    const ctx = c.getContext("2d")!;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = th.header;
    ctx.fillRect(0, 0, width, OVERVIEW_H);
    // Square-root heights: a burst of a million events must not flatten a quiet phase to nothing.
    let top = 0;
    for (const b of bins!) top = Math.max(top, b);
    const scale = top > 0 ? (OVERVIEW_H - 3) / Math.sqrt(top) : 0;
    const bw = width / bins!.length;
    ctx.fillStyle = th.muted;
    for (let i = 0; i < bins!.length; i++) {
      if (bins![i] <= 0) continue;
      const hgt = Math.max(Math.sqrt(bins![i]) * scale, 1);
      ctx.fillRect(i * bw, OVERVIEW_H - hgt, Math.max(bw - 0.5, 0.5), hgt);
    }
    const full = span[1] - span[0] || 1;
    const xa = ((view.t0 - span[0]) / full) * width;
    const xb = ((view.t1 - span[0]) / full) * width;
    const x0 = Math.max(Math.min(xa, width - 2), 0);
    const w = Math.max(Math.min(xb, width) - x0, 2); // a window narrower than a pixel still shows
    ctx.fillStyle = th.accent;
    ctx.globalAlpha = 0.25;
    ctx.fillRect(x0, 0, w, OVERVIEW_H);
    ctx.globalAlpha = 1;
    ctx.strokeStyle = th.accent;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(x0 + 0.75, 0.75, w - 1.5, OVERVIEW_H - 1.5);
  }

  /** The x (css px, from the strip's left) of a time: for tests. */
  xOf(t: number): number {
    return ((t - this.span[0]) / (this.span[1] - this.span[0] || 1)) * this.width;
  }
}
