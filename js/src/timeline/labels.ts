// The track-label panel: only the rows near the visible part are in the DOM.

import { button, h } from "../common/dom";
import { GROUP_H, type Row, type TrackInfo } from "./layout";

/** What a counter's label says beside its name: the visible window's maximum, and the value under the pointer. */
export type CounterText = (key: string) => { scale: string; value: string };

export interface LabelActions {
  toggle(path: string): void;
  hide(track: number): void;
  move(track: number, dir: -1 | 1): void;
}

export class LabelPanel {
  readonly el = h("div", { class: "nw-labels" });
  private inner = h("div", { class: "nw-labels-inner" });

  constructor(private actions: LabelActions) {
    this.el.appendChild(this.inner);
  }

  /** The rows near [top, bottom), and `pinned` (the groups being scrolled through) stuck at the top. */
  render(
    rows: Row[],
    tracks: TrackInfo[],
    top: number,
    bottom: number,
    total: number,
    pinned: Extract<Row, { kind: "group" }>[] = [],
    counterText?: CounterText,
  ): void {
    this.inner.style.height = `${total}px`;
    const frag = document.createDocumentFragment();
    // A row partly under the pinned headers shows its label in the part still in view (its events
    // draw there; a label under the headers left them nameless).
    const covered = top + pinned.length * GROUP_H;
    for (const r of rows) {
      if (r.y + r.h < top - 200 || r.y > bottom + 200) continue;
      const div = h("div", { class: `nw-label nw-label-${r.kind}` });
      const y = r.kind !== "group" && pinned.length && r.y < covered && r.y + r.h > covered ? covered : r.y;
      div.style.top = `${y}px`;
      div.style.height = `${r.y + r.h - y}px`;
      div.style.paddingLeft = `${4 + r.depth * 12}px`;
      if (r.kind === "group") {
        div.append(
          h("span", { class: "nw-twisty", text: r.collapsed ? "▸" : "▾" }),
          h("span", { class: "nw-label-text", text: r.label, title: r.path.replace("\u0000", "") }),
          h("span", { class: "nw-label-count", text: String(r.tracks) }),
        );
        div.dataset.path = r.path;
        div.addEventListener("click", () => this.actions.toggle(r.path));
      } else if (r.kind === "track") {
        const t = tracks[r.track];
        div.dataset.track = String(r.track);
        div.append(
          h("span", {
            class: "nw-label-text",
            text: r.label,
            title: `${t.label}\n${t.events.toLocaleString()} events, ${t.lanes} lanes`,
          }),
          h("span", { class: "nw-label-tools" }, [
            button("↑", "Move up", () => this.actions.move(r.track, -1), "nw-tool"),
            button("↓", "Move down", () => this.actions.move(r.track, 1), "nw-tool"),
            button("✕", "Hide this track", () => this.actions.hide(r.track), "nw-tool"),
          ]),
        );
      } else {
        const text = counterText?.(r.key);
        div.dataset.key = r.key;
        div.append(
          h("span", { class: "nw-label-text", text: r.label.split("/").pop() ?? r.label, title: r.label }),
          h("span", { class: "nw-counter-scale", text: text?.scale ?? "" }),
          h("span", { class: "nw-counter-value", text: text?.value ?? "" }),
        );
      }
      frag.appendChild(div);
    }
    // The headers of the groups being scrolled through stay at the top, so every row has its context.
    pinned.forEach((g, k) => {
      const div = h("div", { class: "nw-label nw-label-group nw-label-sticky" }, [
        h("span", { class: "nw-twisty", text: "▾" }),
        h("span", { class: "nw-label-text", text: g.label, title: g.path.replace("\u0000", "") }),
        h("span", { class: "nw-label-count", text: String(g.tracks) }),
      ]);
      div.style.top = `${top + k * GROUP_H}px`;
      div.style.height = `${GROUP_H}px`;
      div.style.paddingLeft = `${4 + g.depth * 12}px`;
      div.dataset.path = g.path;
      div.addEventListener("click", () => this.actions.toggle(g.path));
      frag.appendChild(div);
    });
    this.inner.replaceChildren(frag);
  }
}
