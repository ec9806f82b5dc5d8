// Bundles the front end into ../neuron_widgets/static (one ES module per widget, plus CSS).
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

const out = "../neuron_widgets/static";
mkdirSync(out, { recursive: true });
const options = {
  entryPoints: { timeline: "src/timeline/widget.ts", details: "src/details/index.ts", picker: "src/picker/index.ts",
    theme: "src/theme/index.ts" },
  outdir: out,
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !process.argv.includes("--watch"),
  sourcemap: false,
  logLevel: "info",
};
// The exported HTML page inlines this one as a classic script (an IIFE): no module loading.
const page = { ...options, entryPoints: { export: "src/export/index.ts" }, format: "iife" };
copyFileSync("src/timeline.css", `${out}/timeline.css`);
if (process.argv.includes("--watch")) {
  for (const o of [options, page]) await (await esbuild.context(o)).watch();
} else {
  await Promise.all([esbuild.build(options), esbuild.build(page)]);
}
