import { describe, expect, it } from "vitest";
import { anchorOf, sameTracks, scrollFor } from "../src/timeline/anchor";
import { buildRows, newLayoutState, type TrackInfo } from "../src/timeline/layout";

// A grouping's preview (few lanes) and the same tracks once every event is in (more lanes).
const preview: TrackInfo[] = [
  { label: "i-1/PID:1/neuron_rt/NC:0", lanes: 1, events: 10 },
  { label: "i-1/PID:1/neuron_rt/NC:1", lanes: 1, events: 5 },
  { label: "i-1/PID:1/framework/TID:7", lanes: 1, events: 8 },
  { label: "i-2/PID:9/neuron_rt/NC:0", lanes: 1, events: 1 },
];
const full = preview.map((t, i) => ({ ...t, lanes: 3 + i, events: t.events * 25 }));

describe("the scroll kept across a preview's swap", () => {
  it("keeps the row at the top where it was when rows above it grow", () => {
    const before = buildRows(preview, [], newLayoutState());
    const after = buildRows(full, [], newLayoutState());
    const target = before.find((r) => r.kind === "track" && r.track === 3)!;
    const top = target.y + 5; // 5 px into the last track
    const a = anchorOf(before, top)!;
    expect(a).toEqual({ key: "t3", offset: 5 });
    const moved = after.find((r) => r.kind === "track" && r.track === 3)!;
    expect(moved.y).toBeGreaterThan(target.y); // the rows above grew
    expect(scrollFor(after, a)).toBe(moved.y + 5);
  });

  it("leaves a view at the very top at the top, and a group header anchors as a row", () => {
    const rows = buildRows(preview, [], newLayoutState());
    expect(anchorOf(rows, 0)).toBeNull();
    const group = rows.find((r) => r.kind === "group" && r.path === "i-2")!;
    const a = anchorOf(rows, group.y)!;
    expect(a.key).toBe("gi-2");
    expect(scrollFor(buildRows(full, [], newLayoutState()), a)).toBe(
      buildRows(full, [], newLayoutState()).find((r) => r.kind === "group" && r.path === "i-2")!.y,
    );
  });

  it("gives null for a row that is gone, and an offset within a row that shrank", () => {
    const rows = buildRows(full, [], newLayoutState());
    const t0 = rows.find((r) => r.kind === "track" && r.track === 0)!;
    const a = anchorOf(rows, t0.y + t0.h - 2)!;
    const shrunk = buildRows(preview, [], newLayoutState());
    const back = shrunk.find((r) => r.kind === "track" && r.track === 0)!;
    expect(scrollFor(shrunk, a)).toBe(back.y + back.h - 1);
    const st = newLayoutState();
    st.hidden.add(0);
    expect(scrollFor(buildRows(full, [], st), a)).toBeNull();
  });

  it("tells the same tracks by label and order, whatever their lanes", () => {
    expect(sameTracks(preview, full)).toBe(true);
    expect(sameTracks(preview, full.slice(1))).toBe(false);
    expect(sameTracks(preview, [full[1], full[0], full[2], full[3]])).toBe(false);
  });
});
