// A page-wide bus for views that move together (two runs' timelines aligned on a step), as
// jupyter-scatter's `view_sync` links its plots: each view publishes what its user did, tagged with
// its own id, to a group; the others in the group apply it without publishing it again, so no echo
// can loop. The bus lives on `globalThis`: every widget's bundle on the page (JupyterLab may load a
// module once per widget) and the exported page reach the same one.

/** A window relative to the aligned step's start; a new step; the link ended. */
export type SyncMessage = { kind: "view"; rel: [number, number] } | { kind: "step"; step: number } | { kind: "unlink" };

type Listener = (msg: SyncMessage) => void;

interface Bus {
  groups: Map<string, Map<string, Listener>>; // group -> member id -> listener
}

const KEY = "__nwViewSync";

function bus(): Bus {
  const g = globalThis as unknown as Record<string, Bus | undefined>;
  let b = g[KEY];
  if (!b) {
    b = { groups: new Map() };
    g[KEY] = b;
  }
  return b;
}

let counter = 0;

/** A member id unique on the page. */
export function memberId(): string {
  counter += 1;
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${counter}`;
}

/** Hear the group's messages from the other members; returns the way out. */
export function join(group: string, member: string, listener: Listener): () => void {
  const groups = bus().groups;
  let members = groups.get(group);
  if (!members) {
    members = new Map();
    groups.set(group, members);
  }
  members.set(member, listener);
  return () => {
    const m = groups.get(group);
    if (!m) return;
    m.delete(member);
    if (!m.size) groups.delete(group);
  };
}

/** Tell every other member of the group, at once (a drag's frames keep the partner on the same frame). */
export function publish(group: string, member: string, msg: SyncMessage): void {
  const members = bus().groups.get(group);
  if (!members) return;
  for (const [id, f] of [...members]) if (id !== member) f(msg);
}

/** How many members a group has on the page (tests read it). */
export function members(group: string): number {
  return bus().groups.get(group)?.size ?? 0;
}
