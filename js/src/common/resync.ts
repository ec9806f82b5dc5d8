// A model that anywidget stopped listening to hears the kernel again, and catches up.
//
// anywidget (0.9.16 to 0.11) holds every kernel message to a model until the model's front-end
// code is loaded, and gives up after 2 s: if loading took longer (a busy page, Run All of a
// notebook of widgets on a slow machine), every later message to that model is dropped, for
// good. The view then shows its first state forever: a details panel that never fills, a
// timeline that never draws. Once our code runs (`initialize`), we ask anywidget's handler
// whether it still delivers; if it refuses, the model's comm is handed to ipywidgets' own
// handler and the kernel is asked for the whole state again.

// ipywidgets' Backbone model and anywidget's proxy, whose private parts (_handle_comm_msg, comm,
// _buffered_state_diff) this reaches into, have no types.
// biome-ignore lint/suspicious/noExplicitAny: ipywidgets' model internals have no types
type Any = any;

const PING = "__nw_who";
const PROBE = "__nw_probe";

/** The model behind anywidget's proxy: a change event's first argument (Backbone's signature). */
function realModel(proxy: Any): Any {
  let real: Any = null;
  const grab = (m: Any) => {
    real = m;
  };
  proxy.on(`change:${PING}`, grab);
  proxy.set(PING, {});
  proxy.off(`change:${PING}`, grab);
  // Gone again: neither sent to the kernel nor saved with the notebook's widget state.
  real?.unset?.(PING, { silent: true });
  if (real?._buffered_state_diff) delete real._buffered_state_diff[PING];
  return real;
}

/** ipywidgets' own message handler: the first one up the prototype chain that is not anywidget's. */
function plainHandler(real: Any): ((msg: Any) => Promise<void>) | null {
  const own = real._handle_comm_msg;
  let proto = Object.getPrototypeOf(real);
  while (proto && proto._handle_comm_msg === own) proto = Object.getPrototypeOf(proto);
  return proto && typeof proto._handle_comm_msg === "function" ? proto._handle_comm_msg : null;
}

export function reconnectIfDeaf(model: Any): void {
  const real = realModel(model);
  if (!real || typeof real._handle_comm_msg !== "function" || !real.comm?.on_msg) return;
  const probe = { content: { data: { method: "custom", content: { type: PROBE } } }, buffers: [] };
  let answer: Promise<unknown>;
  try {
    answer = Promise.resolve(real._handle_comm_msg(probe));
  } catch (err) {
    answer = Promise.reject(err);
  }
  answer.catch(() => {
    const plain = plainHandler(real);
    if (!plain) return;
    real.comm.on_msg((msg: Any) => plain.call(real, msg));
    model.send({ type: "resync" });
  });
}

/** For a widget definition: `export default { initialize, render }`. */
export function initialize({ model }: { model: Any }): void {
  reconnectIfDeaf(model);
}
