// An exported page: decode the inline data, stand up a local host per timeline, and render the
// same views the notebook shows (timeline, grouping buttons, event details) against it.

import { button, h } from "../common/dom";
import details from "../details/index";
import { TimelineView } from "../timeline/index";
import { type Meta, TimelineHost } from "./host";
import { inflate, type Manifest, Payload } from "./payload";
import { renderSummary } from "./summary";

interface Layout {
  title: string;
  timelines: number;
  views: { kind: "timeline" | "details" | "grouping" | "summary"; source: number; item?: string }[];
}

function groupingButtons(host: TimelineHost): HTMLElement {
  const m = host.model;
  const row = h("div", { class: "nw-grouping-buttons" });
  const draw = () => {
    const names = m.get("groupings") as Record<string, string>;
    row.replaceChildren(
      h("span", { class: "nw-note", text: "Group by " }),
      ...Object.entries(names).map(([k, label]) =>
        button(
          label,
          `Group tracks: ${label}`,
          () => m.set("grouping", k),
          k === m.get("grouping") ? "nw-btn nw-on" : "nw-btn",
        ),
      ),
    );
  };
  m.on("change:grouping", draw);
  draw();
  return row;
}

async function boot(root: HTMLElement): Promise<void> {
  const manifestEl = document.getElementById("nw-manifest");
  const dataEl = document.getElementById("nw-data");
  if (!manifestEl || !dataEl) throw new Error("this page has no embedded data");
  const manifest = JSON.parse(manifestEl.textContent ?? "{}") as Manifest;
  const payload = new Payload(manifest, await inflate((dataEl.textContent ?? "").trim()));
  const layout = payload.json<Layout>("layout");
  const hosts: TimelineHost[] = [];
  for (let i = 0; i < layout.timelines; i++)
    hosts.push(new TimelineHost(payload, `t${i}:`, payload.json<Meta>(`t${i}:meta`)));
  root.replaceChildren(
    h("h1", { text: layout.title }),
    h("p", {
      class: "nw-export-note",
      text:
        "Exported from neuron-widgets: this page works offline, without a kernel." +
        (layout.timelines
          ? " Ctrl+wheel or W/S to zoom, wheel to scroll the tracks, drag to pan, Shift+drag to measure a range, " +
            "click an event for its details; ? lists every key."
          : " Hover a chart for its numbers."),
    }),
  );
  const views: TimelineView[] = [];
  const charts: Promise<void>[] = [];
  for (const v of layout.views) {
    const host = hosts[v.source];
    const box = h("div", { class: `nw-view nw-view-${v.kind}` });
    root.appendChild(box);
    if (v.kind === "summary") charts.push(renderSummary(payload.json<unknown>(v.item ?? ""), box, host ?? null));
    else if (v.kind === "timeline") views.push(new TimelineView(host.model, box));
    else if (v.kind === "details") details.render({ model: host.details, el: box });
    else box.appendChild(groupingButtons(host));
  }
  (window as unknown as { __nwExport: unknown }).__nwExport = { hosts, views, payload };
  await Promise.all(charts);
  root.dataset.ready = "1";
}

const root = document.getElementById("nw-export") ?? document.body;
boot(root).catch((e: unknown) => {
  root.replaceChildren(h("div", { class: "nw-boot-error", text: `This exported view could not start: ${String(e)}` }));
  root.dataset.ready = "error";
});
