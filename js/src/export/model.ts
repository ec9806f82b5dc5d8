// A widget model that lives in the page: the same get/set/on/send surface the views use with a
// kernel, with the kernel's side played by a local host (see host.ts).

import type { ModelTraits, ReplyListener, ToBrowser, ToKernel } from "../common/messages";

export class LocalModel<T extends ModelTraits> {
  private changes = new Map<string, Set<() => void>>();
  private replies = new Set<ReplyListener>();
  onSend: (content: ToKernel) => void = () => {};

  constructor(private state: T) {}

  get<K extends keyof T>(key: K): T[K] {
    return this.state[key];
  }

  set<K extends keyof T>(key: K, value: T[K]): void {
    const old = this.state[key];
    if (old === value || (typeof value === "object" && JSON.stringify(old) === JSON.stringify(value))) return;
    this.state[key] = value;
    for (const f of [...(this.changes.get(`change:${String(key)}`) ?? [])]) f();
  }

  save_changes(): void {}

  // As anywidget's model: a custom message's listener takes the message and its buffers, any other event's nothing.
  on(event: "msg:custom", f: ReplyListener): void;
  on(event: string, f: () => void): void;
  on(event: string, f: ReplyListener | (() => void)): void {
    if (event === "msg:custom") this.replies.add(f);
    else {
      if (!this.changes.has(event)) this.changes.set(event, new Set());
      this.changes.get(event)!.add(f as () => void); // the overloads above: not a reply's listener
    }
  }

  off(event?: string | null, f?: ReplyListener | (() => void) | null): void {
    if (!event || !f) return;
    if (event === "msg:custom") this.replies.delete(f);
    else this.changes.get(event)?.delete(f as () => void);
  }

  send(content: ToKernel): void {
    this.onSend(content);
  }

  /** A reply from the host, delivered after the current task like a message from a kernel (buffers as DataViews). */
  reply(msg: ToBrowser, buffers: ArrayBuffer[] = []): void {
    const views = buffers.map((b) => new DataView(b));
    setTimeout(() => {
      for (const f of [...this.replies]) f(msg, views);
    }, 0);
  }
}
