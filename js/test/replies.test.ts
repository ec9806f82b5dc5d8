import { describe, expect, it } from "vitest";
import { column } from "../src/timeline/data";
import { PUSHED, Replies } from "../src/timeline/replies";

// biome-ignore lint/suspicious/noExplicitAny: fakes of the model and the view with only what Replies reads of them.
type Any = any;

// What Replies uses of the browser: window timers (the snapshot keeper's), the model, the host.
(globalThis as Any).window ??= { setTimeout: () => 0, clearTimeout: () => {} };

function model(generation: number): Any {
  const attrs: Record<string, unknown> = { generation, _snapshot: undefined };
  return {
    get: (k: string) => attrs[k],
    set: (k: string, v: unknown) => (attrs[k] = v),
    sent: [] as Any[],
    send(c: Any) {
      this.sent.push(c);
    },
    save_changes() {},
  };
}

function host(): Any {
  return {
    requests: 0,
    request() {
      this.requests += 1;
    },
    showError() {},
    setWaiting() {},
    onSide() {},
  };
}

/** A viewport reply of `n` items as the kernel encodes it, each buffer a DataView into one message's bytes. */
function reply(uuid: string, generation: number, n: number): [Any, DataView[]] {
  const types: [string, Any][] = [
    ["start", Float64Array],
    ["end", Float64Array],
    ["track", Int32Array],
    ["lane", Int32Array],
    ["name", Int32Array],
    ["row", Int32Array],
    ["count", Uint32Array],
    ["flags", Uint8Array],
  ];
  const whole = new ArrayBuffer(types.reduce((s, [, C]) => s + n * C.BYTES_PER_ELEMENT, 0) + 64);
  let off = 0;
  const buffers = types.map(([, C], i) => {
    const view = new DataView(whole, off, n * C.BYTES_PER_ELEMENT);
    new C(whole, off, n).fill(i + 1);
    off += n * C.BYTES_PER_ELEMENT;
    return view;
  });
  const msg = {
    type: "viewport",
    uuid,
    grouping: "engines",
    t0: 0,
    t1: 10,
    width: 100,
    px_ns: 0.1,
    n,
    columns: types.map(([k]) => k),
    markers: 0,
    markers_dropped: 0,
    revision: 0,
    generation,
  };
  return [msg, buffers];
}

const view = { rows: [], top: 0, height: 100, width: 100, view: { t0: 0, t1: 10 }, grouping: "engines", revision: 0 };

describe("a first window pushed with the tracks", () => {
  it("waits for its trace's state, then the frame that draws it takes it", () => {
    const h = host();
    const m = model(2);
    const r = new Replies(m, {} as Any, h);
    r.handle(...reply(`${PUSHED}2`, 3, 5)); // sent just before the state of generation 3
    expect(r.items).toBeNull();
    expect(h.requests).toBe(0); // no frame for it yet: the state's own frame comes
    r.want(view);
    expect(r.items).toBeNull(); // a frame before the state arrived: still kept
    m.set("generation", 3);
    r.want(view);
    expect(r.items?.n).toBe(5);
    expect([...(r.items?.tracks ?? [])]).toEqual([0, 1]);
    expect(Array.from(r.items?.track ?? [])).toEqual([3, 3, 3, 3, 3]);
    expect(h.requests).toBe(0); // taken in the frame being drawn: no frame more
  });

  it("arriving after its state, asks for a frame to be drawn in", () => {
    const h = host();
    const r = new Replies(model(3), {} as Any, h);
    r.handle(...reply(`${PUSHED}1`, 3, 4));
    expect(h.requests).toBe(1);
    r.want(view);
    expect(r.items?.n).toBe(4);
  });

  it("is dropped when it is for an older trace, or a reply was already held", () => {
    const m = model(3);
    const r = new Replies(m, {} as Any, host());
    r.handle(...reply(`${PUSHED}2`, 2, 5));
    r.want(view);
    expect(r.items).toBeNull();
    r.handle(...reply(`${PUSHED}2`, 3, 5));
    r.want(view);
    const held = r.items;
    r.handle(...reply(`${PUSHED}4`, 3, 7));
    r.want(view);
    expect(r.items).toBe(held);
  });

  it("never answers a request the view has in flight", () => {
    const r = new Replies(model(1), {} as Any, host());
    r.handle(...reply("some-request", 1, 5)); // no request of this uuid: not taken as a reply
    r.want(view);
    expect(r.items).toBeNull();
  });
});

describe("a reply's columns", () => {
  it("are views on the message's bytes when aligned, copies when not", () => {
    const whole = new ArrayBuffer(40);
    new Float64Array(whole, 8, 2).set([1.5, -2]);
    const aligned = column(new DataView(whole, 8, 16), Float64Array);
    expect(Array.from(aligned)).toEqual([1.5, -2]);
    expect(aligned.buffer).toBe(whole);
    const bytes = new Uint8Array(whole);
    bytes.copyWithin(9, 8, 24); // the same two numbers one byte further on: not aligned for float64
    const copied = column(new DataView(whole, 9, 16), Float64Array);
    expect(Array.from(copied)).toEqual([1.5, -2]);
    expect(copied.buffer).not.toBe(whole);
  });
});
