// One frame of the timeline: the canvases sized, the kernel asked for what the view lacks, the
// rows, items, counters and markers painted, the legend, the axis and the overview strip.

import { readTheme, type Theme } from "../common/colors";
import type { TimelineModel } from "../common/messages";
import { formatDuration } from "../common/time";
import { AXIS_H, drawAxis } from "./axis";
import { counterText } from "./counterscale";
import type { Items } from "./data";
import type { HierarchyPanel } from "./hierarchy";
import type { LabelPanel } from "./labels";
import { type CounterInfo, type Row, rowsIn, stickyGroups, type TrackInfo, totalHeight } from "./layout";
import type { Legend } from "./legend";
import type { Overview, OverviewData } from "./overview";
import { type Place, paint, type Scene } from "./render";
import type { Replies } from "./replies";
import type { Search } from "./search";
import type { AnalysisToggles } from "./toggles";
import type { Range } from "./viewmath";

export const LABEL_W = 260;

export interface Detail extends Place {
  id: string;
  upstream: Place[];
  downstream: Place[];
}

/** What a frame reads and sets on the view (TimelineView). */
export interface FrameHost {
  readonly model: TimelineModel;
  readonly root: HTMLElement;
  readonly scroll: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  readonly axis: HTMLCanvasElement;
  readonly corner: HTMLElement;
  readonly overview: Overview;
  readonly labels: LabelPanel;
  readonly legend: Legend;
  readonly tree: HierarchyPanel;
  readonly finder: Search;
  readonly toggles: AnalysisToggles;
  readonly replies: Replies;
  readonly frameTimes: number[];
  readonly rows: Row[];
  readonly view: Range;
  readonly items: Items | null;
  readonly counterData: Map<string, { t: Float64Array; v: Float64Array }>;
  readonly mouse: { x: number; y: number } | null;
  readonly brushLocal: [number, number] | null;
  readonly pick: string | null;
  theme: Theme;
  paintedTheme: string;
  lastDrawMs: number;
  plotWidth(): number;
  timeAt(x: number): number;
  tracks(): TrackInfo[];
  names(): string[];
}

/** Draw the view's current state: the rows, items, counters, markers, axis and overview strip. */
export function drawFrame(v: FrameHost): void {
  v.theme = readTheme(v.root);
  // Not laid out (a theme switch, a hidden tab): keep the canvas's size; the resize observer calls back.
  if (v.scroll.clientWidth <= LABEL_W) return;
  v.paintedTheme = `${v.theme.dark}${v.theme.background}`;
  const t = performance.now();
  const width = v.plotWidth();
  const height = Math.max(v.scroll.clientHeight, 20);
  const dpr = window.devicePixelRatio || 1;
  for (const [c, w, hgt] of [
    [v.canvas, width, height],
    [v.axis, width, AXIS_H],
  ] as const) {
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(hgt * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(hgt * dpr);
      c.style.width = `${w}px`;
      c.style.height = `${hgt}px`;
    }
  }
  v.replies.want({
    rows: v.rows,
    top: v.scroll.scrollTop,
    height,
    width,
    view: v.view,
    grouping: v.model.get("grouping"),
    revision: v.model.get("revision"),
  });
  const top = v.scroll.scrollTop;
  const onScreen = rowsIn(v.rows, top, top + height);
  const trackY = new Map<number, number>();
  for (const r of onScreen) if (r.kind === "track") trackY.set(r.track, r.y);
  const pointerT = v.mouse ? v.timeAt(v.mouse.x) : null;
  const pinned = stickyGroups(v.rows, top);
  v.labels.render(v.rows, v.tracks(), top, top + height, totalHeight(v.rows), pinned, (k) =>
    counterText(
      v.counterData.get(k),
      (v.model.get("counters") as CounterInfo[]).find((c) => c.key === k),
      v.view,
      pointerT,
    ),
  );
  const ctx = v.canvas.getContext("2d")!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const detail = v.model.get("selection_detail") as Detail | Record<string, never>;
  const scene: Scene = {
    view: { t0: v.view.t0, t1: v.view.t1, width },
    rows: onScreen,
    scrollTop: top,
    height,
    trackY,
    items: v.items && v.items.grouping === v.model.get("grouping") ? v.items : null,
    names: v.names(),
    theme: v.theme,
    match: v.finder.match,
    selection:
      "row" in detail
        ? {
            place: detail as Detail,
            upstream: (detail as Detail).upstream,
            downstream: (detail as Detail).downstream,
          }
        : null,
    brush: v.brushLocal,
    hoverRow: -1,
    counters: v.counterData,
    pick: v.pick,
    nodeMask: v.tree.mask,
    critical: v.toggles.criticalScene(),
    pointerT,
    pinned: pinned.length,
  };
  const { drawn, dimmed, jumps, spans } = paint(ctx, scene);
  v.root.dataset.dimmed = String(dimmed);
  v.root.dataset.jumps = String(jumps);
  v.root.dataset.spans = String(spans); // a job's path over its folded parts' tracks
  v.legend.update(scene.items, scene.names, v.view, trackY, v.pick, v.theme);
  if (!scene.items && v.replies.snapshot) ctx.drawImage(v.replies.snapshot, 0, 0, width, height);
  drawAxisAndStrip(v, width, dpr);
  v.lastDrawMs = performance.now() - t;
  v.frameTimes.push(v.lastDrawMs);
  if (v.frameTimes.length > 1000) v.frameTimes.splice(0, 500);
  if (drawn > 0 && !v.root.dataset.firstPaint) v.root.dataset.firstPaint = String(Date.now());
  const generation = Number(v.model.get("generation"));
  if (drawn > 0 && v.root.dataset.paintedGeneration !== String(generation)) {
    // The kernel waits for this before reading the rest of a drill-down's trace: the two shared the cores.
    v.root.dataset.paintedGeneration = String(generation);
    v.model.send({ type: "painted", generation });
  }
  v.root.dataset.drawn = String(drawn);
  v.root.dataset.drawMs = v.lastDrawMs.toFixed(2);
  v.root.dataset.view = `${v.view.t0},${v.view.t1}`;
}

function drawAxisAndStrip(v: FrameHost, width: number, dpr: number): void {
  drawAxis(v.axis, v.view, v.brushLocal, width, dpr, v.theme);
  v.overview.draw(
    v.model.get("overview") as OverviewData | undefined,
    v.view,
    width,
    dpr,
    v.theme,
    v.toggles.findingMarks(),
  );
  v.corner.textContent = `${formatDuration(v.view.t1 - v.view.t0)} shown`;
}
