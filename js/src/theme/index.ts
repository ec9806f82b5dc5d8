// The Summary's theme probe: tells the kernel whether JupyterLab (or the page) is dark, and again
// whenever the user switches themes, so charts drawn on a canvas can be recoloured.

import type { AnyModel, RenderProps } from "@anywidget/types";

interface Model {
  dark: boolean;
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
  const watcher = new MutationObserver(report);
  watcher.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"] });
  const media = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
  media?.addEventListener("change", report);
  return () => {
    watcher.disconnect();
    media?.removeEventListener("change", report);
  };
}

export default { render };
