import { describe, expect, it } from "vitest";
import { reconnectIfDeaf } from "../src/common/resync";

// biome-ignore lint/suspicious/noExplicitAny: a fake of ipywidgets' untyped model internals (see src/common/resync.ts).
type Any = any;

// ipywidgets' model as far as resync.ts uses it: Backbone-style events whose first argument is
// the model, a comm whose handler can be replaced, and the plain message handler.
class WidgetModel {
  attrs: Record<string, unknown> = {};
  listeners: Record<string, ((...a: unknown[]) => void)[]> = {};
  handled: Any[] = [];
  sent: Any[] = [];
  _buffered_state_diff: Record<string, unknown> = {};
  comm = {
    callback: null as ((msg: Any) => unknown) | null,
    on_msg(cb: (msg: Any) => unknown) {
      this.callback = cb;
    },
  };
  get(k: string) {
    return this.attrs[k];
  }
  set(k: string, v: unknown) {
    this.attrs[k] = v;
    this._buffered_state_diff[k] = v;
    for (const cb of this.listeners[`change:${k}`] ?? []) cb(this, v);
  }
  unset(k: string) {
    delete this.attrs[k];
  }
  on(name: string, cb: (...a: unknown[]) => void) {
    this.listeners[name] ??= [];
    this.listeners[name].push(cb);
  }
  off(name: string, cb: (...a: unknown[]) => void) {
    this.listeners[name] = (this.listeners[name] ?? []).filter((c) => c !== cb);
  }
  send(content: unknown) {
    this.sent.push(content);
  }
  _handle_comm_msg(msg: Any): Promise<void> {
    this.handled.push(msg.content.data.content ?? msg.content.data);
    return Promise.resolve();
  }
}

// anywidget's model: every message waits for `ready`, which it rejects when the code loaded late.
class AnyModel extends WidgetModel {
  constructor(public ready: Promise<void>) {
    super();
  }
  override _handle_comm_msg(msg: Any): Promise<void> {
    return this.ready.then(() => super._handle_comm_msg(msg));
  }
}

function proxy(m: WidgetModel): Any {
  // anywidget's facade: bound methods, never the model itself
  return { get: m.get.bind(m), set: m.set.bind(m), send: m.send.bind(m), on: m.on.bind(m), off: m.off.bind(m) };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("reconnectIfDeaf", () => {
  it("takes the messages of a model anywidget gave up on, and asks for the state again", async () => {
    const ready = Promise.reject(new Error("[anywidget] Failed to initialize model."));
    ready.catch(() => {});
    const m = new AnyModel(ready);
    reconnectIfDeaf(proxy(m));
    await settle();
    expect(m.sent).toEqual([{ type: "resync" }]);
    await m.comm.callback!({ content: { data: { method: "update", state: { event: 1 } } } });
    expect(m.handled[m.handled.length - 1]).toEqual({ method: "update", state: { event: 1 } });
    expect("__nw_who" in m.attrs || "__nw_who" in m._buffered_state_diff).toBe(false);
  });

  it("leaves a model anywidget delivers to alone", async () => {
    const m = new AnyModel(Promise.resolve());
    reconnectIfDeaf(proxy(m));
    await settle();
    expect(m.sent).toEqual([]);
    expect(m.comm.callback).toBeNull();
    expect(m.handled).toEqual([{ type: "__nw_probe" }]); // the probe, which no view answers
  });
});
