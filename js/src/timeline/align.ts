// Two runs' timelines aligned on a step (widgets/timeline_align.py): the bar above the toolbar
// (which step, a picker to re-align, Unlink) and the link to the partner's view on the page-wide
// bus (common/viewsync.ts). A window travels relative to the aligned step's start: this run shows
// `its start + rel` where the partner shows `the partner's start + rel`, as the kernel computes it.

import { button, h } from "../common/dom";
import type { TimelineModel } from "../common/messages";
import { join, memberId, publish, type SyncMessage } from "../common/viewsync";
import type { Range } from "./viewmath";

/** The `aligned` trait: {} when not aligned. */
export interface Aligned {
  group: string;
  role: string; // "before" or "after"
  neff: string;
  partner: string;
  step: number;
  steps: number[]; // the steps both runs have (k-th of the NEFF, from 0)
  labels: string[];
  starts: number[]; // this run's start of each, ns from its origin
  partner_starts: number[];
  partner_span: [number, number];
  windows: [number, number][]; // each step's window relative to its start (the same in both runs)
}

export interface AlignHost {
  readonly model: TimelineModel;
  readonly root: HTMLElement;
  /** Show a window the partner moved to (not published back: that would echo). */
  follow(v: Range): void;
}

export function alignedOf(model: TimelineModel): Aligned | null {
  const a = model.get("aligned") as Partial<Aligned> | undefined;
  if (!a || typeof a.group !== "string" || !a.group || !Array.isArray(a.steps) || !Array.isArray(a.starts)) return null;
  return a as Aligned;
}

/** The aligned step's start in this run, and its index in the lists. */
function anchor(a: Aligned, step = a.step): { at: number; i: number } | null {
  const i = a.steps.indexOf(step);
  return i >= 0 && Number.isFinite(a.starts[i]) ? { at: a.starts[i], i } : null;
}

export class AlignBar {
  readonly el = h("div", { class: "nw-align" });
  private text = h("span", { class: "nw-align-text" });
  private tail = h("span", { class: "nw-align-tail" });
  readonly select = h("select", { class: "nw-align-step", title: "The step both timelines are aligned on" });
  private readonly id = memberId();
  private leave: (() => void) | null = null;
  private group = "";
  private labels = "";

  constructor(private host: AlignHost) {
    const unlink = button("Unlink", "Stop following the other run's timeline (both views stay where they are)", () =>
      this.drop(true),
    );
    this.el.append(this.text, this.select, this.tail, unlink);
    this.select.addEventListener("change", () => this.realign(Number(this.select.value), true));
    this.update();
  }

  get state(): Aligned | null {
    return alignedOf(this.host.model);
  }

  /** The trait changed: join or leave the group, and show which step. */
  update(): void {
    const a = this.state;
    if ((a?.group ?? "") !== this.group) {
      this.leave?.();
      this.leave = null;
      this.group = a?.group ?? "";
      if (a) this.leave = join(a.group, this.id, (m) => this.heard(m));
    }
    this.el.style.display = a ? "" : "none";
    this.host.root.dataset.aligned = a ? String(a.step) : "";
    if (!a) return;
    const labels = a.labels.join("\n");
    if (labels !== this.labels) {
      this.labels = labels;
      this.select.replaceChildren(
        ...a.steps.map((k, i) => h("option", { text: a.labels[i] ?? `step ${k}`, attrs: { value: String(k) } })),
      );
    }
    this.select.value = String(a.step);
    this.text.textContent = `Aligned with ${a.partner} on`;
    this.tail.textContent = `${a.neff ? `of NEFF ${a.neff}` : ""}: times from that step's start match in both`;
  }

  /** This view's user moved it: the partner shows the same window from its own step start. */
  moved(v: Range): void {
    const a = this.state;
    const an = a && anchor(a);
    if (!a || !an) return;
    publish(a.group, this.id, { kind: "view", rel: [v.t0 - an.at, v.t1 - an.at] });
  }

  private heard(m: SyncMessage): void {
    const a = this.state;
    if (!a) return;
    if (m.kind === "view") {
      const an = anchor(a);
      if (an) this.host.follow({ t0: an.at + m.rel[0], t1: an.at + m.rel[1] });
    } else if (m.kind === "step") this.realign(m.step, false);
    else this.drop(false);
  }

  /** Both timelines on another step: each shows that step's window from its own start. */
  realign(step: number, tell: boolean): void {
    const a = this.state;
    const an = a && anchor(a, step);
    if (!a || !an) return;
    if (tell) publish(a.group, this.id, { kind: "step", step });
    this.host.model.set("aligned", { ...a, step });
    this.host.model.save_changes();
    this.update();
    const w = a.windows[an.i];
    this.host.follow({ t0: an.at + w[0], t1: an.at + w[1] });
  }

  /** The link ends here (and, when `tell`, in the partner). */
  drop(tell: boolean): void {
    const a = this.state;
    if (!a) return;
    if (tell) publish(a.group, this.id, { kind: "unlink" });
    this.host.model.set("aligned", {});
    this.host.model.save_changes();
    this.update();
  }

  /** Where this view may go: its own span and the partner's, laid on this run's clock by the aligned step. */
  bounds(span: [number, number]): [number, number] {
    const a = this.state;
    const an = a && anchor(a);
    if (!a || !an || !Array.isArray(a.partner_span) || a.partner_span.length !== 2) return span;
    const shift = an.at - a.partner_starts[an.i];
    if (!Number.isFinite(shift)) return span;
    return [Math.min(span[0], a.partner_span[0] + shift), Math.max(span[1], a.partner_span[1] + shift)];
  }

  destroy(): void {
    this.leave?.();
    this.leave = null;
  }
}
