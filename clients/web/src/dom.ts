/** A tiny element builder: `h("button", { class: "x", onclick: f }, "Draw")`. */
export type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value as EventListener);
    } else if (key === "value" || key === "checked" || key === "selected" || key === "disabled") {
      (el as unknown as Record<string, unknown>)[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace what `parent` shows. */
export function show(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T | null {
  return document.getElementById(id) as T | null;
}

/** Tell that `screen` is drawn (`data-screen`, `data-ready` on the body: what the browser
 * tests wait for), unless its root has left the page: a screen left before its reads came
 * back (a route or a language switch started meanwhile) draws into a root nobody sees, and
 * must not say the newer screen is ready. */
export function shown(root: Element, screen: string): void {
  if (!root.isConnected) return;
  document.body.dataset.screen = screen;
  document.body.dataset.ready = "1";
}

/** A button that copies `value` to the clipboard, then says `done` (the labels in the page's
 * language, given by the caller). */
export function copyButton(value: string, label: string, done: string, attrs: Attrs = {}): HTMLButtonElement {
  const button: HTMLButtonElement = h("button", { type: "button", ...attrs, onclick: async () => {
    await navigator.clipboard?.writeText(value).catch(() => undefined);
    button.textContent = done;
  } }, label);
  return button;
}
