// The last view kept as a small PNG in the widget's state, shown when a notebook is reopened
// without its kernel (the widget state is saved with the notebook; replies are not).

import type { TimelineModel } from "../common/messages";

const MAX_BYTES = 400_000;

export function saveSnapshot(canvas: HTMLCanvasElement, model: TimelineModel): void {
  canvas.toBlob(async (blob) => {
    if (!blob || blob.size > MAX_BYTES) return;
    model.set("_snapshot", new DataView(await blob.arrayBuffer()));
    model.save_changes();
  }, "image/png");
}

export async function readSnapshot(model: TimelineModel): Promise<ImageBitmap | null> {
  const snap = model.get("_snapshot") as DataView | undefined;
  if (!snap || snap.byteLength === 0) return null;
  const bytes = snap.buffer.slice(snap.byteOffset, snap.byteOffset + snap.byteLength) as ArrayBuffer;
  try {
    return await createImageBitmap(new Blob([bytes], { type: "image/png" }));
  } catch {
    return null;
  }
}

/** Saves the canvas 2 s after the last reply, unless a request is in flight (its reply would change it). */
export class SnapshotKeeper {
  private timer = 0;

  constructor(
    private canvas: HTMLCanvasElement,
    private model: TimelineModel,
    private busy: () => boolean,
  ) {}

  schedule(): void {
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => !this.busy() && saveSnapshot(this.canvas, this.model), 2000);
  }

  stop(): void {
    window.clearTimeout(this.timer);
  }
}
