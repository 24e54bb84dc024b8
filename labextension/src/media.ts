/**
 * An image, audio, resource or link block as the kernel captioned it
 * (`dsh_nb/cards/media.py`): a one-line caption, an embedded resource's
 * text, and for a raster image its picture.
 *
 * A stored notebook is untrusted input, so the checks the kernel made are
 * made again here: only PNG, JPEG, GIF and WebP become an `<img>`, and
 * only from plain base64, set as a property, never as markup. A URI stays
 * text; nothing becomes a link.
 */

import { el } from './dom';
import { JsonObject, str } from './payload';

const PICTURE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp'
]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Whether `item` carries a kernel caption, i.e. is drawn by `media`. */
export function isMedia(item: JsonObject): boolean {
  return typeof item.caption === 'string';
}

/** The caption, then the picture (when drawable), then the text. */
export function media(item: JsonObject, shown: string): HTMLElement {
  const node = el('div', 'dsh-ToolCard-media');
  const caption = str(item.caption) ?? '';
  node.appendChild(el('div', 'dsh-ToolCard-caption', caption));
  const data = str(item.data);
  const mime = str(item.mimeType);
  if (
    item.type === 'image' &&
    data !== null &&
    mime !== null &&
    PICTURE_TYPES.has(mime) &&
    BASE64.test(data)
  ) {
    const img = document.createElement('img');
    img.className = 'dsh-ToolCard-image';
    img.alt = caption;
    img.src = `data:${mime};base64,${data}`;
    node.appendChild(img);
  }
  if (shown !== '') {
    node.appendChild(el('div', 'dsh-ToolCard-text', shown));
  }
  return node;
}
