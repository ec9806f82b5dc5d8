// View arithmetic: zoom about a point, pan, clamp to the profile's span.

export interface Range {
  t0: number;
  t1: number;
}

export const MIN_SPAN_NS = 10;

export function clampView(v: Range, span: [number, number]): Range {
  const full = Math.max(span[1] - span[0], MIN_SPAN_NS);
  const margin = full * 0.05;
  let w = Math.min(Math.max(v.t1 - v.t0, MIN_SPAN_NS), full + 2 * margin);
  let t0 = v.t0;
  if (!isFinite(t0) || !isFinite(w)) return { t0: span[0], t1: span[1] };
  t0 = Math.max(t0, span[0] - margin);
  if (t0 + w > span[1] + margin) t0 = span[1] + margin - w;
  w = Math.max(w, MIN_SPAN_NS);
  return { t0, t1: t0 + w };
}

/** Zoom by `factor` (< 1 zooms in) keeping time `at` under the same pixel. */
export function zoomAt(v: Range, at: number, factor: number): Range {
  return { t0: at - (at - v.t0) * factor, t1: at + (v.t1 - at) * factor };
}

export function pan(v: Range, dt: number): Range {
  return { t0: v.t0 + dt, t1: v.t1 + dt };
}

/** Whether `have` (data fetched for a window at a resolution) still serves view `v` drawn `width` px wide. */
export function covers(have: { t0: number; t1: number; pxNs: number }, v: Range, width: number): boolean {
  const nsPerPx = (v.t1 - v.t0) / Math.max(width, 1);
  const inside = have.t0 <= v.t0 + nsPerPx && have.t1 >= v.t1 - nsPerPx;
  const fineEnough = have.pxNs <= Math.max(1.5 * nsPerPx, 1);
  const notTooFine = have.pxNs >= nsPerPx / 4 || have.pxNs <= 1;
  return inside && fineEnough && notTooFine;
}
