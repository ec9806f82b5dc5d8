import { describe, expect, it } from "vitest";
import { sampleAt, visibleRange } from "../src/timeline/counterscale";
import {
  buildRows,
  type CounterInfo,
  defaultCollapsed,
  groupPaths,
  moveTrack,
  newLayoutState,
  rowsIn,
  stickyGroups,
} from "../src/timeline/layout";
import { clampView, covers, fitRange, zoomAt } from "../src/timeline/viewmath";

const tracks = [
  { label: "i-1/PID:1/neuron_rt/NC:0", lanes: 2, events: 10 },
  { label: "i-1/PID:1/neuron_rt/NC:1", lanes: 1, events: 5 },
  { label: "i-1/PID:1/framework/TID:7", lanes: 3, events: 8 },
  { label: "i-2/PID:9/neuron_rt/NC:0", lanes: 1, events: 1 },
];

describe("buildRows", () => {
  it("groups tracks by label segments, in a stable order", () => {
    const rows = buildRows(tracks, [], newLayoutState());
    const labels = rows.map((r) => `${r.kind}:${r.label}`);
    expect(labels).toEqual([
      "group:i-1",
      "group:PID:1",
      "group:neuron_rt",
      "track:NC:0",
      "track:NC:1",
      "group:framework",
      "track:TID:7",
      "group:i-2",
      "group:PID:9",
      "group:neuron_rt",
      "track:NC:0",
    ]);
    for (let i = 1; i < rows.length; i++) expect(rows[i].y).toBe(rows[i - 1].y + rows[i - 1].h);
  });
  it("collapses, hides, filters and reorders", () => {
    const st = newLayoutState();
    st.collapsed.add("i-1/PID:1");
    expect(buildRows(tracks, [], st).filter((r) => r.kind === "track").length).toBe(1);
    st.collapsed.clear();
    st.hidden.add(1);
    expect(buildRows(tracks, [], st).some((r) => r.kind === "track" && r.track === 1)).toBe(false);
    st.hidden.clear();
    st.filter = "tid";
    expect(
      buildRows(tracks, [], st)
        .filter((r) => r.kind === "track")
        .map((r) => r.label),
    ).toEqual(["TID:7"]);
    st.filter = "";
    moveTrack(tracks, st, 1, -1);
    const order = buildRows(tracks, [], st)
      .filter((r) => r.kind === "track")
      .map((r) => (r as { track: number }).track);
    expect(order.slice(0, 2)).toEqual([1, 0]);
  });
  it("puts counters first and collapses kinds with many series", () => {
    const counters: CounterInfo[] = ["HBM:0", "HBM:1", "HBM:2"].map((h, i) => ({
      key: `k${i}`,
      label: `i-1/HBM usage/Device:0/${h}`,
      kind: "hbm",
      unit: "B",
      max: 1,
      min: 0,
      breakdown: true,
    }));
    const st = newLayoutState();
    for (const p of defaultCollapsed(counters)) st.collapsed.add(p);
    const rows = buildRows(tracks, counters, st);
    expect(rows[0].label).toBe("Counters");
    expect(rows.filter((r) => r.kind === "counter").length).toBe(0);
    expect(rowsIn(rows, 0, 1)[0]).toBe(rows[0]);
  });
  it("starts each instance's counters collapsed when there are several instances", () => {
    const counters: CounterInfo[] = ["i-1", "i-2"].flatMap((inst) => [
      { key: `${inst}m`, label: `${inst}/Host memory`, kind: "memory", unit: "%", max: 1, min: 0, breakdown: false },
      {
        key: `${inst}b`,
        label: `${inst}/Host-device bandwidth/NC:0/host_to_device`,
        kind: "bandwidth",
        unit: "B/s",
        max: 1,
        min: 0,
        breakdown: false,
      },
    ]);
    const st = newLayoutState();
    for (const p of defaultCollapsed(counters)) st.collapsed.add(p);
    const rows = buildRows(tracks, counters, st);
    expect(rows.filter((r) => r.kind === "counter").length).toBe(0);
    expect(rows.slice(0, 3).map((r) => r.label)).toEqual(["Counters", "i-1", "i-2"]);
    const one = counters.filter((c) => c.label.startsWith("i-1"));
    expect(defaultCollapsed(one)).toEqual([]); // one instance: its counters show
  });
  it("collapses counter groups with the tracks' on Collapse all", () => {
    const counters: CounterInfo[] = [
      { key: "m", label: "i-1/Host memory", kind: "memory", unit: "%", max: 1, min: 0, breakdown: false },
      { key: "h", label: "i-1/HBM usage/Device:0/HBM:0", kind: "hbm", unit: "B", max: 1, min: 0, breakdown: true },
    ];
    const st = newLayoutState();
    for (const p of groupPaths(tracks, counters)) st.collapsed.add(p);
    const rows = buildRows(tracks, counters, st);
    expect(rows.filter((r) => r.kind === "counter" || r.kind === "track").length).toBe(0);
    expect(rows[0].label).toBe("Counters");
  });
});

describe("view math", () => {
  it("zooms about the cursor and clamps to the span", () => {
    const v = zoomAt({ t0: 0, t1: 1000 }, 250, 0.5);
    expect(v.t0).toBe(125);
    expect(v.t1).toBe(625);
    const c = clampView({ t0: -1e9, t1: 1e9 }, [0, 1000]);
    expect(c.t0).toBeGreaterThanOrEqual(-50);
    expect(c.t1).toBeLessThanOrEqual(1050);
    expect(clampView({ t0: 5, t1: 6 }, [0, 1000]).t1 - 5).toBe(10);
  });
  it("knows when held data no longer serves the view", () => {
    expect(covers({ t0: 0, t1: 3000, pxNs: 1 }, { t0: 1000, t1: 2000 }, 1000)).toBe(true);
    expect(covers({ t0: 0, t1: 3000, pxNs: 10 }, { t0: 1000, t1: 2000 }, 1000)).toBe(false); // too coarse
    expect(covers({ t0: 1500, t1: 3000, pxNs: 1 }, { t0: 1000, t1: 2000 }, 1000)).toBe(false); // not covered
  });
});

describe("issue 14: view bounds, fit, sticky groups, counter scale", () => {
  it("keeps the view within 1% of its width of the profile", () => {
    const v = clampView({ t0: -5e5, t1: 5e5 }, [0, 130e6]);
    expect(v.t0).toBeGreaterThanOrEqual(-0.01 * (v.t1 - v.t0) - 1e-6);
    const out = clampView({ t0: -1e12, t1: 1e12 }, [0, 1000]);
    expect(out.t0).toBeGreaterThanOrEqual(-0.011 * (out.t1 - out.t0));
    expect(out.t1).toBeLessThanOrEqual(1000 + 0.011 * (out.t1 - out.t0));
  });
  it("fits the range, else the selection, else home", () => {
    expect(fitRange([10, 20], { start: 0, end: 5 }, [0, 100])).toEqual({ t0: 10, t1: 20 });
    const sel = fitRange(null, { start: 10_000, end: 12_000 }, [0, 1e6]);
    expect(sel.t0).toBeLessThan(10_000);
    expect(sel.t1).toBeGreaterThan(12_000);
    expect(fitRange(null, {}, [5, 9])).toEqual({ t0: 5, t1: 9 });
  });
  it("pins the groups being scrolled through, outermost first", () => {
    const tracks = [
      { label: "i-1/PID:1/neuron_rt/NC:0", lanes: 20, events: 1 },
      { label: "i-1/PID:1/neuron_rt/NC:1", lanes: 20, events: 1 },
      { label: "i-1/PID:2/neuron_rt/NC:0", lanes: 2, events: 1 },
    ];
    const rows = buildRows(tracks, [], newLayoutState());
    const nc1 = rows.find((r) => r.kind === "track" && r.label === "NC:1")!;
    const pinned = stickyGroups(rows, nc1.y + 100).map((g) => g.label);
    expect(pinned).toEqual(["i-1", "PID:1", "neuron_rt"]);
    expect(stickyGroups(rows, 0)).toEqual([]);
  });
  it("reads a counter's visible maximum and the value in force", () => {
    const s = { t: new Float64Array([0, 10, 20, 30]), v: new Float64Array([1, 5, 2, 9]) };
    expect(visibleRange(s, 12, 25)).toEqual([2, 5]);
    expect(sampleAt(s, 15)).toBe(1);
    expect(sampleAt(s, -1)).toBe(-1);
  });
});
