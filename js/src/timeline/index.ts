// The Timeline widget: state from the kernel's model, a canvas that draws viewport replies,
// and the interactions (zoom, pan, brush, hover, select, search, track management).

import { readTheme, type Theme } from "../common/colors";
import { button, h } from "../common/dom";
import type { Listen, ReplyListener, TimelineModel, ToBrowser } from "../common/messages";
import { formatTime } from "../common/time";
import { AlignBar } from "./align";
import { axisLabels } from "./axis";
import type { Channel, Items, Wish } from "./data";
import { followModel } from "./follow";
import { type Detail, drawFrame, LABEL_W } from "./frame";
import { renderHead } from "./head";
import { HelpOverlay } from "./help";
import { HierarchyPanel } from "./hierarchy";
import { bindInput, type Drag } from "./input";
import { LabelPanel } from "./labels";
import {
  buildRows,
  type CounterInfo,
  defaultCollapsed,
  groupPaths,
  moveTrack,
  newLayoutState,
  type Row,
  type TrackInfo,
  totalHeight,
} from "./layout";
import { Legend } from "./legend";
import { Overview } from "./overview";
import type { PathSpans } from "./pathspans";
import { clickAt, hoverAt } from "./pointer";
import { Replies } from "./replies";
import { Search } from "./search";
import { SummaryPanel } from "./summary";
import { watchTheme } from "./themewatch";
import { AnalysisToggles } from "./toggles";
import { fillToolbar } from "./toolbar";
import { Tooltip } from "./tooltip";
import { clampView, findingView, fitRange, type Range } from "./viewmath";

type Model = TimelineModel;

export class TimelineView {
  readonly root = h("div", { class: "nw-timeline", attrs: { tabindex: "0" } });
  private toolbar = h("div", { class: "nw-toolbar" });
  private status = h("span", { class: "nw-status" });
  private errorBar = h("div", { class: "nw-error" });
  private head = h("div", { class: "nw-head" });
  readonly axis = h("canvas", { class: "nw-axis" });
  readonly corner = h("div", { class: "nw-corner" });
  readonly overview = new Overview(
    (t) => {
      const w = this.view.t1 - this.view.t0;
      this.setView({ t0: t - w / 2, t1: t + w / 2 });
    },
    (t0, t1) => this.setView(findingView(t0, t1, this.home())),
  );
  readonly scroll = h("div", { class: "nw-scroll" });
  private plotCol = h("div", { class: "nw-plot-col" });
  readonly canvas = h("canvas", { class: "nw-canvas" });
  readonly labels: LabelPanel;
  readonly summary: SummaryPanel;
  readonly tree: HierarchyPanel; // a device trace's layer -> HLO -> NKI panel (hidden for other profiles)
  readonly tooltip = new Tooltip(() => this.root.getBoundingClientRect());
  readonly help = new HelpOverlay();
  readonly legend = new Legend(
    (k) => {
      this.pick = this.pick === k ? null : k;
      this.request();
    },
    () => this.tree.colorLabel(),
  );
  pick: string | null = null; // the legend's highlighted colour
  readonly searchInput = h("input", {
    class: "nw-input",
    attrs: { placeholder: "Search names (regex)", type: "search" },
  });
  readonly finder: Search = new Search({
    view: () => this.view,
    names: () => this.names(),
    selectedStart: () => (this.model.get("selection_detail") as Partial<Detail>).start,
    visibleTrackIds: () =>
      this.tracks()
        .map((_, i) => i)
        .filter((i) => !this.layout.hidden.has(i)),
    ask: (m) => this.ask(m),
    setView: (v) => this.setView(v),
    scrollToTrack: (t) => this.scrollToTrack(t),
    select: (r) => this.select(r),
    request: () => this.request(),
  });
  readonly filterInput = h("input", { class: "nw-input", attrs: { placeholder: "Filter tracks", type: "search" } });
  private hiddenBtn: HTMLButtonElement;
  readonly toggles: AnalysisToggles; // the critical path and the findings
  readonly aligner: AlignBar; // linked to another run's timeline on a step
  readonly groupingSelect = h("select", { class: "nw-select", title: "Grouping" });

  layout = newLayoutState();
  rows: Row[] = [];
  view: Range;
  theme: Theme;
  readonly replies: Replies; // the kernel's answers held, and the channels that ask for them
  private frame = 0;
  private viewSync = 0;
  private ticker: number;
  private resize: ResizeObserver;
  drag: Drag | null = null;
  brushLocal: [number, number] | null = null;
  lastDrawMs = 0;
  paintedTheme = ""; // the theme of the last frame (dark and background)
  readonly frameTimes: number[] = []; // ms per draw, for benchmarks
  mouse: { x: number; y: number } | null = null;
  private cleanup: (() => void)[] = [];

  constructor(
    readonly model: Model,
    el: HTMLElement,
  ) {
    this.theme = readTheme(el);
    const v = model.get("view") as number[];
    this.view = { t0: v[0], t1: v[1] };
    this.labels = new LabelPanel({
      toggle: (p) => this.toggle(p),
      hide: (t) => {
        this.layout.hidden.add(t);
        this.relayout();
      },
      move: (t, d) => {
        moveTrack(this.tracks(), this.layout, t, d);
        this.relayout();
      },
    });
    this.summary = new SummaryPanel(() => this.setBrush(null));
    this.tree = new HierarchyPanel(model, {
      setView: (v) => this.setView(v),
      request: () => this.request(),
      showLegend: () => {
        this.legend.toggle(true);
        this.request();
      },
    });
    this.hiddenBtn = button("Show hidden", "Show the tracks you hid", () => {
      this.layout.hidden.clear();
      this.relayout();
    });
    this.layout.showCpu = !!model.get("show_cpu");
    for (const p of defaultCollapsed(model.get("counters") as CounterInfo[])) this.layout.collapsed.add(p);
    this.replies = new Replies(model, this.canvas, this);
    this.toggles = new AnalysisToggles(model, this.root, () => this.request());
    this.aligner = new AlignBar(this);
    this.buildDom(el);
    // For tests and debugging from the console: the view behind a timeline element.
    (this.root as unknown as { __nwView: TimelineView }).__nwView = this;
    this.bindModel();
    bindInput(this);
    // The plot's own box: a range table closing, a theme's new fonts or a cell resized all change it.
    this.resize = new ResizeObserver(() => this.relayout());
    this.resize.observe(this.root);
    this.resize.observe(this.scroll);
    this.cleanup.push(watchTheme(this.root, () => this.request()));
    this.ticker = window.setInterval(() => {
      // A theme whose variables landed after the last frame with no event to say so (seen under
      // load: the frame kept the old theme's marker colours): repaint when the theme read now differs.
      const th = readTheme(this.root);
      if (!this.frame && this.paintedTheme && `${th.dark}${th.background}` !== this.paintedTheme) this.request();
      this.replies.tick(performance.now());
    }, 250);
    this.replies.loadSnapshot();
    this.relayout();
  }

  destroy(): void {
    window.clearInterval(this.ticker);
    this.replies.stop();
    this.resize.disconnect();
    this.tree.destroy();
    this.aligner.destroy();
    for (const f of this.cleanup) f();
    this.tooltip.el.remove();
    this.overview.tip.remove();
  }

  // -- DOM ------------------------------------------------------------------------------
  private buildDom(el: HTMLElement): void {
    fillToolbar(
      this.toolbar,
      {
        grouping: this.groupingSelect,
        search: this.searchInput,
        searchInfo: this.finder.info,
        filter: this.filterInput,
        hidden: this.hiddenBtn,
        status: this.status,
        colorBy: this.tree.colorSelect,
        critical: this.toggles.criticalBtn,
        criticalInfo: this.toggles.criticalInfo,
        findings: this.toggles.findingsBtn,
        findingsInfo: this.toggles.findingsInfo,
      },
      {
        find: (d) => this.find(d),
        collapseAll: (on) => this.collapseAll(on),
        showCpu: (on) => {
          this.model.set("show_cpu", on);
          this.model.save_changes();
        },
        fit: () => this.fit(),
        reset: () => this.setView({ t0: this.home()[0], t1: this.home()[1] }),
        legend: () => {
          this.legend.toggle();
          this.request();
        },
        help: () => this.help.toggle(),
      },
      this.layout.showCpu,
    );
    const overviewRow = h("div", { class: "nw-header nw-overview-row" }, [
      h("div", { class: "nw-overview-corner", text: "overview", attrs: { style: `width:${LABEL_W}px` } }),
      this.overview.el,
    ]);
    const header = h("div", { class: "nw-header" }, [this.corner, this.axis]);
    this.corner.style.width = `${LABEL_W}px`;
    this.labels.el.style.width = `${LABEL_W}px`;
    this.plotCol.appendChild(this.canvas);
    this.scroll.append(this.labels.el, this.plotCol);
    this.root.append(
      this.head,
      this.aligner.el,
      this.toolbar,
      this.toggles.criticalLine,
      this.errorBar,
      overviewRow,
      header,
      this.scroll,
      this.tree.el,
      this.summary.el,
      this.legend.el,
      this.help.el,
    );
    this.root.style.height = `${this.model.get("height")}px`;
    el.appendChild(this.root);
    document.body.appendChild(this.tooltip.el);
    document.body.appendChild(this.overview.tip);
    this.fillGroupings();
    this.groupingSelect.addEventListener("change", () => {
      this.model.set("grouping", this.groupingSelect.value);
      this.model.save_changes();
    });
    this.renderHead();
  }

  fillGroupings(): void {
    const groupings = this.model.get("groupings") as Record<string, string>;
    this.groupingSelect.replaceChildren(
      ...Object.entries(groupings).map(([k, label]) => h("option", { text: label, attrs: { value: k } })),
    );
    this.groupingSelect.value = this.model.get("grouping");
  }

  /** Title, notes, summary chips and the loading indicator (the Device Trace Viewer uses them). */
  renderHead(): void {
    this.root.classList.toggle("nw-loading", renderHead(this.head, this.model));
  }

  /** The widget now shows another profile: drop everything held for the old one. */
  reset(): void {
    this.replies.reset();
    this.searchInput.value = "";
    this.finder.set("");
    this.brushLocal = null;
    this.layout = { ...newLayoutState(), showCpu: this.layout.showCpu, filter: this.layout.filter };
    for (const p of defaultCollapsed(this.model.get("counters") as CounterInfo[])) this.layout.collapsed.add(p);
    const v = this.model.get("view") as number[];
    this.view = { t0: v[0], t1: v[1] };
    this.fillGroupings();
    this.relayout();
  }

  tracks(): TrackInfo[] {
    return this.model.get("tracks") as TrackInfo[];
  }

  names(): string[] {
    return this.model.get("names") as string[];
  }

  ask(w: Wish): void {
    this.replies.side.want(w);
  }

  // The replies held, under the names tests and benchmarks read on the view.
  get items(): Items | null {
    return this.replies.items;
  }

  set items(v: Items | null) {
    this.replies.items = v;
  }

  get counterData(): Map<string, { t: Float64Array; v: Float64Array }> {
    return this.replies.counterData;
  }

  get viewport(): Channel {
    return this.replies.viewport;
  }

  get replyBytes(): number[] {
    return this.replies.replyBytes;
  }

  get marks(): Record<string, number> {
    return this.replies.marks;
  }

  // Where Reset goes: the profile's span, or its dense part when a few events sit on a far clock.
  home(): [number, number] {
    const h = this.model.get("home") as number[] | undefined;
    return h && h.length === 2 ? [h[0], h[1]] : this.span();
  }

  span(): [number, number] {
    const s = this.model.get("span") as number[];
    return [s[0], s[1]];
  }

  // -- model ----------------------------------------------------------------------------
  private bindModel(): void {
    const m = this.model;
    const on: Listen = (ev: string, f: ReplyListener | (() => void)) => {
      m.on(ev, f);
      this.cleanup.push(() => m.off(ev, f));
    };
    followModel(this, on);
  }

  showError(text: string): void {
    this.errorBar.textContent = text || "";
    this.errorBar.style.display = text ? "" : "none";
  }

  setWaiting(ms: number): void {
    // A saved view reopened without its kernel: nothing will answer, so say what is shown instead.
    const saved = this.replies.snapshot !== null && this.items === null;
    this.status.textContent =
      ms <= 500
        ? ""
        : saved && ms > 3000
          ? "saved view: no kernel answers for this widget; run its cell again to explore"
          : `waiting for the kernel… ${(ms / 1000).toFixed(1)} s`;
    this.root.classList.toggle("nw-waiting", ms > 500);
  }

  // -- layout and requests ----------------------------------------------------------------
  relayout(): void {
    this.help.fit();
    this.rows = buildRows(this.tracks(), this.model.get("counters") as CounterInfo[], this.layout);
    const hidden = this.layout.hidden.size;
    this.hiddenBtn.textContent = `Show hidden (${hidden})`;
    this.hiddenBtn.style.display = hidden ? "" : "none";
    this.plotCol.style.height = `${Math.max(totalHeight(this.rows), 1)}px`;
    this.request();
  }

  plotWidth(): number {
    return Math.max(this.scroll.clientWidth - LABEL_W, 50);
  }

  private toggle(path: string): void {
    if (this.layout.collapsed.has(path)) this.layout.collapsed.delete(path);
    else this.layout.collapsed.add(path);
    this.relayout();
  }

  private collapseAll(on: boolean): void {
    this.layout.collapsed.clear();
    if (on)
      for (const p of groupPaths(this.tracks(), this.model.get("counters") as CounterInfo[]))
        this.layout.collapsed.add(p);
    this.relayout();
  }

  /**
   * Nothing left to do: no frame waiting, no viewport or counter request in flight, the view told
   * to the kernel, and the canvas showing the current view. Browser tests wait on it.
   */
  get settled(): boolean {
    return (
      !this.frame &&
      !this.viewSync &&
      !this.replies.busy &&
      this.root.dataset.view === `${this.view.t0},${this.view.t1}`
    );
  }

  /** Redraw on the next frame, and ask the kernel for data if what is held does not serve the view. */
  request(): void {
    if (!this.frame)
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.draw();
      });
  }

  onSide(msg: ToBrowser): void {
    if (msg.type === "hover") {
      if (msg.row !== undefined) this.tooltip.setArgs(msg.row, msg.args ?? {});
    } else if (msg.type === "counter_at") this.tooltip.setCounter(msg);
    else if (msg.type === "find") this.finder.found(msg);
    else if (msg.type === "error") this.showError(msg.message);
  }

  // -- drawing ----------------------------------------------------------------------------
  private draw(): void {
    drawFrame(this);
  }

  // -- view changes -------------------------------------------------------------------------
  setView(v: Range): void {
    this.view = clampView(v, this.bounds());
    this.aligner.moved(this.view);
    this.showView();
  }

  /** A window the aligned partner moved to: shown as it is (the partner kept it in bounds), told to no one but the kernel. */
  follow(v: Range): void {
    if (!Number.isFinite(v.t0) || !Number.isFinite(v.t1) || v.t1 <= v.t0) return;
    this.view = { t0: v.t0, t1: v.t1 };
    this.showView();
  }

  /** Where the view may go: the profile's span, and an aligned partner's laid on this run's clock. */
  bounds(): [number, number] {
    return this.aligner.bounds(this.span());
  }

  /** The view changed here and the kernel has not heard yet: a view the kernel sends meanwhile is an echo. */
  get viewPending(): boolean {
    return !!this.viewSync;
  }

  private showView(): void {
    this.request();
    // The kernel hears about the view at most every 150 ms, not on every frame of a drag.
    window.clearTimeout(this.viewSync);
    this.viewSync = window.setTimeout(() => {
      this.viewSync = 0;
      this.model.set("view", [this.view.t0, this.view.t1]);
      this.model.save_changes();
    }, 150);
  }

  setBrush(b: [number, number] | null): void {
    this.brushLocal = b;
    this.model.set("brush", b ? [Math.min(b[0], b[1]), Math.max(b[0], b[1])] : []);
    this.model.save_changes();
    this.request();
  }

  /** Fit the brushed range, else the selected event (with room either side), else everything. */
  fit(): void {
    this.setView(fitRange(this.brushLocal, this.model.get("selection_detail") as Partial<Detail>, this.home()));
  }

  /** The axis's labels for the current view (tests and the export read them). */
  axisLabels(): string[] {
    return axisLabels(this.view, this.plotWidth()).map((l) => l.text);
  }

  readonly formatTime = formatTime; // times as the axis shows them (tests read it)

  timeAt(x: number): number {
    return this.view.t0 + (x / this.plotWidth()) * (this.view.t1 - this.view.t0);
  }

  select(row: number): void {
    this.model.set("selected_row", row);
    this.model.save_changes();
  }

  click(x: number, y: number): void {
    clickAt(this, x, y);
  }

  hover(x: number, y: number, cx: number, cy: number): void {
    hoverAt(this, x, y, cx, cy);
  }

  pathSpans(): PathSpans | null {
    return this.toggles.pathSpans();
  }

  // -- search ---------------------------------------------------------------------------------
  search(text: string): void {
    this.finder.set(text);
  }

  find(direction: 1 | -1): void {
    this.finder.find(direction);
  }

  scrollToTrack(track: number): void {
    const r = this.rows.find((x) => x.kind === "track" && x.track === track);
    if (!r) return;
    const top = this.scroll.scrollTop;
    const height = this.scroll.clientHeight;
    if (r.y < top || r.y + r.h > top + height) this.scroll.scrollTop = Math.max(r.y - height / 3, 0);
  }
}
