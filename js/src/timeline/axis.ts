// The time axis above the plot: ticks in readable units, and the brushed range with its duration.

import type { Theme } from "../common/colors";
import { formatDuration, formatTick, ticks, tickUnit } from "../common/time";
import type { Range } from "./viewmath";

export const AXIS_H = 28;

/** The ticks of a view and their labels, all in one unit. */
export function axisLabels(view: Range, width: number): { t: number; text: string }[] {
  const { step, values } = ticks(view.t0, view.t1, width);
  const unit = tickUnit(view.t0, view.t1, step);
  return values.map((t) => ({ t, text: formatTick(t, step, unit) }));
}

export function drawAxis(
  axis: HTMLCanvasElement,
  view: Range,
  brush: [number, number] | null,
  width: number,
  dpr: number,
  th: Theme,
): void {
  const ctx = axis.getContext("2d")!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = th.header;
  ctx.fillRect(0, 0, width, AXIS_H);
  const labels = axisLabels(view, width);
  ctx.font = `11px ${th.font}`;
  ctx.textBaseline = "top";
  ctx.fillStyle = th.muted;
  const scale = width / (view.t1 - view.t0);
  for (const { t, text } of labels) {
    const x = (t - view.t0) * scale;
    ctx.fillRect(x, AXIS_H - 8, 1, 8);
    ctx.fillText(text, x + 3, 4);
  }
  if (brush && brush[1] > view.t0 && brush[0] < view.t1) {
    const [a, b] = brush;
    const xa = (a - view.t0) * scale;
    const xb = (b - view.t0) * scale;
    ctx.fillStyle = th.accent;
    ctx.globalAlpha = 0.35;
    ctx.fillRect(xa, 0, xb - xa, AXIS_H);
    ctx.globalAlpha = 1;
    const label = formatDuration(b - a);
    const tw = ctx.measureText(label).width + 8;
    const cx = Math.min(Math.max((xa + xb) / 2 - tw / 2, 0), width - tw);
    ctx.fillStyle = th.accent;
    ctx.fillRect(cx, AXIS_H - 15, tw, 14);
    ctx.fillStyle = "#ffffff";
    ctx.fillText(label, cx + 4, AXIS_H - 14);
  }
}
