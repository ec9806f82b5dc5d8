// The timeline's toolbar: grouping, search with its previous / next buttons, the track filter,
// collapse and expand, hidden tracks, CPU counters, the critical path, the findings, Fit, Reset, the legend and the help.

import { button, h } from "../common/dom";

export interface ToolbarActions {
  find(direction: 1 | -1): void;
  collapseAll(on: boolean): void;
  showCpu(on: boolean): void;
  fit(): void;
  reset(): void;
  legend(): void;
  help(): void;
}

export interface ToolbarParts {
  grouping: HTMLSelectElement;
  search: HTMLInputElement;
  searchInfo: HTMLElement;
  filter: HTMLInputElement;
  hidden: HTMLButtonElement;
  status: HTMLElement;
  colorBy: HTMLSelectElement; // hidden unless the view offers colourings (a device trace's)
  critical: HTMLButtonElement; // the critical path toggle
  criticalInfo: HTMLElement; // what the path shows, or why there is none
  findings: HTMLButtonElement; // the findings' marks on the overview strip
  findingsInfo: HTMLElement; // how many are marked, or why there are none
}

export function fillToolbar(bar: HTMLElement, p: ToolbarParts, a: ToolbarActions, showCpu: boolean): void {
  const cpu = h("label", { class: "nw-check", title: "Host CPU utilisation per core" }, [
    h("input", { attrs: { type: "checkbox" } }),
    h("span", { text: "CPU" }),
  ]);
  const cpuBox = cpu.querySelector("input")!;
  cpuBox.checked = showCpu;
  cpuBox.addEventListener("change", () => a.showCpu(cpuBox.checked));
  bar.append(
    p.grouping,
    p.colorBy,
    p.search,
    button("◀", "Previous match (Shift+Enter)", () => a.find(-1)),
    button("▶", "Next match (Enter)", () => a.find(1)),
    p.searchInfo,
    p.filter,
    button("Collapse all", "Collapse every group", () => a.collapseAll(true)),
    button("Expand all", "Expand every group", () => a.collapseAll(false)),
    p.hidden,
    cpu,
    p.critical,
    p.criticalInfo,
    p.findings,
    p.findingsInfo,
    button("Fit", "Fit the selected range, else the selected event, else everything (F)", a.fit),
    button("Reset", "Show the whole profile (0)", a.reset),
    button("Legend", "The colours in view and their counts; click one to highlight its events", a.legend),
    button("?", "Keys and mouse (?)", a.help),
    p.status,
  );
}
