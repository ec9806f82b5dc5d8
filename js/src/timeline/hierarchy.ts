// The Device Trace Viewer's hierarchy panel: layer -> HLO operator -> NKI kernel as a collapsible,
// sortable tree with each node's time. Linked both ways with the timeline: a click on a node dims
// every instruction outside it and fits the view to its span; a selected instruction opens the
// tree down to its node and names its path. The colour menu (`color_by`) lives here too.

import { button, h } from "../common/dom";
import type { TimelineModel } from "../common/messages";
import { formatDuration, formatTime } from "../common/time";
import type { Range } from "./viewmath";

type Model = TimelineModel;

export interface TreeRow {
  path: string;
  name: string;
  parent: string;
  level: number;
  kind: string;
  start: number | null;
  end: number | null;
  duration: number | null;
  share: number | null;
  instructions: number;
  engines: Record<string, number>; // active time per engine (waits apart)
  waits?: Record<string, number>; // semaphore waits per engine
  flops: number | null;
  mfu: number | null;
  source: string;
}

interface TreeData {
  rows?: TreeRow[];
  notes?: string[];
}

type SortKey = "start" | "name" | "duration" | "share" | "instructions" | "engine" | "mfu";

// Rows drawn at once; past it the panel says how many more (collapse or sort to see others).
const MAX_SHOWN = 1500;
const SMALL_TREE = 80;
const KIND_LABEL: Record<string, string> = { layer: "layer", hlo: "HLO", nki: "NKI" };

function busiest(r: TreeRow): [string, number] | null {
  let best: [string, number] | null = null;
  for (const [e, ns] of Object.entries(r.engines)) if (!best || ns > best[1]) best = [e, ns];
  return best;
}

function sortValue(r: TreeRow, key: SortKey): number | string {
  if (key === "name") return r.name.toLowerCase();
  if (key === "engine") return busiest(r)?.[1] ?? -1;
  if (key === "start") return r.start ?? Infinity;
  return r[key] ?? -1;
}

export interface TreeHost {
  setView(v: Range): void;
  request(): void;
  showLegend(): void; // a colouring chosen in the menu opens the legend: what each colour is
}

export class HierarchyPanel {
  readonly el = h("div", { class: "nw-tree" });
  readonly colorSelect = h("select", { class: "nw-select", title: "Colour instructions by" });
  mask: Uint8Array | null = null; // 1 per node under the picked one
  private rows: TreeRow[] = [];
  private index = new Map<string, number>();
  private children = new Map<string, number[]>();
  private open = new Set<string>();
  private sort: { key: SortKey; desc: boolean } = { key: "start", desc: false };
  private selected = -1;
  private folded = false;
  private body = h("div", { class: "nw-tree-body" });
  private head = h("div", { class: "nw-tree-head" });
  private cleanup: (() => void)[] = [];

  constructor(
    private model: Model,
    private host: TreeHost,
  ) {
    const on = (ev: string, f: () => void) => {
      model.on(ev, f);
      this.cleanup.push(() => model.off(ev, f));
    };
    on("change:hierarchy", () => this.load());
    on("change:picked_node", () => this.picked());
    on("change:selection_detail", () => this.selectedChanged());
    on("change:color_choices", () => this.fillColors());
    on("change:color_by", () => (this.colorSelect.value = String(model.get("color_by"))));
    this.colorSelect.addEventListener("change", () => {
      model.set("color_by", this.colorSelect.value);
      model.save_changes();
      if (this.colorSelect.value !== "name") host.showLegend();
    });
    this.el.append(this.head, this.body);
    this.fillColors();
    this.load();
  }

  destroy(): void {
    for (const f of this.cleanup) f();
  }

  /** What the colours stand for, as the menu names it ("layer", "HLO operator"), or null. */
  colorLabel(): string | null {
    const by = String(this.model.get("color_by") ?? "name");
    const c = ((this.model.get("color_choices") ?? []) as { value: string; label: string }[]).find(
      (x) => x.value === by,
    );
    return c ? c.label : null;
  }

  private fillColors(): void {
    const choices = (this.model.get("color_choices") ?? []) as { value: string; label: string }[];
    this.colorSelect.replaceChildren(
      h("option", { text: "Colour by", attrs: { value: "", disabled: "" } }),
      ...choices.map((c) => h("option", { text: `colour: ${c.label}`, attrs: { value: c.value } })),
    );
    this.colorSelect.value = String(this.model.get("color_by") ?? "name");
    this.colorSelect.style.display = choices.length > 1 ? "" : "none";
  }

  private load(): void {
    const data = (this.model.get("hierarchy") ?? {}) as TreeData;
    this.rows = data.rows ?? [];
    this.index = new Map(this.rows.map((r, i) => [r.path, i]));
    this.children = new Map();
    this.rows.forEach((r, i) => {
      const list = this.children.get(r.parent) ?? [];
      list.push(i);
      this.children.set(r.parent, list);
    });
    // A small tree opens down to its operators; a large one down to its first level that branches.
    this.open = new Set();
    if (this.rows.length <= SMALL_TREE) {
      for (const r of this.rows) if (r.kind === "layer") this.open.add(r.path);
    } else {
      let level = this.children.get("") ?? [];
      while (level.length === 1) {
        this.open.add(this.rows[level[0]].path);
        level = this.children.get(this.rows[level[0]].path) ?? [];
      }
    }
    this.el.style.display = this.rows.length ? "" : "none";
    this.picked();
    this.selectedChanged();
  }

  private picked(): void {
    const path = String(this.model.get("picked_node") ?? "");
    const at = this.index.get(path);
    if (!path || at === undefined) this.mask = null;
    else {
      this.mask = new Uint8Array(this.rows.length);
      this.rows.forEach((r, i) => {
        this.mask![i] = r.path === path || r.path.startsWith(`${path}/`) ? 1 : 0;
      });
      this.reveal(at);
    }
    this.render();
    this.host.request();
  }

  private selectedChanged(): void {
    const d = (this.model.get("selection_detail") ?? {}) as { node?: number };
    this.selected = typeof d.node === "number" && d.node < this.rows.length ? d.node : -1;
    if (this.selected >= 0) this.reveal(this.selected);
    this.render();
    if (this.selected >= 0) this.body.querySelector(".nw-tree-selected")?.scrollIntoView({ block: "nearest" });
  }

  /** Open every ancestor of a node, so its row shows. */
  private reveal(i: number): void {
    let parent = this.rows[i].parent;
    while (parent) {
      this.open.add(parent);
      const p = this.index.get(parent);
      parent = p === undefined ? "" : this.rows[p].parent;
    }
  }

  /** A click on a node: highlight it and fit the view to it; a second click clears. */
  pick(i: number): void {
    const r = this.rows[i];
    const same = this.model.get("picked_node") === r.path;
    this.model.set("picked_node", same ? "" : r.path);
    this.model.save_changes();
    if (!same && r.start !== null && r.end !== null) {
      const pad = Math.max((r.end - r.start) * 0.05, 100);
      this.host.setView({ t0: r.start - pad, t1: r.end + pad });
    }
  }

  private setAll(open: boolean): void {
    this.open = new Set(open ? this.rows.filter((r) => this.children.has(r.path)).map((r) => r.path) : []);
    this.render();
  }

  private visible(): number[] {
    const out: number[] = [];
    const { key, desc } = this.sort;
    const cmp = (a: number, b: number) => {
      const x = sortValue(this.rows[a], key);
      const y = sortValue(this.rows[b], key);
      const c = x < y ? -1 : x > y ? 1 : this.rows[a].name.localeCompare(this.rows[b].name);
      return desc ? -c : c;
    };
    const walk = (parent: string) => {
      for (const i of [...(this.children.get(parent) ?? [])].sort(cmp)) {
        out.push(i);
        if (this.open.has(this.rows[i].path)) walk(this.rows[i].path);
      }
    };
    walk("");
    return out;
  }

  render(): void {
    if (!this.rows.length) return;
    const picked = String(this.model.get("picked_node") ?? "");
    const sel = this.selected >= 0 ? this.rows[this.selected].path : "";
    const data = (this.model.get("hierarchy") ?? {}) as TreeData;
    this.head.replaceChildren(
      h("span", {
        class: "nw-tree-title",
        text: this.folded ? "▸ Hierarchy" : "▾ Hierarchy",
        title: "Layer → HLO operator → NKI kernel: click to fold or unfold the panel",
      }),
      h("span", {
        class: "nw-note",
        text: `${this.rows.length.toLocaleString("en-US")} nodes · layer → HLO operator → NKI kernel`,
      }),
      button("Expand all", "Open every node of the tree", () => this.setAll(true)),
      button("Collapse all", "Close every node of the tree", () => this.setAll(false)),
      ...(picked
        ? [
            button("Clear", `Stop highlighting ${picked}`, () => {
              this.model.set("picked_node", "");
              this.model.save_changes();
            }),
          ]
        : []),
      h("span", {
        class: "nw-tree-path",
        text: sel ? `Selected instruction: ${sel}` : picked ? `Highlighted: ${picked}` : "",
        title: "The hierarchy path of the selected instruction, else of the highlighted node",
      }),
    );
    (this.head.firstChild as HTMLElement).addEventListener("click", () => {
      this.folded = !this.folded;
      this.render();
    });
    this.body.style.display = this.folded ? "none" : "";
    if (this.folded) return;
    const shown = this.visible();
    const hasMfu = this.rows.some((r) => r.mfu !== null);
    const cols: [SortKey, string, string][] = [
      ["name", "Node", "Layer, HLO operator or NKI kernel"],
      ["start", "Start", "From the trace's start"],
      ["duration", "Duration", "First instruction's start to last one's end"],
      ["share", "Share", "Of the execution"],
      ["instructions", "Instr.", "Instructions under the node"],
      ["engine", "Busiest engine", "The engine that ran the node's instructions longest (overlaps counted once)"],
      ...(hasMfu ? [["mfu", "MFU", "From the profile's layer_summary"] as [SortKey, string, string]] : []),
    ];
    const headRow = h(
      "tr",
      {},
      cols.map(([k, label, title]) => {
        const th = h("th", {
          text: label + (this.sort.key === k ? (this.sort.desc ? " ▼" : " ▲") : ""),
          title: `${title}: click to sort`,
        });
        th.addEventListener("click", () => {
          this.sort = { key: k, desc: this.sort.key === k ? !this.sort.desc : k !== "name" && k !== "start" };
          this.render();
        });
        return th;
      }),
    );
    const body = shown.slice(0, MAX_SHOWN).map((i) => this.rowOf(i, picked, sel, hasMfu));
    const table = h("table", { class: "nw-table nw-tree-table" }, [h("thead", {}, [headRow]), h("tbody", {}, body)]);
    const more =
      shown.length > MAX_SHOWN
        ? [
            h("div", {
              class: "nw-note",
              text: `and ${(shown.length - MAX_SHOWN).toLocaleString("en-US")} more rows: collapse nodes or sort to see others`,
            }),
          ]
        : [];
    const notes = (data.notes ?? []).map((n) => h("div", { class: "nw-note", text: n }));
    const scroll = this.body.scrollTop;
    this.body.replaceChildren(table, ...more, ...notes);
    this.body.scrollTop = scroll;
  }

  private rowOf(i: number, picked: string, sel: string, hasMfu: boolean): HTMLElement {
    const r = this.rows[i];
    const kids = this.children.has(r.path);
    const twisty = h("span", { class: "nw-twisty", text: kids ? (this.open.has(r.path) ? "▾" : "▸") : "" });
    if (kids) {
      twisty.addEventListener("click", (e) => {
        e.stopPropagation();
        if (this.open.has(r.path)) this.open.delete(r.path);
        else this.open.add(r.path);
        this.render();
      });
    }
    const name = h("td", { class: "nw-tree-name", title: r.path }, [
      twisty,
      h("span", { class: `nw-tree-kind nw-kind-${r.kind}`, text: KIND_LABEL[r.kind] ?? r.kind }),
      h("span", { text: r.name }),
    ]);
    name.style.paddingLeft = `${4 + r.level * 14}px`;
    const share = h("td", { class: "nw-tree-share" }, [
      h("span", { class: "nw-tree-bar" }),
      h("span", { text: r.share === null ? "" : `${(100 * r.share).toFixed(1)}%` }),
    ]);
    (share.firstChild as HTMLElement).style.width = `${Math.min(Math.max(r.share ?? 0, 0), 1) * 48}px`;
    const top = busiest(r);
    const waits = r.waits ?? {};
    const names = [...new Set([...Object.keys(r.engines), ...Object.keys(waits)])];
    const engines = names
      .map((e): [string, number] => [e, r.engines[e] ?? 0])
      .sort((a, b) => b[1] - a[1])
      .map(
        ([e, ns]) =>
          `${e} ${formatDuration(ns)}${waits[e] ? ` (+${formatDuration(waits[e])} in semaphore waits)` : ""}`,
      )
      .join(", ");
    const tr = h(
      "tr",
      {
        class: `nw-tree-row${r.path === picked ? " nw-on" : ""}${r.path === sel ? " nw-tree-selected" : ""}`,
        title:
          `${r.path}\n${engines || "no engine time"}${r.flops !== null ? `\nFLOPs ${r.flops.toExponential(3)}` : ""}` +
          `\nnumbers from ${r.source === "layer_summary" ? "the profile's layer_summary" : "the instructions"}\nclick: highlight its instructions and fit the view`,
      },
      [
        name,
        h("td", { text: r.start === null ? "" : formatTime(r.start) }),
        h("td", { text: r.duration === null ? "" : formatDuration(r.duration) }),
        share,
        h("td", { text: r.instructions.toLocaleString("en-US") }),
        h("td", { text: top ? `${top[0]} ${formatDuration(top[1])}` : "" }),
        ...(hasMfu ? [h("td", { text: r.mfu === null ? "" : `${r.mfu.toFixed(2)}%` })] : []),
      ],
    );
    tr.dataset.path = r.path;
    tr.addEventListener("click", () => this.pick(i));
    return tr;
  }
}
