/**
 * Small DOM builders that keep the `safe: true` promise.
 *
 * Text only ever goes in through `textContent`; icons are built from fixed
 * path data with `createElementNS`, never from the payload.
 */

import { has } from './payload';

/**
 * C0 controls other than tab and newline, DEL, C1 controls, and the bidi
 * embeddings, overrides and isolates, which can reorder what a reader sees
 * (a file named "txt.exe" shown as "exe.txt"), and lone surrogates.
 */
const SPECIAL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Make control and bidi characters visible as `[U+202E]`, as the
 * `text/html` card does; CRLF becomes LF. Nothing is dropped.
 */
export function visible(text: string): string {
  const flat = text.indexOf('\r') >= 0 ? text.replace(/\r\n/g, '\n') : text;
  return flat.replace(
    SPECIAL,
    c => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}]`
  );
}

/**
 * Create an element with an optional class and text (as `textContent`,
 * made {@link visible}).
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = visible(text);
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Fixed icon paths (16x16, stroked); never built from payload data.
 */
const ICONS: { [kind: string]: string[] } = {
  read: ['M3 2h7l3 3v9H3z', 'M5 7h6', 'M5 9.5h6', 'M5 12h4'],
  edit: ['M2.5 13.5l1-3.5 7.5-7.5 2.5 2.5-7.5 7.5z', 'M9.5 4l2.5 2.5'],
  delete: ['M2.5 4h11', 'M6 4V2.5h4V4', 'M4 4l.8 9.5h6.4L12 4'],
  move: ['M2 8h10', 'M9 4.5L12.5 8 9 11.5'],
  search: ['M7 2.5a4.5 4.5 0 1 0 0 9a4.5 4.5 0 1 0 0-9z', 'M10.3 10.3l3.2 3.2'],
  execute: ['M2 2.5h12v11H2z', 'M4.5 6l2 2-2 2', 'M8 10.5h3.5'],
  fetch: [
    'M8 2a6 6 0 1 0 0 12a6 6 0 1 0 0-12z',
    'M2 8h12',
    'M8 2c-2.2 2.4-2.2 9.6 0 12',
    'M8 2c2.2 2.4 2.2 9.6 0 12'
  ],
  other: ['M8 2.5l5.5 5.5L8 13.5 2.5 8z']
};

/**
 * The icon for a card kind; unknown kinds get the `other` icon.
 */
export function icon(kind: string): SVGSVGElement {
  const paths = has(ICONS, kind) ? ICONS[kind] : ICONS.other;
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('class', 'dsh-ToolCard-icon');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  for (const d of paths) {
    const path = document.createElementNS(SVG_NS, 'path');
    path.setAttribute('d', d);
    svg.appendChild(path);
  }
  return svg;
}

/**
 * A text node holding payload text, made {@link visible}.
 */
export function text(value: string): Text {
  return document.createTextNode(visible(value));
}
