// DOM helpers. Text from a profile is only ever set as textContent: never parsed as HTML.

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; title?: string; text?: string; attrs?: Record<string, string> } = {},
  children: (Node | null)[] = [],
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.title !== undefined) el.title = props.title;
  if (props.text !== undefined) el.textContent = props.text;
  for (const [k, v] of Object.entries(props.attrs ?? {})) el.setAttribute(k, v);
  for (const c of children) if (c) el.appendChild(c);
  return el;
}

export function button(text: string, title: string, onClick: () => void, cls = "nw-btn"): HTMLButtonElement {
  const b = h("button", { class: cls, title, text, attrs: { type: "button" } });
  b.addEventListener("click", (e) => {
    e.stopPropagation();
    onClick();
  });
  return b;
}

/** Whether a key event carries Ctrl, Cmd or Alt: the application's own shortcuts (save, undo, copy). */
export function withModifier(e: KeyboardEvent): boolean {
  return e.ctrlKey || e.metaKey || e.altKey;
}

/** Keys typed in `el` stay there: JupyterLab's command-mode shortcuts (A, B, D, S...) do not fire. Keys held with
 * Ctrl, Cmd or Alt still reach it: Ctrl+S saves the notebook from a focused widget. */
export function keepKeysFromLab(el: HTMLElement): void {
  for (const ev of ["keydown", "keyup", "keypress"] as const) {
    el.addEventListener(ev, (e) => {
      if (!withModifier(e)) e.stopPropagation();
    });
  }
}

/** Copy a binary buffer from the comm into an aligned typed array. */
export function typed<T>(dv: DataView | ArrayBuffer, Ctor: { new (b: ArrayBuffer): T }): T {
  if (dv instanceof ArrayBuffer) return new Ctor(dv);
  const copy = dv.buffer.slice(dv.byteOffset, dv.byteOffset + dv.byteLength) as ArrayBuffer;
  return new Ctor(copy);
}
