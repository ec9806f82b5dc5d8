// The events of an exported page, and the kernel's queries answered in the page: grouping
// (events to tracks, lanes), the level-of-detail viewport, search, range summaries and details.

import type { RangeSummary, ViewportReply } from "../common/messages";
import { COLUMN_TYPES, FLAG_COARSE, FLAG_ERROR, FLAG_HIGHLIGHT, FLAG_INCOMPLETE, FLAG_MARKER } from "../timeline/data";
import type { TrackInfo } from "../timeline/layout";
import type { Place } from "../timeline/render";
import type { Payload } from "./payload";

export interface GroupingDef {
  label: string;
  key: number;
  combo_track: number[];
  labels: string[];
}

interface Grouping {
  track: Int32Array; // per item
  lane: Int32Array; // per item
  tracks: TrackInfo[];
  laneBase: Int32Array; // per track, its first lane's key
  laneOff: Int32Array; // per lane key, where its items start in perm
  perm: Int32Array; // items by lane key, each lane in time order
}

const MAX_MARKERS = 4000;
const MARK = FLAG_ERROR | FLAG_INCOMPLETE | FLAG_HIGHLIGHT;

/** Indices of `keys` (small non-negative ints) sorted by key, stable over `order`. */
function countingSort(keys: Int32Array, order: Int32Array, nKeys: number): { perm: Int32Array; off: Int32Array } {
  const off = new Int32Array(nKeys + 1);
  for (let k = 0; k < order.length; k++) off[keys[order[k]] + 1]++;
  for (let k = 0; k < nKeys; k++) off[k + 1] += off[k];
  const fill = off.slice(0, nKeys);
  const perm = new Int32Array(order.length);
  for (let k = 0; k < order.length; k++) perm[fill[keys[order[k]]]++] = order[k];
  return { perm, off };
}

/** A viewport reply as the kernel's, less what the host adds; `merged`: the events merged into blocks. */
type ViewportMeta = Omit<ViewportReply, "uuid" | "revision" | "generation" | "color_keys"> & { merged: number };

export class EventStore {
  readonly n: number;
  readonly nExact: number;
  readonly start: Float64Array; // ns from the profile's first timestamp
  readonly end: Float64Array;
  readonly name: Int32Array;
  readonly flags: Uint8Array;
  readonly count: Uint32Array;
  readonly total: Float64Array; // summed member durations (blocks); the duration for exact events
  color: Int32Array | null; // the colouring shown (the page's colour menu swaps it)
  readonly node: Int32Array | null; // device traces: each event's hierarchy node
  readonly rank: Uint8Array;
  private keys: Int32Array[] = [];
  private byTime: Int32Array;
  private marked: Int32Array; // exact items with marker flags, in time order
  private groupings = new Map<string, Grouping>();
  private linkOff: Int32Array;
  private links: Int32Array;

  constructor(
    p: Payload,
    prefix: string,
    private defs: Record<string, GroupingDef>,
    nKeys: number,
    private tiesUpstream: boolean,
  ) {
    // Exact events and blocks are each in time order, so each is stored as its own run of deltas.
    const exactStart = p.float(`${prefix}start`);
    const blockStart = p.float(`${prefix}bstart`);
    this.start = new Float64Array(exactStart.length + blockStart.length);
    this.start.set(exactStart);
    this.start.set(blockStart, exactStart.length);
    this.n = this.start.length;
    const dur = p.float(`${prefix}dur`);
    this.end = new Float64Array(this.n);
    for (let i = 0; i < this.n; i++) this.end[i] = this.start[i] + dur[i];
    this.name = p.ints(`${prefix}name`);
    this.flags = p.column(`${prefix}flags`) as Uint8Array;
    const blockCount = p.column(`${prefix}count`) as Uint32Array;
    const blockTotal = p.column(`${prefix}total`) as Float64Array;
    this.nExact = this.n - blockCount.length;
    this.count = new Uint32Array(this.n).fill(1);
    this.total = new Float64Array(dur);
    for (let b = 0; b < blockCount.length; b++) {
      this.count[this.nExact + b] = blockCount[b];
      this.total[this.nExact + b] = blockTotal[b];
      this.flags[this.nExact + b] |= FLAG_COARSE;
    }
    for (let k = 0; k < nKeys; k++) this.keys.push(p.ints(`${prefix}key${k}`));
    this.color = p.has(`${prefix}color`) ? p.ints(`${prefix}color`) : null;
    this.node = p.has(`${prefix}node`) ? p.ints(`${prefix}node`) : null;
    this.rank = p.column(`${prefix}rank`) as Uint8Array;
    this.byTime = this.mergeByTime();
    const marked: number[] = [];
    for (let i = 0; i < this.nExact; i++) if (this.flags[i] & MARK) marked.push(i);
    this.marked = Int32Array.from(marked);
    const a = p.ints(`${prefix}link_a`);
    const b = p.ints(`${prefix}link_b`);
    const both = new Int32Array(a.length * 2);
    const from = new Int32Array(a.length * 2);
    for (let k = 0; k < a.length; k++) {
      from[2 * k] = a[k];
      both[2 * k] = b[k];
      from[2 * k + 1] = b[k];
      both[2 * k + 1] = a[k];
    }
    const sorted = countingSort(from, Int32Array.from(from.keys()), this.nExact);
    this.linkOff = sorted.off;
    this.links = sorted.perm.map((k) => both[k]);
  }

  /** Exact events and blocks are each in time order; merged, ties longest first (as the kernel orders lanes). */
  private mergeByTime(): Int32Array {
    const out = new Int32Array(this.n);
    let i = 0;
    let j = this.nExact;
    const before = (x: number, y: number) =>
      this.start[x] < this.start[y] ||
      (this.start[x] === this.start[y] && this.end[x] - this.start[x] > this.end[y] - this.start[y]);
    for (let k = 0; k < this.n; k++) {
      if (j >= this.n || (i < this.nExact && !before(j, i))) out[k] = i++;
      else out[k] = j++;
    }
    return out;
  }

  keyArray(k: number): Int32Array {
    return this.keys[k];
  }

  groupingNames(): Record<string, string> {
    return Object.fromEntries(Object.entries(this.defs).map(([k, d]) => [k, d.label]));
  }

  has(grouping: string): boolean {
    return grouping in this.defs;
  }

  /** Tracks and lanes of a grouping, computed on first use: one greedy pass, as the kernel does. */
  index(grouping: string): Grouping {
    const got = this.groupings.get(grouping);
    if (got) return got;
    const def = this.defs[grouping];
    if (!def) throw new Error(`unknown grouping ${grouping}`);
    const key = this.keys[def.key];
    const nTracks = def.labels.length;
    const track = new Int32Array(this.n);
    for (let i = 0; i < this.n; i++) track[i] = def.combo_track[key[i]];
    const byTrack = countingSort(track, this.byTime, nTracks);
    const lane = new Int32Array(this.n);
    const lanes = new Int32Array(nTracks);
    const events = new Float64Array(nTracks);
    let freeAt = new Float64Array(64);
    for (let t = 0; t < nTracks; t++) {
      let used = 0;
      for (let k = byTrack.off[t]; k < byTrack.off[t + 1]; k++) {
        const i = byTrack.perm[k];
        const s = this.start[i];
        // An instant holds its lane for a nanosecond, so it nests inside a slice that starts with it.
        const e = this.end[i] > s ? this.end[i] : s + 1;
        let l = 0;
        while (l < used && freeAt[l] > s) l++;
        if (l === used) {
          if (used === freeAt.length) {
            const grown = new Float64Array(used * 2);
            grown.set(freeAt);
            freeAt = grown;
          }
          used++;
        }
        freeAt[l] = e;
        lane[i] = l;
        events[t] += this.count[i];
      }
      lanes[t] = used;
    }
    const laneBase = new Int32Array(nTracks + 1);
    for (let t = 0; t < nTracks; t++) laneBase[t + 1] = laneBase[t] + lanes[t];
    const laneKey = new Int32Array(this.n);
    for (let i = 0; i < this.n; i++) laneKey[i] = laneBase[track[i]] + lane[i];
    const byLane = countingSort(laneKey, this.byTime, laneBase[nTracks]);
    const tracks = def.labels.map((label, t) => ({ label, lanes: lanes[t], events: events[t] }));
    const g = { track, lane, tracks, laneBase, laneOff: byLane.off, perm: byLane.perm };
    this.groupings.set(grouping, g);
    return g;
  }

  /** What to draw in [t0, t1) at `width` px: exact items at least a pixel wide, narrower ones merged per pixel per lane. */
  viewport(
    grouping: string,
    t0: number,
    t1: number,
    width: number,
    tracks: number[],
  ): { meta: ViewportMeta; buffers: ArrayBuffer[] } {
    const g = this.index(grouping);
    width = Math.min(Math.max(Math.round(width), 1), 16384);
    const px = Math.max((t1 - t0) / width, 1e-9);
    const out = new Builder(this.color !== null, this.node !== null);
    for (const t of tracks) {
      if (t < 0 || t >= g.tracks.length) continue;
      for (let l = 0; l < g.tracks[t].lanes; l++) {
        const key = g.laneBase[t] + l;
        let lo = g.laneOff[key];
        let hi = g.laneOff[key + 1];
        const stop = hi;
        // Ends rise along a lane (its items never overlap): find the first that ends in the window.
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (this.end[g.perm[mid]] < t0) lo = mid + 1;
          else hi = mid;
        }
        let run = -1; // the pixel bucket of the run being merged
        for (let k = lo; k < stop; k++) {
          const i = g.perm[k];
          const s = this.start[i];
          if (s >= t1) break;
          const e = this.end[i];
          if (e - s >= px) {
            if (run >= 0) out.flush();
            run = -1;
            out.begin(this, i, t, l);
            out.flush();
            continue;
          }
          const bucket = Math.floor((s - t0) / px);
          if (run >= 0 && bucket === run) out.merge(this, i);
          else {
            if (run >= 0) out.flush();
            out.begin(this, i, t, l);
            run = bucket;
          }
        }
        if (run >= 0) out.flush();
      }
    }
    const merged = out.n;
    const wanted = new Set(tracks);
    let markers = 0;
    let dropped = 0;
    for (const i of this.marked) {
      if (this.start[i] >= t1) break;
      if (this.end[i] < t0 || !wanted.has(g.track[i])) continue;
      if (markers >= MAX_MARKERS) {
        dropped++;
        continue;
      }
      out.begin(this, i, g.track[i], g.lane[i]);
      out.flush(FLAG_MARKER);
      markers++;
    }
    const meta: ViewportMeta = {
      type: "viewport",
      grouping,
      t0,
      t1,
      width,
      px_ns: Math.max(Math.floor(px), 1),
      n: out.n,
      columns: out.columnNames(),
      markers,
      markers_dropped: dropped,
      merged,
    };
    return { meta, buffers: out.buffers() };
  }

  place(grouping: string, i: number, names: string[]): Place {
    const g = this.index(grouping);
    return {
      row: i,
      start: this.start[i],
      end: this.end[i],
      track: g.track[i],
      lane: g.lane[i],
      name: names[this.name[i]] ?? "",
    };
  }

  /** Events linked to item i, split as the kernel splits them (source order, then time). */
  dependencies(i: number): { upstream: number[]; downstream: number[] } {
    const up: number[] = [];
    const down: number[] = [];
    if (i < 0 || i >= this.nExact) return { upstream: up, downstream: down };
    const s = this.start[i];
    for (let k = this.linkOff[i]; k < this.linkOff[i + 1]; k++) {
      const j = this.links[k];
      const earlier = this.start[j] < s || (this.tiesUpstream && this.start[j] === s);
      if (this.rank[j] < this.rank[i] || (this.rank[j] === this.rank[i] && earlier)) up.push(j);
      else down.push(j);
    }
    const byStart = (a: number, b: number) => this.start[a] - this.start[b] || a - b;
    return { upstream: up.sort(byStart), downstream: down.sort(byStart) };
  }

  /** The next (or previous) exact event after time `after` whose name code is in `codes`, on `tracks`. */
  find(
    grouping: string,
    codes: number[],
    after: number,
    direction: number,
    tracks: number[] | null,
  ): { row: number; index: number; total: number } {
    const g = this.index(grouping);
    const want = new Set(codes);
    const onTracks = tracks ? new Set(tracks) : null;
    const hits: number[] = [];
    for (let i = 0; i < this.nExact; i++) {
      if (want.has(this.name[i]) && (!onTracks || onTracks.has(g.track[i]))) hits.push(i);
    }
    if (!hits.length) return { row: -1, index: -1, total: 0 };
    let at: number;
    if (direction >= 0) {
      at = hits.findIndex((i) => this.start[i] > after);
      if (at < 0) at = 0;
    } else {
      at = -1;
      for (let k = hits.length - 1; k >= 0; k--)
        if (this.start[hits[k]] < after) {
          at = k;
          break;
        }
      if (at < 0) at = hits.length - 1;
    }
    return { row: hits[at], index: at, total: hits.length };
  }

  /** Count, total and mean duration per name and per track of what overlaps [a, b); blocks count pro rata. */
  summary(grouping: string, a: number, b: number, names: string[]): RangeSummary {
    const g = this.index(grouping);
    const byName = new Map<number, [number, number]>();
    const byTrack = new Map<number, [number, number]>();
    let events = 0;
    let coarse = 0;
    const add = (m: Map<number, [number, number]>, k: number, c: number, d: number) => {
      const v = m.get(k);
      if (v) {
        v[0] += c;
        v[1] += d;
      } else m.set(k, [c, d]);
    };
    for (let i = 0; i < this.n; i++) {
      const s = this.start[i];
      const e = this.end[i];
      if (s >= b || e < a) continue;
      const clipped = Math.max(Math.min(e, b) - Math.max(s, a), 0);
      let c = this.count[i];
      let d = clipped;
      if (i >= this.nExact) {
        const share = e > s ? clipped / (e - s) : 1;
        c = Math.max(Math.round(c * share), 1);
        d = this.total[i] * share;
        coarse += c;
      }
      events += c;
      add(byName, this.name[i], c, d);
      add(byTrack, g.track[i], c, d);
    }
    const rows = (m: Map<number, [number, number]>, label: (k: number) => string) => {
      const all = [...m.entries()].sort((x, y) => y[1][1] - x[1][1]);
      return {
        list: all.slice(0, 100).map(([k, [c, d]]) => ({ key: label(k), count: c, total: d, mean: d / c })),
        more: Math.max(all.length - 100, 0),
      };
    };
    const n = rows(byName, (k) => names[k] ?? "");
    const t = rows(byTrack, (k) => g.tracks[k]?.label ?? "");
    return {
      start: a,
      end: b,
      events,
      top: 100,
      by_name: n.list,
      by_name_more: n.more,
      by_track: t.list,
      by_track_more: t.more,
      note: coarse
        ? `${coarse.toLocaleString()} of these events are in merged blocks of this export: their counts and times are pro rata`
        : "",
    };
  }
}

/** Growable reply columns, one item at a time: begin(), merge()..., flush(). */
class Builder {
  n = 0;
  private cap = 1024;
  private cols: Record<string, Float64Array | Int32Array | Uint32Array | Uint8Array> = {};
  private cur = {
    start: 0,
    end: 0,
    track: 0,
    lane: 0,
    name: 0,
    row: -1,
    count: 0,
    flags: 0,
    color: -1,
    node: -1,
    longest: -1,
  };

  constructor(
    private withColor: boolean,
    private withNode: boolean,
  ) {
    this.alloc(this.cap);
  }

  private alloc(cap: number): void {
    const next: typeof this.cols = {};
    for (const [k, C] of Object.entries(COLUMN_TYPES)) {
      if ((k === "color" && !this.withColor) || (k === "node" && !this.withNode)) continue;
      next[k] = new C(cap);
      if (this.cols[k]) next[k].set(this.cols[k].subarray(0, this.n) as never);
    }
    this.cols = next;
    this.cap = cap;
  }

  begin(st: EventStore, i: number, track: number, lane: number): void {
    const c = this.cur;
    c.start = st.start[i];
    c.end = st.end[i];
    c.track = track;
    c.lane = lane;
    c.name = st.name[i];
    c.row = i < st.nExact ? i : -1;
    c.count = st.count[i];
    c.flags = st.flags[i];
    c.color = st.color ? st.color[i] : -1;
    c.node = st.node ? st.node[i] : -1;
    c.longest = st.end[i] - st.start[i];
  }

  merge(st: EventStore, i: number): void {
    const c = this.cur;
    const d = st.end[i] - st.start[i];
    c.end = Math.max(c.end, st.end[i]);
    c.count += st.count[i];
    if (d > c.longest) {
      c.longest = d;
      c.name = st.name[i];
      c.row = i < st.nExact ? i : -1;
      c.color = st.color ? st.color[i] : -1;
      c.node = st.node ? st.node[i] : -1;
      c.flags = (c.flags & FLAG_COARSE) | st.flags[i];
    } else {
      c.flags |= st.flags[i] & FLAG_COARSE;
    }
  }

  flush(extra = 0): void {
    if (this.n === this.cap) this.alloc(this.cap * 2);
    const c = this.cur;
    const k = this.n++;
    this.cols.start[k] = c.start;
    this.cols.end[k] = c.end;
    this.cols.track[k] = c.track;
    this.cols.lane[k] = c.lane;
    this.cols.name[k] = c.name;
    this.cols.row[k] = c.row;
    this.cols.count[k] = c.count;
    this.cols.flags[k] = c.flags | extra;
    if (this.withColor) this.cols.color[k] = c.color;
    if (this.withNode) this.cols.node[k] = c.node;
  }

  columnNames(): string[] {
    return Object.keys(this.cols);
  }

  buffers(): ArrayBuffer[] {
    return Object.values(this.cols).map((a) => a.slice(0, this.n).buffer as ArrayBuffer);
  }
}
