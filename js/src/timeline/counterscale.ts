// A counter track's scale is the visible window's: a 26 px track of a percentage that stays under
// 5 % fills its height, and its label says the maximum; the value under the pointer is read here
// too, from the samples the view holds, without asking the kernel.

import type { CounterInfo } from "./layout";
import { formatValue } from "./tooltip";
import type { Range } from "./viewmath";

export interface Series {
  t: Float64Array;
  v: Float64Array;
}

/** The sample in force at t (the last one at or before it), or -1. */
export function sampleAt(s: Series, t: number): number {
  let lo = 0;
  let hi = s.t.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (s.t[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** The smallest and largest value shown in [t0, t1] (the sample in force at t0 included). */
export function visibleRange(s: Series, t0: number, t1: number): [number, number] | null {
  if (!s.t.length) return null;
  let i = Math.max(sampleAt(s, t0), 0);
  let lo = Infinity;
  let hi = -Infinity;
  for (; i < s.t.length && s.t[i] <= t1; i++) {
    const v = s.v[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return hi >= lo ? [lo, hi] : null;
}

/** A counter label's extra text: the window's maximum, and the value under the pointer. */
export function counterText(
  data: Series | undefined,
  info: CounterInfo | undefined,
  view: Range,
  pointerT: number | null,
): { scale: string; value: string } {
  if (!data || !info) return { scale: "", value: "" };
  const seen = visibleRange(data, view.t0, view.t1);
  const k = pointerT === null ? -1 : sampleAt(data, pointerT);
  return {
    scale: seen ? `max ${formatValue(seen[1], info.unit)}` : "",
    value: k >= 0 ? formatValue(data.v[k], info.unit) : "",
  };
}
