import { describe, expect, it } from "vitest";
import { LANE_H, type Row } from "../src/timeline/layout";
import { spanAt, spanLines, spanLineText } from "../src/timeline/pathspans";

// Two folded parts' tracks, one lane each, 40 px apart.
const rows: Row[] = [
  { kind: "track", track: 0, label: "node-00", depth: 0, y: 0, h: 40, lanes: 1 },
  { kind: "track", track: 1, label: "node-01", depth: 0, y: 40, h: 40, lanes: 1 },
];
const view = { t0: 0, t1: 1000 };
// ns from the origin: a wide band on node-00, a 1 ns one (drawn 3 px wide) at 500, a band on node-01.
const spans = [100, 400, 0, 500, 501, 0, 100, 900, 1];

describe("spanAt", () => {
  it("finds the band under the pointer on its track's first lane, at least 3 px wide", () => {
    expect(spanAt(rows, spans, view, 1000, 250, 10)).toBe(0);
    expect(spanAt(rows, spans, view, 1000, 502, 10)).toBe(1); // the narrow band, as wide as it is drawn
    expect(spanAt(rows, spans, view, 1000, 250, 50)).toBe(2);
    expect(spanAt(rows, spans, view, 1000, 50, 10)).toBe(-1); // before it
    expect(spanAt(rows, spans, view, 1000, 600, 10)).toBe(-1);
    expect(spanAt(rows, spans, view, 1000, 250, LANE_H + 5)).toBe(-1); // below the band, still on the track
    expect(spanAt(rows, spans, view, 1000, 250, 200)).toBe(-1); // no row there
  });

  it("prefers the narrowest where bands overlap at this zoom", () => {
    const overlapping = [0, 1000, 0, 200, 300, 0];
    expect(spanAt(rows, overlapping, view, 1000, 250, 10)).toBe(1);
    expect(spanAt(rows, overlapping, view, 1000, 700, 10)).toBe(0);
  });
});

describe("spanLines", () => {
  const detail = {
    kinds: ["compute", "gap"],
    workers: ["node-00/i-1/PID:1/neuron_rt/NC:0", "node-00/i-1/PID:1/TID:7"],
    runs: [[0, 0, 1_250_000, 3, 1, 1, 45_600, 1, -1, -1, 830, 2], []],
  };

  it("names each kind of work, its worker, time and segments; the rest in one line", () => {
    const lines = spanLines(detail, 0);
    expect(lines).toEqual([
      { kind: "compute", worker: "node-00/i-1/PID:1/neuron_rt/NC:0", ns: 1_250_000, count: 3 },
      { kind: "gap", worker: "node-00/i-1/PID:1/TID:7", ns: 45_600, count: 1 },
      { kind: "other", worker: "", ns: 830, count: 2 },
    ]);
    expect(lines.map(spanLineText)).toEqual([
      "compute 1.25 ms in 3 segments on node-00/i-1/PID:1/neuron_rt/NC:0",
      "gap 45.6 µs in 1 segment on node-00/i-1/PID:1/TID:7",
      "other 830 ns in 2 segments (more kinds and workers)",
    ]);
  });

  it("has nothing to say of a band without detail (an export made before it was sent)", () => {
    expect(spanLines(detail, 1)).toEqual([]);
    expect(spanLines(undefined, 0)).toEqual([]);
  });
});
