// The kernel's side of an exported timeline, played in the page: it answers the view's requests
// (viewport, counters, hover, find) from the embedded data, and keeps the derived state
// (tracks, selection details, brush summary) up to date as the view changes.

import type {
  Chip,
  ColorChoice,
  CounterInfo,
  CountersReply,
  CountersRequest,
  DetailsTraits,
  DeviceViewerTraits,
  Overview,
  TimelineTraits,
  ToKernel,
} from "../common/messages";
import { formatDuration, formatTime } from "../common/time";
import type { FindingMark } from "../timeline/findings";
import type { SpanDetail } from "../timeline/pathspans";
import { LocalModel } from "./model";
import type { Payload } from "./payload";
import { EventStore, type GroupingDef } from "./store";

interface Field {
  name: string;
  kind: "text" | "bool" | "int" | "float" | "bigint" | "combo";
  nulls?: boolean;
  key?: number; // combo fields: which key array indexes `values`
  values?: unknown[]; // combo fields: one value per combo
}

// A counter series as exported: the kernel's, with the names of the parts its hover breaks it into.
interface Counter extends CounterInfo {
  parts: string[];
}

export interface Meta {
  n_exact: number;
  n_blocks: number;
  origin_ns: string;
  span: [number, number];
  overview?: Overview;
  range: [number, number];
  names: string[];
  groupings: Record<string, GroupingDef>;
  n_keys: number;
  columns: string[];
  fields: Field[];
  ties_upstream: boolean;
  counters: Counter[];
  color_keys: string[];
  color_sets?: Record<string, string[]>; // every colouring the colour menu offers: key -> its texts
  stats: {
    events: number;
    exact: number;
    merged: number;
    blocks: number;
    bucket_ns: number;
    shortest_exact_ns: number;
  };
  state: {
    grouping: string;
    view: [number, number];
    brush: [] | [number, number];
    selected: number;
    show_cpu: boolean;
    height: number;
    title: string;
    notes: string[];
    strip: Chip[]; // the summary chips
    color_by: string;
    hierarchy?: Record<string, unknown>;
    picked_node?: string;
    color_choices?: ColorChoice[]; // for the colour menu
    // The critical path when the notebook showed it: its text and jumps as page rows and times.
    // jumps: [row_from, t_from, row_to, t_to, ...], a row below 0 the track labelled labels[-row - 1] (a job's
    // folded part); spans: [label, t0, t1, ...] where the job's path runs through such a part.
    // span_detail: what each span stands for (its segments by kind and worker), as the kernel sends it.
    critical?: {
      text: string;
      headline?: string;
      jumps: number[];
      spans?: number[];
      labels?: string[];
      span_detail?: SpanDetail;
    };
    critical_available?: boolean; // false for a device trace: no toggle
    // The findings' marks when the notebook showed them (times from the profile's start, as the page's).
    findings?: { text: string; marks: FindingMark[] };
    findings_available?: boolean;
    aligned?: Record<string, unknown>; // two runs' timelines exported together, linked on a step (timeline/align.ts)
  };
}

const MAX_TEXT = 2000;

function pyText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "boolean") return v ? "True" : "False";
  const s = typeof v === "object" ? JSON.stringify(v) : String(v);
  return s.length <= MAX_TEXT ? s : `${s.slice(0, MAX_TEXT - 1)}…`;
}

/** What the page says about how complete it is (shown under the timeline's title). */
export function coverageNote(m: Meta): string[] {
  const s = m.stats;
  const range = `${formatDuration(m.range[0])} – ${formatDuration(m.range[1])} from the profile start`;
  if (!s.events) return [`Nothing to show: the exported range (${range}) holds no events.`];
  if (!s.merged) return [`Exported ${s.events.toLocaleString("en-US")} events (${range}), every one in full detail.`];
  return [
    `Exported ${s.events.toLocaleString("en-US")} events (${range}). ${s.exact.toLocaleString("en-US")} are in full detail: ` +
      `every event of ${formatDuration(s.shortest_exact_ns)} or longer, plus errors and the selection's chain.`,
    `Coarse: the other ${s.merged.toLocaleString("en-US")} are merged into ${s.blocks.toLocaleString("en-US")} blocks ` +
      `of at most ${formatDuration(s.bucket_ns)} per track, to keep the file within its size budget; zooming in shows the blocks, not single events.`,
  ];
}

export class TimelineHost {
  readonly model: LocalModel<TimelineTraits & Partial<DeviceViewerTraits>>;
  readonly details = new LocalModel<DetailsTraits>({ event: {} });
  readonly store: EventStore;
  private fields: Map<string, { f: Field; read: (i: number) => string }>;
  private args: Int32Array;
  private argValues: string[];

  constructor(
    private p: Payload,
    private prefix: string,
    readonly meta: Meta,
  ) {
    this.store = new EventStore(p, prefix, meta.groupings, meta.n_keys, meta.ties_upstream);
    this.fields = new Map(meta.fields.map((f) => [f.name, { f, read: this.reader(f) }]));
    this.args = p.ints(`${prefix}args`);
    this.argValues = p.json<string[]>(`${prefix}args:values`);
    const st = meta.state;
    const grouping = this.store.has(st.grouping) ? st.grouping : Object.keys(meta.groupings)[0];
    this.model = new LocalModel({
      grouping,
      groupings: this.store.groupingNames(),
      tracks: this.store.index(grouping).tracks,
      names: meta.names,
      span: meta.span,
      home: meta.span, // what the view falls back to without one: Reset shows the whole span
      overview: meta.overview ?? {},
      origin_ns: meta.origin_ns,
      view: st.view,
      brush: st.brush,
      selected_row: -1,
      selection_detail: {},
      brush_summary: {},
      counters: meta.counters.map(({ parts: _p, ...c }) => c),
      show_cpu: st.show_cpu,
      color_by: st.color_by,
      height: st.height,
      status: "",
      error: "",
      revision: 0,
      generation: 0,
      title: st.title,
      notes: [...st.notes, ...coverageNote(meta)],
      strip: st.strip,
      loading: false,
      hierarchy: st.hierarchy ?? {},
      picked_node: st.picked_node ?? "",
      color_choices: st.color_choices ?? [],
      critical_path: !!st.critical,
      critical_available: st.critical_available !== false,
      critical_info: this.criticalInfo(grouping),
      findings: !!st.findings,
      findings_available: st.findings_available !== false,
      findings_info: this.findingsInfo(),
      aligned: st.aligned ?? {},
      _snapshot: new DataView(new ArrayBuffer(0)),
    });
    const m = this.model;
    m.on("change:grouping", () => {
      m.set("tracks", this.store.index(m.get("grouping") as string).tracks);
      this.selectionChanged();
      m.set("critical_info", this.criticalInfo(m.get("grouping") as string));
    });
    m.on("change:critical_path", () => {
      if (m.get("critical_path") && !st.critical)
        m.set("critical_info", {
          state: "none",
          text: "the critical path was not exported: turn it on in the notebook, then export",
        });
    });
    m.on("change:findings", () => m.set("findings_info", this.findingsInfo()));
    m.on("change:selected_row", () => this.selectionChanged());
    m.on("change:color_by", () => this.recolor(String(m.get("color_by"))));
    m.on("change:brush", () => this.brushChanged());
    m.onSend = (c) => this.request(c);
    this.details.onSend = (c) => {
      if (c?.type === "focus") this.select(Number(c.row), true);
    };
    if (st.selected >= 0) this.select(st.selected, false);
    this.brushChanged();
  }

  /** The exported critical path's jumps (and a job's spans) placed on a grouping's tracks, as the kernel sends them. */
  private criticalInfo(grouping: string): Record<string, unknown> {
    const c = this.meta.state.critical;
    if (!c) return {};
    const g = this.store.index(grouping);
    // A folded part's track is the one its label names, in every grouping (its summary lane, lane 0).
    const byLabel = new Map(g.tracks.map((t, i) => [t.label, i]));
    const folded = (c.labels ?? []).map((l) => byLabel.get(l) ?? -1);
    const place = (row: number): [number, number] =>
      row >= 0 ? [g.track[row], g.lane[row]] : [folded[-row - 1] ?? -1, 0];
    const jumps: number[] = [];
    for (let k = 0; k + 3 < c.jumps.length; k += 4) {
      const [ta, la] = place(c.jumps[k]);
      const [tb, lb] = place(c.jumps[k + 2]);
      if (ta >= 0 && tb >= 0) jumps.push(c.jumps[k + 1], ta, la, c.jumps[k + 3], tb, lb);
    }
    const spans: number[] = [];
    const runs: number[][] = []; // each kept span's detail, aligned with `spans`
    const s = c.spans ?? [];
    for (let k = 0; k + 2 < s.length; k += 3) {
      const track = folded[s[k]] ?? -1;
      if (track < 0) continue;
      spans.push(s[k + 1], s[k + 2], track);
      runs.push(c.span_detail?.runs[k / 3] ?? []);
    }
    const detail = c.span_detail ? { ...c.span_detail, runs } : undefined;
    return { state: "shown", text: c.text, headline: c.headline ?? "", jumps, spans, span_detail: detail };
  }

  /** The exported findings' marks, as the kernel sends them; a toggle turned on in a page without them says so. */
  private findingsInfo(): Record<string, unknown> {
    const f = this.meta.state.findings;
    if (f) return { state: "shown", text: f.text, marks: f.marks };
    return this.model?.get("findings")
      ? { state: "none", text: "the findings were not exported: turn them on in the notebook, then export" }
      : {};
  }

  /** The page row of an exact event by its id (as text: ids pass 2^53), or -1. */
  rowOfId(id: string): number {
    for (let r = 0; r < this.store.nExact; r++) if (this.value(r, "id") === id) return r;
    return -1;
  }

  select(row: number, focus: boolean): void {
    this.model.set("selected_row", row);
    if (focus && row >= 0) {
      const s = this.store.start[row];
      const e = this.store.end[row];
      const dur = Math.max(e - s, 1000);
      const mid = (s + e) / 2;
      this.model.set("view", [mid - 1.5 * dur, mid + 1.5 * dur]);
    }
  }

  private grouping(): string {
    return this.model.get("grouping") as string;
  }

  private selectionChanged(): void {
    const row = this.model.get("selected_row") as number;
    const st = this.store;
    if (row < 0 || row >= st.nExact) {
      this.model.set("selection_detail", {});
      this.details.set("event", {});
      return;
    }
    const g = this.grouping();
    const deps = st.dependencies(row);
    const place = (i: number) => st.place(g, i, this.meta.names);
    const node = st.node ? st.node[row] : -1;
    const detail = {
      ...place(row),
      id: this.value(row, "id"),
      source: this.value(row, "trace_event_source"),
      incomplete: this.value(row, "incomplete") === "True",
      upstream: deps.upstream.map(place),
      downstream: deps.downstream.map(place),
      ...(node >= 0 ? { node } : {}),
    };
    this.model.set("selection_detail", detail);
    this.details.set("event", this.eventInfo(row, deps));
  }

  /** The colour menu: the page holds every colouring it offers. */
  private recolor(key: string): void {
    const sets = this.meta.color_sets ?? {};
    if (key === "name") this.store.color = null;
    else if (key in sets) {
      this.store.color = this.p.ints(`${this.prefix}color:${key}`);
      this.meta.color_keys = sets[key];
    } else return;
    this.model.set("revision", (this.model.get("revision") as number) + 1);
  }

  private brushChanged(): void {
    const b = this.model.get("brush") as number[];
    this.model.set(
      "brush_summary",
      b.length === 2 && b[1] > b[0] ? this.store.summary(this.grouping(), b[0], b[1], this.meta.names) : {},
    );
  }

  // -- requests from the view ------------------------------------------------------------
  private request(c: ToKernel): void {
    const m = this.model;
    try {
      if (c.type === "viewport") {
        const { meta, buffers } = this.store.viewport(
          c.grouping ?? this.grouping(),
          Number(c.t0),
          Number(c.t1),
          Number(c.width),
          (c.tracks as number[]) ?? [],
        );
        const extra = this.store.color ? { color_keys: this.meta.color_keys } : {};
        m.reply(
          { ...meta, ...extra, uuid: c.uuid, revision: m.get("revision"), generation: m.get("generation") },
          buffers,
        );
      } else if (c.type === "counters") {
        m.reply(...this.counters(c));
      } else if (c.type === "counter_at") {
        m.reply({
          type: "counter_at",
          uuid: c.uuid,
          key: c.key,
          at: Number(c.t),
          ...this.counterAt(String(c.key), Number(c.t)),
        });
      } else if (c.type === "hover") {
        const row = Number(c.row);
        const args = Object.fromEntries(Object.entries(this.argsOf(row)).slice(0, 8));
        m.reply({ type: "hover", uuid: c.uuid, row, args, id: this.value(row, "id") });
      } else if (c.type === "find") {
        const got = this.store.find(
          this.grouping(),
          c.codes ?? [],
          Number(c.after ?? -1),
          Number(c.direction ?? 1),
          c.tracks ?? null,
        );
        const place = got.row >= 0 ? this.store.place(this.grouping(), got.row, this.meta.names) : {};
        m.reply({ type: "find", uuid: c.uuid, ...got, ...place });
      }
    } catch (e) {
      m.reply({ type: "error", uuid: "uuid" in c ? c.uuid : null, message: String(e) });
    }
  }

  private counters(c: CountersRequest): [CountersReply, ArrayBuffer[]] {
    const keys = new Set<string>(c.keys ?? []);
    const t0 = Number(c.t0);
    const t1 = Number(c.t1);
    const width = Math.min(Math.max(Math.round(Number(c.width)), 1), 16384);
    const series: { key: string; n: number }[] = [];
    const buffers: ArrayBuffer[] = [];
    this.meta.counters.forEach((s, idx) => {
      if (!keys.has(s.key)) return;
      const t = this.p.column(`${this.prefix}ct${idx}`) as Float64Array;
      const v = this.p.column(`${this.prefix}cv${idx}`) as Float64Array;
      let lo = upper(t, t0) - 1;
      lo = Math.max(lo, 0);
      const hi = Math.min(lower(t, t1) + 1, t.length);
      let tw = Array.from(t.subarray(lo, hi));
      let vw = Array.from(v.subarray(lo, hi));
      if (tw.length > 2 * width) {
        // The peak of each pixel, so spikes stay visible (the kernel does the same).
        const px = (t1 - t0) / width;
        const nt: number[] = [];
        const nv: number[] = [];
        let last = Number.NaN;
        for (let k = 0; k < tw.length; k++) {
          const b = Math.floor((tw[k] - t0) / px);
          if (b !== last) {
            nt.push(tw[k]);
            nv.push(vw[k]);
            last = b;
          } else if (vw[k] > nv[nv.length - 1]) nv[nv.length - 1] = vw[k];
        }
        tw = nt;
        vw = nv;
      }
      series.push({ key: s.key, n: tw.length });
      buffers.push(Float64Array.from(tw).buffer, Float64Array.from(vw).buffer);
    });
    return [{ type: "counters", uuid: c.uuid, series, t0, t1, generation: this.model.get("generation") }, buffers];
  }

  private counterAt(key: string, at: number): Record<string, unknown> {
    const idx = this.meta.counters.findIndex((s) => s.key === key);
    if (idx < 0) return {};
    const t = this.p.column(`${this.prefix}ct${idx}`) as Float64Array;
    const i = upper(t, at) - 1;
    if (i < 0) return {};
    const v = this.p.column(`${this.prefix}cv${idx}`) as Float64Array;
    const out: Record<string, unknown> = { t: t[i], value: v[i] };
    const parts = this.meta.counters[idx].parts;
    if (parts.length) {
      const b = parts
        .map((name, k) => [name, (this.p.column(`${this.prefix}cb${idx}:${k}`) as Float64Array)[i]] as [string, number])
        .filter(([, x]) => x > 0)
        .sort((x, y) => y[1] - x[1]);
      out.breakdown = Object.fromEntries(b);
    }
    return out;
  }

  // -- event properties ---------------------------------------------------------------------
  private reader(f: Field): (i: number) => string {
    const base = `${this.prefix}f:${f.name}`;
    const nulls = f.nulls ? (this.p.column(`${base}:nulls`) as Uint8Array) : null;
    if (f.kind === "text") {
      const codes = this.p.ints(`${base}:codes`);
      const values = this.p.json<string[]>(`${base}:values`);
      return (i) => (codes[i] < 0 ? "" : values[codes[i]]);
    }
    if (f.kind === "combo") {
      const key = this.store.keyArray(f.key ?? 0);
      const values = f.values ?? [];
      return (i) => pyText(values[key[i]]);
    }
    if (f.kind === "bool") {
      const values = this.p.column(`${base}:values`);
      return (i) => (values[i] === 2 ? "" : values[i] ? "True" : "False");
    }
    const values = f.kind === "bigint" ? this.p.column(`${base}:values`) : this.p.float(`${base}:values`);
    return (i) => (nulls?.[i] ? "" : pyText(values[i]));
  }

  private value(i: number, name: string): string {
    return this.fields.get(name)?.read(i) ?? "";
  }

  private argsOf(i: number): Record<string, string> {
    if (i < 0 || i >= this.args.length || this.args[i] < 0) return {};
    const raw = JSON.parse(this.argValues[this.args[i]]) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(raw).map(([k, v]) => [pyText(k), pyText(v)]));
  }

  private eventInfo(i: number, deps: { upstream: number[]; downstream: number[] }): Record<string, unknown> {
    const st = this.store;
    const origin = BigInt(this.meta.origin_ns);
    const at = (x: number) => (origin + BigInt(Math.round(x))).toString();
    const g = st.index(this.grouping());
    // As EventDetails in the notebook: readable times from the profile start first, raw ns below.
    const fields: [string, string][] = [
      ["name", this.meta.names[st.name[i]] ?? ""],
      ["start", `${formatTime(st.start[i])} from the profile start`],
      ["duration", formatDuration(st.end[i] - st.start[i])],
      ["end", formatTime(st.end[i])],
      ["track", g.tracks[g.track[i]]?.label ?? ""],
    ];
    for (const col of this.meta.columns) {
      if (col === "name") continue;
      else if (col === "start_ts") fields.push(["start_ts (raw ns)", at(st.start[i])]);
      else if (col === "end_ts") fields.push(["end_ts (raw ns)", at(st.end[i])]);
      else if (col === "duration_ns") fields.push([col, String(Math.round(st.end[i] - st.start[i]))]);
      else fields.push([col, this.value(i, col)]);
    }
    const dep = (j: number) => ({
      row: j,
      name: this.meta.names[st.name[j]] ?? "",
      start: formatTime(st.start[j]),
      duration: formatDuration(st.end[j] - st.start[j]),
      track: g.tracks[g.track[j]]?.label ?? "",
    });
    const taken = new Set(fields.map(([k]) => k));
    const args = Object.entries(this.argsOf(i)).map(([k, v]) => [taken.has(k) ? `${k} (argument)` : k, v]);
    return {
      title: this.meta.names[st.name[i]] ?? "",
      row: i,
      fields,
      args,
      upstream: deps.upstream.map(dep),
      downstream: deps.downstream.map(dep),
    };
  }
}

function upper(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function lower(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
