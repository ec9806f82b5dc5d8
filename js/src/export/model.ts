// A widget model that lives in the page: the same get/set/on/send surface the views use with a
// kernel, with the kernel's side played by a local host (see host.ts).

import type { ToBrowser, ToKernel } from "../common/messages";

type Handler = (...args: any[]) => void;

export class LocalModel<T extends Record<string, any>> {
  private handlers = new Map<string, Set<Handler>>();
  onSend: (content: ToKernel) => void = () => {};

  constructor(private state: T) {}

  get<K extends keyof T>(key: K): T[K] {
    return this.state[key];
  }

  set<K extends keyof T>(key: K, value: T[K]): void {
    const old = this.state[key];
    if (old === value || (typeof value === "object" && JSON.stringify(old) === JSON.stringify(value))) return;
    this.state[key] = value;
    this.emit(`change:${String(key)}`);
  }

  save_changes(): void {}

  on(event: string, f: Handler): void {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event)!.add(f);
  }

  off(event?: string | null, f?: Handler | null): void {
    if (event && f) this.handlers.get(event)?.delete(f);
  }

  send(content: ToKernel): void {
    this.onSend(content);
  }

  /** A reply from the host, delivered after the current task like a message from a kernel. */
  reply(msg: ToBrowser, buffers: ArrayBuffer[] = []): void {
    setTimeout(() => this.emit("msg:custom", msg, buffers), 0);
  }

  private emit(event: string, ...args: unknown[]): void {
    for (const f of [...(this.handlers.get(event) ?? [])]) f(...args);
  }
}
