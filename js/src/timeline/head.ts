// The lines above a timeline's toolbar: its title with a spinner while loading, notes (alignment,
// warnings) and the summary chips (the device viewer's engine strip). Text only. A plain timeline's
// only line, its preview's spinner and status, floats over the plot instead (no layout shift).

import { h } from "../common/dom";
import type { TimelineModel } from "../common/messages";

interface Chip {
  label: string;
  value: string;
  share?: number | null;
  title?: string;
}

export function renderHead(head: HTMLElement, model: TimelineModel): boolean {
  const title = (model.get("title") as string) || "";
  const notes = (model.get("notes") as string[]) || [];
  const strip = (model.get("strip") as Chip[]) || [];
  const loading = !!model.get("loading");
  const status = (model.get("status") as string) || "";
  const parts: HTMLElement[] = [];
  if (title || loading) {
    parts.push(
      h("div", { class: "nw-title" }, [
        ...(loading ? [h("span", { class: "nw-spinner", title: "loading" })] : []),
        h("span", { text: title }),
        h("span", { class: "nw-note nw-head-status", text: status }),
      ]),
    );
  } else if (status) {
    parts.push(h("div", { class: "nw-note nw-head-status", text: status }));
  }
  for (const n of notes) parts.push(h("div", { class: "nw-note", text: n }));
  if (strip.length) parts.push(h("div", { class: "nw-strip" }, strip.map(chip)));
  head.replaceChildren(...parts);
  head.style.display = parts.length ? "" : "none";
  // A head that is only the loading line (a plain timeline's preview, while a grouping is built on every
  // event) floats over the plot: its coming and going does not move the tracks under the pointer.
  head.classList.toggle("nw-head-float", loading && !title && !notes.length && !strip.length);
  return loading;
}

function chip(c: Chip): HTMLElement {
  const el = h("div", { class: "nw-chip", title: c.title ?? "" }, [
    h("span", { class: "nw-chip-label", text: c.label }),
    h("span", { class: "nw-chip-value", text: c.value }),
  ]);
  if (typeof c.share === "number") {
    const bar = h("span", { class: "nw-chip-bar" });
    bar.style.width = `${Math.round(Math.min(Math.max(c.share, 0), 1) * 100)}%`;
    el.appendChild(bar);
  }
  return el;
}
