// The Summary's theme probe: tells the kernel whether JupyterLab (or the page) is dark, and again
// whenever the user switches themes, so charts drawn on a canvas can be recoloured.

import type { AnyModel, RenderProps } from "@anywidget/types";
import { deferDetachedTables, quietEmptyRanges, whenTablesDeferred } from "../common/bokehtables";
import { initialize } from "../common/resync";

// As soon as this module runs, so that tables drawn before any probe's view is made are covered.
deferDetachedTables();
quietEmptyRanges();

interface Model {
  dark: boolean;
  bokeh_ready: boolean;
  tables_ready: boolean;
  bokeh_missing: boolean;
}

export function isDark(doc: Document = document): boolean {
  const light = doc.body?.dataset.jpThemeLight;
  if (light === "true") return false;
  if (light === "false") return true;
  return typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches;
}

function render({ model, el }: RenderProps<Model>): () => void {
  el.style.display = "none";
  const report = () => {
    const dark = isDark();
    if ((model as AnyModel<Model>).get("dark") !== dark) {
      model.set("dark", dark);
      model.save_changes();
    }
  };
  report();
  // No BokehJS on this page (a reload, another tab: the kernel loaded it for an earlier page): ask
  // the Summary for it, unless the cell's own load output brings it first; say when it has come.
  const hasBokeh = (): boolean =>
    typeof (window as unknown as { Bokeh?: { require?: unknown } }).Bokeh?.require === "function";
  let asked = 0;
  const bokehCheck = window.setInterval(() => {
    asked++;
    if (hasBokeh()) {
      window.clearInterval(bokehCheck);
      if ((model as AnyModel<Model>).get("bokeh_missing")) {
        model.set("bokeh_missing", false);
        model.save_changes();
      }
    } else if (asked === 20 && !(model as AnyModel<Model>).get("bokeh_missing")) {
      model.set("bokeh_missing", true);
      model.save_changes();
    } else if (asked > 1200) {
      window.clearInterval(bokehCheck);
    }
  }, 50);
  // The Summary adds its chart view to the page only once tables drawn off the page are safe. Said
  // again if the kernel's state comes back without it (a resync after a message was lost).
  let patched = false;
  const tablesSafe = (): void => {
    if (patched && !(model as AnyModel<Model>).get("tables_ready")) {
      model.set("tables_ready", true);
      model.save_changes();
    }
  };
  void whenTablesDeferred().then(() => {
    patched = true;
    tablesSafe();
  });
  model.on("change:tables_ready", tablesSafe);
  // jupyter_bokeh's view drops updates sent before it has drawn: tell the kernel when the Summary's
  // chart view (a sibling in the same box) is on the page. The kernel may replace that view by a
  // new one (then it sets bokeh_ready back to false): report again when the new one is drawn.
  const seen = new WeakSet<Element>();
  let poll = 0;
  const watch = (): void => {
    window.clearInterval(poll);
    let tries = 0;
    poll = window.setInterval(() => {
      const box = el.closest(".nw-summary-widget");
      const roots = box ? [...box.querySelectorAll("[data-root-id]")] : [];
      let fresh = roots.find((r) => r.isConnected && !seen.has(r));
      // No new view after 3 s: the kernel's "not drawn" was not a new view but its state coming back
      // without our report (a resync after a lost message). Report the view that is drawn.
      if (!fresh && tries > 60) fresh = roots.find((r) => r.isConnected);
      if (fresh || ++tries > 600) {
        window.clearInterval(poll);
        if (fresh) {
          for (const r of roots) seen.add(r);
          model.set("bokeh_ready", true);
          model.save_changes();
        }
      }
    }, 50);
  };
  watch();
  const renewed = (): void => {
    if (!(model as AnyModel<Model>).get("bokeh_ready")) watch();
  };
  model.on("change:bokeh_ready", renewed);
  const watcher = new MutationObserver(report);
  watcher.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"] });
  const media = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
  media?.addEventListener("change", report);
  return () => {
    window.clearInterval(poll);
    window.clearInterval(bokehCheck);
    model.off("change:bokeh_ready", renewed);
    model.off("change:tables_ready", tablesSafe);
    watcher.disconnect();
    media?.removeEventListener("change", report);
  };
}

export { deferDetachedTables };
export default { initialize, render };
