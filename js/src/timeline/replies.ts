// What the view holds of the kernel's answers: the three request channels (viewport, counters,
// small side replies), the items and counter values last received, the saved snapshot shown
// until the first reply, and what is asked next for a view. Replies computed for the profile
// shown before a retarget are dropped, and the view asks again. A device trace's first window
// comes unasked, just before its tracks (widgets/device_push.py): kept until the model shows that
// trace, then taken if nothing is held for it, in the frame that lays the tracks out.

import { typed } from "../common/dom";
import type { TimelineModel, ToBrowser, ViewportReply } from "../common/messages";
import { Channel, decodeItems, type Items, type Payload } from "./data";
import { readSnapshot, SnapshotKeeper } from "./snapshot";
import { counterWish, type Held, viewportWish } from "./wishes";

type Model = TimelineModel;

/** A window the kernel sends unasked: its uuid is this, then how many tracks it holds (tracks 0..k-1). */
export const PUSHED = "push:";

/** What the replies call back on the view. */
export interface RepliesHost {
  request(): void; // draw again
  showError(text: string): void;
  setWaiting(ms: number): void;
  onSide(msg: ToBrowser): void; // hover details, counter values, search results
}

export class Replies {
  items: Items | null = null;
  readonly counterData = new Map<string, { t: Float64Array; v: Float64Array }>();
  counterWindow: { t0: number; t1: number; keys: string } | null = null;
  snapshot: ImageBitmap | null = null; // the saved view, drawn until the first reply
  readonly viewport: Channel;
  readonly counters: Channel;
  readonly side: Channel; // hover details, find, counter values: small replies
  readonly keeper: SnapshotKeeper;
  readonly replyBytes: number[] = []; // bytes per viewport reply, for benchmarks
  readonly marks: Record<string, number> = { created: Date.now() }; // first request, reply: for benchmarks
  private pushed: { msg: ViewportReply; buffers: DataView[] } | null = null; // the newest, until its trace shows

  constructor(
    private model: Model,
    canvas: HTMLCanvasElement,
    private host: RepliesHost,
  ) {
    const onWaiting = (ms: number) => host.setWaiting(ms);
    this.viewport = new Channel(model, (m, b, asked) => this.onViewport(m, b as DataView[], asked), onWaiting);
    this.counters = new Channel(model, (m, b) => this.onCounters(m, b as DataView[]), onWaiting);
    this.side = new Channel(
      model,
      (m) => host.onSide(m),
      () => {},
    );
    this.keeper = new SnapshotKeeper(canvas, model, () => this.viewport.busy);
  }

  /** A message from the kernel: the channel that asked takes it. */
  handle(msg: ToBrowser, buffers: DataView[]): void {
    if (msg.type === "viewport" && msg.uuid.startsWith(PUSHED)) {
      this.pushed = { msg, buffers };
      // Sent before its trace's state: the frame that state asks for takes it. Else it is taken now.
      if (msg.generation <= this.model.get("generation")) this.host.request();
      return;
    }
    if (this.viewport.handle(msg, buffers)) return;
    if (this.counters.handle(msg, buffers)) return;
    this.side.handle(msg, buffers);
  }

  /** Ask for what the view needs that the replies held do not serve. */
  want(view: Omit<Held, "items" | "counterWindow">): void {
    this.takePushed();
    const held: Held = { ...view, items: this.items, counterWindow: this.counterWindow };
    const items = viewportWish(held);
    if (items) {
      this.marks.request ??= Date.now();
      this.viewport.want(items);
    }
    const counters = counterWish(held);
    if (counters) this.counters.want(counters);
  }

  tick(now: number): void {
    this.viewport.tick(now);
    this.counters.tick(now);
  }

  get busy(): boolean {
    return this.viewport.busy || this.counters.busy;
  }

  /** Another profile is shown: drop what was held for the old one. */
  reset(): void {
    this.items = null;
    this.counterData.clear();
    this.counterWindow = null;
    this.snapshot = null;
    this.viewport.invalidate();
    this.counters.invalidate();
  }

  /** The kernel's data changed (markers, colours): ask again. */
  invalidate(): void {
    this.viewport.invalidate();
  }

  loadSnapshot(): void {
    void readSnapshot(this.model).then((img) => {
      if (img && !this.items) {
        this.snapshot = img;
        this.host.request();
      }
    });
  }

  stop(): void {
    this.keeper.stop();
  }

  /** A reply computed for the profile shown before a retarget: dropped, and the view asks again. */
  private stale(msg: ToBrowser, channel: Channel): boolean {
    if (!("generation" in msg) || msg.generation === this.model.get("generation")) return false;
    channel.invalidate();
    this.host.request();
    return true;
  }

  private onViewport(msg: ToBrowser, buffers: DataView[], asked: Payload): void {
    if (this.stale(msg, this.viewport)) return;
    if (msg.type === "error") {
      this.host.showError(msg.message);
      return;
    }
    if (msg.type !== "viewport" || !("tracks" in asked)) return; // the viewport channel asks for nothing else
    this.take(msg, buffers, asked.tracks ?? []);
  }

  /** The window pushed with the trace shown, unless a reply asked for came first; one for a later trace waits. */
  private takePushed(): void {
    const p = this.pushed;
    if (!p || p.msg.generation > this.model.get("generation")) return;
    this.pushed = null;
    if (p.msg.generation < this.model.get("generation") || this.items) return;
    const k = Number(p.msg.uuid.slice(PUSHED.length));
    if (!Number.isInteger(k) || k < 0) return;
    this.marks.pushed = Date.now();
    // Taken in the frame being drawn (want() runs before the paint), which then draws it: no frame more.
    this.take(
      p.msg,
      p.buffers,
      Array.from({ length: k }, (_, i) => i),
      false,
    );
  }

  private take(msg: ViewportReply, buffers: DataView[], tracks: number[], redraw = true): void {
    this.marks.reply ??= Date.now();
    this.items = decodeItems(msg, buffers, tracks);
    this.replyBytes.push(buffers.reduce((n, b) => n + b.byteLength, 0));
    if (this.replyBytes.length > 1000) this.replyBytes.splice(0, 500);
    this.snapshot = null;
    if (redraw) this.host.request();
    this.keeper.schedule();
  }

  private onCounters(msg: ToBrowser, buffers: DataView[]): void {
    if (this.stale(msg, this.counters)) return;
    if (msg.type === "error") {
      this.host.showError(msg.message);
      return;
    }
    if (msg.type !== "counters") return; // the counters channel asks for nothing else
    let b = 0;
    const keys: string[] = [];
    for (const s of msg.series) {
      this.counterData.set(s.key, { t: typed(buffers[b], Float64Array), v: typed(buffers[b + 1], Float64Array) });
      keys.push(s.key);
      b += 2;
    }
    this.counterWindow = { t0: msg.t0, t1: msg.t1, keys: keys.join(",") };
    this.host.request();
  }
}
