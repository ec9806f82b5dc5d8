// Time formatting and axis ticks. Times are float nanoseconds from the profile's first timestamp.

const UNITS: [number, string][] = [
  [1e9 * 3600, "h"],
  [1e9 * 60, "min"],
  [1e9, "s"],
  [1e6, "ms"],
  [1e3, "µs"],
  [1, "ns"],
];

// The rules of neuron_widgets/model/timefmt.py, to the character (tests/test_time_format.py feeds
// both the same table). toFixed rounds the float's exact value, halves away from zero; a value that
// rounds up to the next unit is written in that unit (999.95 µs is "1 ms", never "1000 µs").
const HUGE_HOURS = 1e6; // past 114 years (no real profile) the hours get an exponent
const NOT_A_TIME = "—";

function huge(v: number): string {
  const [mantissa, exponent] = v.toExponential(2).split("e");
  return `${trim(mantissa)}e${Number.parseInt(exponent, 10)}`;
}

function inUnit(ns: number, decimals: (v: number, unit: string) => number): string {
  const a = Math.abs(ns);
  let i = UNITS.findIndex(([scale]) => a >= scale);
  if (i < 0) i = UNITS.length - 1;
  for (;;) {
    const [scale, unit] = UNITS[i];
    const v = a / scale;
    if (unit === "h" && v >= HUGE_HOURS) return `${huge(v)} h`;
    const text = v.toFixed(decimals(v, unit));
    if (i > 0 && Number(text) >= UNITS[i - 1][0] / scale) {
      i -= 1;
      continue;
    }
    return `${trim(text)} ${unit}`;
  }
}

function signed(ns: number, text: string): string {
  return ns < 0 && !text.startsWith("0 ") ? `-${text}` : text;
}

const three = (v: number, unit: string): number => (unit === "ns" || v >= 100 ? 0 : v >= 10 ? 1 : 2);
const five = (v: number, unit: string): number =>
  unit === "ns" ? 0 : v < 10 ? 4 : v < 100 ? 3 : v < 1000 ? 2 : v < 10000 ? 1 : 0;

/** A duration with three significant digits in a readable unit: 1.25 ms, 830 ns, 2.5 s, 1.5 min. */
export function formatDuration(ns: number): string {
  if (!Number.isFinite(ns)) return NOT_A_TIME;
  return signed(ns, inUnit(ns, three));
}

function trim(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

/** Tick positions for [t0, t1] about every `minPx` pixels, on 1-2-5 steps, with their step size. */
export function ticks(t0: number, t1: number, widthPx: number, minPx = 90): { step: number; values: number[] } {
  const span = Math.max(t1 - t0, 1e-9);
  const raw = (span * minPx) / Math.max(widthPx, 1);
  const p = 10 ** Math.floor(Math.log10(raw));
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

/** A time from the profile start as the axis shows it, five significant digits: 29.812 ms. */
export function formatTime(ns: number): string {
  if (!Number.isFinite(ns)) return NOT_A_TIME;
  return signed(ns, inUnit(ns, five));
}
