// View arithmetic: zoom about a point, pan, clamp to the profile's span.

export interface Range {
  t0: number;
  t1: number;
}

export const MIN_SPAN_NS = 10;
const EDGE = 0.01; // room beyond the profile's ends, as a share of the view's width

/**
 * Keep a view on the profile: at most the whole span and 1% of the view's width beyond either
 * end, so zooming out or jumping to the first event never shows time before the profile began.
 */
export function clampView(v: Range, span: [number, number]): Range {
  const full = Math.max(span[1] - span[0], MIN_SPAN_NS);
  const w = Math.min(Math.max(v.t1 - v.t0, MIN_SPAN_NS), full * (1 + 2 * EDGE));
  if (!Number.isFinite(v.t0) || !Number.isFinite(w)) return { t0: span[0], t1: span[1] };
  const margin = w * EDGE;
  let t0 = Math.max(v.t0, span[0] - margin);
  if (t0 + w > span[1] + margin) t0 = span[1] + margin - w;
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

/** What Fit shows: the brushed range, else the selected event with room either side, else home. */
export function fitRange(
  brush: [number, number] | null,
  sel: { start?: number; end?: number },
  home: [number, number],
): Range {
  if (brush) return { t0: brush[0], t1: brush[1] };
  if (typeof sel.start === "number" && typeof sel.end === "number") {
    const w = Math.max(sel.end - sel.start, 1000) * 1.5;
    const mid = (sel.start + sel.end) / 2;
    return { t0: mid - w / 2, t1: mid + w / 2 };
  }
  return { t0: home[0], t1: home[1] };
}

/**
 * What a click on a finding's mark shows: its range with 5% room either side; an instant (an
 * error's start) or a short range gets at least 1% of `home`, so the events around it show.
 */
export function findingView(t0: number, t1: number, home: [number, number]): Range {
  const w = Math.max(t1 - t0, (home[1] - home[0]) / 100, 1000);
  const mid = (t0 + t1) / 2;
  return { t0: mid - w * 0.55, t1: mid + w * 0.55 };
}
