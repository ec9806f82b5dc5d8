// EventDetails: the selected event's properties, arguments and dependency chain, as text.

import { h } from "../common/dom";
import type { DetailsTraits, ViewModel } from "../common/messages";
import { initialize } from "../common/resync";

type Model = ViewModel<DetailsTraits>;

interface Dep {
  row: number;
  name: string;
  start: string;
  duration: string;
  track: string;
}

interface EventInfo {
  title?: string;
  row?: number;
  fields?: [string, string][];
  args?: [string, string][];
  upstream?: Dep[];
  downstream?: Dep[];
}

function kvTable(rows: [string, string][]): HTMLElement {
  return h("table", { class: "nw-table nw-kv" }, [
    h(
      "tbody",
      {},
      rows.map(([k, v]) => h("tr", {}, [h("th", { text: k }), h("td", { text: v })])),
    ),
  ]);
}

function depTable(title: string, deps: Dep[], focus: (row: number) => void): HTMLElement {
  const body = deps.length
    ? h("table", { class: "nw-table nw-deps" }, [
        h("thead", {}, [
          h(
            "tr",
            {},
            ["Name", "Start", "Duration", "Track"].map((t) => h("th", { text: t })),
          ),
        ]),
        h(
          "tbody",
          {},
          deps.map((d) => {
            const tr = h("tr", { class: "nw-dep", title: "Show this event in the timeline" }, [
              h("td", { text: d.name }),
              h("td", { text: d.start }),
              h("td", { text: d.duration }),
              h("td", { text: d.track }),
            ]);
            tr.dataset.row = String(d.row);
            tr.addEventListener("click", () => focus(d.row));
            return tr;
          }),
        ),
      ])
    : h("div", { class: "nw-note", text: "none" });
  return h("div", { class: "nw-section" }, [
    h("div", { class: "nw-section-title", text: `${title} (${deps.length})` }),
    body,
  ]);
}

function render({ model, el }: { model: Model; el: HTMLElement }) {
  const root = h("div", { class: "nw-details" });
  el.appendChild(root);
  const draw = () => {
    const ev = (model.get("event") ?? {}) as EventInfo;
    if (!ev.fields) {
      root.replaceChildren(h("div", { class: "nw-note", text: "Click an event in the timeline to see its details." }));
      return;
    }
    const focus = (row: number) => model.send({ type: "focus", row });
    root.replaceChildren(
      h("div", { class: "nw-details-title", text: ev.title ?? "" }),
      h("div", { class: "nw-section" }, [
        h("div", { class: "nw-section-title", text: "Properties" }),
        kvTable(ev.fields),
      ]),
      h("div", { class: "nw-section" }, [
        h("div", { class: "nw-section-title", text: `Arguments (${ev.args?.length ?? 0})` }),
        ev.args?.length ? kvTable(ev.args) : h("div", { class: "nw-note", text: "none" }),
      ]),
      depTable("Upstream", ev.upstream ?? [], focus),
      depTable("Downstream", ev.downstream ?? [], focus),
    );
    root.dataset.row = String(ev.row ?? -1);
  };
  model.on("change:event", draw);
  draw();
  return () => model.off("change:event", draw);
}

export default { initialize, render };
