// Bundles the front end into ../neuron_widgets/static (one ES module per widget, plus CSS).
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

const out = "../neuron_widgets/static";
mkdirSync(out, { recursive: true });
const options = {
  entryPoints: { timeline: "src/timeline/index.ts", details: "src/details/index.ts", picker: "src/picker/index.ts" },
  outdir: out,
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !process.argv.includes("--watch"),
  sourcemap: false,
  logLevel: "info",
};
copyFileSync("src/timeline.css", `${out}/timeline.css`);
if (process.argv.includes("--watch")) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
