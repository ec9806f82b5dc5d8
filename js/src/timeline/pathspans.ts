// A job's critical path over its folded parts: the bands drawn where the path runs through a part whose events are
// not loaded (render.ts paints them over the part's summary lane), which one is under the pointer, and what it
// stands for, as the tooltip lists it (the kernel sums the path's segments per band: widgets/job/critical.py).

import { formatDuration } from "../common/time";
import { LANE_H, type Row, rowsIn } from "./layout";
import type { Range } from "./viewmath";

/** What each band stands for: per band (aligned with the spans), flat [kind, worker, duration_ns, count, ...]
 * indexing `kinds` and `workers`, longest first; a kind of -1 sums the rest. */
export interface SpanDetail {
  kinds: string[];
  workers: string[];
  runs: number[][];
}

/** The bands as the kernel sends them: flat [t0, t1, track, ...] (ns from the origin), and what each stands for. */
export interface PathSpans {
  spans: number[];
  detail?: SpanDetail;
}

/** One line of a band's tooltip: a kind of work on a worker (its track's label), its time and segment count. */
export interface SpanLine {
  kind: string;
  worker: string;
  ns: number;
  count: number;
}

/** The index of the band under (x, yContent) in the plot, or -1: a band covers its track's first lane, at least
 * 3 px wide as drawn; where bands overlap at this zoom, the narrowest. */
export function spanAt(rows: Row[], spans: number[], view: Range, width: number, x: number, yContent: number): number {
  const row = rowsIn(rows, yContent, yContent + 1)[0];
  if (row?.kind !== "track" || yContent < row.y + 1 || yContent > row.y + LANE_H) return -1;
  const scale = width / (view.t1 - view.t0);
  let best = -1;
  let bestWidth = Infinity;
  for (let k = 0; k + 2 < spans.length; k += 3) {
    if (spans[k + 2] !== row.track) continue;
    const x0 = Math.max((spans[k] - view.t0) * scale, -2);
    const x1 = Math.max(Math.min((spans[k + 1] - view.t0) * scale, width + 2), x0 + 3);
    if (x < x0 - 1 || x > x1 + 1) continue;
    if (x1 - x0 < bestWidth) {
      bestWidth = x1 - x0;
      best = k / 3;
    }
  }
  return best;
}

/** Band `i`'s segments by kind and worker, longest first (the rest in one line), as the kernel summed them. */
export function spanLines(detail: SpanDetail | undefined, i: number): SpanLine[] {
  const run = detail?.runs[i] ?? [];
  const out: SpanLine[] = [];
  for (let k = 0; k + 3 < run.length; k += 4) {
    const rest = run[k] < 0;
    out.push({
      kind: rest ? "other" : (detail?.kinds[run[k]] ?? "?"),
      worker: rest ? "" : (detail?.workers[run[k + 1]] ?? "?"),
      ns: run[k + 2],
      count: run[k + 3],
    });
  }
  return out;
}

/** A line's text: "compute 1.25 ms in 3 segments on node-01/i-0a88/PID:1/neuron_rt/NC:1", in two parts: what and
 * how long, then where (the tooltip puts the long track label on a line of its own). */
export function spanLineParts(line: SpanLine): [string, string] {
  const n = `${line.count.toLocaleString()} segment${line.count === 1 ? "" : "s"}`;
  return [
    `${line.kind} ${formatDuration(line.ns)} in ${n}`,
    line.worker ? ` on ${line.worker}` : " (more kinds and workers)",
  ];
}

export function spanLineText(line: SpanLine): string {
  return spanLineParts(line).join("");
}
