// The hover tooltip. Names and arguments are profile text: set as textContent only.

import { h } from "../common/dom";
import type { CounterAtReply } from "../common/messages";
import { formatDuration, formatTime } from "../common/time";
import { FLAG_COARSE, FLAG_ERROR, FLAG_INCOMPLETE } from "./data";
import type { CounterInfo } from "./layout";
import { type SpanLine, spanLineParts } from "./pathspans";

/** A band of a job's critical path over a folded part (pathspans.ts): where, and the segments it stands for. */
export interface HoverSpan {
  index: number; // which band (tests read data-span)
  part: string; // the part's track label
  start: number;
  end: number;
  lines: SpanLine[];
}

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
  if (unit === "B/s") return `${bytes(v)}/s`;
  if (unit === "%") return `${v.toFixed(1)} %`;
  // Large plain values with an SI prefix, so a narrow label still reads: 12.3 G, not 12,345,678,901.
  const a = Math.abs(v);
  const si = a >= 1e12 ? [1e12, "T"] : a >= 1e9 ? [1e9, "G"] : a >= 1e6 ? [1e6, "M"] : a >= 1e4 ? [1e3, "k"] : null;
  const text = si
    ? `${(v / (si[0] as number)).toFixed(2)} ${si[1]}`
    : v.toLocaleString(undefined, { maximumFractionDigits: 3 });
  return unit && unit !== "count" ? `${text} ${unit}` : text;
}

export class Tooltip {
  readonly el = h("div", { class: "nw-tooltip" });
  private row = -1;
  private shown = ""; // what the tooltip shows: merged items share a row, so the row alone is not enough
  private argsFor = -1;
  private counter: CounterInfo | null = null;
  private pointer = 0; // the time under the pointer, for counter values
  private at: [number, number] = [0, 0]; // where it was placed: arguments arriving later grow it

  /** The box the tooltip keeps inside (the widget on the page). */
  constructor(private bounds?: () => DOMRect) {}

  showItem(it: HoverItem, cx: number, cy: number): void {
    this.counter = null;
    const key = `${it.row}|${it.start}|${it.end}|${it.count}`;
    if (key !== this.shown) {
      this.shown = key;
      delete this.el.dataset.span;
      this.row = it.row;
      this.argsFor = -1;
      delete this.el.dataset.argsRow;
      const lines: Node[] = [h("div", { class: "nw-tt-name", text: it.name })];
      if (it.flags & FLAG_COARSE)
        lines.push(
          h("div", {
            class: "nw-tt-note",
            text:
              it.count > 1
                ? `${it.count.toLocaleString()} events merged in this export (past its size budget); the longest is named. Zooming in does not split them.`
                : "Kept without its details in this export (past its size budget).",
          }),
        );
      else if (it.count > 1)
        lines.push(
          h("div", {
            class: "nw-tt-note",
            text: `${it.count.toLocaleString()} events merged at this zoom; the longest is named. Zoom in to see each.`,
          }),
        );
      lines.push(
        h("div", { text: `start ${formatTime(it.start)} · duration ${formatDuration(it.end - it.start)}` }),
        h("div", { class: "nw-tt-track", text: it.track }),
      );
      if (it.flags & FLAG_ERROR) lines.push(h("div", { class: "nw-tt-error", text: "error" }));
      if (it.flags & FLAG_INCOMPLETE)
        lines.push(h("div", { class: "nw-tt-error", text: "never completed (hang, or the capture ended first)" }));
      lines.push(h("div", { class: "nw-tt-args" }));
      this.el.replaceChildren(...lines);
    }
    this.place(cx, cy);
  }

  /** A job's path where it runs through a folded part: its segments there by kind and worker (not the density
   * run the band is drawn over). */
  showSpan(span: HoverSpan, cx: number, cy: number): void {
    this.counter = null;
    const key = `span|${span.index}|${span.part}|${span.start}|${span.end}`;
    if (key !== this.shown) {
      this.shown = key;
      this.row = -1;
      this.argsFor = -1;
      delete this.el.dataset.argsRow;
      this.el.dataset.span = String(span.index);
      const segments = span.lines.reduce((n, l) => n + l.count, 0);
      const lines: Node[] = [
        h("div", { class: "nw-tt-name", text: `critical path through ${span.part}` }),
        h("div", {
          text: `start ${formatTime(span.start)} · duration ${formatDuration(span.end - span.start)} · ${segments.toLocaleString()} segment${segments === 1 ? "" : "s"}`,
        }),
      ];
      for (const l of span.lines) {
        const [what, where] = spanLineParts(l);
        lines.push(
          h(
            "div",
            {
              class: "nw-tt-seg",
              attrs: {
                "data-kind": l.kind,
                "data-worker": l.worker,
                "data-ns": String(l.ns),
                "data-count": String(l.count),
              },
            },
            [
              h("span", { class: "nw-tt-key", text: l.kind }),
              h("span", { text: what.slice(l.kind.length) }),
              h("div", { class: "nw-tt-track", text: where }),
            ],
          ),
        );
      }
      lines.push(
        h("div", {
          class: "nw-tt-note",
          text: "The path's segments in this part, summed by kind and worker (its track once the part is open). Click to load its events.",
        }),
      );
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
    this.el.dataset.argsRow = String(row); // tests wait on it: the tooltip has its final size
    const box = this.el.querySelector(".nw-tt-args");
    if (!box) return;
    box.replaceChildren(
      ...Object.entries(args).map(([k, v]) =>
        h("div", {}, [h("span", { class: "nw-tt-key", text: `${k}: ` }), h("span", { text: v })]),
      ),
    );
    this.place(...this.at);
  }

  showCounter(series: CounterInfo, t: number, cx: number, cy: number): void {
    this.pointer = t;
    if (this.counter?.key !== series.key) {
      this.row = -1;
      this.shown = "";
      delete this.el.dataset.span;
      this.counter = series;
      this.el.replaceChildren(
        h("div", { class: "nw-tt-name", text: series.label }),
        h("div", { class: "nw-tt-value" }),
      );
    }

    this.place(cx, cy);
  }

  setCounter(msg: CounterAtReply): void {
    if (!this.counter || msg.key !== this.counter.key) return;
    const box = this.el.querySelector(".nw-tt-value");
    if (!box) return;
    const unit = this.counter.unit;
    // The value in force at the pointer's time; the sample it comes from may be much earlier.
    const at = typeof msg.at === "number" ? msg.at : this.pointer;
    const parts: Node[] = [
      h("div", {
        text:
          msg.value === undefined
            ? `no sample at ${formatTime(at)}`
            : `${formatValue(msg.value, unit)} at ${formatTime(at)}`,
      }),
    ];
    if (msg.value !== undefined)
      parts.push(h("div", { class: "nw-tt-note", text: `sampled at ${formatTime(msg.t!)}` }));
    for (const [k, v] of Object.entries((msg.breakdown ?? {}) as Record<string, number>)) {
      parts.push(
        h("div", {}, [h("span", { class: "nw-tt-key", text: `${k}: ` }), h("span", { text: formatValue(v, "B") })]),
      );
    }
    box.replaceChildren(...parts);
    this.place(...this.at);
  }

  /**
   * Beside the pointer and inside the widget (and the window): below and right of it when that
   * fits, else flipped above or left, else against the edge; taller than the room, it is cut there.
   */
  private place(cx: number, cy: number): void {
    const el = this.el;
    this.at = [cx, cy];
    el.style.display = "block";
    const b = this.bounds?.() ?? new DOMRect(0, 0, window.innerWidth, window.innerHeight);
    const left = Math.max(b.left, 0);
    const top = Math.max(b.top, 0);
    const right = Math.min(b.right, window.innerWidth);
    const bottom = Math.min(b.bottom, window.innerHeight);
    el.style.maxHeight = `${Math.max(bottom - top - 4, 60)}px`;
    el.style.maxWidth = `${Math.max(Math.min(480, right - left - 4), 120)}px`;
    const w = el.offsetWidth;
    const h = el.offsetHeight;
    const gap = 14;
    let x = cx + gap + w <= right ? cx + gap : cx - gap - w;
    let y = cy + gap + h <= bottom ? cy + gap : cy - gap - h;
    x = Math.min(Math.max(x, left), right - w);
    y = Math.min(Math.max(y, top), bottom - h);
    el.style.left = `${Math.max(x, 0)}px`;
    el.style.top = `${Math.max(y, 0)}px`;
  }

  hide(): void {
    this.el.style.display = "none";
    delete this.el.dataset.span;
    this.row = -1;
    this.shown = "";
    this.counter = null;
  }
}
