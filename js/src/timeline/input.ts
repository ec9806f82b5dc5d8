// Mouse, wheel and keyboard on the timeline: zoom, pan, brush, hover, click, search keys.

import { keepKeysFromLab, withModifier } from "../common/dom";
import type { LayoutState } from "./layout";
import type { Tooltip } from "./tooltip";
import { pan, type Range, zoomAt } from "./viewmath";

export interface Drag {
  x: number;
  y: number;
  t0: number;
  view: Range;
  mode: "pan" | "brush";
  moved: boolean;
}

/** What the input handlers read and call on the view (TimelineView). */
export interface InputHost {
  readonly root: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  readonly axis: HTMLCanvasElement;
  readonly scroll: HTMLElement;
  readonly searchInput: HTMLInputElement;
  readonly filterInput: HTMLInputElement;
  readonly tooltip: Tooltip;
  view: Range;
  drag: Drag | null;
  mouse: { x: number; y: number } | null;
  brushLocal: [number, number] | null;
  layout: LayoutState;
  plotWidth(): number;
  timeAt(x: number): number;
  home(): [number, number];
  fit(): void;
  readonly help: { open: boolean; toggle(on?: boolean): void };
  setView(v: Range): void;
  setBrush(b: [number, number] | null): void;
  hover(x: number, y: number, cx: number, cy: number): void;
  click(x: number, y: number): void;
  select(row: number): void;
  request(): void;
  relayout(): void;
  search(text: string): void;
  find(direction: 1 | -1): void;
}

export function bindInput(v: InputHost): void {
  const c = v.canvas;
  const local = (e: MouseEvent) => {
    const r = c.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  // Perfetto's convention: the wheel scrolls the tracks, Ctrl+wheel (a trackpad's pinch) zooms at
  // the pointer, Shift+wheel and sideways swipes pan. Over the time axis the wheel zooms.
  const wheel = (e: WheelEvent, zoom: boolean) => {
    const { x } = local(e);
    const w = v.view.t1 - v.view.t0;
    const sideways = Math.abs(e.deltaX) > Math.abs(e.deltaY);
    if (zoom && !sideways) {
      e.preventDefault();
      // A pinch sends small deltas with ctrlKey set; a wheel's notch is about 100 (with or without Ctrl).
      const rate = e.ctrlKey && Math.abs(e.deltaY) < 50 ? 0.01 : 0.0025;
      const factor = Math.exp(Math.max(Math.min(e.deltaY, 200), -200) * rate);
      v.setView(zoomAt(v.view, v.timeAt(x), factor));
    } else if (e.shiftKey || sideways) {
      e.preventDefault();
      const d = e.shiftKey && e.deltaX === 0 ? e.deltaY : e.deltaX;
      v.setView(pan(v.view, (d / v.plotWidth()) * w));
    } else {
      // The tracks scroll; at either end the page scrolls on, as a notebook user expects.
      const before = v.scroll.scrollTop;
      v.scroll.scrollTop += e.deltaMode === 1 ? e.deltaY * 18 : e.deltaY;
      if (v.scroll.scrollTop !== before) e.preventDefault();
    }
  };
  c.addEventListener("wheel", (e) => wheel(e, e.ctrlKey || e.metaKey), { passive: false });
  v.axis.addEventListener("wheel", (e) => wheel(e, true), { passive: false });
  const startDrag = (e: PointerEvent, mode: "pan" | "brush", target: HTMLElement) => {
    const p = local(e);
    v.root.focus({ preventScroll: true });
    target.setPointerCapture(e.pointerId);
    v.drag = { x: p.x, y: p.y, t0: v.timeAt(p.x), view: { ...v.view }, mode, moved: false };
  };
  c.addEventListener("pointerdown", (e) => startDrag(e, e.shiftKey ? "brush" : "pan", c));
  v.axis.addEventListener("pointerdown", (e) => startDrag(e, "brush", v.axis));
  const move = (e: PointerEvent) => {
    const p = local(e);
    v.mouse = p;
    const d = v.drag;
    if (!d) return v.hover(p.x, p.y, e.clientX, e.clientY);
    if (Math.abs(p.x - d.x) > 3 || Math.abs(p.y - d.y) > 3) d.moved = true;
    if (!d.moved) return;
    v.tooltip.hide();
    if (d.mode === "pan") {
      const dt = ((d.x - p.x) / v.plotWidth()) * (d.view.t1 - d.view.t0);
      v.setView(pan(d.view, dt));
      v.scroll.scrollTop += d.y - p.y;
      d.y = p.y;
    } else {
      v.brushLocal = [Math.min(d.t0, v.timeAt(p.x)), Math.max(d.t0, v.timeAt(p.x))];
      v.request();
    }
  };
  const up = (e: PointerEvent, target: HTMLElement) => {
    const d = v.drag;
    v.drag = null;
    if (target.hasPointerCapture(e.pointerId)) target.releasePointerCapture(e.pointerId);
    if (!d) return;
    if (d.mode === "brush") {
      if (d.moved && v.brushLocal) v.setBrush(v.brushLocal);
      else if (!d.moved) v.setBrush(null);
    } else if (!d.moved) {
      const p = local(e);
      v.click(p.x, p.y);
    }
  };
  c.addEventListener("pointermove", move);
  v.axis.addEventListener("pointermove", (e) => v.drag && move(e));
  c.addEventListener("pointerup", (e) => up(e, c));
  v.axis.addEventListener("pointerup", (e) => up(e, v.axis));
  c.addEventListener("pointerleave", () => {
    v.mouse = null;
    v.tooltip.hide();
    v.request();
  });
  v.scroll.addEventListener("scroll", () => v.request());
  v.root.addEventListener("keydown", (e) => key(v, e));
  keepKeysFromLab(v.root);
  v.searchInput.addEventListener("input", () => v.search(v.searchInput.value));
  v.searchInput.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      v.find(e.shiftKey ? -1 : 1);
    }
  });
  v.filterInput.addEventListener("input", () => {
    v.layout.filter = v.filterInput.value;
    v.relayout();
  });
}

function key(v: InputHost, e: KeyboardEvent): void {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
  if (withModifier(e)) return; // Ctrl+S saves the notebook; it does not zoom out as S does

  const w = v.view.t1 - v.view.t0;
  const at = v.mouse ? v.timeAt(v.mouse.x) : (v.view.t0 + v.view.t1) / 2;
  const k = e.key.toLowerCase();
  let handled = true;
  if (k === "?") {
    v.help.toggle();
    e.preventDefault();
    return;
  }
  if (k === "escape" && v.help.open) {
    v.help.toggle(false);
    e.preventDefault();
    return;
  }
  if (k === "w" || k === "arrowup" || k === "+" || k === "=") v.setView(zoomAt(v.view, at, 0.7));
  else if (k === "s" || k === "arrowdown" || k === "-") v.setView(zoomAt(v.view, at, 1 / 0.7));
  else if (k === "a" || k === "arrowleft") v.setView(pan(v.view, -0.2 * w));
  else if (k === "d" || k === "arrowright") v.setView(pan(v.view, 0.2 * w));
  else if (k === "0") v.setView({ t0: v.home()[0], t1: v.home()[1] });
  else if (k === "escape") {
    if (v.brushLocal) v.setBrush(null);
    else v.select(-1);
  } else if (k === "f") v.fit();
  else handled = false;
  if (handled) e.preventDefault();
}
