// Time formatting and axis ticks. Times are float nanoseconds from the profile's first timestamp.

const UNITS: [number, string][] = [
  [1e9 * 3600, "h"],
  [1e9 * 60, "min"],
  [1e9, "s"],
  [1e6, "ms"],
  [1e3, "µs"],
  [1, "ns"],
];

/** A duration with a readable unit: 1.25 ms, 830 ns, 2.5 s. */
export function formatDuration(ns: number): string {
  const a = Math.abs(ns);
  if (!isFinite(ns)) return "—";
  if (a === 0) return "0 ns";
  for (const [scale, unit] of UNITS) {
    if (a >= scale || scale === 1) {
      const v = ns / scale;
      const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
      return `${trim(v.toFixed(scale === 1 ? 0 : digits))} ${unit}`;
    }
  }
  return `${ns} ns`;
}

function trim(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

/** Tick positions for [t0, t1] about every `minPx` pixels, on 1-2-5 steps, with their step size. */
export function ticks(t0: number, t1: number, widthPx: number, minPx = 90): { step: number; values: number[] } {
  const span = Math.max(t1 - t0, 1e-9);
  const raw = (span * minPx) / Math.max(widthPx, 1);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
  const values: number[] = [];
  const first = Math.ceil(t0 / step) * step;
  for (let v = first; v <= t1 && values.length < 1000; v += step) values.push(v);
  return { step: Math.max(step, 1), values };
}

/**
 * The unit axis labels use for a view: the largest whose size the view's times reach, as long as
 * the tick step needs at most three decimals in it (29.8 ms, not 29800 µs; 1.2345 s at 100 µs steps).
 */
export function tickUnit(t0: number, t1: number, step: number): [number, string] {
  const reach = Math.max(Math.abs(t0), Math.abs(t1), step);
  for (const u of UNITS) if (reach >= u[0] && step / u[0] >= 1e-3 - 1e-12) return u;
  return UNITS[UNITS.length - 1];
}

/** A tick label: the offset from the profile start, in `unit`, with the decimals the step needs. */
export function formatTick(ns: number, step: number, unit: [number, string] = tickUnit(ns, ns, step)): string {
  const [scale, name] = unit;
  const decimals = Math.max(0, Math.min(Math.ceil(-Math.log10(step / scale) - 1e-9), 6));
  return `${(ns / scale).toFixed(decimals)} ${name}`;
}

/** A time from the profile start as the axis shows it, with about five significant digits: 29.812 ms. */
export function formatTime(ns: number): string {
  if (!isFinite(ns)) return "—";
  const a = Math.abs(ns);
  if (a < 1000) return `${Math.round(ns)} ns`;
  const [scale, unit] = UNITS.find((u) => a >= u[0]) ?? UNITS[UNITS.length - 1];
  const v = ns / scale;
  const digits = Math.max(0, 4 - Math.floor(Math.log10(Math.abs(v))));
  return `${trim(v.toFixed(Math.min(digits, 6)))} ${unit}`;
}
