// The brushed range's summary table: count, total and mean duration per name or per track.

import { button, h } from "../common/dom";
import { formatDuration } from "../common/time";

export interface SummaryRow {
  key: string;
  count: number;
  total: number;
  mean: number;
}

export interface RangeSummary {
  start: number;
  end: number;
  events: number;
  by_name: SummaryRow[];
  by_track: SummaryRow[];
  by_name_more: number;
  by_track_more: number;
  note?: string; // a caveat about the numbers (an export's merged blocks)
}

export class SummaryPanel {
  readonly el = h("div", { class: "nw-summary" });
  private mode: "by_name" | "by_track" = "by_name";
  private data: RangeSummary | null = null;

  constructor(private onClear: () => void) {}

  set(data: RangeSummary | null): void {
    this.data = data && data.events !== undefined ? data : null;
    this.render();
  }

  private render(): void {
    this.el.replaceChildren();
    const d = this.data;
    this.el.style.display = d ? "" : "none";
    if (!d) return;
    const head = h("div", { class: "nw-summary-head" }, [
      h("span", {
        class: "nw-summary-title",
        text: `Selected range ${formatDuration(d.end - d.start)} · ${d.events.toLocaleString()} events`,
      }),
      button(
        "By name",
        "Group the summary by event name",
        () => {
          this.mode = "by_name";
          this.render();
        },
        this.mode === "by_name" ? "nw-btn nw-on" : "nw-btn",
      ),
      button(
        "By track",
        "Group the summary by track",
        () => {
          this.mode = "by_track";
          this.render();
        },
        this.mode === "by_track" ? "nw-btn nw-on" : "nw-btn",
      ),
      button("Clear", "Clear the selected range (Esc)", this.onClear),
    ]);
    const rows = d[this.mode] ?? [];
    const table = h("table", { class: "nw-table" }, [
      h("thead", {}, [
        h("tr", {}, [
          h("th", { text: this.mode === "by_name" ? "Name" : "Track" }),
          h("th", { text: "Count" }),
          h("th", { text: "Total" }),
          h("th", { text: "Mean" }),
        ]),
      ]),
      h(
        "tbody",
        {},
        rows.map((r) =>
          h("tr", {}, [
            h("td", { text: r.key, title: r.key }),
            h("td", { text: r.count.toLocaleString() }),
            h("td", { text: formatDuration(r.total) }),
            h("td", { text: formatDuration(r.mean) }),
          ]),
        ),
      ),
    ]);
    const more = d[`${this.mode}_more` as "by_name_more"];
    this.el.append(head, h("div", { class: "nw-summary-body" }, [table]));
    if (more)
      this.el.append(
        h("div", { class: "nw-note", text: `and ${more} more (the ${rows.length} with the largest total are shown)` }),
      );
    if (d.note) this.el.append(h("div", { class: "nw-note", text: d.note }));
  }
}
