// DeviceProfilePicker: a "Device Profiles List" button that opens a modal table of the profile's
// device profiles; a row is chosen by a click, Submit (or a double click, or Enter) sends it to
// the kernel. The modal is a native <dialog>, so it sits above JupyterLab and traps focus.

import { button, h, keepKeysFromLab } from "../common/dom";
import type { PickerTraits, ViewModel } from "../common/messages";
import { initialize } from "../common/resync";
import { parseFilter, rowMatches } from "./match";

type Model = ViewModel<PickerTraits>;

interface Column {
  key: string;
  label: string;
}

type Row = Record<string, string>;

export class PickerView {
  root = h("div", { class: "nw-picker" });
  private dialog = h("dialog", { class: "nw-dialog" });
  private filter = h("input", {
    class: "nw-input nw-pick-filter",
    attrs: {
      type: "search",
      placeholder: "Filter: nc 3, model 2, any word",
      title:
        "Every term must match. A column's name then a value (nc 3, nc:3, model 2, pid 1267860) looks in that " +
        "column; a whole number matches whole values; other words are found inside any column.",
    },
  });
  private count = h("span", { class: "nw-note" });
  private body = h("tbody");
  private submit: HTMLButtonElement;
  private chosen = -1;

  constructor(
    private model: Model,
    el: HTMLElement,
  ) {
    const open = button("Device Profiles List", "List the device profiles of this profile", () => this.open());
    open.classList.add("nw-open-list");
    const status = h("span", { class: "nw-note nw-picker-status" });
    this.submit = button("Submit", "Open the chosen device profile", () => this.send());
    this.submit.classList.add("nw-primary");
    const cancel = button("Cancel", "Close without opening", () => this.dialog.close());
    const head = h("thead", {}, [
      h(
        "tr",
        {},
        this.columns().map((c) => h("th", { text: c.label })),
      ),
    ]);
    this.dialog.append(
      h("div", { class: "nw-dialog-head" }, [h("strong", { text: "Device Profiles" }), this.filter, this.count]),
      h("div", { class: "nw-dialog-body" }, [h("table", { class: "nw-table nw-pick" }, [head, this.body])]),
      h("div", { class: "nw-dialog-foot" }, [cancel, this.submit]),
    );
    this.root.append(open, status, this.dialog);
    el.appendChild(this.root);
    this.filter.addEventListener("input", () => this.fill());
    keepKeysFromLab(this.dialog);
    this.dialog.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && this.chosen >= 0) {
        e.preventDefault();
        this.send();
      }
    });
    const showStatus = () => (status.textContent = (model.get("status") as string) || "");
    model.on("change:status", showStatus);
    model.on("change:rows", () => this.fill());
    showStatus();
    this.fill();
  }

  private columns(): Column[] {
    return (this.model.get("columns") as [string, string][]).map(([key, label]) => ({ key, label }));
  }

  private rows(): Row[] {
    return this.model.get("rows") as Row[];
  }

  open(): void {
    this.fill();
    if (!this.dialog.open) this.dialog.showModal();
    this.filter.focus();
  }

  private fill(): void {
    const cols = this.columns();
    const rows = this.rows();
    const terms = parseFilter(this.filter.value, cols);
    const shown: number[] = [];
    rows.forEach((r, i) => {
      if (rowMatches(r, terms, cols)) shown.push(i);
    });
    if (!shown.includes(this.chosen)) this.chosen = -1;
    this.body.replaceChildren(
      ...shown.map((i) => {
        const tr = h(
          "tr",
          { class: "nw-pick-row" },
          cols.map((c) => h("td", { text: rows[i][c.key] ?? "" })),
        );
        tr.dataset.index = String(i);
        tr.tabIndex = 0;
        if (i === this.chosen) tr.classList.add("nw-chosen");
        tr.addEventListener("click", () => this.choose(i));
        tr.addEventListener("dblclick", () => {
          this.choose(i);
          this.send();
        });
        return tr;
      }),
    );
    this.count.textContent = rows.length
      ? `${shown.length} of ${rows.length}`
      : "this profile lists no device profiles";
    this.submit.disabled = this.chosen < 0;
  }

  private choose(i: number): void {
    this.chosen = i;
    for (const tr of Array.from(this.body.children) as HTMLElement[]) {
      tr.classList.toggle("nw-chosen", tr.dataset.index === String(i));
    }
    this.submit.disabled = false;
  }

  private send(): void {
    if (this.chosen < 0) return;
    this.model.send({ type: "submit", index: this.chosen });
    this.dialog.close();
  }
}

export default {
  initialize,
  render({ model, el }: { model: Model; el: HTMLElement }) {
    const view = new PickerView(model, el);
    (view.root as unknown as { __nwPicker: PickerView }).__nwPicker = view;
    return () => view.root.remove();
  },
};
