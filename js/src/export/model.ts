// A widget model that lives in the page: the same get/set/on/send surface the views use with a
// kernel, with the kernel's side played by a local host (see host.ts).

type Handler = (...args: any[]) => void;

export class LocalModel {
  private handlers = new Map<string, Set<Handler>>();
  onSend: (content: any) => void = () => {};

  constructor(private state: Record<string, unknown>) {}

  get(key: string): unknown {
    return this.state[key];
  }

  set(key: string, value: unknown): void {
    const old = this.state[key];
    if (old === value || (typeof value === "object" && JSON.stringify(old) === JSON.stringify(value))) return;
    this.state[key] = value;
    this.emit(`change:${key}`);
  }

  save_changes(): void {}

  on(event: string, f: Handler): void {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event)!.add(f);
  }

  off(event: string, f: Handler): void {
    this.handlers.get(event)?.delete(f);
  }

  send(content: any): void {
    this.onSend(content);
  }

  /** A reply from the host, delivered after the current task like a message from a kernel. */
  reply(msg: Record<string, unknown>, buffers: ArrayBuffer[] = []): void {
    setTimeout(() => this.emit("msg:custom", msg, buffers), 0);
  }

  private emit(event: string, ...args: unknown[]): void {
    for (const f of [...(this.handlers.get(event) ?? [])]) f(...args);
  }
}
