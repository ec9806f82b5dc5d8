// Paint-time comparison for bench/bench_paint.py: the widget's 2D painter against a WebGL2
// instanced-rectangle painter, on the same dense synthetic reply, panning 2% per frame.

import { nameColor, readTheme } from "../src/common/colors";
import type { Items } from "../src/timeline/data";
import { LANE_H } from "../src/timeline/layout";
import { paint, type Scene } from "../src/timeline/render";

const W = 1920;
const LANES = 40;
const H = LANES * LANE_H;
const NAMES = Array.from({ length: 64 }, (_, i) => `op_${i}`);

function synthetic(perPx: number): Items {
  const n = W * 3 * LANES * perPx;
  const start = new Float64Array(n),
    end = new Float64Array(n);
  const track = new Int32Array(n),
    lane = new Int32Array(n),
    name = new Int32Array(n),
    row = new Int32Array(n);
  const count = new Uint32Array(n),
    flags = new Uint8Array(n);
  let k = 0;
  for (let l = 0; l < LANES; l++) {
    for (let p = 0; p < W * 3 * perPx; p++) {
      const t = (p / perPx) * 1000;
      start[k] = t;
      end[k] = t + 1000 / perPx - 1;
      track[k] = l;
      lane[k] = 0;
      name[k] = (p * 7 + l) % NAMES.length;
      row[k] = k;
      count[k] = p % 5 === 0 ? 3 : 1;
      k++;
    }
  }
  return {
    t0: 0,
    t1: W * 3000,
    width: W * 3,
    pxNs: 1000,
    grouping: "default",
    revision: 0,
    n,
    tracks: new Set([...Array(LANES).keys()]),
    start,
    end,
    track,
    lane,
    name,
    row,
    count,
    flags,
    markersDropped: 0,
  };
}

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  return {
    frames: s.length,
    p50_ms: +s[Math.floor(s.length / 2)].toFixed(2),
    p95_ms: +s[Math.floor(0.95 * (s.length - 1))].toFixed(2),
  };
}

async function frames(draw: (t0: number) => void, n = 120): Promise<number[]> {
  const out: number[] = [];
  const began = performance.now();
  for (let i = 0; i < n; i++) {
    // Software WebGL can take seconds a frame: a painter that slow is measured on fewer frames.
    if (i >= 5 && performance.now() - began > 20_000) break;
    const t0 = W * 1000 * (0.5 + (i % 50) * 0.02);
    const a = performance.now();
    draw(t0);
    out.push(performance.now() - a);
    await new Promise((r) => requestAnimationFrame(r));
  }
  return out;
}

function canvas2d(items: Items): (t0: number) => void {
  const c = document.createElement("canvas");
  c.width = W;
  c.height = H;
  document.body.appendChild(c);
  const ctx = c.getContext("2d")!;
  const trackY = new Map<number, number>();
  for (let l = 0; l < LANES; l++) trackY.set(l, l * LANE_H);
  const theme = readTheme(document.body);
  return (t0) => {
    const s: Scene = {
      view: { t0, t1: t0 + W * 1000, width: W },
      rows: [],
      scrollTop: 0,
      height: H,
      trackY,
      items,
      names: NAMES,
      theme,
      match: null,
      selection: null,
      brush: null,
      hoverRow: -1,
      counters: new Map(),
      pick: null,
      nodeMask: null,
      pointerT: null,
      pinned: 0,
    };
    paint(ctx, s);
    ctx.getImageData(0, 0, 1, 1); // wait for the raster, as a frame would
  };
}

function rgb(css: string): [number, number, number] {
  const m = css.match(/hsl\((\d+), (\d+)%, (\d+)%\)/)!;
  const h = +m[1] / 360,
    s = +m[2] / 100,
    l = +m[3] / 100;
  const f = (n: number) => {
    const k = (n + h * 12) % 12;
    const a = s * Math.min(l, 1 - l);
    return l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  return [f(0), f(8), f(4)];
}

function webgl(items: Items): ((t0: number) => void) | null {
  const c = document.createElement("canvas");
  c.width = W;
  c.height = H;
  document.body.appendChild(c);
  const gl = c.getContext("webgl2");
  if (!gl) return null;
  const vs = `#version 300 es
    in vec2 corner; in vec4 rect; in vec3 color; uniform vec2 size; out vec3 v;
    void main() { vec2 p = rect.xy + corner * rect.zw; gl_Position = vec4(p.x / size.x * 2.0 - 1.0, 1.0 - p.y / size.y * 2.0, 0, 1); v = color; }`;
  const fs = `#version 300 es
    precision mediump float; in vec3 v; out vec4 o; void main() { o = vec4(v, 1.0); }`;
  const prog = gl.createProgram()!;
  for (const [type, src] of [
    [gl.VERTEX_SHADER, vs],
    [gl.FRAGMENT_SHADER, fs],
  ] as const) {
    const sh = gl.createShader(type)!;
    gl.shaderSource(sh, src);
    gl.compileShader(sh);
    gl.attachShader(prog, sh);
  }
  gl.linkProgram(prog);
  gl.useProgram(prog);
  const quad = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, quad);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([0, 0, 1, 0, 0, 1, 1, 1]), gl.STATIC_DRAW);
  const loc = (n: string) => gl.getAttribLocation(prog, n);
  gl.enableVertexAttribArray(loc("corner"));
  gl.vertexAttribPointer(loc("corner"), 2, gl.FLOAT, false, 0, 0);
  const rects = new Float32Array(items.n * 4),
    colors = new Float32Array(items.n * 3);
  const palette = NAMES.map((n) => rgb(nameColor(n, false)));
  const rectBuf = gl.createBuffer(),
    colorBuf = gl.createBuffer();
  for (let i = 0; i < items.n; i++) colors.set(palette[items.name[i]], i * 3);
  gl.bindBuffer(gl.ARRAY_BUFFER, colorBuf);
  gl.bufferData(gl.ARRAY_BUFFER, colors, gl.STATIC_DRAW);
  gl.enableVertexAttribArray(loc("color"));
  gl.vertexAttribPointer(loc("color"), 3, gl.FLOAT, false, 0, 0);
  gl.vertexAttribDivisor(loc("color"), 1);
  gl.bindBuffer(gl.ARRAY_BUFFER, rectBuf);
  gl.enableVertexAttribArray(loc("rect"));
  gl.vertexAttribPointer(loc("rect"), 4, gl.FLOAT, false, 0, 0);
  gl.vertexAttribDivisor(loc("rect"), 1);
  gl.uniform2f(gl.getUniformLocation(prog, "size"), W, H);
  const px = new Uint8Array(4);
  return (t0) => {
    const scale = W / (W * 1000);
    for (let i = 0; i < items.n; i++) {
      const x0 = (items.start[i] - t0) * scale,
        x1 = (items.end[i] - t0) * scale;
      rects[i * 4] = x0;
      rects[i * 4 + 1] = items.track[i] * LANE_H + 2;
      rects[i * 4 + 2] = Math.max(x1 - x0, 1);
      rects[i * 4 + 3] = LANE_H - 3;
    }
    gl.bindBuffer(gl.ARRAY_BUFFER, rectBuf);
    gl.bufferData(gl.ARRAY_BUFFER, rects, gl.DYNAMIC_DRAW);
    gl.clearColor(1, 1, 1, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, items.n);
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px); // wait for the raster
  };
}

export async function run(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { plot_px: W, lanes: LANES };
  for (const perPx of [1, 2]) {
    const items = synthetic(perPx);
    const key = `${perPx}_per_px`;
    out[`items_${key}`] = items.n;
    console.log(`paint bench: ${key}, ${items.n} items, 2D`);
    out[`canvas2d_${key}`] = stats(await frames(canvas2d(items)));
    console.log(`paint bench: ${key}, WebGL`);
    const gl = webgl(items);
    out[`webgl_${key}`] = gl ? stats(await frames(gl)) : "WebGL2 unavailable";
  }
  return out;
}

(window as unknown as { runPaintBench: typeof run }).runPaintBench = run;
