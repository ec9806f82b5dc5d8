// The data of an exported page: base64 text of a gzip'd blob, cut into typed columns and JSON
// sections by the manifest. Decompression uses the browser's own DecompressionStream: no
// library, no network.

export interface Section {
  dtype: "u8" | "u16" | "u32" | "i32" | "f64" | "i64" | "json";
  offset: number;
  bytes: number;
  n?: number;
  delta?: boolean;
  base?: number;
  shift?: number; // stored value = value + shift (codes where -1 means none)
}

export interface Manifest {
  version: number;
  sections: Record<string, Section>;
}

export type Column = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array | BigInt64Array;

const CTORS = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f64: Float64Array,
  i64: BigInt64Array,
} as const;

export async function inflate(base64: string): Promise<ArrayBuffer> {
  const bin = atob(base64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
}

export class Payload {
  constructor(
    readonly manifest: Manifest,
    readonly buffer: ArrayBuffer,
  ) {
    if (manifest.version !== 1)
      throw new Error(`this page's data is format ${manifest.version}; this viewer reads format 1`);
  }

  has(name: string): boolean {
    return name in this.manifest.sections;
  }

  private section(name: string): Section {
    const s = this.manifest.sections[name];
    if (!s) throw new Error(`the page's data has no section ${name}`);
    return s;
  }

  /** A typed column as stored (no copy). */
  column(name: string): Column {
    const s = this.section(name);
    if (s.dtype === "json") throw new Error(`section ${name} is JSON, not a column`);
    const Ctor = CTORS[s.dtype];
    return new Ctor(this.buffer, s.offset, s.bytes / Ctor.BYTES_PER_ELEMENT) as Column;
  }

  /** A numeric column as float64, with delta-encoded columns added back up. */
  float(name: string): Float64Array {
    const s = this.section(name);
    const raw = this.column(name);
    const out = new Float64Array(raw.length);
    if (s.delta) {
      let acc = s.base ?? 0;
      for (let i = 0; i < raw.length; i++) {
        acc += Number(raw[i]);
        out[i] = acc;
      }
    } else {
      for (let i = 0; i < raw.length; i++) out[i] = Number(raw[i]);
    }
    return out;
  }

  /** Integer codes as Int32Array (narrow stored types widened). */
  ints(name: string): Int32Array {
    const raw = this.column(name);
    const shift = this.section(name).shift ?? 0;
    if (raw instanceof Int32Array && !shift) return raw;
    const out = new Int32Array(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = Number(raw[i]) - shift;
    return out;
  }

  json<T = unknown>(name: string): T {
    const s = this.section(name);
    const text = new TextDecoder().decode(new Uint8Array(this.buffer, s.offset, s.bytes));
    return JSON.parse(text) as T;
  }
}
