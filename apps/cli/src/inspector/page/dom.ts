/**
 * Building the page from data. Memory content and paths are data written by a model: they only
 * ever become text nodes (never markup), so a memory holding `<script>` reads as text.
 */
import { bytesText } from './bytes.js';

type Child = Node | string | null | undefined | false;

const ATTRIBUTES = /^(class|id|role|title|type|hidden|disabled|tabindex|value|for|data-[a-z-]+|aria-[a-z-]+)$/;

/** An element with attributes (a fixed allow-list, none of them a URL or a handler) and children. */
export function h(tag: string, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (!ATTRIBUTES.test(name)) throw new Error(`attribute ${name} is not allowed`);
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : value);
  }
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
}

export function clear(el: Element): void {
  el.replaceChildren();
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`#${id} is missing from the page`);
  return el as T;
}

/** `812 B`, `4.0 KiB`, like the CLI's usage line; a dash for no size. */
export function size(bytes: number | null): string {
  return bytes === null ? '—' : bytesText(bytes);
}

export function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

/** A local date and time, with the exact instant as a tooltip. */
export function when(iso: string): HTMLElement {
  const d = new Date(iso);
  return h('time', { title: d.toISOString() }, `${d.toLocaleDateString()} ${d.toLocaleTimeString()}`, h('span', { class: 'ago' }, ago(d)));
}

function ago(d: Date): string {
  const s = Math.round((Date.now() - d.getTime()) / 1000);
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hrs = Math.round(m / 60);
  if (hrs < 36) return `${hrs} h ago`;
  return `${Math.round(hrs / 24)} days ago`;
}
