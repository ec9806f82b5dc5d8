// The hover tooltip. Names and arguments are profile text: set as textContent only.

import { h } from "../common/dom";
import { formatDuration } from "../common/time";
import { FLAG_COARSE, FLAG_ERROR, FLAG_INCOMPLETE } from "./data";
import type { CounterInfo } from "./layout";

export interface HoverItem {
  name: string;
  start: number;
  end: number;
  count: number;
  flags: number;
  track: string;
  row: number;
}

function bytes(v: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i ? 2 : 0)} ${units[i]}`;
}

export function formatValue(v: number, unit: string): string {
  if (unit === "B") return bytes(v);
  if (unit === "%") return `${v.toFixed(1)} %`;
  return v.toLocaleString(undefined, { maximumFractionDigits: 3 });
}

export class Tooltip {
  readonly el = h("div", { class: "nw-tooltip" });
  private row = -1;
  private shown = ""; // what the tooltip shows: merged items share a row, so the row alone is not enough
  private argsFor = -1;
  private counter: CounterInfo | null = null;

  showItem(it: HoverItem, cx: number, cy: number): void {
    this.counter = null;
    const key = `${it.row}|${it.start}|${it.end}|${it.count}`;
    if (key !== this.shown) {
      this.shown = key;
      this.row = it.row;
      this.argsFor = -1;
      const lines: Node[] = [h("div", { class: "nw-tt-name", text: it.name })];
      if (it.flags & FLAG_COARSE) lines.push(h("div", { class: "nw-tt-note", text: it.count > 1
        ? `${it.count.toLocaleString()} events merged in this export (past its size budget); the longest is named. Zooming in does not split them.`
        : "Kept without its details in this export (past its size budget)." }));
      else if (it.count > 1) lines.push(h("div", { class: "nw-tt-note", text: `${it.count.toLocaleString()} events merged at this zoom; the longest is named. Zoom in to see each.` }));
      lines.push(
        h("div", { text: `start ${formatDuration(it.start)} · duration ${formatDuration(it.end - it.start)}` }),
        h("div", { class: "nw-tt-track", text: it.track }),
      );
      if (it.flags & FLAG_ERROR) lines.push(h("div", { class: "nw-tt-error", text: "error" }));
      if (it.flags & FLAG_INCOMPLETE) lines.push(h("div", { class: "nw-tt-error", text: "never completed (hang, or the capture ended first)" }));
      lines.push(h("div", { class: "nw-tt-args" }));
      this.el.replaceChildren(...lines);
    }
    this.place(cx, cy);
  }

  needsArgs(row: number): boolean {
    return this.argsFor !== row;
  }

  setArgs(row: number, args: Record<string, string>): void {
    if (row !== this.row) return;
    this.argsFor = row;
    const box = this.el.querySelector(".nw-tt-args");
    if (!box) return;
    box.replaceChildren(...Object.entries(args).map(([k, v]) =>
      h("div", {}, [h("span", { class: "nw-tt-key", text: `${k}: ` }), h("span", { text: v })])));
  }

  showCounter(series: CounterInfo, cx: number, cy: number): void {
    if (this.counter?.key !== series.key) {
      this.row = -1;
      this.shown = "";
      this.counter = series;
      this.el.replaceChildren(h("div", { class: "nw-tt-name", text: series.label }), h("div", { class: "nw-tt-value" }));
    }

    this.place(cx, cy);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  setCounter(msg: any): void {
    if (!this.counter || msg.key !== this.counter.key) return;
    const box = this.el.querySelector(".nw-tt-value");
    if (!box) return;
    const unit = this.counter.unit;
    const parts: Node[] = [h("div", { text: msg.value === undefined ? "no sample" : `${formatValue(msg.value, unit)} at ${formatDuration(msg.t)}` })];
    for (const [k, v] of Object.entries((msg.breakdown ?? {}) as Record<string, number>)) {
      parts.push(h("div", {}, [h("span", { class: "nw-tt-key", text: `${k}: ` }), h("span", { text: formatValue(v, "B") })]));
    }
    box.replaceChildren(...parts);
  }

  private place(cx: number, cy: number): void {
    this.el.style.display = "block";
    const w = this.el.offsetWidth;
    const x = cx + 14 + w > window.innerWidth ? cx - w - 10 : cx + 14;
    this.el.style.left = `${Math.max(x, 0) + window.scrollX}px`;
    this.el.style.top = `${cy + 14 + window.scrollY}px`;
  }

  hide(): void {
    this.el.style.display = "none";
    this.row = -1;
    this.shown = "";
    this.counter = null;
  }
}
