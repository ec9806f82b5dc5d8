// Stable colours per event name (a hash of the text, so the same name has the same colour in
// every view and session) and the theme's colours read from JupyterLab's CSS variables.

export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

// The busy levels of a job's density tracks (neuron_widgets/job/view.py LEVELS) on one ramp, so that
// busier reads stronger: [light theme, dark theme].
const LEVEL_COLORS: Record<string, [string, string]> = {
  "busy < 25%": ["hsl(205, 45%, 84%)", "hsl(205, 30%, 30%)"],
  "busy 25-50%": ["hsl(205, 55%, 69%)", "hsl(205, 42%, 42%)"],
  "busy 50-75%": ["hsl(205, 65%, 53%)", "hsl(205, 55%, 55%)"],
  "busy >= 75%": ["hsl(205, 80%, 36%)", "hsl(205, 75%, 70%)"],
  "not summarised yet": ["hsl(0, 0%, 82%)", "hsl(0, 0%, 32%)"],
};

export function nameColor(name: string, dark: boolean): string {
  const fixed = LEVEL_COLORS[name];
  if (fixed) return fixed[dark ? 1 : 0];
  const h = hashString(name);
  const hue = h % 360;
  // Keep clear of pure red: red means error.
  const shifted = hue < 15 || hue > 345 ? (hue + 40) % 360 : hue;
  const sat = 45 + ((h >>> 9) % 25);
  const light = dark ? 38 + ((h >>> 17) % 12) : 62 + ((h >>> 17) % 14);
  return `hsl(${shifted}, ${sat}%, ${light}%)`;
}

export const ERROR_COLOR = "#d62728";

export interface Theme {
  dark: boolean;
  background: string;
  foreground: string;
  muted: string;
  grid: string;
  header: string;
  accent: string;
  font: string;
}

export function readTheme(el: Element): Theme {
  // An element not yet on the page has no computed style (every variable reads empty): the page's
  // body carries the theme's variables too. A view made before its element is attached painted
  // with the fallbacks, a white background under dark headers (issue 35 item 9).
  const cs = getComputedStyle(el.isConnected ? el : document.body);
  const v = (name: string, fallback: string) => cs.getPropertyValue(name).trim() || fallback;
  const given = v("--jp-layout-color0", "");
  const light = document.body.dataset.jpThemeLight;
  const dark =
    light === "false" ||
    (given
      ? luminance(given) < 0.4
      : light !== "true" && typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches);
  const background = given || (dark ? "#111111" : "#ffffff");
  return {
    dark,
    background,
    foreground: v("--jp-ui-font-color1", dark ? "#e0e0e0" : "#1f1f1f"),
    muted: v("--jp-ui-font-color2", dark ? "#a0a0a0" : "#616161"),
    grid: v("--jp-border-color2", dark ? "#3a3a3a" : "#e0e0e0"),
    header: v("--jp-layout-color2", dark ? "#2a2a2a" : "#eeeeee"),
    accent: v("--jp-brand-color1", "#1976d2"),
    font: v("--jp-ui-font-family", "system-ui, sans-serif"),
  };
}

function luminance(color: string): number {
  const m = color.match(/^#([0-9a-f]{6})$/i);
  if (!m) {
    const rgb = color.match(/rgba?\((\d+),\s*(\d+),\s*(\d+)/);
    if (!rgb) return 1;
    return (0.299 * +rgb[1] + 0.587 * +rgb[2] + 0.114 * +rgb[3]) / 255;
  }
  const n = parseInt(m[1], 16);
  return (0.299 * ((n >> 16) & 255) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255)) / 255;
}
