// BokehJS tables drawn off the page wait until they are on it.
//
// jupyter_bokeh draws a chart view into its widget's element before ipywidgets puts that element
// on the page. A DataTable's SlickGrid then looks for the stylesheet it just added to the table's
// shadow root; a detached shadow root has no stylesheets, so the grid throws "SlickGrid Cannot
// find stylesheet." and the table stays empty. Whether the page gets there first is a race, lost
// on a busy machine. The fix here: a table view whose element is not on the page yet builds its
// grid when it is, and the grid's other entry points wait for the grid.

// The page's BokehJS is a global without types; this patches its views' prototypes (private methods too).
// biome-ignore lint/suspicious/noExplicitAny: BokehJS's view prototypes have no types
type Any = any;

const MARK = "__nwDeferredWhenDetached";
// Every method of DataTableView that reads the grid, and what it does without one.
const NEEDS_GRID = ["_after_resize", "_after_layout", "updateGrid", "updateSelection", "_sync_selected_with_view"];

function onPage(view: Any): boolean {
  const el: Any = view.wrapper_el ?? view.el;
  return !!el?.isConnected;
}

/** Patch BokehJS's DataTableView once; true when the page's BokehJS has tables and they are patched. */
export function deferDetachedTables(bokeh: Any = (globalThis as Any).Bokeh): boolean {
  const View: Any = bokeh?.Tables?.DataTable?.prototype?.default_view;
  const proto: Any = View?.prototype;
  if (!proto || typeof proto._after_render !== "function") return false;
  if (proto[MARK]) return true;
  const base: Any = Object.getPrototypeOf(proto);
  const afterRender = proto._after_render;
  proto._after_render = function (this: Any): void {
    if (onPage(this)) {
      afterRender.call(this);
      return;
    }
    // The parts of drawing that need no grid now, the grid once the table is on the page.
    base._after_render?.call(this);
    const wrapper = this.wrapper_el;
    const wait = (): void => {
      if (this.__nwRemoved || this.wrapper_el !== wrapper) return; // gone, or drawn again since
      if (onPage(this)) afterRender.call(this);
      else requestAnimationFrame(wait);
    };
    requestAnimationFrame(wait);
  };
  for (const name of NEEDS_GRID) {
    const original = proto[name];
    if (typeof original !== "function") continue;
    proto[name] = function (this: Any, ...args: Any[]): Any {
      return this.grid === undefined ? undefined : original.apply(this, args);
    };
  }
  const remove = proto.remove;
  proto.remove = function (this: Any): void {
    this.__nwRemoved = true;
    if (this.grid !== undefined) {
      remove.call(this);
      return;
    }
    this.cds_view?.remove();
    base.remove.call(this);
  };
  proto[MARK] = true;
  return true;
}

/** Resolves when the page's BokehJS tables are patched (or after `timeoutMs` without BokehJS tables). */
export function whenTablesDeferred(timeoutMs = 30_000): Promise<boolean> {
  return new Promise((resolve) => {
    const started = Date.now();
    const poll = (): void => {
      if (deferDetachedTables() && quietEmptyRanges()) resolve(true);
      else if (Date.now() - started > timeoutMs) resolve(false);
      else setTimeout(poll, 25);
    };
    poll();
  });
}

const QUIET = "__nwQuietEmptyRanges";

/** Our charts (models named `nw-...`) may be drawn before their numbers arrive, or stay empty when
 *  an analysis does not apply: BokehJS then logs "could not set initial ranges" at every paint
 *  (55 lines per Run All of the tour). It has nothing to range over; say nothing, as BokehJS does
 *  for its own internal plots. Other plots on the page keep the warning. */
export function quietEmptyRanges(bokeh: Any = (globalThis as Any).Bokeh): boolean {
  let View: Any;
  try {
    View = bokeh?.require?.("models/plots/plot")?.PlotView;
  } catch {
    return false;
  }
  const proto: Any = View?.prototype;
  if (!proto || typeof proto.initialize !== "function") return false;
  if (proto[QUIET]) return true;
  const initialize = proto.initialize;
  proto.initialize = function (this: Any, ...args: Any[]): Any {
    const out = initialize.apply(this, args);
    if (String(this.model?.name ?? "").startsWith("nw-") && this._range_manager) {
      this._range_manager.warn_initial_ranges = false;
    }
    return out;
  };
  proto[QUIET] = true;
  return true;
}
