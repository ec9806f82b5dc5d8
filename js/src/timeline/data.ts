// Viewport replies from the kernel, and the one request in flight at a time: a newer wish
// replaces an older one that has not been sent (stale requests are never sent, and replies to
// superseded ones are dropped), and what is on screen keeps being drawn meanwhile.

import type {
  CounterAtRequest,
  CountersRequest,
  FindRequest,
  HoverRequest,
  ToBrowser,
  ToKernel,
  ViewportReply,
  ViewportRequest,
} from "../common/messages";

export interface Items {
  t0: number;
  t1: number;
  width: number;
  pxNs: number;
  grouping: string;
  revision: number;
  n: number;
  tracks: Set<number>;
  start: Float64Array;
  end: Float64Array;
  track: Int32Array;
  lane: Int32Array;
  name: Int32Array;
  row: Int32Array;
  count: Uint32Array;
  flags: Uint8Array;
  color?: Int32Array;
  colorKeys?: string[];
  node?: Int32Array; // device traces: each item's hierarchy node (-1: not an instruction)
  markersDropped: number;
}

export const FLAG_ERROR = 1;
export const FLAG_INCOMPLETE = 2;
export const FLAG_HIGHLIGHT = 4;
export const FLAG_MARKER = 8;
export const FLAG_COARSE = 16; // an exported page's block of events merged past its size budget

type Column = Float64Array | Int32Array | Uint32Array | Uint8Array;

interface ColumnType {
  new (n: number): Column;
  new (b: ArrayBuffer): Column;
  new (b: ArrayBuffer, offset: number, length: number): Column;
  readonly BYTES_PER_ELEMENT: number;
}

/** Each item column's type, in the order a reply lists them (the exported page's viewport builds them too). */
export const COLUMN_TYPES: Record<string, ColumnType> = {
  start: Float64Array,
  end: Float64Array,
  track: Int32Array,
  lane: Int32Array,
  name: Int32Array,
  row: Int32Array,
  count: Uint32Array,
  flags: Uint8Array,
  color: Int32Array,
  node: Int32Array,
};

/**
 * A reply's buffer as a typed column: a view on the message's own bytes where they are aligned for the
 * type (no copy of a reply of megabytes), a copy where they are not.
 */
export function column(b: DataView | ArrayBuffer, Ctor: ColumnType): Column {
  if (b instanceof ArrayBuffer) return new Ctor(b);
  const n = Ctor.BYTES_PER_ELEMENT;
  if (b.byteOffset % n === 0 && b.byteLength % n === 0)
    return new Ctor(b.buffer as ArrayBuffer, b.byteOffset, b.byteLength / n);
  return new Ctor(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);
}

type ItemColumns = Pick<
  Items,
  "start" | "end" | "track" | "lane" | "name" | "row" | "count" | "flags" | "color" | "node"
>;

export function decodeItems(msg: ViewportReply, buffers: (DataView | ArrayBuffer)[], tracks: number[]): Items {
  const read: Record<string, Column> = {};
  msg.columns.forEach((c, i) => {
    read[c] = column(buffers[i], COLUMN_TYPES[c]);
  });
  const cols = read as ItemColumns; // each as COLUMN_TYPES makes it (color and node only where the reply has them)
  return {
    t0: msg.t0,
    t1: msg.t1,
    width: msg.width,
    pxNs: msg.px_ns,
    grouping: msg.grouping,
    revision: msg.revision ?? 0,
    n: msg.n,
    tracks: new Set(tracks),
    start: cols.start,
    end: cols.end,
    track: cols.track,
    lane: cols.lane,
    name: cols.name,
    row: cols.row,
    count: cols.count,
    flags: cols.flags,
    color: cols.color,
    colorKeys: msg.color_keys,
    node: cols.node,
    markersDropped: msg.markers_dropped ?? 0,
  };
}

/** A request the Timeline makes of the kernel, as messages.ts declares it, less what the channel adds. */
type Asked<R extends { type: string; uuid: string }> = { type: R["type"]; payload: Omit<R, "type" | "uuid"> };

export type Wish = (
  | Asked<ViewportRequest>
  | Asked<CountersRequest>
  | Asked<CounterAtRequest>
  | Asked<HoverRequest>
  | Asked<FindRequest>
) & {
  key: string; // what the reply would hold; the same key twice is one request
};

export type Payload = Wish["payload"];

type Reply = (msg: ToBrowser, buffers: (DataView | ArrayBuffer)[], asked: Payload) => void;

interface ModelLike {
  send(content: ToKernel, callbacks?: unknown, buffers?: ArrayBuffer[] | ArrayBufferView[]): void;
}

let counter = 0;
export function uuid(): string {
  counter += 1;
  return `${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

/** One channel of requests (viewport, counters...): at most one in flight, latest wish wins. */
export class Channel {
  private inflight: { uuid: string; key: string; sent: number; payload: Payload } | null = null;
  private pending: Wish | null = null;
  private lastKey = "";
  constructor(
    private model: ModelLike,
    private onReply: Reply,
    private onWaiting: (waitingMs: number) => void,
  ) {}

  want(w: Wish): void {
    if (w.key === this.lastKey && (this.inflight?.key === w.key || !this.inflight)) return;
    if (this.inflight) {
      this.pending = w;
      return;
    }
    this.send(w);
  }

  /** Forget what was asked, so the same wish is sent again (the data changed on the kernel). */
  invalidate(): void {
    this.lastKey = "";
  }

  private send(w: Wish): void {
    const id = uuid();
    this.inflight = { uuid: id, key: w.key, sent: performance.now(), payload: w.payload };
    this.lastKey = w.key;
    this.model.send({ type: w.type, uuid: id, ...w.payload } as ToKernel);
  }

  /** A message arrived: true if it was this channel's reply. */
  handle(msg: ToBrowser, buffers: (DataView | ArrayBuffer)[]): boolean {
    if (!this.inflight || msg.uuid !== this.inflight.uuid) return false;
    const asked = this.inflight.payload;
    this.inflight = null;
    const next = this.pending;
    this.pending = null;
    if (next && next.key !== this.lastKey) {
      this.send(next); // the reply below is already stale, but still better than nothing on screen
    }
    this.onWaiting(0);
    this.onReply(msg, buffers, asked);
    return true;
  }

  tick(now: number): void {
    if (this.inflight) this.onWaiting(now - this.inflight.sent);
  }

  get busy(): boolean {
    return this.inflight !== null;
  }
}
