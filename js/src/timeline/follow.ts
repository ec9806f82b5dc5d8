// The model's traits the timeline view follows: tracks and groupings, a retarget to another
// profile, the view and brush set from Python, the selection, the kernel's revisions, counters,
// height, errors, the analysis toggles, and the kernel's replies.

import type { Listen, TimelineModel } from "../common/messages";
import { anchorOf, sameTracks, scrollFor } from "./anchor";
import type { Items } from "./data";
import { type CounterInfo, defaultCollapsed, type LayoutState, type Row, type TrackInfo } from "./layout";
import type { Replies } from "./replies";
import type { RangeSummary, SummaryPanel } from "./summary";
import type { AnalysisToggles } from "./toggles";
import { clampView, type Range } from "./viewmath";

/** What following the model reads and calls on the view (TimelineView). */
export interface FollowHost {
  readonly model: TimelineModel;
  readonly root: HTMLElement;
  readonly scroll: HTMLElement;
  readonly groupingSelect: HTMLSelectElement;
  readonly summary: SummaryPanel;
  readonly replies: Replies;
  readonly toggles: AnalysisToggles;
  layout: LayoutState;
  readonly rows: Row[];
  view: Range;
  items: Items | null;
  brushLocal: [number, number] | null;
  relayout(): void;
  request(): void;
  fillGroupings(): void;
  reset(): void; // another profile shown
  renderHead(): void;
  span(): [number, number];
  bounds(): [number, number]; // where the view may go (an aligned partner's span too)
  readonly viewPending: boolean; // a view of the user's not yet told to the kernel
  readonly aligner: { update(): void };
  scrollToTrack(track: number): void;
  showError(text: string): void;
}

/** Listen (through `on`, whose listeners the view removes on destroy) and take the state there is now. */
export function followModel(v: FollowHost, on: Listen): void {
  const m = v.model;
  let grouping = m.get("grouping");
  let tracks = m.get("tracks") as TrackInfo[];
  let placed = ""; // the selection (row and grouping) last scrolled into view
  on("change:tracks", () => {
    v.groupingSelect.value = m.get("grouping");
    const now = m.get("tracks") as TrackInfo[];
    // The same grouping's tracks with other lanes (its preview swapped for every event): what is drawn
    // stays until the new reply replaces it (no blank frame), and the row at the top stays there.
    const kept = m.get("grouping") === grouping && sameTracks(tracks, now);
    const anchor = kept ? anchorOf(v.rows, v.scroll.scrollTop) : null;
    // Another grouping's rows: start at the top, not mid-way down a track with no label.
    if (m.get("grouping") !== grouping) v.scroll.scrollTop = 0;
    grouping = m.get("grouping");
    tracks = now;
    if (!kept) v.items = null; // other track numbers: held items would land on the wrong rows
    v.relayout();
    const top = anchor && scrollFor(v.rows, anchor);
    if (top !== null && top !== v.scroll.scrollTop) v.scroll.scrollTop = top;
  });
  on("change:grouping", () => (v.groupingSelect.value = m.get("grouping")));
  on("change:groupings", () => v.fillGroupings());
  on("change:generation", () => v.reset());
  for (const key of ["title", "notes", "strip", "loading", "status"]) on(`change:${key}`, () => v.renderHead());
  on("change:overview", () => v.request());
  on("change:aligned", () => v.aligner.update());
  on("change:view", () => {
    const r = m.get("view") as number[];
    // The user's own newer view wins over one the kernel sent before it heard of it.
    if (v.viewPending) return;
    if (Math.abs(r[0] - v.view.t0) > 1e-6 || Math.abs(r[1] - v.view.t1) > 1e-6) {
      v.view = clampView({ t0: r[0], t1: r[1] }, v.bounds());
      v.request();
    }
  });
  on("change:selection_detail", () => {
    const d = m.get("selection_detail") as { track?: number; row?: number };
    // A selection (or a grouping) new to the view is brought into it; the same one placed anew (its lane
    // known once a preview gives way to every event) leaves the scroll where the user put it.
    const key = `${d.row}|${m.get("grouping")}`;
    if (typeof d.track === "number" && d.track >= 0 && key !== placed) {
      placed = key;
      v.scrollToTrack(d.track);
    }
    v.request();
  });
  on("change:brush", () => {
    const b = m.get("brush") as number[];
    v.brushLocal = b.length === 2 ? [b[0], b[1]] : null;
    v.request();
  });
  on("change:brush_summary", () => v.summary.set((m.get("brush_summary") as RangeSummary) ?? null));
  on("change:revision", () => {
    v.replies.invalidate();
    v.request();
  });
  on("change:show_cpu", () => {
    v.layout.showCpu = !!m.get("show_cpu");
    v.relayout();
  });
  on("change:counters", () => {
    for (const p of defaultCollapsed(m.get("counters") as CounterInfo[])) v.layout.collapsed.add(p);
    v.relayout();
  });
  on("change:height", () => (v.root.style.height = `${m.get("height")}px`));
  on("change:error", () => v.showError(m.get("error")));
  v.toggles.bind(on);
  on("msg:custom", (msg, buffers) => v.replies.handle(msg, buffers));
  const b = m.get("brush") as number[];
  v.brushLocal = b.length === 2 ? [b[0], b[1]] : null;
  v.summary.set((m.get("brush_summary") as RangeSummary) ?? null);
  v.showError(m.get("error"));
}
