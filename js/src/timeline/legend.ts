// The colour legend: each colour in view (event names, or the `color_by` values) with its event
// count in the visible window, biggest first; a click highlights that colour's events (the others
// are dimmed), a second click clears it. Names are profile text: set as textContent only.
// Refills are throttled, so a row on screen may predate the last pick: a click asks the owner to
// toggle its key against the live pick rather than deciding from the pick the row was drawn with.

import type { Theme } from "../common/colors";
import { h } from "../common/dom";
import type { Items } from "./data";
import { colorKeyOf, colorOf } from "./render";
import type { Range } from "./viewmath";

const MAX_ENTRIES = 300;

export class Legend {
  readonly el = h("div", { class: "nw-legend" });
  private key = "";
  private timer = 0;
  private pending: (() => void) | null = null;

  // `by`: what the colours stand for when they are not names ("layer"...), if the view says.
  constructor(
    private onToggle: (key: string) => void,
    private by: () => string | null = () => null,
  ) {
    this.el.style.display = "none";
  }

  get open(): boolean {
    return this.el.style.display !== "none";
  }

  toggle(on = !this.open): void {
    this.el.style.display = on ? "" : "none";
    this.key = "";
  }

  /** Refresh the entries for what is in view: at most every 200 ms while zooming, the last view always. */
  update(
    items: Items | null,
    names: string[],
    view: Range,
    visible: { has(track: number): boolean },
    pick: string | null,
    theme: Theme,
  ): void {
    if (!this.open) return;
    this.pending = () => this.fill(items, names, { ...view }, visible, pick, theme);
    if (this.timer) return;
    this.pending();
    this.pending = null;
    this.timer = window.setTimeout(() => {
      this.timer = 0;
      if (this.pending) this.pending();
      this.pending = null;
    }, 200);
  }

  private fill(
    items: Items | null,
    names: string[],
    view: Range,
    visible: { has(track: number): boolean },
    pick: string | null,
    theme: Theme,
  ): void {
    const counts = new Map<string, number>();
    if (items) {
      for (let i = 0; i < items.n; i++) {
        if (items.end[i] < view.t0 || items.start[i] > view.t1 || !visible.has(items.track[i])) continue;
        const k = colorKeyOf(items, names, i);
        counts.set(k, (counts.get(k) ?? 0) + items.count[i]);
      }
    }
    const entries = [...counts].sort((a, b) => b[1] - a[1]);
    const key = `${entries.map((e) => e.join("=")).join("|")}|${pick}|${theme.dark}`;
    if (key === this.key) return;
    this.key = key;
    const by = items?.colorKeys ? (this.by() ?? "colour key") : "name";
    const rows = entries.slice(0, MAX_ENTRIES).map(([k, n]) => {
      const row = h(
        "div",
        { class: `nw-legend-entry${k === pick ? " nw-on" : ""}`, title: `${k}: click to highlight its events` },
        [
          h("span", { class: "nw-legend-swatch" }),
          h("span", { class: "nw-legend-name", text: k }),
          h("span", { class: "nw-legend-count", text: n.toLocaleString() }),
        ],
      );
      (row.firstChild as HTMLElement).style.background = colorOf(k, theme.dark);
      row.addEventListener("click", (e) => {
        e.stopPropagation();
        this.key = "";
        this.onToggle(k);
      });
      return row;
    });
    const more =
      entries.length > MAX_ENTRIES
        ? [h("div", { class: "nw-note", text: `and ${entries.length - MAX_ENTRIES} more` })]
        : [];
    this.el.replaceChildren(
      h("div", {
        class: "nw-legend-head",
        text: entries.length ? `Colours in view, by ${by} (events)` : "Nothing in view",
      }),
      ...rows,
      ...more,
    );
  }
}
