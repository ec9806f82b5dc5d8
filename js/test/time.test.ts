import { describe, expect, it } from "vitest";
import { formatDuration, formatTick, formatTime, ticks, tickUnit } from "../src/common/time";

describe("formatDuration", () => {
  it("picks a readable unit", () => {
    expect(formatDuration(0)).toBe("0 ns");
    expect(formatDuration(830)).toBe("830 ns");
    expect(formatDuration(1250)).toBe("1.25 µs");
    expect(formatDuration(1_250_000)).toBe("1.25 ms");
    expect(formatDuration(2.5e9)).toBe("2.5 s");
    expect(formatDuration(90e9)).toBe("1.5 min");
  });
});

describe("ticks", () => {
  it("spaces ticks on 1-2-5 steps at least minPx apart", () => {
    const { step, values } = ticks(0, 1e6, 1000, 90);
    expect([1, 2, 5].some((m) => Math.abs(step / 10 ** Math.floor(Math.log10(step)) - m) < 1e-9)).toBe(true);
    expect((step / 1e6) * 1000).toBeGreaterThanOrEqual(90);
    expect(values[0]).toBe(0);
    for (let i = 1; i < values.length; i++) expect(values[i] - values[i - 1]).toBeCloseTo(step);
  });
  it("reaches nanoseconds far from the origin without losing the step", () => {
    const t0 = 3_600e9; // an hour into the profile
    const { step, values } = ticks(t0, t0 + 100, 1000, 90);
    expect(step).toBe(10);
    expect(values.length).toBeGreaterThan(5);
    const unit = tickUnit(values[0], values[values.length - 1], step);
    const labels = values.map((v) => formatTick(v, step, unit));
    expect(new Set(labels).size).toBe(labels.length); // every tick told apart
    expect(labels[1]).toMatch(/µs$/);
  });
});

describe("axis labels", () => {
  it("read in the unit of their magnitude", () => {
    const { step, values } = ticks(29.0e6, 30.6e6, 1000, 90);
    const unit = tickUnit(29.0e6, 30.6e6, step);
    expect(unit[1]).toBe("ms");
    expect(values.map((v) => formatTick(v, step, unit))).toContain("29.8 ms");
    expect(formatTick(0, step, unit)).toBe("0.0 ms");
  });
  it("keep the small unit near the start", () => {
    const { step } = ticks(0, 400e3, 1000, 90);
    expect(tickUnit(0, 400e3, step)[1]).toBe("µs");
  });
});

describe("formatTime", () => {
  it("shows a time with five significant digits in a readable unit", () => {
    expect(formatTime(392_268)).toBe("392.27 µs");
    expect(formatTime(29_812_345)).toBe("29.812 ms");
    expect(formatTime(430)).toBe("430 ns");
    expect(formatTime(2_500_000_000)).toBe("2.5 s");
  });
});
