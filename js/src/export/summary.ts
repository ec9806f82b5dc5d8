// Summary charts in an exported page: drawn by BokehJS (inlined by the page) from the item the
// kernel wrote, and linked to the page's timeline as the notebook's widget is: a click on a bar,
// a point or a row selects its event (or moves the view to a step), a finding fits the view to where it
// happens, and the findings' toggle shows them all or the top few.

import { quietEmptyRanges } from "../common/bokehtables";
import { h } from "../common/dom";
import { memberId, publish } from "../common/viewsync";
import { alignedOf } from "../timeline/align";
import type { TimelineHost } from "./host";

// The little of BokehJS's model API used here.
interface BkModel {
  name?: string | null;
  properties: Record<string, { change: { connect(slot: () => void): void } }>;
  setv(attrs: Record<string, unknown>): void;
  data?: Record<string, unknown[]>;
  selected?: BkModel & { indices: number[] };
  [key: string]: unknown;
}
interface BkDocument {
  all_models: Set<BkModel>;
  get_model_by_name(name: string): BkModel | null;
}
interface BokehGlobal {
  embed: { embed_item(item: unknown, target: HTMLElement): Promise<unknown> };
  documents: BkDocument[];
}

const DARK = { text: "#e6edf3", muted: "#9da7b3", grid: "#3d444d" };
const CLICKABLE = [
  "nw-temporal",
  "nw-stragglers",
  "nw-top-a",
  "nw-straggler-steps",
  "nw-problems",
  "nw-device-layers",
  "nw-findings",
  "nw-fix-steps",
];
// Sources whose rows are windows (t0, t1: ns from the origin): a click moves the view there.
const WINDOWS = new Set(["nw-straggler-steps", "nw-device-layers", "nw-findings", "nw-fix-steps"]);
// "Did the fix work": a step's bar is the after-run's step (t0, t1 from its origin).
const FIX_STEPS = "nw-fix-steps";
const SUMMARY_MEMBER = memberId();
// What the findings' toggle shows in each state, as the kernel wrote it in the toggle's tags.
interface ToggleState {
  rows: number;
  height: number;
  label: string;
}

export function pageIsDark(): boolean {
  return (
    document.body.dataset.theme !== "light" &&
    typeof matchMedia === "function" &&
    matchMedia("(prefers-color-scheme: dark)").matches
  );
}

export async function renderSummary(item: unknown, box: HTMLElement, host: TimelineHost | null): Promise<void> {
  const bokeh = (window as unknown as { Bokeh?: BokehGlobal }).Bokeh;
  if (!bokeh?.embed) {
    box.appendChild(h("div", { class: "nw-boot-error", text: "The charts' library is missing from this page." }));
    return;
  }
  quietEmptyRanges(bokeh);
  const target = h("div", { class: "nw-summary-charts" });
  box.appendChild(target);
  const before = bokeh.documents.length;
  await bokeh.embed.embed_item(item, target);
  const doc = bokeh.documents[bokeh.documents.length - 1];
  if (!doc || bokeh.documents.length === before) return;
  if (pageIsDark()) darken(doc);
  expandable(doc);
  if (host) link(doc, host);
  box.dataset.ready = "1";
}

/** Canvas-drawn text and lines in the dark page's colours (DOM parts follow the page's CSS). */
function darken(doc: BkDocument): void {
  for (const m of doc.all_models) {
    const p = m.properties;
    if ("major_label_text_color" in p) {
      // Axes, and colour bars (which have a title, not an axis label): only what the model has.
      setSome(m, {
        major_label_text_color: DARK.muted,
        axis_label_text_color: DARK.muted,
        title_text_color: DARK.muted,
        axis_line_color: DARK.grid,
        major_tick_line_color: DARK.grid,
        background_fill_alpha: 0,
      });
    } else if ("grid_line_color" in p && m.grid_line_color != null) m.setv({ grid_line_color: DARK.grid });
    // Legends: dark text on no box (a white box would hide the light labels).
    else if ("label_text_color" in p)
      setSome(m, { label_text_color: DARK.text, background_fill_alpha: 0, border_line_alpha: 0 });
    else if ("text_color" in p && "text" in p && "align" in p) m.setv({ text_color: DARK.text });
  }
}

/** BokehJS throws on a property a model does not have: set those it has. */
function setSome(m: BkModel, attrs: Record<string, unknown>): void {
  m.setv(Object.fromEntries(Object.entries(attrs).filter(([k]) => k in m.properties)));
}

/** The findings' "show all" toggle: all rows or the top few, as the kernel's widget does it. */
function expandable(doc: BkDocument): void {
  const more = doc.get_model_by_name("nw-findings-more");
  const filter = doc.get_model_by_name("nw-findings-filter");
  const table = doc.get_model_by_name("nw-findings-table");
  const states = (more?.tags as Record<string, ToggleState>[] | undefined)?.[0];
  if (!more || !filter || !table || !states) return;
  more.properties.active.change.connect(() => {
    const s = states[more.active ? "true" : "false"];
    if (!s) return;
    filter.setv({ indices: Array.from({ length: s.rows }, (_, i) => i) });
    table.setv({ height: s.height });
    more.setv({ label: s.label });
  });
}

function link(doc: BkDocument, host: TimelineHost): void {
  for (const name of CLICKABLE) {
    const src = doc.get_model_by_name(name);
    const sel = src?.selected;
    if (!src || !sel) continue;
    sel.properties.indices.change.connect(() => {
      const i = sel.indices[0];
      if (i === undefined || !src.data) return;
      const column = (key: string) => (src.data?.[key] ?? []) as unknown[];
      if (WINDOWS.has(name)) {
        const t0 = Number(column("t0")[i]);
        const t1 = Number(column("t1")[i]);
        if (Number.isFinite(t0) && t1 > t0) {
          if (name === FIX_STEPS) fitStep(host, t0, t1);
          else host.model.set("view", [t0, t1]);
        }
      }
      const id = String(column("event_id")[i] ?? "");
      const row = id ? host.rowOfId(id) : -1;
      if (row >= 0) host.select(row, !WINDOWS.has(name));
    });
  }
}

/**
 * A step's bar: the after-run's timeline fits the step; exported aligned with the before-run's, the pair
 * re-aligns on that step (as the kernel does when a view is set to one step's extent) and the partner shows the
 * same window from its own step start.
 */
function fitStep(host: TimelineHost, t0: number, t1: number): void {
  const a = alignedOf(host.model);
  const i = a ? a.starts.findIndex((s) => Math.abs(s - t0) <= 1) : -1;
  if (!a || i < 0) {
    host.model.set("view", [t0, t1]);
    return;
  }
  // Told on the bus from outside both views: each hears it (the after-run's too) and re-aligns, then follows.
  if (a.step !== a.steps[i]) publish(a.group, SUMMARY_MEMBER, { kind: "step", step: a.steps[i] });
  publish(a.group, SUMMARY_MEMBER, { kind: "view", rel: [t0 - a.starts[i], t1 - a.starts[i]] });
}
