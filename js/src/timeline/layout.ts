// Rows of the timeline: a tree of group headers built from the track labels' segments
// ("instance/PID:1/neuron_rt/NC:0"), with collapse, hide, reorder and a text filter. Row
// positions depend on the tracks only, never on the data on screen, so they stay put while
// zooming.

export interface TrackInfo {
  label: string;
  lanes: number;
  events: number;
}

export interface CounterInfo {
  key: string;
  label: string;
  kind: string;
  unit: string;
  max: number;
  min: number;
  breakdown: boolean;
}

export type Row =
  | {
      kind: "group";
      path: string;
      label: string;
      depth: number;
      y: number;
      h: number;
      tracks: number;
      collapsed: boolean;
      end: number;
    } // end: the bottom of the group's last row
  | { kind: "track"; track: number; label: string; depth: number; y: number; h: number; lanes: number }
  | { kind: "counter"; key: string; label: string; depth: number; y: number; h: number; series: CounterInfo };

export const LANE_H = 18;
export const GROUP_H = 20;
export const COUNTER_H = 26;
const TRACK_PAD = 4;

export interface LayoutState {
  collapsed: Set<string>;
  hidden: Set<number>;
  order: Map<number, number>; // track -> sort key among its siblings (default: its index)
  filter: string;
  showCpu: boolean;
}

export function newLayoutState(): LayoutState {
  return { collapsed: new Set(), hidden: new Set(), order: new Map(), filter: "", showCpu: false };
}

interface Node {
  path: string;
  label: string;
  children: Map<string, Node>;
  tracks: number[]; // leaves: track indices, or counter indices under the counters root
  first: number;
}

const COUNTERS = "\u0000counters";
const MAX_OPEN_COUNTERS = 4;

function newNode(path: string, label: string, first: number): Node {
  return { path, label, children: new Map(), tracks: [], first };
}

function insert(root: Node, segments: string[], leaf: number, sortKey: number): void {
  let node = root;
  for (const seg of segments) {
    const path = node.path ? `${node.path}/${seg}` : seg;
    let child = node.children.get(seg);
    if (!child) {
      child = newNode(path, seg, sortKey);
      node.children.set(seg, child);
    }
    child.first = Math.min(child.first, sortKey);
    node = child;
  }
  node.tracks.push(leaf);
}

/** Counter groups collapsed at first sight: an instance's kind of counter with many series (HBM of every device). */
export function defaultCollapsed(counters: CounterInfo[]): string[] {
  const sizes = new Map<string, number>();
  const instances = new Set<string>();
  for (const c of counters) {
    const segs = c.label.split("/");
    if (segs.length >= 2) instances.add([COUNTERS, segs[0]].join("/"));
    if (segs.length < 3) continue;
    const group = [COUNTERS, ...segs.slice(0, 2)].join("/");
    sizes.set(group, (sizes.get(group) ?? 0) + 1);
  }
  const out = [...sizes].filter(([, n]) => n > 2).map(([p]) => p);
  // More counter rows than fit beside the events of a 520 px widget: the Counters group starts
  // closed (one row), so the events get the room; a click opens it.
  const open =
    counters.filter((c) => c.kind !== "cpu").length -
    [...sizes].filter(([, n]) => n > 2).reduce((k, [, n]) => k + n, 0);
  if (open > MAX_OPEN_COUNTERS) out.push(COUNTERS);
  // Several instances' counters (memory, HBM, bandwidth each) would fill the first screen: each
  // instance's group starts collapsed, one row, so the events show at once.
  if (instances.size > 1) out.push(...instances);
  return out;
}

export function buildRows(tracks: TrackInfo[], counters: CounterInfo[], st: LayoutState): Row[] {
  const filter = st.filter.trim().toLowerCase();
  const key = (i: number) => st.order.get(i) ?? i;
  const rows: Row[] = [];
  let y = 0;
  const counterRoot = newNode(COUNTERS, "Counters", 0);
  counters.forEach((c, i) => {
    if ((!st.showCpu && c.kind === "cpu") || (filter && !c.label.toLowerCase().includes(filter))) return;
    insert(counterRoot, c.label.split("/").slice(0, -1), i, i);
  });
  const root = newNode("", "", 0);
  tracks.forEach((t, i) => {
    if (st.hidden.has(i)) return;
    if (filter && !t.label.toLowerCase().includes(filter)) return;
    insert(root, t.label.split("/").slice(0, -1), i, key(i));
  });
  const walk = (node: Node, depth: number, isCounter: boolean) => {
    const leaves = isCounter ? node.tracks : [...node.tracks].sort((a, b) => key(a) - key(b));
    for (const i of leaves) {
      if (isCounter) {
        const c = counters[i];
        rows.push({ kind: "counter", key: c.key, label: c.label, depth, y, h: COUNTER_H, series: c });
        y += COUNTER_H;
        continue;
      }
      const t = tracks[i];
      const h = Math.max(t.lanes, 1) * LANE_H + TRACK_PAD;
      const label = t.label.split("/").pop() ?? t.label;
      rows.push({ kind: "track", track: i, label, depth, y, h, lanes: Math.max(t.lanes, 1) });
      y += h;
    }
    const kids = [...node.children.values()].sort((a, b) => a.first - b.first);
    for (const child of kids) {
      const collapsed = st.collapsed.has(child.path);
      const row: Row = {
        kind: "group",
        path: child.path,
        label: child.label,
        depth,
        y,
        h: GROUP_H,
        tracks: countTracks(child),
        collapsed,
        end: 0,
      };
      rows.push(row);
      y += GROUP_H;
      if (!collapsed) walk(child, depth + 1, isCounter);
      row.end = y;
    }
  };
  if (countTracks(counterRoot)) {
    const collapsed = st.collapsed.has(COUNTERS);
    const row: Row = {
      kind: "group",
      path: COUNTERS,
      label: "Counters",
      depth: 0,
      y,
      h: GROUP_H,
      tracks: countTracks(counterRoot),
      collapsed,
      end: 0,
    };
    rows.push(row);
    y += GROUP_H;
    if (!collapsed) walk(counterRoot, 1, true);
    row.end = y;
  }
  walk(root, 0, false);
  return rows;
}

function countTracks(n: Node): number {
  let c = n.tracks.length;
  for (const k of n.children.values()) c += countTracks(k);
  return c;
}

export function groupPaths(tracks: TrackInfo[], counters: CounterInfo[] = []): string[] {
  const out = new Set<string>();
  for (const t of tracks) {
    const segs = t.label.split("/").slice(0, -1);
    for (let i = 1; i <= segs.length; i++) out.add(segs.slice(0, i).join("/"));
  }
  // Counter groups live under their own root: "Collapse all" collapses them too.
  if (counters.length) out.add(COUNTERS);
  for (const c of counters) {
    const segs = c.label.split("/").slice(0, -1);
    for (let i = 1; i <= segs.length; i++) out.add([COUNTERS, ...segs.slice(0, i)].join("/"));
  }
  return [...out];
}

export function totalHeight(rows: Row[]): number {
  const last = rows[rows.length - 1];
  return last ? last.y + last.h : 0;
}

/** Rows overlapping [top, bottom) in pixels (rows are sorted by y). */
export function rowsIn(rows: Row[], top: number, bottom: number): Row[] {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid].y + rows[mid].h <= top) lo = mid + 1;
    else hi = mid;
  }
  const out: Row[] = [];
  for (let i = lo; i < rows.length && rows[i].y < bottom; i++) out.push(rows[i]);
  return out;
}

/** Move a track up (-1) or down (+1) among the tracks that share its parent group. */
export function moveTrack(tracks: TrackInfo[], st: LayoutState, track: number, dir: -1 | 1): void {
  const parent = (i: number) => tracks[i].label.split("/").slice(0, -1).join("/");
  const p = parent(track);
  const siblings = tracks.map((_, i) => i).filter((i) => parent(i) === p && !st.hidden.has(i));
  siblings.sort((a, b) => (st.order.get(a) ?? a) - (st.order.get(b) ?? b));
  const at = siblings.indexOf(track);
  const to = at + dir;
  if (at < 0 || to < 0 || to >= siblings.length) return;
  [siblings[at], siblings[to]] = [siblings[to], siblings[at]];
  siblings.forEach((i, k) => {
    st.order.set(i, Math.min(...siblings) + k);
  });
}

/** The groups whose header has scrolled above `top` while some of their rows are still shown, outermost first. */
export function stickyGroups(rows: Row[], top: number): Extract<Row, { kind: "group" }>[] {
  const out: Extract<Row, { kind: "group" }>[] = [];
  for (const r of rows) {
    if (r.y >= top + out.length * GROUP_H) break;
    if (
      r.kind === "group" &&
      !r.collapsed &&
      r.y < top + out.length * GROUP_H &&
      r.end > top + (out.length + 1) * GROUP_H
    ) {
      while (out.length && out[out.length - 1].depth >= r.depth) out.pop();
      out.push(r);
    }
  }
  return out;
}
