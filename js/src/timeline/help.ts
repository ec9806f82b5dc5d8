// The key and mouse help, shown inside the widget by `?` or its toolbar button.

import { h } from "../common/dom";

// The conventions are Perfetto's: the wheel scrolls the tracks, Ctrl+wheel and W/S zoom.
const KEYS: [string, string][] = [
  ["Wheel", "scroll the tracks up and down"],
  ["Ctrl+wheel (pinch)", "zoom at the pointer; the wheel over the time axis zooms too"],
  ["Shift+wheel", "pan left and right (a trackpad's sideways swipe too)"],
  ["W / S, + / −", "zoom in / out at the pointer"],
  ["A / D, ← / →", "pan left / right"],
  ["Drag", "pan (and scroll the tracks)"],
  ["Shift+drag, or drag on the axis", "select a time range: its table of names and tracks opens below"],
  ["Click", "select an event: its details, its flows drawn as arrows"],
  ["Hover", "an event's name, times and arguments; a counter's value at the pointer"],
  ["F, or Fit", "fit the selected range, else the selected event, else everything"],
  ["0, or Reset", "show the whole profile"],
  ["Esc", "close this help, then clear the range, then the selection"],
  ["Enter / Shift+Enter in Search", "next / previous event whose name matches"],
  ["Legend", "the colours in view with their counts; click one to highlight its events"],
  ["Track label tools ↑ ↓ ✕", "move a track among its siblings, hide it (Show hidden brings it back)"],
  ["Group header", "click to collapse or expand; the headers you scroll through stay on top"],
  ["?", "show or hide this help"],
];

export class HelpOverlay {
  readonly el = h("div", { class: "nw-help", attrs: { role: "dialog", "aria-label": "Keys and mouse" } }, [
    h("div", { class: "nw-help-title", text: "Keys and mouse" }),
    h("table", {}, [
      h(
        "tbody",
        {},
        KEYS.map(([k, v]) => h("tr", {}, [h("th", { text: k }), h("td", { text: v })])),
      ),
    ]),
  ]);

  constructor() {
    this.el.style.display = "none";
    // Its own scrolling: the wheel over it must not reach the page or the timeline behind.
    this.el.addEventListener("wheel", (e) => e.stopPropagation(), { passive: true });
  }

  get open(): boolean {
    return this.el.style.display !== "none";
  }

  toggle(on = !this.open): void {
    this.el.style.display = on ? "" : "none";
    if (on) this.fit();
  }

  /** Keep the overlay inside the widget (its height is the content's, so a CSS percentage has
   *  nothing to resolve against): as tall as the room below its top, scrolling inside beyond. */
  fit(): void {
    // Closed (as a rule), nothing is read: offsetParent makes the browser lay out the whole page
    // first, which cost ~27 ms of a drill-down's paint in JupyterLab (every relayout calls this).
    if (!this.open) return;
    const box = this.el.offsetParent as HTMLElement | null;
    if (!box) return;
    const room = box.clientHeight - this.el.offsetTop - 8;
    this.el.style.maxHeight = `${Math.max(room, 80)}px`;
  }
}
