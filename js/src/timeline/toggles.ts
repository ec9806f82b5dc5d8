// The toolbar's analysis toggles: the critical path (its events outlined, its jumps drawn; on a job's
// timeline also spans over the folded parts' tracks) and the findings (their ranges marked on the
// overview strip). Each is a button, a line of text saying what is shown or why nothing is, and what
// a frame draws of it; the kernel computes both. The path's headline (whose work is longest on it, in
// how many steps) is a line of its own under the toolbar, which it would push onto a second row.

import { button, h } from "../common/dom";
import type { TimelineModel } from "../common/messages";
import type { FindingMark } from "./findings";
import type { PathSpans, SpanDetail } from "./pathspans";
import type { Scene } from "./render";

type Model = TimelineModel;

interface Info {
  state?: string;
  text?: string;
  headline?: string;
  jumps?: number[];
  spans?: number[]; // a job's folded parts: [t0, t1, track, ...]
  span_detail?: SpanDetail; // what each span stands for (the tooltip's lines)
  marks?: FindingMark[];
}

export class AnalysisToggles {
  readonly criticalBtn: HTMLButtonElement;
  readonly criticalInfo = h("span", { class: "nw-critical-info" }); // not .nw-status: that is the one waiting line
  readonly criticalLine = h("div", { class: "nw-critical-line" }); // the path's headline while it is shown
  readonly findingsBtn: HTMLButtonElement;
  readonly findingsInfo = h("span", { class: "nw-critical-info nw-findings-info" });

  constructor(
    private model: Model,
    private root: HTMLElement,
    private request: () => void,
  ) {
    const flip = (key: "critical_path" | "findings") => () => {
      this.model.set(key, !this.model.get(key));
      this.model.save_changes();
    };
    this.criticalBtn = button(
      "Critical path",
      "Outline the events that bound the run end to end, dim the rest, draw its jumps between cores and threads",
      flip("critical_path"),
    );
    this.findingsBtn = button(
      "Findings",
      "Mark what to fix first on the overview strip (analysis.findings), coloured by severity: hover one to read it, click it to fit the view",
      flip("findings"),
    );
  }

  /** Follow the model's toggles and their answers; `on` registers a listener the view removes on destroy. */
  bind(on: (event: string, f: () => void) => void): void {
    for (const key of [
      "critical_path",
      "critical_info",
      "critical_available",
      "findings",
      "findings_info",
      "findings_available",
    ])
      on(`change:${key}`, () => this.show());
    this.show();
  }

  /** Each toggle's state, its line of text (tests read data-critical and data-findings), then a frame. */
  show(): void {
    this.showOne("critical_path", "critical", this.criticalBtn, this.criticalInfo);
    const scene = this.criticalScene();
    const headline = scene ? (((this.model.get("critical_info") ?? {}) as Info).headline ?? "") : "";
    this.criticalLine.textContent = headline;
    this.criticalLine.style.display = headline ? "" : "none";
    this.showOne("findings", "findings", this.findingsBtn, this.findingsInfo);
    this.request();
  }

  private showOne(
    key: "critical_path" | "findings",
    name: "critical" | "findings",
    btn: HTMLButtonElement,
    line: HTMLElement,
  ): void {
    const on = !!this.model.get(key);
    const info = (this.model.get(`${name}_info` as const) ?? {}) as Info;
    // Not offered where it cannot be computed (a device trace has no path): the toolbar keeps to one line.
    btn.style.display = this.model.get(`${name}_available` as const) === false ? "none" : "";
    btn.classList.toggle("nw-on", on);
    btn.setAttribute("aria-pressed", String(on));
    line.textContent = info.text ?? "";
    this.root.dataset[name] = on ? (info.state ?? "computing") : info.state === "none" ? "none" : "off";
  }

  criticalScene(): Scene["critical"] {
    if (!this.model.get("critical_path")) return null;
    const info = (this.model.get("critical_info") ?? {}) as Info;
    return info.state === "shown" ? { jumps: info.jumps ?? [], spans: info.spans ?? [] } : null;
  }

  /** A job's path over its folded parts while it is shown (the bands' hover), else null. */
  pathSpans(): PathSpans | null {
    if (!this.model.get("critical_path")) return null;
    const info = (this.model.get("critical_info") ?? {}) as Info;
    return info.state === "shown" && info.spans?.length ? { spans: info.spans, detail: info.span_detail } : null;
  }

  /** The findings' marks to draw on the overview strip: none while off or computing. */
  findingMarks(): FindingMark[] {
    if (!this.model.get("findings")) return [];
    const info = (this.model.get("findings_info") ?? {}) as Info;
    return info.state === "shown" ? (info.marks ?? []) : [];
  }
}
