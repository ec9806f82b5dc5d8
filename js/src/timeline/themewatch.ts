// Repainting when the page's theme changes. Each frame reads the theme's colours: a view made
// before its element was on the page, or before the theme's CSS variables applied, paints in the
// page's colours. A theme switch asks for a frame, and so does the variables' landing (after the
// attribute changes, or at a page load with a theme saved): the root's background,
// var(--jp-layout-color0), starts a transition.

/** Call `request` on each theme change seen on `root`; the function returned stops watching. */
export function watchTheme(root: HTMLElement, request: () => void): () => void {
  const watch = new MutationObserver(() => request());
  watch.observe(document.body, {
    attributes: true,
    attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"],
  });
  const themed = (e: TransitionEvent) => {
    if (e.target === root && e.propertyName === "background-color") request();
  };
  const kinds = ["transitionrun", "transitionend"] as const;
  for (const kind of kinds) root.addEventListener(kind, themed);
  return () => {
    watch.disconnect();
    for (const kind of kinds) root.removeEventListener(kind, themed);
  };
}
