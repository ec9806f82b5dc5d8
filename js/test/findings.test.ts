import { describe, expect, it } from "vitest";
import { type DrawnMark, markAt, markText, packLanes } from "../src/timeline/findings";
import { findingView } from "../src/timeline/viewmath";

/** Slowly: does any pair of marks in one lane overlap (the last lane is shared past the lanes there are)? */
function clash(xs: { x0: number; x1: number }[], lanes: number[], shared: number): boolean {
  for (let a = 0; a < xs.length; a++)
    for (let b = a + 1; b < xs.length; b++)
      if (lanes[a] === lanes[b] && lanes[a] !== shared && xs[a].x0 <= xs[b].x1 && xs[b].x0 <= xs[a].x1) return true;
  return false;
}

describe("finding marks", () => {
  it("packs overlapping marks into separate lanes, the most severe on top", () => {
    const xs = [
      { x0: 0, x1: 100, severity: "low" },
      { x0: 10, x1: 20, severity: "high" },
      { x0: 30, x1: 40, severity: "high" },
      { x0: 0, x1: 100, severity: "medium" },
    ];
    const lanes = packLanes(xs);
    expect(lanes).toEqual([2, 0, 0, 1]);
  });

  it("never puts two overlapping marks in one lane below the last, on random marks", () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let k = 0; k < 200; k++) {
      const xs = Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => {
        const x0 = rnd() * 500;
        return { x0, x1: x0 + rnd() * 200, severity: ["high", "medium", "low"][Math.floor(rnd() * 3)] };
      });
      const lanes = packLanes(xs);
      expect(lanes.every((l) => l >= 0 && l <= 3)).toBe(true);
      expect(clash(xs, lanes, 3)).toBe(false);
    }
  });

  it("finds the narrowest mark under a point in its lane, none beside the lanes", () => {
    const drawn: DrawnMark[] = [
      { x0: 0, x1: 100, y0: 2, y1: 7, index: 0 },
      { x0: 40, x1: 45, y0: 2, y1: 7, index: 1 },
      { x0: 40, x1: 60, y0: 9, y1: 14, index: 2 },
    ];
    expect(markAt(drawn, 42, 4)?.index).toBe(1);
    expect(markAt(drawn, 80, 4)?.index).toBe(0);
    expect(markAt(drawn, 50, 12)?.index).toBe(2);
    expect(markAt(drawn, 80, 12)).toBeNull();
    expect(markAt(drawn, 50, 22)).toBeNull(); // the density below: the strip moves the window there
  });

  it("says severity, rule, part and gain around the title as given", () => {
    const m = {
      t0: 0,
      t1: 1,
      severity: "high",
      rule: "error",
      title: "<b>x</b> failed",
      gain_ns: null,
      part: "node-01",
    };
    expect(markText(m)).toBe(
      "high · error [node-01] (no predicted gain): <b>x</b> failed. Click to fit the view to it.",
    );
    expect(markText({ ...m, gain_ns: 80_654_264, part: null })).toContain("(gain 80.7 ms)");
  });

  it("fits a range with room either side, an instant to 1% of the whole", () => {
    expect(findingView(1000, 11000, [0, 100_000])).toEqual({ t0: 500, t1: 11500 });
    const v = findingView(5e6, 5e6, [0, 40e6]);
    expect(v.t1 - v.t0).toBeCloseTo(0.4e6 * 1.1);
    expect((v.t0 + v.t1) / 2).toBe(5e6);
  });
});
