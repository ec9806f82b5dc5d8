// What the pointer over the plot does: a click selects the event under it, a hover names the
// event (its arguments asked of the kernel once) or the counter value under it.

import type { Items, Wish } from "./data";
import { hitTest } from "./hit";
import { type Row, rowsIn, type TrackInfo } from "./layout";
import { type PathSpans, spanAt, spanLines } from "./pathspans";
import type { Tooltip } from "./tooltip";
import type { Range } from "./viewmath";

/** What the pointer reads of the view (TimelineView). */
export interface PointerHost {
  readonly rows: Row[];
  readonly items: Items | null;
  readonly view: Range;
  readonly scroll: HTMLElement;
  readonly tooltip: Tooltip;
  plotWidth(): number;
  timeAt(x: number): number;
  tracks(): TrackInfo[];
  names(): string[];
  request(): void;
  select(row: number): void;
  ask(w: Wish): void; // a small side request (hover details, a counter value)
  pathSpans(): PathSpans | null; // a job's critical path over its folded parts, while it is shown
}

/** Select the event under (x, y) in the plot, or none. */
export function clickAt(v: PointerHost, x: number, y: number): void {
  const hit = hitTest(v.rows, v.items, v.view, v.plotWidth(), x, y + v.scroll.scrollTop);
  v.select(hit >= 0 ? v.items!.row[hit] : -1);
}

/** The tooltip for (x, y) in the plot, shown at (cx, cy) on the page. */
export function hoverAt(v: PointerHost, x: number, y: number, cx: number, cy: number): void {
  // Counters on screen mark the value under the pointer: draw again as it moves.
  if (v.rows.some((r) => r.kind === "counter")) v.request();
  const cy0 = y + v.scroll.scrollTop;
  // A job's path over a folded part: its band names the path's segments there, not the density under it.
  const path = v.pathSpans();
  const band = path ? spanAt(v.rows, path.spans, v.view, v.plotWidth(), x, cy0) : -1;
  if (path && band >= 0) {
    const k = band * 3;
    v.tooltip.showSpan(
      {
        index: band,
        part: v.tracks()[path.spans[k + 2]]?.label ?? "",
        start: path.spans[k],
        end: path.spans[k + 1],
        lines: spanLines(path.detail, band),
      },
      cx,
      cy,
    );
    return;
  }
  const it = v.items;
  const hit = hitTest(v.rows, it, v.view, v.plotWidth(), x, cy0);
  if (hit >= 0 && it) {
    const row = it.row[hit];
    const track = v.tracks()[it.track[hit]];
    v.tooltip.showItem(
      {
        name: v.names()[it.name[hit]] ?? "",
        start: it.start[hit],
        end: it.end[hit],
        count: it.count[hit],
        flags: it.flags[hit],
        track: track?.label ?? "",
        row,
      },
      cx,
      cy,
    );
    if (it.count[hit] === 1 && v.tooltip.needsArgs(row)) {
      v.ask({ type: "hover", key: `hover|${row}`, payload: { row } });
    }
    return;
  }
  const r = rowsIn(v.rows, cy0, cy0 + 1)[0];
  if (r && r.kind === "counter") {
    const t = v.timeAt(x);
    v.tooltip.showCounter(r.series, t, cx, cy);
    v.ask({ type: "counter_at", key: `c|${r.key}|${Math.round(t)}`, payload: { key: r.key, t } });
    return;
  }
  v.tooltip.hide();
}
