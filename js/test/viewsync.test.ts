import { describe, expect, it } from "vitest";
import { join, memberId, members, publish, type SyncMessage } from "../src/common/viewsync";

describe("the view-sync bus", () => {
  it("tells every other member of the group, never the sender nor another group", () => {
    const heard: Record<string, SyncMessage[]> = { a: [], b: [], c: [], other: [] };
    const ids = { a: memberId(), b: memberId(), c: memberId(), other: memberId() };
    const leave = [
      join("g1", ids.a, (m) => heard.a.push(m)),
      join("g1", ids.b, (m) => heard.b.push(m)),
      join("g1", ids.c, (m) => heard.c.push(m)),
      join("g2", ids.other, (m) => heard.other.push(m)),
    ];
    expect(new Set(Object.values(ids)).size).toBe(4);
    publish("g1", ids.a, { kind: "view", rel: [-5, 10] });
    expect(heard.a).toEqual([]);
    expect(heard.b).toEqual([{ kind: "view", rel: [-5, 10] }]);
    expect(heard.c).toEqual([{ kind: "view", rel: [-5, 10] }]);
    expect(heard.other).toEqual([]);
    expect(members("g1")).toBe(3);
    leave[1]();
    publish("g1", ids.c, { kind: "step", step: 4 });
    expect(heard.b.length).toBe(1); // gone: hears nothing more
    expect(heard.a).toEqual([{ kind: "step", step: 4 }]);
    for (const f of leave) f();
    expect(members("g1")).toBe(0);
    expect(members("g2")).toBe(0);
    publish("g1", ids.a, { kind: "unlink" }); // an empty group: nothing to tell, nothing thrown
  });

  it("moves a follower to the same window from its own anchor, with no echo, over many moves", () => {
    // Two views as align.ts links them: the leader publishes what its user did; the follower applies it and
    // publishes nothing (the rule that keeps the bus echo-free). Random anchors and moves.
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let trial = 0; trial < 50; trial++) {
      const anchors = [Math.floor(rnd() * 1e9), Math.floor(rnd() * 1e9)];
      const views = [
        { t0: 0, t1: 1 },
        { t0: 0, t1: 1 },
      ];
      const ids = [memberId(), memberId()];
      const leave = [0, 1].map((i) =>
        join("trial", ids[i], (m) => {
          if (m.kind === "view") views[i] = { t0: anchors[i] + m.rel[0], t1: anchors[i] + m.rel[1] };
        }),
      );
      for (let move = 0; move < 20; move++) {
        const i = rnd() < 0.5 ? 0 : 1;
        const t0 = anchors[i] + (rnd() - 0.5) * 1e6;
        views[i] = { t0, t1: t0 + 1 + rnd() * 1e6 };
        publish("trial", ids[i], { kind: "view", rel: [views[i].t0 - anchors[i], views[i].t1 - anchors[i]] });
        const j = 1 - i;
        expect(views[j].t0 - anchors[j]).toBeCloseTo(views[i].t0 - anchors[i], 6);
        expect(views[j].t1 - anchors[j]).toBeCloseTo(views[i].t1 - anchors[i], 6);
      }
      for (const f of leave) f();
    }
  });
});
